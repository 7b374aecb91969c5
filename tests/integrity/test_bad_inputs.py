"""Bad inputs get a clear error and change nothing (issue 11): each test runs the attack
through the real CLI on a real store and asserts what the operator sees."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import Cli, isolated_cli

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def cli(tmp_path, monkeypatch) -> Cli:
    return isolated_cli(f"sqlite:///{tmp_path / 'recall.db'}", tmp_path, monkeypatch)


def test_a_password_without_its_at_sign_is_not_echoed(cli):
    for url in ("postgresql://agent:secret", "postgresql://agent:secret/memories"):
        err = cli.fail("recall", "carol", store=url)
        assert err["code"] == "invalid_input"
        assert "secret" not in err["message"]
        assert err["message"].startswith("store URL 'postgresql://agent:***")


def test_arguments_that_are_not_utf8_are_refused(cli):
    cli.ok("remember", "carol", "note", "hello")
    for args in (("search", "ab\udcff"), ("remember", "carol", "note", "x\udcffy")):
        err = cli.fail(*args)
        assert err["code"] == "invalid_input"
        assert err["message"].endswith("is not valid UTF-8; nothing was done")
    assert [e["value"] for e in cli.ok("export")["events"] if e["subject"] == "carol"] == ["hello"]


def test_deeply_nested_plans_and_lines_are_refused(cli, tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    err = cli.fail("apply", str(deep))
    assert err == {
        "code": "invalid_plan",
        "message": f"plan file {str(deep)!r} is not a plan: its JSON is nested too deeply",
    }
    err = cli.fail("import", str(deep))
    assert err == {"code": "invalid_event", "message": "line 1: not an event (its JSON is nested too deeply)"}


def test_an_operator_regex_that_backtracks_is_stopped(cli):
    cli.ok("remember", "carol", "note", "a" * 40 + "c")
    err = cli.fail("notes", "list", "--match", "(a|aa)+$")
    assert err == {
        "code": "invalid_input",
        "message": "--match '(a|aa)+$' took longer than 0.25 s on one text (it backtracks too much); "
        "write a simpler pattern",
    }
    cli.ok("define", "mood", "--type", "string", "--cardinality", "single", "--apply")
    err = cli.fail("notes", "promote", "mood", "--match", "(a|aa)+$")
    assert err["code"] == "invalid_plan" and "took longer than 0.25 s" in err["message"]
    assert cli.ok("notes", "list", "--match", "a+c$")["notes"]  # an ordinary pattern still works


def _cli_with_file_limit(url: str, limit: int, *args: str) -> subprocess.CompletedProcess:
    # the disk is "full" past `limit` bytes: every write beyond fails with EFBIG, as with ENOSPC
    code = (
        "import resource, signal, sys\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))\n"
        "from recall_admin.cli.root import main\n"
        "sys.argv = ['recall-admin', *sys.argv[1:]]\n"
        "main()\n"
    )
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    return subprocess.run(
        [sys.executable, "-c", code, "--store", url, "--read-only", "--json", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_an_export_that_runs_out_of_disk_leaves_no_file(cli, tmp_path):
    from recall_engine.records import make_event
    from recall_engine.storage import open_backend

    with open_backend(cli.url) as b:  # about 100 KB of notes
        b.store("memories").append(
            [make_event("carol", "note", f"note {i} " + "x" * 800, 10**18 + i) for i in range(120)]
        )
    for args, what in ((("export", "-o"), "export to"), (("audit", "export", "-o"), "write the bundle to")):
        target = tmp_path / f"out-{what[:5]}.jsonl"
        r = _cli_with_file_limit(cli.url, 65536, *args, str(target))  # above SQLite's own 32 KiB -shm
        assert r.returncode == 1, r.stderr
        err = json.loads(r.stdout)["error"]
        assert err["code"] == "storage_error"
        assert err["message"] == f"cannot {what} {str(target)!r}: File too large; nothing was written"
        assert not target.exists()
        assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_reads_do_not_wait_for_a_writer_holding_the_write_lock(cli, tmp_path):
    import sqlite3

    cli.ok("remember", "carol", "note", "hello")
    writer = sqlite3.connect(tmp_path / "recall.db", isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # another process in the middle of a long write
    writer.execute("INSERT INTO collections (name) VALUES ('pending')")
    try:
        # a plain read (not --read-only) answers at once instead of waiting 10 s for the lock
        assert [b["value"] for b in cli.ok("recall", "carol")["beliefs"]] == ["hello"]
        assert cli.ok("verify")["valid"] is True
        err = cli.fail("remember", "carol", "note", "second")  # a write still waits, then says why
        assert err["code"] == "storage_error" and "database is locked" in err["message"]
    finally:
        writer.execute("ROLLBACK")


def test_a_resealed_plan_whose_statement_id_does_not_match_its_content_is_refused(cli, tmp_path):
    import dataclasses

    from recall_admin.plans import read_plan, write_plan
    from recall_engine.records import make_event

    cli.ok("init")
    cli.ok("define", "shoe_size", "--type", "number", "--cardinality", "single", "--plan-out", str(tmp_path / "p.json"))
    plan = read_plan(tmp_path / "p.json")
    forged = dataclasses.replace(make_event("carol", "shoe_size", 42, 10**18, source="operator"), id="m-" + "0" * 24)
    # anyone who can edit the file can reseal it (the seal is an unkeyed hash of its content)
    write_plan(
        dataclasses.replace(plan, kind="confirm", records=(), statements=(forged,)).sealed(), tmp_path / "f.json"
    )
    err = cli.fail("apply", str(tmp_path / "f.json"))
    assert err["code"] == "invalid_plan"
    assert err["message"] == (
        f"plan file {str(tmp_path / 'f.json')!r} is not a valid plan file: event 'm-000000000000000000000000' "
        "has an id that does not match its content (subject, predicate, value, retraction and instant); "
        "it was changed after it was written"
    )


def test_an_empty_or_corrupt_store_file_is_refused_and_left_as_it_was(cli, tmp_path):
    empty, junk = tmp_path / "empty.db", tmp_path / "junk.db"
    empty.write_bytes(b"")
    junk.write_bytes(bytes(range(256)) * 20)
    err = cli.fail("recall", "carol", store=str(empty))
    assert err == {
        "code": "storage_error",
        "message": f"cannot open the store at sqlite:///{empty}: the file is empty (0 bytes), not a recall store; "
        "it was truncated or made by something else. Restore it, or remove it to start a new store",
    }
    assert empty.stat().st_size == 0  # never silently made into a new store
    err = cli.fail("recall", "carol", store=str(junk))
    assert err == {
        "code": "storage_error",
        "message": f"cannot open the store at sqlite:///{junk}: file is not a database",
    }
    assert junk.read_bytes() == bytes(range(256)) * 20
