"""Text from agents never reaches the operator's terminal raw (docs/cli.md, "Text from agents").

Each rendering surface gets a value, subject, name or note holding an escape sequence
and must show it escaped (``\\x1b``), with no raw ESC, BEL or C1 control on stdout or
stderr; JSON escapes C1 controls too. The store is real (SQLite, the CLI fixtures).
"""

from __future__ import annotations

import json

import pytest

from recall_admin.demo import build_demo
from recall_engine.storage import open_backend

from .conftest import Cli

TITLE = "zsh\x1b]0;PWNED\x1b\\"  # OSC 0: set the window title
CLEAR = "x\x1b[2J"  # clear the screen
CSI = "v\u009b31m"  # the one-byte C1 CSI
RAW = ("\x1b", "\x07", "\u009b")


def human(cli: Cli, *args: str) -> str:
    r = cli.run(*args, json_mode=False)
    text = r.stdout + r.stderr
    assert not [c for c in RAW if c in text], (args, text)
    assert "Traceback" not in text
    return text


@pytest.fixture
def shells(coding: Cli) -> Cli:
    coding.ok("remember", "carol", "prefers_editor", TITLE, "--at", "2026-09-01", "--evidence", CLEAR)
    coding.ok("remember", "carol", "prefers_editor", CSI, "--at", "2026-09-02")
    return coding


def test_recall_shows_the_escape_visibly(shells):
    out = human(shells, "recall", "carol")
    assert "\\x1b" in out and "\\x9b" in out and "PWNED" in out


def test_remember_echo(coding):
    out = human(coding, "remember", "carol", "prefers_editor", TITLE)
    assert "zsh\\x1b]0;PWNED\\x1b\\" in out


def test_history_explain_search_diff(shells):
    assert "\\x1b" in human(shells, "history", "carol", "prefers_editor")
    explained = human(shells, "explain", "carol", "prefers_editor", "--as-of", "2026-09-01T12:00:00Z")
    assert "\\x1b]0;PWNED" in explained and "\\x1b[2J" in explained  # the value and the evidence
    assert "\\x1b" in human(shells, "search", "zsh PWNED")
    assert "\\x9b" in human(shells, "diff", "--from", "2026-08-01")  # single: the last value began


def test_error_messages_that_quote_a_name(coding):
    out = human(coding, "remember", "carol", "shell\x1b[2Jused", "zsh")
    assert "\\x1b[2J" in out


def test_notes_and_conflicts(coding):
    coding.ok("remember", "dan", "note", "I use " + TITLE + " as my shell", "--at", "2026-03-01")
    assert "\\x1b]0;PWNED" in human(coding, "notes", "list")
    coding.ok("remember", "dan", "goal", CSI, "--at", "2026-03-02")
    coding.ok("remember", "dan", "did", CSI, "--at", "2026-03-03")
    assert "\\x9b" in human(coding, "conflicts", "list")


def test_registry_log_list_and_a_plan_preview(cli: Cli):
    cli.ok("--operator", "ana", "init", "--registry", "coding")
    cli.ok(
        "define",
        "shell_used",
        "--cardinality",
        "single",
        "--type",
        "string",
        "--description",
        "The shell " + TITLE,
        "--reason",
        CLEAR,
        "--apply",
    )
    assert "\\x1b]0;PWNED" in human(cli, "registry", "show", "shell_used")
    human(cli, "registry", "log")
    human(cli, "registry", "list")
    out = human(cli, "redefine", "shell_used", "--description", "d " + CLEAR)
    assert "Plan plan-" in out


def test_promote_preview_shows_notes_safely(coding):
    n = coding.ok("remember", "u1", "note", "I use " + TITLE + " as my shell", "--at", "2026-03-01")
    out = human(coding, "promote", "prefers_editor", "--note", f"{n['stored']['event_id']}={CLEAR}")
    assert "\\x1b]0;PWNED" in out


def test_json_escapes_c1_and_keeps_the_data(shells):
    r = shells.run("recall", "carol")
    assert "\u009b" not in r.stdout and "\\u009b" in r.stdout
    values = {b["value"] for b in json.loads(r.stdout)["data"]["beliefs"]}
    assert CSI in values  # decoding gives the value back unchanged


def test_export_to_stdout_escapes_c1(shells):
    r = shells.run("export", json_mode=False)
    assert r.exit_code == 0 and "\u009b" not in r.stdout and "\\u009b" in r.stdout


BIDI = "abc\u202edcba\u2066x\u200f"  # right-to-left override, isolate, mark


def test_json_and_export_escape_bidirectional_controls_and_keep_the_data(coding):
    # a --json answer or an export read on a terminal showed the text reordered
    coding.ok("remember", "dana", "prefers_editor", BIDI, "--at", "2026-09-01")
    for args, json_mode in ((("recall", "dana"), True), (("export", "--subject", "dana"), False)):
        r = coding.run(*args, json_mode=json_mode)
        assert r.exit_code == 0
        assert not {"\u202e", "\u2066", "\u200f"} & set(r.stdout)
        assert "\\u202e" in r.stdout and "\\u2066" in r.stdout and "\\u200f" in r.stdout
    values = {b["value"] for b in json.loads(coding.run("recall", "dana").stdout)["data"]["beliefs"]}
    assert values == {BIDI}  # decoding gives the value back unchanged


def test_demo_queues_render_without_raw_controls(cli: Cli):
    with open_backend(cli.url) as backend:
        build_demo(backend, "memories")
    cli.ok("remember", "eve", "note", "I use " + TITLE + " as my shell")
    human(cli, "notes", "clusters")
    human(cli, "vocab", "list")
    human(cli, "vocab", "suggest")
