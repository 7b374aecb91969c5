"""Where a careless user points -o / --plan-out: a device, a pipe, a symlink, a file
used as a folder. A device or a pipe is written as a stream (renaming a file over it
would replace the device itself, as root); a symlink is written through; a replaced file
keeps its mode."""

from __future__ import annotations

import os
import stat

import pytest

from recall_admin.files import write_whole
from tests.cli.conftest import Cli, isolated_cli


@pytest.fixture
def cli(tmp_path, monkeypatch) -> Cli:
    cli = isolated_cli(f"sqlite:///{tmp_path / 'recall.db'}", tmp_path, monkeypatch)
    cli.ok("init", "--registry", "coding")
    cli.ok("remember", "carol", "prefers_editor", "vim")
    return cli


def test_a_fifo_is_written_as_a_stream_and_stays_a_fifo(cli, tmp_path):
    fifo = tmp_path / "out.jsonl"
    os.mkfifo(fifo)
    # the read end is open before the export, so the export's open does not wait; the
    # export (a few kilobytes) fits the pipe's buffer
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        cli.ok("export", "-o", str(fifo))
        got = os.read(fd, 1 << 20)
    finally:
        os.close(fd)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert b'"carol"' in got


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can make a device node (and only root lost /dev/null)")
def test_a_device_is_not_replaced_by_a_file(cli, tmp_path):
    null = tmp_path / "null"
    os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    cli.ok("audit", "export", "-o", str(null))
    cli.ok("export", "-o", str(null))
    assert stat.S_ISCHR(os.stat(null).st_mode)


def test_a_symlink_is_written_through_and_a_replaced_file_keeps_its_mode(cli, tmp_path):
    real = tmp_path / "real.jsonl"
    real.write_text("old\n")
    real.chmod(0o640)
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    cli.ok("export", "-o", str(link))
    assert link.is_symlink() and b'"carol"' in real.read_bytes()
    assert stat.S_IMODE(real.stat().st_mode) == 0o640


def test_a_file_named_as_a_folder_is_said_to_be_a_file(tmp_path):
    (tmp_path / "a.json").write_text("{}")
    with pytest.raises(Exception) as err:
        write_whole(tmp_path / "a.json" / "plan.json", lambda f: f.write("x"), "write the plan to")
    assert err.value.message == (  # type: ignore[attr-defined]
        f"cannot write the plan to {str(tmp_path / 'a.json' / 'plan.json')!r}: "
        f"the folder {str(tmp_path / 'a.json')!r} is a file, not a folder"
    )


@pytest.mark.parametrize(
    "args", [("recall", "carol"), ("remember", "carol", "note", "x"), ("verify",)], ids=lambda a: a[0]
)
@pytest.mark.parametrize("where", ["/dev/zero", "/dev/null", "fifo"])
def test_a_store_that_is_a_device_or_a_pipe_is_said_not_to_be_a_store_file(cli, tmp_path, where, args):
    if where == "fifo":
        where = str(tmp_path / "store.fifo")
        os.mkfifo(where)
    kind = "a named pipe (FIFO)" if where.endswith("fifo") else "a character device"
    err = cli.fail(*args, store=where)
    assert err == {
        "code": "storage_error",
        "message": f"cannot open the store at sqlite:///{where}: it is {kind}, not a store file (a store is a regular file)",
    }
    if where.endswith("fifo"):
        assert stat.S_ISFIFO(os.stat(where).st_mode)
