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

from .conftest import Cli, isolated_cli
from .test_governance import position, remember


@pytest.fixture
def store_cli(backend_url, tmp_path, monkeypatch) -> Cli:
    cli = isolated_cli(backend_url, tmp_path, monkeypatch)
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

    p = Plan(
        raw["kind"],
        "",
        raw["collection"],
        raw.get("operator", ""),
        raw["based_on"]["position"],
        raw["based_on"]["registry_digest"],
        tuple(replace(record_from_json(o), plan="") for o in raw["ops"]),
        tuple(decode_event(e) for e in raw["statements"]),
        raw["at"],
        tuple(raw["scope"]),
        store=raw["based_on"].get("store", ""),
        names_digest=raw["based_on"].get("names_digest", ""),
    )
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


@pytest.mark.parametrize(
    "edit, expect",
    [
        (_set_definition("value_type", "number"), "stored value class of likes"),
        (_operator, "not its planner"),
        (_future, "not a time it could have been planned at"),
    ],
)
def test_a_resealed_registry_plan_is_refused(store_cli, tmp_path, edit, expect):
    f = tmp_path / "p.json"
    store_cli.ok("--operator", "ana", "redefine", "likes", "--description", "Liked things.", "--plan-out", str(f))
    reseal(f, edit)
    pos = position(store_cli)
    err = store_cli.fail("apply", str(f))
    assert err["code"] == "invalid_plan" and expect in err["message"], err
    assert position(store_cli) == pos


@pytest.mark.parametrize(
    "edit, expect",
    [
        (_number_statement, "not a string of"),
        (_unknown_statement, "'no_such_thing', which is not registered"),
        (_agent_statement, "is not an operator statement"),
    ],
)
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


# --- every preview tells the whole change ---------------------------------------------------


def test_define_of_a_near_duplicate_name_names_the_neighbour_and_its_score(store_cli):
    data = store_cli.ok("define", "favorite_editor", "--cardinality", "single", "--type", "string")
    near = [r for r in data["risks"] if r["flag"] == "near_duplicate"]
    assert len(near) == 1 and "near the registered prefers_editor (score" in near[0]["detail"]
    far = store_cli.ok("define", "budget_eur", "--cardinality", "single", "--type", "number")
    assert "near_duplicate" not in [r["flag"] for r in far["risks"]]


def test_confirm_preview_tells_the_provenance_change_and_shows_values_not_keys(store_cli):
    conflict = store_cli.ok("conflicts", "list")["conflicts"][0]["id"]
    data = store_cli.ok("conflicts", "confirm", conflict, "--keep", "likes")
    restated = next(r["detail"] for r in data["risks"] if r["flag"] == "restated")
    assert "u1 likes = coffee is restated by the operator" in restated
    assert "was 2026-01-01T00:00:00Z" in restated and "(was user_stated)" in restated
    human = store_cli.run("conflicts", "confirm", conflict, "--keep", "likes", json_mode=False)
    assert human.exit_code == 0, human.stderr
    assert "s:coffee" not in human.stdout and "restated by the operator" in human.stdout


@pytest.mark.parametrize(
    "args",
    [
        ("redefine", "likes", "--description", "Liked things."),
        ("merge", "prefers_language", "likes"),
    ],
)
def test_a_preview_and_its_apply_run_show_one_plan_id(store_cli, args):
    preview = store_cli.ok(*args)
    applied = store_cli.ok(*args, "--apply")
    assert preview["plan"]["id"] == applied["plan"]["id"] == applied["applied"]


def test_a_confirm_preview_and_its_apply_run_show_one_plan_id(store_cli):
    conflict = store_cli.ok("conflicts", "list")["conflicts"][0]["id"]
    preview = store_cli.ok("conflicts", "confirm", conflict, "--keep", "likes")
    applied = store_cli.ok("conflicts", "confirm", conflict, "--keep", "likes", "--apply")
    assert preview["plan"]["id"] == applied["applied"]


def test_registry_load_previews_each_predicate_with_the_risks_of_the_equivalent_redefine(store_cli, tmp_path):
    likes = store_cli.ok("registry", "show", "likes")
    assert likes["cardinality"] == "multi" and likes["excludes"]
    remember(store_cli, "u1", "likes", "tea", "2026-01-05")  # u1 likes coffee and tea now
    f = tmp_path / "r.yaml"
    f.write_text(
        "registry: narrower\ndescription: Likes become single.\npredicates:\n"
        f"  likes:\n    cardinality: single\n    value_type: string\n    description: {likes['description']}\n"
        "  hobby:\n    cardinality: multi\n    value_type: string\n    description: A pastime.\n",
        encoding="utf-8",
    )
    data = store_cli.ok("registry", "load", str(f))
    per = {p["name"]: p for p in data["plan"]["details"]["predicates"]}
    assert per["hobby"]["status"] == "new"
    assert per["likes"]["status"] == "changed"
    assert per["likes"]["fields"]["cardinality"] == {"before": "multi", "after": "single"}
    assert per["likes"]["fields"]["excludes"] == {"before": likes["excludes"], "after": []}
    hidden = next(r["detail"] for r in data["risks"] if r["flag"] == "values_hidden")
    assert "likes becomes single-valued from now on: 1 pair holds several values" in hidden


# --- apply runs the plan's operations again: every kind (issue 11) ----------------------------


def _statement(i, **change):
    def edit(raw):
        e = decode_event(raw["statements"][i])
        fields = {
            "kind": e.kind,
            "confidence": e.confidence,
            "source": e.source,
            "evidence": e.evidence,
            "replaces": e.replaces,
            "retraction": e.retraction,
            "caused_by": e.caused_by,
        }
        value = change.get("value", e.value)
        fields.update({k: v for k, v in change.items() if k != "value"})
        new = make_event(e.subject, e.predicate, value, e.observed_at, **fields)
        raw["statements"][i] = new.to_json()
        for j, other in enumerate(raw["statements"]):  # the retractions still follow it
            if other.get("caused_by") == e.id:
                raw["statements"][j]["caused_by"] = new.id

    return edit


def _drop_retractions(raw):
    raw["statements"] = raw["statements"][:1]


def _enum(raw):
    raw["ops"][0]["definition"].update({"value_type": "enum", "allowed": ["coffee", "tea"]})


def _alias(raw):
    raw["ops"][0]["definition"]["aliases"] = ["adores"]


def _backdated(raw):
    raw["at"] = 1_600_000_000 * 10**9  # 2020: before the declaration of likes, so the redefine reads back in time


def _nobody(raw):
    raw["operator"] = "nobody\x1b]0;PWNED\x07"
    for op in raw["ops"]:
        op["operator"] = raw["operator"]


@pytest.mark.parametrize(
    "edit, expect",
    [
        (_enum, "its record 1 (redefine likes) is not what its operation produces against this store now"),
        (_alias, "its record 1 (redefine likes) is not what its operation produces against this store now"),
        (_nobody, "its planner is not an operator name (a planner holds a control or invisible character"),
        (_backdated, "it is dated 2020-09-13T12:26:40Z, before the registry records of its names it was planned"),
    ],
)
def test_a_resealed_redefine_the_command_could_not_make_is_refused(store_cli, tmp_path, edit, expect):
    f = tmp_path / "p.json"
    store_cli.ok("--operator", "ana", "redefine", "likes", "--description", "Liked things.", "--plan-out", str(f))
    reseal(f, edit)
    pos = position(store_cli)
    err = store_cli.fail("--operator", "ana", "apply", str(f))
    assert err["code"] == "invalid_plan" and expect in err["message"], err
    assert position(store_cli) == pos


@pytest.mark.parametrize(
    "edit, expect",
    [
        # a string of the predicate, but not the value the conflict holds: never believed
        (_statement(0, value="tea"), "its statement m-"),
        (_statement(0, kind="preference"), "its statement m-"),
        (_statement(0, replaces=()), "its statement m-"),
        (_statement(0, evidence="conflicts confirm by bob"), "does not say it was confirmed by its planner 'ana'"),
        (_drop_retractions, "it holds 1 statement(s) where its confirm produces 2"),
    ],
)
def test_a_resealed_confirm_is_run_again_and_refused_when_it_differs(store_cli, tmp_path, edit, expect):
    f = tmp_path / "c.json"
    conflict = store_cli.ok("conflicts", "list")["conflicts"][0]["id"]
    store_cli.ok("--operator", "ana", "conflicts", "confirm", conflict, "--keep", "likes", "--plan-out", str(f))
    reseal(f, edit)
    pos = position(store_cli)
    err = store_cli.fail("--operator", "ana", "apply", str(f))
    assert err["code"] == "invalid_plan" and expect in err["message"], err
    assert position(store_cli) == pos


def test_an_untouched_confirm_plan_applies_after_it_is_run_again(store_cli, tmp_path):
    f = tmp_path / "c.json"
    conflict = store_cli.ok("conflicts", "list")["conflicts"][0]["id"]
    store_cli.ok(
        "--operator",
        "ana",
        "conflicts",
        "confirm",
        conflict,
        "--keep",
        "likes",
        "--reason",
        "asked",
        "--plan-out",
        str(f),
    )
    out = store_cli.ok("--operator", "ana", "apply", str(f))
    assert len(out["events"]) == 2 and out["applied_by"] == "ana" and "planned_by" not in out


def _promoted_twice(raw):
    raw["ops"][-1]["notes"].append(dict(raw["ops"][-1]["notes"][0], value="tea"))


def _retroactive_merge(raw):
    raw["ops"][0]["retroactive"] = True


def _withdraw_nothing(raw):
    raw["ops"][0]["events"] = []


def _declare_alias(raw):
    raw["ops"][0]["definition"]["aliases"] = ["size"]


@pytest.mark.parametrize(
    "make, edit, expect",
    [
        (
            lambda c, f: c.ok("merge", "prefers_language", "likes", "--plan-out", f),
            _retroactive_merge,
            "record 1 (merge prefers_language)",
        ),
        (
            lambda c, f: c.ok("define", "shoe_size", "--type", "number", "--cardinality", "single", "--plan-out", f),
            _declare_alias,
            "its record 1 (declare shoe_size) is not what its operation produces against this store now",
        ),
    ],
)
def test_a_resealed_plan_of_every_kind_is_run_again(store_cli, tmp_path, make, edit, expect):
    f = tmp_path / "p.json"
    make(store_cli, str(f))
    reseal(f, edit)
    pos = position(store_cli)
    err = store_cli.fail("apply", str(f))
    assert err["code"] == "invalid_plan" and expect in err["message"], err
    assert position(store_cli) == pos


def test_a_resealed_promote_of_one_note_twice_is_refused(store_cli, tmp_path):
    note = store_cli.ok("remember", "u2", "note", "drinks coffee daily", "--at", "2026-01-05")["stored"]["event_id"]
    f = tmp_path / "p.json"
    store_cli.ok("promote", "likes", "--note", f"{note}=coffee", "--plan-out", str(f))
    reseal(f, _promoted_twice)  # the same note promoted again with another value
    pos = position(store_cli)
    err = store_cli.fail("apply", str(f))
    assert err["code"] == "invalid_plan" and "its record 1 (promote likes)" in err["message"], err
    assert position(store_cli) == pos


def test_a_resealed_revert_that_leaves_a_statement_behind_is_refused(store_cli, tmp_path):
    conflict = store_cli.ok("conflicts", "list")["conflicts"][0]["id"]
    applied = store_cli.ok("conflicts", "confirm", conflict, "--keep", "likes", "--apply")["applied"]
    f = tmp_path / "r.json"
    store_cli.ok("revert", applied, "--plan-out", str(f))
    reseal(f, _withdraw_nothing)
    pos = position(store_cli)
    err = store_cli.fail("apply", str(f))
    assert err["code"] == "invalid_plan" and "its record 1 (withdraw " in err["message"], err
    assert position(store_cli) == pos


def test_a_resealed_registry_load_with_a_definition_no_file_could_hold_is_refused(store_cli, tmp_path):
    reg = tmp_path / "r.yaml"
    reg.write_text(
        "registry: extra\ndescription: One more.\npredicates:\n"
        "  shoe_size:\n    cardinality: single\n    value_type: number\n    description: Shoe size.\n"
    )
    f = tmp_path / "p.json"
    store_cli.ok("registry", "load", str(reg), "--plan-out", str(f))

    def edit(raw):
        raw["ops"][0]["definition"]["excludes"] = ["no_such_name"]

    reseal(f, edit)
    pos = position(store_cli)
    err = store_cli.fail("apply", str(f))
    assert err["code"] == "invalid_plan" and "its operations cannot be made against this store now" in err["message"]
    assert position(store_cli) == pos


def test_a_plan_names_its_planner_and_the_log_names_who_applied_it(store_cli, tmp_path):
    """The planner's name is the plan file's word (it is not signed); the applier is who ran apply."""
    f = tmp_path / "p.json"
    store_cli.ok("--operator", "ana", "redefine", "likes", "--description", "Liked things.", "--plan-out", str(f))

    def edit(raw):
        raw["operator"] = "nobody"
        for op in raw["ops"]:
            op["operator"] = "nobody"

    reseal(f, edit)
    out = store_cli.ok("--operator", "bob", "apply", str(f))
    assert out["planned_by"] == "nobody" and out["applied_by"] == "bob"
    human = store_cli.run("--operator", "bob", "apply", str(f), json_mode=False)
    assert "already applied" in human.stderr
    rows = [r for r in store_cli.ok("registry", "log")["changes"] if r.get("plan") == out["applied"]]
    assert {(r["op"], r["operator"]) for r in rows} == {("redefine", "nobody"), ("applied", "bob")}


def test_apply_says_when_the_planner_is_not_the_applier(store_cli, tmp_path):
    f = tmp_path / "p.json"
    store_cli.ok("--operator", "ana", "redefine", "likes", "--description", "Liked things.", "--plan-out", str(f))
    r = store_cli.run("--operator", "bob", "apply", str(f), json_mode=False)
    assert r.exit_code == 0, r.stderr
    said = " ".join(r.stdout.split())
    assert (
        "Its records name 'ana' as planner (the plan file says so; it is not signed); "
        "the log records that 'bob' applied it."
    ) in said
