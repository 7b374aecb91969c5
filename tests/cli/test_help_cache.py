"""A `--help` written from the help cache (`recall_admin/cli/helpcache.py`) is byte for
byte what Typer draws in the same situation: every command, piped and on a terminal, with
and without colour, at several widths; a change to anything the drawing read (an
environment variable, the terminal, a plugin's code or its presence) draws it again."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import struct
import subprocess
import sys
import termios
import tty
from pathlib import Path

import pytest

from recall_admin.cli.root import COMMAND_MODULES, build_commands

# the CLI as installed (with the help cache), and Typer drawing alone (without it)
CACHED = "from recall_admin.cli import main\nsys.exit(main())\n"
DIRECT = "from recall_admin.cli.root import main\nsys.exit(main())\n"

# Typer drawing every help directly, each in a fork of one interpreter, to a real file
DRIVE = """
import json, os, sys
from recall_admin.cli.root import main
for path, target in json.loads(sys.argv[1]):
    pid = os.fork()
    if pid == 0:
        os.dup2(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 1)
        sys.argv = ["recall-admin", *path]
        try:
            main()
        except SystemExit as e:
            sys.stdout.flush()
            os._exit(e.code or 0)
        os._exit(3)
    os.waitpid(pid, 0)
"""

SETTINGS = ("NO_COLOR", "FORCE_COLOR", "TERM", "COLORTERM", "COLUMNS", "LINES", "TERMINAL_WIDTH", "TTY_COMPATIBLE")


def every_help() -> list[list[str]]:
    paths: list[list[str]] = [["--help"]]
    for name, command in build_commands(list(COMMAND_MODULES), plugins=True).items():
        paths.append([name, "--help"])
        paths.extend([name, sub, "--help"] for sub in getattr(command, "commands", {}))
    return paths


@pytest.fixture
def cli(tmp_path):
    """Scripts named recall-admin, as pip writes them, and an empty cache folder."""
    scripts = {}
    for kind, body in (("cached", CACHED), ("direct", DIRECT)):
        script = tmp_path / kind / "recall-admin"
        script.parent.mkdir()
        script.write_text(f"#!{sys.executable}\nimport sys\n{body}")
        script.chmod(0o755)
        scripts[kind] = str(script)
    env = {k: v for k, v in os.environ.items() if k not in SETTINGS and k != "PYTHONPROFILEIMPORTTIME"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    env["RECALL_STORE"] = f"sqlite:///{tmp_path / 'never.db'}"

    class Cli:
        root = tmp_path
        cache = tmp_path / "cache" / "recall-admin" / "help"
        environ = env

        def run(self, kind: str, args: list[str], terminal: tuple[int, int] | None = None, **extra: str):
            environ = dict(env, **extra)
            if terminal is None:
                p = subprocess.run([scripts[kind], *args], env=environ, capture_output=True)
                return p.returncode, p.stdout, p.stderr
            return on_terminal([scripts[kind], *args], environ, terminal)

        def direct_all(self, paths: list[list[str]], **extra: str) -> list[bytes]:
            targets = [str(tmp_path / f"direct-{i}.out") for i in range(len(paths))]
            subprocess.run(
                [sys.executable, "-c", DRIVE, json.dumps(list(zip(paths, targets, strict=True)))],
                env=dict(env, **extra),
                check=True,
            )
            return [Path(t).read_bytes() for t in targets]

    return Cli()


def on_terminal(cmd: list[str], env: dict[str, str], size: tuple[int, int]) -> tuple[int, bytes, bytes]:
    """Run with stdin and stdout on a pseudo-terminal of ``size`` (columns, rows)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
    tty.setraw(slave)  # bytes as written: no newline translation
    p = subprocess.Popen(cmd, env=env, stdin=slave, stdout=slave, stderr=subprocess.PIPE)
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    err = p.stderr.read() if p.stderr else b""
    p.wait()
    os.close(master)
    return p.returncode, b"".join(chunks), err


def test_every_help_is_written_as_typer_draws_it_without_importing_typer(cli):
    paths = every_help()
    assert len(paths) > 40  # the root, every command, every group's subcommands
    direct = cli.direct_all(paths, COLUMNS="100")
    for path, drawn in zip(paths, direct, strict=True):
        first = cli.run("cached", path, COLUMNS="100")
        assert first == (0, drawn, b""), path  # drawn by Typer, and kept
        code, out, err = cli.run("cached", path, COLUMNS="100", PYTHONPROFILEIMPORTTIME="1")
        assert (code, out) == (0, drawn), path
        imported = {line.rsplit("|", 1)[-1].strip() for line in err.decode().splitlines() if "|" in line}
        assert "recall_admin.cli.helpcache" in imported  # the import report is there
        assert not imported & {"typer", "click", "rich", "recall_admin.cli.root"}, path
    assert len(list(cli.cache.iterdir())) == len(paths)


# (terminal size or None for a pipe, environment): each run against Typer in the same situation
SITUATIONS = [
    (None, {}),
    (None, {"COLUMNS": "60"}),
    (None, {"FORCE_COLOR": "1", "TERM": "xterm-256color"}),
    (None, {"FORCE_COLOR": "1", "TERM": "xterm-256color", "NO_COLOR": "1"}),
    (None, {"FORCE_COLOR": "1", "TERM": "xterm-256color", "COLUMNS": "72"}),
    (None, {"TERMINAL_WIDTH": "70"}),
    ((100, 30), {"TERM": "xterm-256color"}),
    ((100, 30), {"TERM": "xterm-256color", "COLORTERM": "truecolor"}),
    ((100, 30), {"TERM": "xterm-256color", "NO_COLOR": "1"}),
    ((100, 30), {"TERM": "dumb"}),
    ((100, 30), {"TERM": "xterm"}),
    ((72, 20), {"TERM": "xterm-256color"}),
    ((100, 30), {"TERM": "xterm-256color", "COLUMNS": "60"}),
    ((100, 30), {"TERM": "xterm-256color", "LANG": "C"}),
]


@pytest.mark.parametrize("args", [["--help"], ["recall", "--help"], ["registry", "lint", "--help"]])
def test_a_help_kept_in_one_situation_is_never_written_in_another(cli, args):
    """All situations share one cache folder, in turn: whatever was kept last, each answer
    is what Typer draws in that situation, and the second run of each is from the cache."""
    colour = set()
    for terminal, env in SITUATIONS:
        expected = cli.run("direct", args, terminal, **env)
        assert expected[0] == 0 and expected[1], (terminal, env)
        assert cli.run("cached", args, terminal, **env) == expected, (terminal, env)
        kept = kept_files(cli)
        assert cli.run("cached", args, terminal, **env) == expected, (terminal, env)
        assert kept_files(cli) == kept, (terminal, env)  # answered from the cache: nothing drawn and kept again
        colour.add(b"\x1b[" in expected[1])
    assert colour == {True, False}  # the situations did draw with and without colour
    kept = list(cli.cache.iterdir())
    assert 0 < len(kept) < len(SITUATIONS)  # situations that differ only in the environment share a file


def kept_files(cli) -> dict[str, int]:
    """Each entry and its inode: an entry drawn again is a new file renamed into place."""
    return {p.name: p.stat().st_ino for p in cli.cache.iterdir()}


PLUGIN = '''
import typer

def register(app):
    @app.command("extra")
    def extra() -> None:
        """{help}"""
'''


def test_a_plugin_added_changed_or_removed_draws_the_help_again(cli):
    site = cli.root / "plugins"
    info = site / "extra_plugin-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: extra-plugin\nVersion: 0.1\n")
    (site / "extra_plugin.py").write_text(PLUGIN.format(help="Draw the first extra thing."))
    path = os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])

    def both() -> bytes:
        expected = cli.run("direct", ["--help"], PYTHONPATH=path)
        assert cli.run("cached", ["--help"], PYTHONPATH=path) == expected
        assert cli.run("cached", ["--help"], PYTHONPATH=path) == expected
        return expected[1]

    assert b"extra" not in both()  # no entry points yet
    (info / "entry_points.txt").write_text("[recall_admin.commands]\nextra = extra_plugin:register\n")
    assert b"Draw the first extra thing." in both()
    (site / "extra_plugin.py").write_text(PLUGIN.format(help="Draw the second extra thing, now longer."))
    assert b"Draw the second extra thing" in both()
    for child in info.iterdir():
        child.unlink()
    info.rmdir()
    assert b"extra" not in both()


def test_only_a_help_that_succeeds_is_kept(cli):
    code, out, err = cli.run("cached", ["no-such-command", "--help"])
    assert code == 2 and b"No such command" in err
    code, out, err = cli.run("cached", ["--json", "--help"])  # not a plain help request
    assert code == 0 and out
    assert not cli.cache.exists()


def test_a_damaged_entry_is_drawn_again_and_replaced(cli):
    expected = cli.run("direct", ["recall", "--help"])
    assert cli.run("cached", ["recall", "--help"]) == expected
    (entry,) = cli.cache.iterdir()
    whole = entry.read_text()
    entry.write_text(whole[: len(whole) // 2])
    assert cli.run("cached", ["recall", "--help"]) == expected
    assert json.loads(entry.read_text())  # whole again
    assert cli.run("cached", ["recall", "--help"]) == expected


def test_a_cache_folder_that_cannot_be_written_only_costs_time(cli):
    (cli.root / "cache").write_text("a file where the folder would be")
    expected = cli.run("direct", ["--help"])
    assert cli.run("cached", ["--help"]) == expected
    assert cli.run("cached", ["--help"]) == expected


def test_a_reader_that_went_away_ends_the_kept_help_as_it_ends_typers(cli):
    """`recall-admin --help | head`: exit 1, nothing on stderr, with or without the cache."""

    def closed_pipe(kind: str) -> tuple[int, bytes]:
        read, write = os.pipe()
        os.close(read)  # the reader is gone before anything is written
        script = cli.root / kind / "recall-admin"
        p = subprocess.run([str(script), "--help"], stdout=write, stderr=subprocess.PIPE, env=cli.environ)
        os.close(write)
        return p.returncode, p.stderr

    expected = closed_pipe("direct")
    assert expected == (1, b"")
    assert cli.run("cached", ["--help"])[0] == 0  # kept
    assert closed_pipe("cached") == expected


def test_no_environment_value_is_written_to_the_cache(cli):
    """Drawing `recall --help` looks up the root's options (RECALL_STORE may hold a password):
    an entry keeps a digest of each value, in a file only its user can read."""
    store = "postgresql://ann:s3cret-pw@db.example/recall"
    expected = cli.run("direct", ["recall", "--help"], RECALL_STORE=store)
    for _ in range(2):
        assert cli.run("cached", ["recall", "--help"], RECALL_STORE=store) == expected
    (entry,) = cli.cache.iterdir()
    kept = entry.read_text()
    assert "RECALL_STORE" in json.loads(kept)["env"]  # it was looked up, and noted
    assert "s3cret-pw" not in kept and "ann:" not in kept and "db.example" not in kept
    assert entry.stat().st_mode & 0o777 == 0o600
    assert cli.run("cached", ["recall", "--help"], RECALL_STORE="elsewhere.db") == expected
