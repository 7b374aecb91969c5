"""Revert withdraws an applied plan: every answer, now and as of any instant, is what it was.

The issue's reproduction, refusals (twice, a later plan building on it), a reverted
conflict decision, and the revert preview, on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from .conftest import Cli, isolated_cli
from .test_governance import position, remember, values


@pytest.fixture
def store_cli(backend_url, tmp_path, monkeypatch) -> Cli:
    cli = isolated_cli(backend_url, tmp_path, monkeypatch)
    cli.ok("--operator", "ana", "init", "--registry", "coding", "--registry", "personal-assistant")
    return cli


def answers(cli: Cli, subject: str, predicate: str, *instants: str) -> dict[str, list]:
    out = {"now": values(cli, subject, predicate)}
    for t in instants:
        out[t] = values(cli, subject, predicate, "--as-of", t)
    return out


def test_the_issues_reproduction_reverts_to_exactly_what_was_answered(store_cli):
    cli = store_cli
    for value, day in (("vim", "2026-03-01"), ("emacs", "2026-03-10"), ("helix", "2026-03-20")):
        remember(cli, "user", "prefers_editor", value, day)
    for value, day in (("nano", "2026-03-02"), ("vim", "2026-03-12")):
        remember(cli, "other", "prefers_editor", value, day)
    cli.ok("redefine", "prefers_editor", "--cardinality", "multi", "--apply")
    cli.ok("remember", "user", "prefers_editor", "zed")
    instants = ("2026-03-11", "2026-03-21", "2026-03-13")
    before = {s: answers(cli, s, "prefers_editor", *instants) for s in ("user", "other")}
    assert before["user"]["now"] == ["helix", "zed"]
    assert before["user"]["2026-03-11"] == ["emacs"]
    p = cli.ok("redefine", "prefers_editor", "--cardinality", "single", "--retroactive", "--apply")
    assert answers(cli, "user", "prefers_editor", *instants) != before["user"]

    rev = cli.ok("revert", p["applied"])
    assert rev["plan"]["kind"] == "revert"
    assert [op["op"] for op in rev["plan"]["ops"]] == ["withdraw"]
    back = {c["subject"]: c for c in rev["impact"]["changes"]}
    assert back["user"]["after"] == ["helix", "zed"]  # the preview shows the answers going back
    reverted = cli.ok("revert", p["applied"], "--apply", "--reason", "wrong call")
    assert {s: answers(cli, s, "prefers_editor", *instants) for s in ("user", "other")} == before

    # reverting it again is refused, naming the revert, and writes nothing
    pos = position(cli)
    err = cli.fail("revert", p["applied"], "--apply")
    assert err["code"] == "invalid_plan"
    assert f"already reverted by plan {reverted['applied']}" in err["message"]
    assert position(cli) == pos
    log = cli.ok("registry", "log")["changes"]
    withdraw = next(c for c in log if c["op"] == "withdraw")
    assert (withdraw["withdraws"], withdraw["reason"]) == (p["applied"], "wrong call")


def test_a_later_plan_building_on_it_is_named_and_the_revert_refused(store_cli):
    cli = store_cli
    remember(cli, "u1", "uses_technology", "Django", "2026-01-01")
    merged = cli.ok("merge", "uses_technology", "prefers_language", "--apply")
    later = cli.ok("redefine", "prefers_language", "--cardinality", "multi", "--apply")
    pos = position(cli)
    err = cli.fail("revert", merged["applied"])
    assert err["code"] == "invalid_plan"
    assert f"plan {later['applied']} (applied later) builds on it" in err["message"]
    assert position(cli) == pos
    # once the later plan is reverted, the first one can be
    cli.ok("revert", later["applied"], "--apply")
    cli.ok("revert", merged["applied"], "--apply")
    assert values(cli, "u1", "uses_technology") == ["Django"]


def test_reverting_a_conflict_confirm_withdraws_its_operator_statements(store_cli):
    cli = store_cli
    remember(cli, "u1", "likes", "coffee", "2026-01-01")
    remember(cli, "u1", "prefers_language", "coffee", "2026-01-02")
    instants = ("2026-01-01T12:00:00Z", "2026-01-03")
    before = {p: answers(cli, "u1", p, *instants) for p in ("likes", "prefers_language")}
    conflict = cli.ok("conflicts", "list")["conflicts"][0]["id"]
    done = cli.ok("conflicts", "confirm", conflict, "--keep", "likes", "--apply")
    assert values(cli, "u1", "prefers_language") == []
    rev = cli.ok("revert", done["applied"])
    assert len(rev["plan"]["ops"][0]["events"]) == len(done["events"])  # the statements it takes back
    cli.ok("revert", done["applied"], "--apply")
    assert {p: answers(cli, "u1", p, *instants) for p in ("likes", "prefers_language")} == before
    assert [c["id"] for c in cli.ok("conflicts", "list")["conflicts"]] == [conflict]


def test_revert_of_an_unknown_plan_and_of_a_revert(store_cli):
    cli = store_cli
    err = cli.fail("revert", "plan-000000000000000000000000")
    assert err["code"] == "invalid_plan" and "no applied plan" in err["message"]
    done = cli.ok("redefine", "likes", "--description", "Liked things.", "--apply")
    rev = cli.ok("revert", done["applied"], "--apply")
    err = cli.fail("revert", rev["applied"])
    assert err["code"] == "invalid_plan" and "is itself a revert" in err["message"]


def test_an_audit_bundle_carries_the_withdrawal_and_replays_the_same_answers(store_cli, tmp_path):
    cli = store_cli
    remember(cli, "u1", "likes", "coffee", "2026-01-01")
    remember(cli, "u1", "prefers_language", "coffee", "2026-01-02")
    conflict = cli.ok("conflicts", "list")["conflicts"][0]["id"]
    done = cli.ok("conflicts", "confirm", conflict, "--keep", "likes", "--apply")
    cli.ok("revert", done["applied"], "--apply")
    bundle = tmp_path / "b.json"
    cli.ok("audit", "export", "--subject", "u1", "--as-of", "2030-01-01", "-o", str(bundle))
    assert cli.ok("audit", "verify", str(bundle))["valid"] is True
    replayed = cli.ok("audit", "replay", str(bundle))["beliefs"]
    live = cli.ok("recall", "u1", "--as-of", "2030-01-01")["beliefs"]
    key = lambda b: (b["predicate"], str(b["value"]))  # noqa: E731
    assert sorted(map(key, replayed)) == sorted(map(key, live))
    assert ("prefers_language", "coffee") in map(key, replayed)  # the withdrawn retraction does not count


# --- plans stay valid while agents write ---------------------------------------------------


def test_unrelated_first_use_under_an_open_vocabulary_leaves_a_plan_valid(backend_url, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("RECALL_MATCH_THRESHOLD", "-1")  # employer stays its own name until the operator merges it
    cli = Cli(backend_url, CliRunner())
    cli.ok("init", "--registry", "coding", "--registry", "personal-assistant", "--open")
    remember(cli, "dave", "employer", "Acme", "2026-01-01")
    f = tmp_path / "m.json"
    data = cli.ok("merge", "employer", "works_at", "--plan-out", str(f))
    cli.ok("remember", "dave", "hobby", "chess")  # a registry event: hobby is defined by its first use
    assert cli.ok("apply", str(f))["applied"] == data["plan"]["id"]
    assert values(cli, "dave", "works_at") == ["Acme"]


def test_a_write_to_a_pair_in_scope_or_a_new_name_merged_in_stales_the_plan(backend_url, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("RECALL_MATCH_THRESHOLD", "-1")  # employer stays its own name until the operator merges it
    cli = Cli(backend_url, CliRunner())
    cli.ok("init", "--registry", "coding", "--registry", "personal-assistant", "--open")
    remember(cli, "dave", "employer", "Acme", "2026-01-01")
    f = tmp_path / "m.json"
    cli.ok("merge", "employer", "works_at", "--plan-out", str(f))
    cli.ok("remember", "erin", "works_at", "Initech")
    pos = position(cli)
    err = cli.fail("apply", str(f))
    assert err["code"] == "stale_plan" and "erin/works_at" in err["message"]
    assert position(cli) == pos


def test_a_promote_by_pattern_goes_stale_only_for_a_note_it_would_select(store_cli, tmp_path):
    cli = store_cli
    remember(cli, "u1", "note", "I use fish as my shell", "2026-03-01")
    f = tmp_path / "p.json"
    cli.ok("promote", "prefers_shell", "--match", r"use (\w+) as my shell", "--plan-out", str(f))
    remember(cli, "u2", "note", "likes long walks", "2026-03-02")  # not selected: the plan holds
    g = tmp_path / "q.json"
    cli.ok("promote", "prefers_shell", "--match", r"use (\w+) as my shell", "--plan-out", str(g))
    remember(cli, "u3", "note", "I use zsh as my shell", "2026-03-03")  # selected: the plan is stale
    err = cli.fail("apply", str(g))
    assert err["code"] == "stale_plan" and "u3/note" in err["message"]
