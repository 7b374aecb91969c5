"""Every staging kind end to end through the CLI, on SQLite and on PostgreSQL.

A preview writes nothing; --apply appends exactly the previewed events; the
answers read afterwards are the preview's "after".
"""

from __future__ import annotations

import pytest

from .conftest import Cli, isolated_cli
from .test_governance import assert_applied_as_previewed, change, position, remember, values


@pytest.fixture
def store_cli(backend_url, tmp_path, monkeypatch) -> Cli:
    cli = isolated_cli(backend_url, tmp_path, monkeypatch)
    cli.ok("init", "--registry", "coding", "--registry", "personal-assistant", "--open")
    remember(cli, "u1", "uses_technology", "Django", "2026-01-01")
    remember(cli, "u1", "uses_technology", "Redis", "2026-02-01")
    remember(cli, "u1", "prefers_editor", "vim", "2026-01-05")
    remember(cli, "u2", "prefers_editor", "emacs", "2026-01-06")
    remember(cli, "u1", "note", "I use fish as my shell", "2026-03-01")
    remember(cli, "u2", "note", "I use zsh as my shell", "2026-03-02")
    remember(cli, "u1", "likes", "mangoes", "2026-03-01")
    remember(cli, "u1", "avoids", "mangoes", "2026-04-01")  # defined by first use
    cli.ok("define", "editor_choice", "--cardinality", "single", "--type", "string", "--apply")
    remember(cli, "u3", "editor_choice", "helix", "2026-02-01")
    return cli


def stage_and_apply(cli: Cli, *args: str) -> dict:
    pos = position(cli)
    preview = cli.ok(*args)
    assert position(cli) == pos, "a preview wrote something"
    applied = cli.ok(*args, "--apply")
    # planned again a moment later: the same records (only the plan id and instant differ)
    strip = lambda ops: [{k: v for k, v in op.items() if k != "plan"} for op in ops]  # noqa: E731
    assert strip(applied["plan"]["ops"]) == strip(preview["plan"]["ops"])
    assert applied["impact"]["changes"] == preview["impact"]["changes"]
    assert_applied_as_previewed(cli, applied, pos)
    return applied


def test_redefine_single_to_multi_and_back(store_cli):
    data = stage_and_apply(store_cli, "redefine", "prefers_editor", "--cardinality", "multi")
    assert data["impact"]["answers_changed"] == 0  # from now on: no answer changes yet
    store_cli.ok("remember", "u1", "prefers_editor", "zed")  # now: after the change, so it accumulates
    assert sorted(values(store_cli, "u1", "prefers_editor")) == ["vim", "zed"]
    data = stage_and_apply(store_cli, "redefine", "uses_technology", "--cardinality", "single", "--retroactive")
    assert change(data, "u1", "uses_technology")["after"] == ["Redis"]


def test_merge_then_split(store_cli):
    data = stage_and_apply(store_cli, "merge", "editor_choice", "prefers_editor")
    assert change(data, "u3", "prefers_editor")["after"] == ["helix"]
    assert values(store_cli, "u3", "prefers_editor") == ["helix"]
    stage_and_apply(store_cli, "split", "editor_choice")
    assert values(store_cli, "u3", "prefers_editor") == []
    assert values(store_cli, "u3", "editor_choice") == ["helix"]


def test_define_and_promote(store_cli):
    stage_and_apply(store_cli, "define", "login_shell", "--cardinality", "single", "--type", "string")
    data = stage_and_apply(store_cli, "promote", "login_shell", "--match", r"use (\w+) as my shell")
    assert change(data, "u1", "login_shell")["after"] == ["fish"]
    assert values(store_cli, "u2", "login_shell") == ["zsh"]
    assert values(store_cli, "u1", "note") == []


def test_exclusion_by_redefine_and_registry_load(store_cli, tmp_path):
    data = stage_and_apply(store_cli, "redefine", "avoids", "--excludes", "likes", "--retroactive")
    assert change(data, "u1", "likes")["after"] == []
    reg = tmp_path / "extra.yaml"
    reg.write_text("registry: extra\npredicates:\n  favourite_colour:\n    cardinality: single\n", encoding="utf-8")
    data = stage_and_apply(store_cli, "registry", "load", str(reg))
    assert [op["name"] for op in data["plan"]["ops"]] == ["favourite_colour"]
    remember(store_cli, "u1", "favourite_colour", "teal", "2026-05-01")
    assert values(store_cli, "u1", "favourite_colour") == ["teal"]
