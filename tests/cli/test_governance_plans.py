"""Plan files are untrusted: a resealed plan must still be one its command would produce now.

Each case edits a saved plan and seals it again (the seal is an unkeyed hash, so anyone
can), then `apply` must refuse it with a clear `invalid_plan` and write nothing; and a
plan from another store, or whose names' registry records changed, is refused even when
the store position is the one it was planned at. SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from typer.testing import CliRunner

from recall_admin.plans import plan_from_json
from recall_engine.records import decode_event, make_event

from .conftest import Cli
from .test_governance import position, remember


@pytest.fixture
def store_cli(backend_url, tmp_path, monkeypatch) -> Cli:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    for name in ("RECALL_STORE", "RECALL_COLLECTION", "RECALL_OPERATOR"):
        monkeypatch.delenv(name, raising=False)
    cli = Cli(backend_url, CliRunner())
    cli.ok("--operator", "ana", "init", "--registry", "coding", "--registry", "personal-assistant")
    remember(cli, "u1", "likes", "coffee", "2026-01-01")
    remember(cli, "u1", "prefers_language", "coffee", "2026-01-02")
    return cli


def reseal(path, edit) -> None:
    raw = json.loads(path.read_text())
    edit(raw)
    raw["id"] = _id(raw)
    plan_from_json(raw)  # the seal holds: what apply refuses is the content itself
    path.write_text(json.dumps(raw))


def _id(raw) -> str:
    from recall_admin.plans import Plan, record_from_json

    p = Plan(raw["kind"], "", raw["collection"], raw.get("operator", ""), raw["based_on"]["position"],
             raw["based_on"]["registry_digest"],
             tuple(replace(record_from_json(o), plan="") for o in raw["ops"]),
             tuple(decode_event(e) for e in raw["statements"]), raw["at"], tuple(raw["scope"]),
             store=raw["based_on"].get("store", ""), names_digest=raw["based_on"].get("names_digest", ""))
    return p.sealed().id


def _set_definition(field, value):
    def edit(raw):
        raw["ops"][0]["definition"][field] = value
    return edit


def _operator(raw):
    for op in raw["ops"]:
        op["operator"] = "nobody"


def _future(raw):
    raw["at"] = 4102444800 * 10**9  # 2100


def _number_statement(raw):
    e = decode_event(raw["statements"][0])
    raw["statements"][0] = make_event(e.subject, e.predicate, 42, e.observed_at, source="operator").to_json()


def _unknown_statement(raw):
    e = decode_event(raw["statements"][0])
    raw["statements"][0] = make_event(e.subject, "no_such_thing", "x", e.observed_at, source="operator").to_json()


def _agent_statement(raw):
    e = decode_event(raw["statements"][0])
    raw["statements"][0] = make_event(e.subject, e.predicate, e.value, e.observed_at, source="user_stated").to_json()


@pytest.mark.parametrize("edit, expect", [
    (_set_definition("value_type", "number"), "stored value class of likes"),
    (_operator, "not its planner"),
    (_future, "not a time it could have been planned at"),
])
def test_a_resealed_registry_plan_is_refused(store_cli, tmp_path, edit, expect):
    f = tmp_path / "p.json"
    store_cli.ok("--operator", "ana", "redefine", "likes", "--description", "Liked things.", "--plan-out", str(f))
    reseal(f, edit)
    pos = position(store_cli)
    err = store_cli.fail("apply", str(f))
    assert err["code"] == "invalid_plan" and expect in err["message"], err
    assert position(store_cli) == pos


@pytest.mark.parametrize("edit, expect", [
    (_number_statement, "not a string of"),
    (_unknown_statement, "'no_such_thing', which is not registered"),
    (_agent_statement, "is not an operator statement"),
])
def test_a_resealed_confirm_plan_is_refused(store_cli, tmp_path, edit, expect):
    f = tmp_path / "c.json"
    conflict = store_cli.ok("conflicts", "list")["conflicts"][0]["id"]
    store_cli.ok("conflicts", "confirm", conflict, "--keep", "likes", "--plan-out", str(f))
    reseal(f, edit)
    pos = position(store_cli)
    err = store_cli.fail("apply", str(f))
    assert err["code"] == "invalid_plan" and expect in err["message"], err
    assert position(store_cli) == pos


def test_a_plan_from_another_store_is_refused(store_cli, tmp_path, monkeypatch):
    f = tmp_path / "p.json"
    store_cli.ok("redefine", "likes", "--description", "Liked things.", "--plan-out", str(f))
    other = Cli(f"sqlite:///{tmp_path / 'other.db'}", CliRunner())
    other.ok("--operator", "ana", "init", "--registry", "coding", "--registry", "personal-assistant")
    err = other.fail("apply", str(f))
    assert err["code"] == "invalid_plan" and "another store" in err["message"]


def test_changed_records_of_its_names_stale_a_plan_at_the_same_position(store_cli, tmp_path):
    f = tmp_path / "p.json"
    store_cli.ok("redefine", "likes", "--description", "Liked things.", "--plan-out", str(f))

    def edit(raw):
        raw["based_on"]["names_digest"] = "sha256:" + "0" * 64
    reseal(f, edit)
    assert json.loads(f.read_text())["based_on"]["position"] == position(store_cli)
    err = store_cli.fail("apply", str(f))
    assert err["code"] == "stale_plan" and "registry records of the names it touches changed" in err["message"]
