"""Text agents wrote that would fool a reader: bidi controls reorder what a terminal
shows, zero-width characters make two subjects look alike. Plain output shows them
escaped and JSON output writes them as escapes (the data unchanged)."""

from __future__ import annotations

import json

import pytest

from recall_admin.display import json_safe, visible
from tests.cli.conftest import Cli, isolated_cli

SPOOF = "user\u200b"  # looks like "user"
REORDERED = "vi\u202em"  # shown as "vim" reversed after the override
RAW = ("\u202e", "\u200b", "\u2066", "\u2060", "\ufeff", "\u200e")


@pytest.fixture
def cli(tmp_path, monkeypatch) -> Cli:
    cli = isolated_cli(f"sqlite:///{tmp_path / 'recall.db'}", tmp_path, monkeypatch)
    cli.ok("init", "--registry", "coding")
    cli.ok("remember", SPOOF, "prefers_editor", REORDERED)
    return cli


def test_plain_output_shows_bidi_controls_and_invisible_characters(cli):
    r = cli.run("recall", SPOOF, json_mode=False)
    assert r.exit_code == 0
    assert "user\\u200b" in r.stdout and "vi\\u202em" in r.stdout
    assert not [c for c in RAW if c in r.stdout + r.stderr]


def test_json_output_escapes_them_and_keeps_the_data(cli):
    r = cli.run("recall", SPOOF)
    assert r.exit_code == 0
    assert not [c for c in RAW if c in r.stdout]
    assert "user\\u200b" in r.stdout and "vi\\u202em" in r.stdout
    (belief,) = json.loads(r.stdout)["data"]["beliefs"]
    assert (belief["subject"], belief["value"]) == (SPOOF, REORDERED)


def test_the_joiners_are_shown_escaped_and_json_keeps_them():
    # "ad\u200dmin" would pass for "admin", and terminals disagree on the width of an
    # emoji sequence joined by U+200D (a console row shifts): shown escaped, as data kept
    text = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645 \U0001f468\u200d\U0001f469"
    assert visible(text) == "\u0645\u06cc\\u200c\u062e\u0648\u0627\u0647\u0645 \U0001f468\\u200d\U0001f469"
    encoded = json_safe(json.dumps(text, ensure_ascii=False))
    assert "\u200c" not in encoded and "\u200d" not in encoded
    assert json.loads(encoded) == text
