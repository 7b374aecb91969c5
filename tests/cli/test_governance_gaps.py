"""Issue 12's remaining defects, through the CLI on SQLite and on PostgreSQL: a printed
suggestion id works in the command it names, lint respects "never merge", history says
which name a step was stored under, automatic declarations say so, and remember's
related list holds only the same value held elsewhere."""

from __future__ import annotations

import shlex

import pytest

from recall_admin.demo import build_demo
from recall_engine.storage import open_backend

from .conftest import Cli, isolated_cli


@pytest.fixture
def any_cli(backend_url, tmp_path, monkeypatch) -> Cli:
    return isolated_cli(backend_url, tmp_path, monkeypatch)


@pytest.fixture
def demo(any_cli: Cli) -> Cli:
    with open_backend(any_cli.url) as backend:
        build_demo(backend, "memories")
    return any_cli


def printed(command: str) -> list[str]:
    words = shlex.split(command)
    assert words[0] == "recall-admin"
    return words[1:]


def test_every_id_vocab_suggest_prints_works_in_the_command_it_names(demo: Cli):
    clusters = demo.ok("vocab", "suggest", "--threshold", "0.6")["clusters"]
    low = [c for c in clusters if c["score"] < 0.7]
    assert low, "the demo has a pair between 0.6 and the default threshold"
    for c in clusters:
        plan = demo.ok(*printed(c["suggestion"]["stage"]))["plan"]
        assert (
            plan["kind"] == "merge"
            and plan["title"] == f"merge {c['suggestion']['merge'][0]} into {c['suggestion']['into']}"
        )
    # at the default threshold the low pair is no suggestion: said with the threshold to use
    err = demo.fail("vocab", "merge", low[0]["id"])
    assert err["code"] == "not_found"
    assert err["message"] == (
        f"no open suggestion {low[0]['id']!r} (ids come from `vocab suggest`, with the same --threshold)"
    )
    demo.ok(*printed(low[0]["suggestion"]["never"]))
    assert low[0]["id"] not in [c["id"] for c in demo.ok("vocab", "suggest", "--threshold", "0.6")["clusters"]]


def test_lint_respects_never_merge(demo: Cli):
    def near(cli: Cli) -> list[list[str]]:
        return [f["names"] for f in cli.ok("registry", "lint")["findings"] if f["code"] == "near_duplicate"]

    assert ["editor_preference", "prefers_editor"] in near(demo)
    demo.ok("vocab", "never", "editor_preference", "prefers_editor", "--reason", "not the same")
    assert ["editor_preference", "prefers_editor"] not in near(demo)
    assert near(demo) == [n for n in near(demo) if n != ["editor_preference", "prefers_editor"]]


def test_history_says_which_name_a_step_was_stored_under(any_cli: Cli):
    cli = any_cli
    cli.ok("init", "--registry", "personal-assistant")
    cli.ok("remember", "user", "likes", "coffee", "--at", "2026-09-01")
    cli.ok("remember", "user", "lives_in", "Paris", "--at", "2026-09-02")
    cli.ok("merge", "likes", "lives_in", "--apply")
    steps = cli.ok("history", "user", "lives_in")["steps"]
    assert [(s["value"], s["stored_as"]) for s in steps] == [("coffee", "likes"), ("Paris", "lives_in")]
    out = cli.run("history", "user", "lives_in", json_mode=False, env={"COLUMNS": "200"}).stdout
    [coffee] = [line for line in out.splitlines() if "coffee" in line and "→ coffee" in line]
    [paris] = [line for line in out.splitlines() if "Paris" in line and "→ Paris" in line]
    assert "(stored as likes)" in coffee and "stored as" not in paris


def test_automatic_declarations_say_they_were_automatic(any_cli: Cli):
    cli = any_cli
    cli.ok("init", "--registry", "personal-assistant", "--open")
    cli.ok("remember", "dave", "board_game", "chess")
    [row] = [c for c in cli.ok("registry", "log", "--name", "board_game")["changes"] if c["op"] == "define"]
    assert row["auto"] is True and row["operator"] == ""
    out = cli.run("registry", "log", "--name", "board_game", json_mode=False, env={"COLUMNS": "200"}).stdout
    [line] = [x for x in out.splitlines() if "board_game" in x and "define" in x]
    assert "defined on first use" in line and line.split("│")[4].strip() == "automatic"


def test_remember_relates_only_the_same_value_held_elsewhere(any_cli: Cli):
    cli = any_cli
    cli.ok("init", "--registry", "coding")
    cli.ok("remember", "u", "uses_technology", "Redis")
    cli.ok("remember", "u", "uses_technology", "vim")
    related = cli.ok("remember", "u", "prefers_editor", "vim")["related"]
    assert [(b["predicate"], b["value"]) for b in related] == [("uses_technology", "vim")]
    assert cli.ok("remember", "u", "prefers_editor", "emacs")["related"] == []


def test_a_registry_load_preview_shows_each_predicate_field_by_field(any_cli: Cli, tmp_path):
    cli = any_cli
    cli.ok("init", "--registry", "personal-assistant")
    cli.ok("remember", "u", "likes", "jam", "--at", "2026-01-01")
    cli.ok("remember", "u", "likes", "tea", "--at", "2026-01-02")
    path = tmp_path / "mine.yaml"
    path.write_text(
        "registry: mine\npredicates:\n"
        "  likes:\n    cardinality: single\n    value_type: string\n    description: liked\n"
        "  hobby:\n    cardinality: multi\n    value_type: string\n",
        encoding="utf-8",
    )
    out = " ".join(cli.run("registry", "load", str(path), json_mode=False, env={"COLUMNS": "200"}).stdout.split())
    assert "Predicates: + hobby: new, multi-valued string" in out
    assert "~ likes: cardinality multi → single;" in out and "→ liked; excludes dislikes → —" in out
    assert "VALUES_HIDDEN" in out and "WHOLE_LOG" in out
    # the whole-log risk names the rules it covers in a short list and says plainly when nothing changes yet
    assert "the excludes or historical rule of likes covers the whole log" in out
    assert "no pair in the store changes its history today" in out


def test_a_risk_lists_many_names_briefly():
    from recall_admin.governance import _names

    assert _names(["a"]) == "a"
    assert _names(["a", "b"]) == "a and b"
    assert _names(["a", "b", "c"]) == "a, b and c"
    assert _names(["a", "b", "c", "d", "e", "f", "g"]) == "a, b, c, d and 3 more"
