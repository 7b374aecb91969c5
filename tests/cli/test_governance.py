"""Governance end to end through the CLI: stage, preview, apply, plan files, revert.

Every test drives `recall-admin` (Typer's CliRunner, in-process) against a real
SQLite store in a temporary folder (fixtures in conftest.py), and checks what a
preview promises against what the store holds afterwards: a preview writes
nothing, an apply appends exactly the previewed events, and the answers read
after it are the preview's "after".
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from recall_engine.storage import open_backend
from recall_engine.timeline import Timeline

REPO = Path(__file__).resolve().parents[2]

# --- helpers ------------------------------------------------------------------------------


def position(cli, collection: str = "memories") -> int:
    """The store's log position, read from the store itself (not through the CLI)."""
    b = open_backend(cli.url)
    try:
        return b.store(collection, create=False).position()
    finally:
        b.close()


def plan_events_in_log(url: str, plan_id: str, collection: str = "memories") -> int:
    """How many registry events of the log carry this plan id."""
    b = open_backend(url)
    try:
        tl = Timeline(b.store(collection, create=False).registry_events())
        return sum(1 for r in tl.log if r.record.plan == plan_id)
    finally:
        b.close()


def values(cli, subject: str, predicate: str, *extra: str) -> list[Any]:
    return [b["value"] for b in cli.ok("recall", subject, predicate, *extra)["beliefs"]]


def keys(vs: list[Any]) -> list[str]:
    return sorted(str(v).lower() for v in vs)


def change(data: dict[str, Any], subject: str, predicate: str) -> dict[str, Any]:
    hits = [c for c in data["impact"]["changes"] if c["subject"] == subject and c["predicate"] == predicate]
    assert len(hits) == 1, (subject, predicate, data["impact"]["changes"])
    return hits[0]


def flags(data: dict[str, Any]) -> list[str]:
    return [r["flag"] for r in data["risks"]]


def assert_applied_as_previewed(cli, data: dict[str, Any], before_position: int) -> None:
    """--apply appended exactly the previewed events, and every changed pair now answers
    what the preview said it would (a name merged away reads as its new predicate)."""
    planned = [e["id"] for e in data["plan"]["events"]]
    assert data["applied"] == data["plan"]["id"]
    assert data["events"] == planned
    # the plan's events, then the `applied` record saying who applied it
    assert data["position"] == position(cli) == before_position + len(planned) + 1
    log = cli.ok("registry", "log")["changes"]
    assert log[-1]["op"] == "applied" and log[-1]["plan"] == data["applied"]
    assert log[-1]["operator"] == data["applied_by"]
    merged_away = {op["name"] for op in data["plan"]["ops"] if op["op"] == "merge"}
    for c in data["impact"]["changes"]:
        if c["predicate"] in merged_away:
            assert c["after"] == []
            continue
        assert keys(values(cli, c["subject"], c["predicate"])) == keys(c["after"]), c


def remember(cli, subject: str, predicate: str, value: str, day: str) -> dict[str, Any]:
    return cli.ok("remember", subject, predicate, value, "--at", day)["stored"]


@pytest.fixture
def tech(coding):
    """u1 uses Django then Redis (multi); u2 uses Go; u1 prefers Python (single)."""
    remember(coding, "u1", "uses_technology", "Django", "2026-01-01")
    remember(coding, "u1", "uses_technology", "Redis", "2026-02-01")
    remember(coding, "u2", "uses_technology", "Go", "2026-01-10")
    remember(coding, "u1", "prefers_language", "Python", "2026-01-03")
    return coding


# --- preview writes nothing; the JSON shape --------------------------------------------------


def test_preview_writes_nothing_and_has_the_contract_shape(tech):
    pos = position(tech)
    data = tech.ok("redefine", "uses_technology", "--cardinality", "single", "--retroactive")
    assert position(tech) == pos
    assert set(data) == {"plan", "impact", "risks"}
    plan = data["plan"]
    assert plan["id"].startswith("plan-")
    assert plan["based_on"]["position"] == pos
    assert set(plan["based_on"]) == {"position", "registry_digest", "names_digest", "store"}
    assert plan["based_on"]["registry_digest"].startswith("sha256:")
    assert [op["op"] for op in plan["ops"]] == ["redefine"]
    assert plan["ops"][0]["definition"]["cardinality"] == "single"
    assert plan["ops"][0]["retroactive"] is True
    imp = data["impact"]
    for k in ("pairs", "subjects", "answers_changed", "history_changed", "changes"):
        assert k in imp
    assert (imp["pairs"], imp["subjects"]) == (2, 2)
    for c in imp["changes"]:
        assert {"subject", "predicate", "before", "after", "history_changed"} <= set(c)
    for r in data["risks"]:
        assert set(r) == {"flag", "detail"}
    # the registry is untouched: still multi-valued
    assert values(tech, "u1", "uses_technology") == ["Django", "Redis"]


def test_human_preview_has_summary_line_table_and_risks(tech):
    r = tech.run("redefine", "uses_technology", "--cardinality", "single", "--retroactive", json_mode=False)
    assert r.exit_code == 0, r.stderr
    out = r.stdout
    assert "Plan plan-" in out
    assert "2 pairs · 2 subjects · 1 answer changes · 1 history changes" in out
    assert "Django, Redis" in out and "→" in out
    assert "VALUES_HIDDEN" in out and "RETROACTIVE" in out
    assert "nothing was written" in r.stderr


# --- redefine -----------------------------------------------------------------------------


def test_multi_to_single_from_now_on_flags_values_hidden_and_changes_no_answer(tech):
    data = tech.ok("redefine", "uses_technology", "--cardinality", "single")
    assert data["impact"]["answers_changed"] == 0
    assert "values_hidden" in flags(data)
    detail = next(r["detail"] for r in data["risks"] if r["flag"] == "values_hidden")
    assert "1 pair holds several values" in detail
    pos = position(tech)
    applied = tech.ok("redefine", "uses_technology", "--cardinality", "single", "--apply")
    assert_applied_as_previewed(tech, applied, pos)
    assert values(tech, "u1", "uses_technology") == ["Django", "Redis"]
    # the next statement keeps only itself
    tech.ok("remember", "u1", "uses_technology", "Kafka")
    assert values(tech, "u1", "uses_technology") == ["Kafka"]


def test_multi_to_single_retroactive_hides_values_at_once(tech):
    data = tech.ok("redefine", "uses_technology", "--cardinality", "single", "--retroactive", "--as-of", "2026-01-15")
    c = change(data, "u1", "uses_technology")
    assert (c["before"], c["after"], c["history_changed"]) == (["Django", "Redis"], ["Redis"], True)
    assert (c["before_as_of"], c["after_as_of"]) == (["Django"], ["Django"])
    assert flags(data)[:2] == ["values_hidden", "retroactive"]
    assert "1 value(s) held now stop being believed" in data["risks"][0]["detail"]
    assert "1 pair would have answered differently" in data["risks"][1]["detail"]
    pos = position(tech)
    applied = tech.ok("redefine", "uses_technology", "--cardinality", "single", "--retroactive", "--apply")
    assert_applied_as_previewed(tech, applied, pos)
    assert values(tech, "u1", "uses_technology") == ["Redis"]


def test_single_to_multi(editors):
    # from now on: nothing changes until a new value is stated
    data = editors.ok("redefine", "prefers_editor", "--cardinality", "multi")
    assert data["impact"]["answers_changed"] == 0 and data["impact"]["history_changed"] == 0
    assert data["risks"] == []
    # for the whole history: every editor ever stated is believed again
    data = editors.ok("redefine", "prefers_editor", "--cardinality", "multi", "--retroactive")
    c = change(data, "user", "prefers_editor")
    assert (c["before"], c["after"]) == (["zed"], ["vim", "emacs", "zed"])
    assert flags(data) == ["retroactive"]
    pos = position(editors)
    applied = editors.ok("redefine", "prefers_editor", "--cardinality", "multi", "--retroactive", "--apply")
    assert_applied_as_previewed(editors, applied, pos)


def test_redefine_excludes_and_description(coding):
    remember(coding, "ana", "likes", "mangoes", "2026-01-01")
    remember(coding, "ana", "detail", "mangoes", "2026-02-01")
    # with or without --retroactive, an exclusion covers the old log (issue 19)
    for extra in (["--retroactive"], []):
        data = coding.ok("redefine", "detail", "--excludes", "likes", *extra, "--reason", "tidy up")
        c = change(data, "ana", "likes")
        assert (c["before"], c["after"], c["history_changed"]) == (["mangoes"], [], True)
        assert any(r["flag"] == "whole_log" for r in data["risks"])
    d = change(data, "ana", "detail")  # the detail now lists what it withdrew from likes
    assert [(r["predicate"], r["value"]) for r in d["replaced_changes"][0]["after"]] == [("likes", "mangoes")]
    assert d["replaced_changes"][0]["before"] == [] and data["impact"]["replaced_changed"] == 1
    assert data["plan"]["ops"][0]["definition"]["excludes"] == ["likes"]
    assert data["plan"]["ops"][0]["reason"] == "tidy up"
    data = coding.ok("redefine", "likes", "--no-excludes", "dislikes", "--description", "Things enjoyed.")
    assert data["plan"]["ops"][0]["definition"]["excludes"] == []
    assert data["plan"]["ops"][0]["definition"]["description"] == "Things enjoyed."


def test_enum_narrowed(coding):
    coding.ok(
        "define",
        "tier",
        "--cardinality",
        "single",
        "--type",
        "enum",
        "--allowed",
        "free",
        "--allowed",
        "pro",
        "--allowed",
        "team",
        "--apply",
    )
    coding.ok("remember", "acme", "tier", "team")
    data = coding.ok("redefine", "tier", "--allowed", "free", "--allowed", "Pro", "--allowed", "enterprise")
    assert flags(data) == ["enum_narrowed"]
    assert "no longer allows team" in data["risks"][0]["detail"]
    coding.ok("redefine", "tier", "--allowed", "free", "--allowed", "pro", "--allowed", "enterprise", "--apply")
    assert values(coding, "acme", "tier") == ["team"]  # still readable
    assert "expects one of: free, pro, enterprise" in coding.fail("remember", "acme", "tier", "team")["message"]


# --- merge, split, revert --------------------------------------------------------------------


def test_merge_with_cardinality_mismatch_then_split_restores(tech):
    before = {(s, p): values(tech, s, p) for s in ("u1", "u2") for p in ("uses_technology", "prefers_language")}
    data = tech.ok("merge", "uses_technology", "prefers_language")
    assert "cardinality_mismatch" in flags(data)
    assert "multi-valued and prefers_language is single-valued" in data["risks"][0]["detail"]
    assert change(data, "u2", "prefers_language")["after"] == ["Go"]
    # Django (01-01), Python (01-03), Redis (02-01) fold under single-valued prefers_language
    assert change(data, "u1", "prefers_language")["after"] == ["Redis"]
    pos = position(tech)
    applied = tech.ok("merge", "uses_technology", "prefers_language", "--apply")
    assert_applied_as_previewed(tech, applied, pos)
    assert values(tech, "u1", "uses_technology") == ["Redis"]  # the name reads as prefers_language

    split = tech.ok("split", "uses_technology")
    assert [op["op"] for op in split["plan"]["ops"]] == ["split"]
    pos = position(tech)
    applied = tech.ok("split", "uses_technology", "--apply")
    assert_applied_as_previewed(tech, applied, pos)
    after = {(s, p): values(tech, s, p) for s in ("u1", "u2") for p in ("uses_technology", "prefers_language")}
    assert after == before


def test_revert_of_applied_merge_previews_a_split_and_restores_answers(tech):
    before = {(s, p): values(tech, s, p) for s in ("u1", "u2") for p in ("uses_technology", "prefers_language")}
    merged = tech.ok("merge", "uses_technology", "prefers_language", "--apply")
    pos = position(tech)
    rev = tech.ok("revert", merged["applied"])
    assert position(tech) == pos  # a preview
    assert rev["plan"]["kind"] == "revert"
    assert [(op["op"], op["withdraws"]) for op in rev["plan"]["ops"]] == [("withdraw", merged["applied"])]
    assert change(rev, "u2", "prefers_language")["after"] == []
    applied = tech.ok("revert", merged["applied"], "--apply")
    assert_applied_as_previewed(tech, applied, pos)
    after = {(s, p): values(tech, s, p) for s in ("u1", "u2") for p in ("uses_technology", "prefers_language")}
    assert after == before
    log = tech.ok("registry", "log")["changes"]
    assert log[-1]["plan"] == applied["applied"]


def test_revert_of_a_redefine_restores_the_old_rules(editors):
    done = editors.ok("redefine", "prefers_editor", "--cardinality", "multi", "--retroactive", "--apply")
    assert values(editors, "user", "prefers_editor") == ["vim", "emacs", "zed"]
    rev = editors.ok("revert", done["applied"], "--apply", "--reason", "too many editors")
    assert rev["plan"]["ops"][0]["op"] == "withdraw"
    assert rev["plan"]["ops"][0]["reason"] == "too many editors"
    assert values(editors, "user", "prefers_editor") == ["zed"]


# --- define, promote --------------------------------------------------------------------------


def test_define_then_remember(coding):
    pos = position(coding)
    data = coding.ok("define", "budget", "--cardinality", "single", "--type", "number", "--description", "Euros.")
    assert position(coding) == pos
    assert data["plan"]["ops"][0]["op"] == "declare"
    assert data["plan"]["ops"][0]["definition"]["value_type"] == "number"
    assert data["impact"]["answers_changed"] == 0
    applied = coding.ok(
        "define", "budget", "--cardinality", "single", "--type", "number", "--description", "Euros.", "--apply"
    )
    assert_applied_as_previewed(coding, applied, pos)
    assert coding.ok("remember", "ana", "budget", "8000")["stored"]["value"] == 8000
    coding.ok(
        "define",
        "tier",
        "--cardinality",
        "single",
        "--type",
        "enum",
        "--allowed",
        "free",
        "--allowed",
        "pro",
        "--apply",
    )
    assert coding.fail("remember", "ana", "tier", "gold")["code"] == "invalid_input"


def test_promote_listed_notes(coding):
    n1 = remember(coding, "u1", "note", "I use fish as my shell", "2026-03-01")
    n2 = remember(coding, "u2", "note", "my shell is zsh these days", "2026-03-02")
    pos = position(coding)
    data = coding.ok("promote", "prefers_shell", "--note", f"{n1['event_id']}=fish", "--note", f"{n2['event_id']}=zsh")
    assert position(coding) == pos
    assert change(data, "u1", "prefers_shell")["after"] == ["fish"]
    assert change(data, "u2", "prefers_shell")["after"] == ["zsh"]
    assert change(data, "u1", "note") == {
        **change(data, "u1", "note"),
        "before": ["I use fish as my shell"],
        "after": [],
    }
    applied = coding.ok(
        "promote", "prefers_shell", "--note", f"{n1['event_id']}=fish", "--note", f"{n2['event_id']}=zsh", "--apply"
    )
    assert_applied_as_previewed(coding, applied, pos)
    belief = coding.ok("recall", "u1", "prefers_shell")["beliefs"][0]
    assert belief["observed_at"] == "2026-03-01T00:00:00Z"  # at the note's own instant


def test_revert_of_a_promote_makes_them_notes_again(coding):
    n = remember(coding, "u1", "note", "I use fish as my shell", "2026-03-01")
    done = coding.ok("promote", "prefers_shell", "--note", f"{n['event_id']}=fish", "--apply")
    assert values(coding, "u1", "note") == []
    pos = position(coding)
    rev = coding.ok("revert", done["applied"])
    assert [(op["op"], op["withdraws"]) for op in rev["plan"]["ops"]] == [("withdraw", done["applied"])]
    assert change(rev, "u1", "prefers_shell")["after"] == []
    applied = coding.ok("revert", done["applied"], "--apply")
    assert_applied_as_previewed(coding, applied, pos)
    assert values(coding, "u1", "note") == ["I use fish as my shell"]
    assert values(coding, "u1", "prefers_shell") == []


def test_promote_match_reports_notes_that_do_not_parse(coding):
    coding.ok(
        "define",
        "shell_family",
        "--cardinality",
        "single",
        "--type",
        "enum",
        "--allowed",
        "fish",
        "--allowed",
        "zsh",
        "--allowed",
        "bash",
        "--apply",
    )
    remember(coding, "u1", "note", "I use fish as my shell", "2026-03-01")
    remember(coding, "u2", "note", "I use tcsh as my shell", "2026-03-02")
    remember(coding, "u3", "note", "I use Zsh as my shell", "2026-03-03")
    remember(coding, "u4", "note", "nothing about shells", "2026-03-04")
    data = coding.ok("promote", "shell_family", "--match", r"use (\w+) as my shell")
    details = data["plan"]["details"]
    assert (details["parsed"], details["unparsed"]) == (2, 1)
    bad = [n for n in details["notes"] if not n["ok"]]
    assert [(n["subject"], n["note"]) for n in bad] == [("u2", "I use tcsh as my shell")]
    assert "expects one of: fish, zsh, bash" in bad[0]["error"]
    assert "unparsed_notes" in flags(data)
    assert change(data, "u3", "shell_family")["after"] == ["zsh"]  # the enum's spelling
    r = coding.run("promote", "shell_family", "--match", r"use (\w+) as my shell", json_mode=False)
    assert r.exit_code == 0 and "stays a note" in r.stdout and "tcsh" in r.stdout
    pos = position(coding)
    applied = coding.ok("promote", "shell_family", "--match", r"use (\w+) as my shell", "--apply")
    assert_applied_as_previewed(coding, applied, pos)
    assert values(coding, "u2", "note") == ["I use tcsh as my shell"]  # stays a note


def test_promote_match_into_string_predicate_and_subject_filter(coding):
    remember(coding, "u1", "note", "I use fish as my shell", "2026-03-01")
    remember(coding, "u2", "note", "I use zsh as my shell", "2026-03-02")
    data = coding.ok("promote", "prefers_shell", "--match", r"use (\w+) as my shell", "--subject", "U2")
    assert [
        (c["subject"], c["predicate"], c["after"])
        for c in data["impact"]["changes"]
        if c["predicate"] == "prefers_shell"
    ] == [("u2", "prefers_shell", ["zsh"])]
    pos = position(coding)
    applied = coding.ok("promote", "prefers_shell", "--match", r"use (\w+) as my shell", "--apply")
    assert_applied_as_previewed(coding, applied, pos)
    assert values(coding, "u1", "prefers_shell") == ["fish"]


# --- plan files, staleness, tampering -----------------------------------------------------------


def test_plan_file_round_trip(tech, tmp_path):
    f = tmp_path / "plan.json"
    pos = position(tech)
    data = tech.ok("merge", "uses_technology", "prefers_language", "--plan-out", str(f))
    assert position(tech) == pos
    saved = json.loads(f.read_text())
    assert saved["format"] == "recall-plan-v1"
    assert saved["id"] == data["plan"]["id"]
    assert saved["based_on"] == data["plan"]["based_on"]
    assert [e["id"] for e in saved["events"]] == [e["id"] for e in data["plan"]["events"]]
    result = tech.ok("apply", str(f))
    assert set(result) == {"applied", "applied_by", "events", "position"}
    assert result["applied"] == data["plan"]["id"]
    assert result["events"] == [e["id"] for e in data["plan"]["events"]]
    assert result["position"] == position(tech) == pos + len(result["events"]) + 1  # and the `applied` record
    assert plan_events_in_log(tech.url, data["plan"]["id"]) == len(result["events"]) + 1
    assert values(tech, "u2", "prefers_language") == change(data, "u2", "prefers_language")["after"]
    # applying it again is refused and writes nothing
    err = tech.fail("apply", str(f))
    assert err["code"] == "invalid_plan" and "already applied" in err["message"]
    assert position(tech) == result["position"]


def test_plan_goes_stale_when_an_affected_pair_moves(tech, tmp_path):
    f = tmp_path / "plan.json"
    tech.ok("redefine", "uses_technology", "--cardinality", "single", "--plan-out", str(f))
    tech.ok("remember", "u2", "uses_technology", "Rust")
    pos = position(tech)
    err = tech.fail("apply", str(f))
    assert err["code"] == "stale_plan"
    assert "u2/uses_technology" in err["message"] and "plan it again" in err["message"]
    assert position(tech) == pos
    # human mode: the same message on stderr, exit 1
    r = tech.run("apply", str(f), json_mode=False)
    assert r.exit_code == 1 and "u2/uses_technology" in r.stderr and r.stdout == ""


def test_plan_goes_stale_when_an_excluded_pair_moves(tech, tmp_path):
    f = tmp_path / "plan.json"
    tech.ok("redefine", "uses_technology", "--cardinality", "single", "--plan-out", str(f))
    tech.ok("remember", "u1", "avoids_technology", "Django")  # excludes uses_technology: in scope
    assert tech.fail("apply", str(f))["code"] == "stale_plan"


def test_plan_does_not_go_stale_on_an_unrelated_write(tech, tmp_path):
    f = tmp_path / "plan.json"
    data = tech.ok("redefine", "uses_technology", "--cardinality", "single", "--plan-out", str(f))
    tech.ok("remember", "u1", "prefers_editor", "helix")
    result = tech.ok("apply", str(f))
    assert result["applied"] == data["plan"]["id"]


def test_plan_goes_stale_when_the_registry_records_of_its_names_change(tech, tmp_path):
    f = tmp_path / "plan.json"
    tech.ok("redefine", "uses_technology", "--cardinality", "single", "--plan-out", str(f))
    tech.ok("redefine", "uses_technology", "--description", "Tools in use.", "--apply")
    pos = position(tech)
    err = tech.fail("apply", str(f))
    assert err["code"] == "stale_plan" and "registry records of the names it touches changed" in err["message"]
    assert position(tech) == pos


def test_unrelated_registry_change_leaves_a_plan_valid(tech, tmp_path):
    f = tmp_path / "plan.json"
    data = tech.ok("redefine", "uses_technology", "--cardinality", "single", "--plan-out", str(f))
    tech.ok("redefine", "prefers_editor", "--cardinality", "multi", "--apply")
    tech.ok("define", "hobby", "--cardinality", "multi", "--type", "string", "--apply")
    tech.ok("remember", "dave", "hobby", "chess")
    assert tech.ok("apply", str(f))["applied"] == data["plan"]["id"]


@pytest.mark.parametrize("edit", ["op", "position", "events_only_is_ignored", "not_json", "other_format"])
def test_tampered_plan_file_is_refused(tech, tmp_path, edit):
    f = tmp_path / "plan.json"
    tech.ok("redefine", "uses_technology", "--cardinality", "single", "--plan-out", str(f))
    raw = json.loads(f.read_text())
    if edit == "op":
        raw["ops"][0]["definition"]["cardinality"] = "multi"
        raw["ops"][0]["definition"]["historical"] = True
    elif edit == "position":
        raw["based_on"]["position"] += 100
    elif edit == "events_only_is_ignored":
        raw["events"] = []  # apply derives events from the signed ops, never from this list
    elif edit == "other_format":
        raw["format"] = "something-else"
    f.write_text("{" if edit == "not_json" else json.dumps(raw))
    pos = position(tech)
    if edit == "events_only_is_ignored":
        result = tech.ok("apply", str(f))
        assert len(result["events"]) == 1
        return
    err = tech.fail("apply", str(f))
    assert err["code"] == "invalid_plan"
    if edit in ("op", "position"):
        assert "changed after it was planned" in err["message"]
    assert position(tech) == pos


def test_apply_plan_of_another_collection_is_refused(tech, tmp_path):
    f = tmp_path / "plan.json"
    tech.ok("redefine", "uses_technology", "--cardinality", "single", "--plan-out", str(f))
    tech.ok("--collection", "other", "init", "--registry", "coding")
    err = tech.fail("--collection", "other", "apply", str(f))
    assert err["code"] == "invalid_plan" and "'memories'" in err["message"]


def test_apply_missing_plan_file(cli, tmp_path):
    err = cli.fail("apply", str(tmp_path / "nope.json"))
    assert err["code"] == "invalid_plan" and "does not exist" in err["message"]


# --- exit codes -----------------------------------------------------------------------------


def test_detailed_exitcode(tech):
    r = tech.run("redefine", "uses_technology", "--cardinality", "single", "--detailed-exitcode")
    assert r.exit_code == 0, r.stdout
    assert json.loads(r.stdout)["ok"] is True
    r = tech.run("redefine", "uses_technology", "--cardinality", "single", "--retroactive", "--detailed-exitcode")
    assert r.exit_code == 2, r.stdout
    doc = json.loads(r.stdout)
    assert doc["ok"] is True and doc["data"]["impact"]["answers_changed"] == 1
    r = tech.run("merge", "uses_technology", "prefers_language", "--detailed-exitcode", json_mode=False)
    assert r.exit_code == 2 and "Plan plan-" in r.stdout
    # with --apply the code still tells whether answers changed
    pos = position(tech)
    r = tech.run("merge", "uses_technology", "prefers_language", "--apply", "--detailed-exitcode")
    assert r.exit_code == 2 and position(tech) > pos


# --- registry load ----------------------------------------------------------------------------


CHANGED_EDITOR = """\
registry: coding-v2
description: The coding starter with a multi-valued editor.
predicates:
  prefers_editor:
    cardinality: multi
    value_type: string
    description: Every editor the developer likes to use.
"""


def test_registry_load_previews_what_the_file_changes(editors, tmp_path):
    f = tmp_path / "v2.yaml"
    f.write_text(CHANGED_EDITOR)
    pos = position(editors)
    data = editors.ok("registry", "load", str(f))
    assert position(editors) == pos
    assert data["plan"]["kind"] == "registry-load"
    assert [(op["op"], op["name"]) for op in data["plan"]["ops"]] == [("declare", "prefers_editor")]
    applied = editors.ok("registry", "load", str(f), "--apply")
    assert_applied_as_previewed(editors, applied, pos)
    assert editors.ok("registry", "show", "prefers_editor")["cardinality"] == "multi"
    err = editors.fail("registry", "load", str(f))
    assert err["code"] == "invalid_plan" and "declares nothing new" in err["message"]
    # loading the starter again declares back only what differs from it
    back = editors.ok("registry", "load", "coding")
    assert [(op["name"], op["definition"]["cardinality"]) for op in back["plan"]["ops"]] == [
        ("prefers_editor", "single")
    ]


def test_registry_load_refuses_a_change_of_value_class(editors, tmp_path):
    f = tmp_path / "bad.yaml"
    f.write_text(CHANGED_EDITOR.replace("value_type: string", "value_type: number"))
    pos = position(editors)
    err = editors.fail("registry", "load", str(f))
    assert err["code"] == "invalid_plan"
    assert "prefers_editor" in err["message"] and "define a new predicate" in err["message"]
    assert position(editors) == pos


def test_registry_load_of_a_malformed_file_names_file_and_line(coding, tmp_path):
    f = tmp_path / "broken.yaml"
    f.write_text(CHANGED_EDITOR.replace("cardinality: multi", "cardinality: several"))
    err = coding.fail("registry", "load", str(f))
    assert str(f) in err["message"] and "several" in err["message"]


# --- error paths ------------------------------------------------------------------------------


def test_unknown_predicate(coding):
    err = coding.fail("redefine", "favourite_colour", "--cardinality", "multi")
    assert err["code"] == "unknown_predicate"
    assert "favourite_colour" in err["message"] and "prefers_editor" in err["message"]
    assert coding.fail("merge", "favourite_colour", "likes")["code"] == "unknown_predicate"
    assert coding.fail("merge", "likes", "favourite_colour")["code"] == "unknown_predicate"


def test_merge_of_different_value_classes(coding):
    coding.ok("define", "budget", "--cardinality", "single", "--type", "number", "--apply")
    pos = position(coding)
    err = coding.fail("merge", "budget", "amount")
    assert err["code"] == "invalid_plan"
    assert '"budget" stores number values and "amount" stores string values' in err["message"]
    assert position(coding) == pos


def test_split_of_a_name_that_is_not_merged(coding):
    err = coding.fail("split", "likes")
    assert err["code"] == "invalid_plan" and "'likes' is not a merged name" in err["message"]


def test_redefine_with_nothing_to_change(coding):
    err = coding.fail("redefine", "likes", "--cardinality", "multi")
    assert err["code"] == "invalid_plan" and "nothing to change" in err["message"]
    assert "nothing to change" in coding.fail("redefine", "likes")["message"]


def test_redefine_bad_rules(coding):
    assert "want single or multi" in coding.fail("redefine", "likes", "--cardinality", "many")["message"]
    assert "only an enum" in coding.fail("redefine", "likes", "--allowed", "x")["message"]
    assert "does not exclude" in coding.fail("redefine", "likes", "--no-excludes", "works_at")["message"]
    err = coding.fail("redefine", "works_at", "--historical")
    assert "historical and must be multi-valued" in err["message"]


def test_define_errors(coding):
    assert "already exists" in coding.fail("define", "likes", "--cardinality", "multi", "--type", "string")["message"]
    err = coding.fail("define", "tier", "--cardinality", "single", "--type", "enum")
    assert "must list its allowed values" in err["message"]
    assert (
        "want string, number" in coding.fail("define", "x_y", "--cardinality", "single", "--type", "colour")["message"]
    )


def test_promote_errors(coding):
    n = remember(coding, "u1", "note", "I use fish as my shell", "2026-03-01")
    assert 'not "note"' in coding.fail("promote", "note", "--match", "fish")["message"]
    err = coding.fail("promote", "prefers_shell", "--match", "use (fish")
    assert err["code"] == "invalid_plan" and "not a valid regular expression" in err["message"]
    assert "either --note" in coding.fail("promote", "prefers_shell")["message"]
    both = coding.fail("promote", "prefers_shell", "--match", "x", "--note", f"{n['event_id']}=fish")
    assert "either --note" in both["message"]
    assert "EVENT_ID=VALUE" in coding.fail("promote", "prefers_shell", "--note", n["event_id"])["message"]
    assert "is not a note event" in coding.fail("promote", "prefers_shell", "--note", "m-000000=fish")["message"]
    assert "no note matched" in coding.fail("promote", "prefers_shell", "--match", r"use (\w+) as my editor")["message"]
    assert coding.fail("promote", "nonexistent", "--match", "x")["code"] == "unknown_predicate"
    coding.ok("promote", "prefers_shell", "--note", f"{n['event_id']}=fish", "--apply")
    assert "already promoted" in coding.fail("promote", "prefers_shell", "--note", f"{n['event_id']}=fish")["message"]


def test_revert_errors(coding):
    err = coding.fail("revert", "plan-000000000000")
    assert err["code"] == "invalid_plan" and "no applied plan" in err["message"]
    done = coding.ok("define", "budget", "--cardinality", "single", "--type", "number", "--apply")
    coding.ok("remember", "ana", "budget", "8000")
    err = coding.fail("revert", done["applied"])
    assert err["code"] == "invalid_plan"
    assert "declared budget, and 1 event(s) were stored under budget since" in err["message"]


def test_bad_as_of_and_missing_collection(coding, cli):
    err = coding.fail("redefine", "likes", "--cardinality", "single", "--as-of", "last tuesday")
    assert err["code"] == "invalid_input" and "--as-of" in err["message"]
    err = coding.fail("--collection", "nowhere", "merge", "likes", "dislikes")
    assert err["code"] == "not_found" and "nowhere" in err["message"]


def test_read_only_store_previews_but_refuses_apply(tech):
    pos = position(tech)
    data = tech.ok("--read-only", "redefine", "uses_technology", "--cardinality", "single")
    assert data["plan"]["id"]
    err = tech.fail("--read-only", "redefine", "uses_technology", "--cardinality", "single", "--apply")
    assert err["code"] == "read_only"
    assert position(tech) == pos


# --- a crash during apply leaves all of a plan or none of it -----------------------------------


def _big_registry(n: int) -> str:
    lines = ["registry: big", "description: Many predicates, to make one plan long.", "predicates:"]
    for i in range(n):
        lines += [
            f"  p{i:05d}_thing:",
            "    cardinality: single",
            "    value_type: string",
            f"    description: Thing number {i}.",
        ]
    return "\n".join(lines) + "\n"


# Run in the killed subprocess: the CLI's own entry point, with the store's insert
# announcing (by a marker file) that the plan's rows are written and the transaction is
# still open, then waiting to be killed.
_HOOKED_APPLY = """
import os, sys, time
from recall_engine.storage.sqlite import store as sqlite_store
marker = sys.argv.pop(1)
insert = sqlite_store.SQLiteStore._insert
def insert_then_wait(self, conn, prepared):
    n = insert(self, conn, prepared)
    with open(marker + ".tmp", "w") as f:
        f.write(str(n))
    os.replace(marker + ".tmp", marker)  # the test never sees the marker half-written
    time.sleep(60)
    return n
sqlite_store.SQLiteStore._insert = insert_then_wait
from recall_admin.cli import main
sys.argv[0] = "recall-admin"
main()
"""


def _copy_store(src: Path, dst: Path) -> str:
    for suffix in ("", "-wal", "-shm"):
        if Path(f"{src}{suffix}").exists():
            shutil.copyfile(f"{src}{suffix}", f"{dst}{suffix}")
    return f"sqlite:///{dst}"


@pytest.mark.slow
def test_sigkill_during_apply_leaves_all_or_none(coding, tmp_path):
    registry = tmp_path / "big.yaml"
    registry.write_text(_big_registry(1000))
    plan_file = tmp_path / "big.plan.json"
    data = coding.ok("registry", "load", str(registry), "--plan-out", str(plan_file))
    plan_id, n = data["plan"]["id"], len(data["plan"]["events"])
    assert n == 1000
    pristine = Path(coding.url.removeprefix("sqlite:///"))
    env = {**os.environ, "PYTHONPATH": str(REPO), "XDG_DATA_HOME": str(tmp_path / "xdg")}

    def spawn(url: str, *pre: str) -> subprocess.Popen:
        return subprocess.Popen(
            [sys.executable, *pre, "--store", url, "--json", "apply", str(plan_file)],
            env=env,
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    # 1. killed inside the transaction, after every row of the plan is inserted: none lands
    marker = tmp_path / "inserted"
    url = _copy_store(pristine, tmp_path / "hooked.db")
    proc = spawn(url, "-c", _HOOKED_APPLY, str(marker))
    deadline = time.monotonic() + 60
    while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert marker.exists(), "the apply never reached its insert"
    n += 1  # the plan's records and the `applied` record, in one transaction
    assert marker.read_text() == str(n)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert plan_events_in_log(url, plan_id) == 0
    # the store is whole afterwards: the same plan applies
    assert coding.run("apply", str(plan_file), store=url).exit_code == 0
    assert plan_events_in_log(url, plan_id) == n

    # 2. killed at times spread over a whole apply: all or none, every time
    url = _copy_store(pristine, tmp_path / "timed.db")
    started = time.monotonic()
    assert spawn(url, "-m", "recall_admin.cli").wait() == 0
    took = time.monotonic() - started
    assert plan_events_in_log(url, plan_id) == n
    for i, share in enumerate((0.4, 0.6, 0.75, 0.85, 0.95, 1.0)):
        url = _copy_store(pristine, tmp_path / f"run{i}.db")
        proc = spawn(url, "-m", "recall_admin.cli")
        time.sleep(took * share)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        landed = plan_events_in_log(url, plan_id)
        assert landed in (0, n), f"killed after {took * share:.2f}s: {landed} of {n} events of the plan in the log"


def test_progress_goes_to_stderr_and_json_stays_one_document(tech, monkeypatch):
    from recall_admin.cli import progress

    monkeypatch.setattr(progress, "PREVIEW_AFTER_SECONDS", 0.0)  # show it at once
    r = tech.run("redefine", "uses_technology", "--cardinality", "single", "--retroactive")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)  # exactly one JSON document
    assert doc["ok"] is True and doc["data"]["impact"]["events_read"] == 3


def test_human_preview_prints_data_that_looks_like_markup_as_written(coding):
    n = remember(coding, "[b]u1", "note", "I use fish as my [/i] shell", "2026-03-01")
    r = coding.run("promote", "prefers_shell", "--note", f"{n['event_id']}=fish", json_mode=False)
    assert r.exit_code == 0, r.stdout + r.stderr
    assert "I use fish as my [/i] shell" in r.stdout and "[b]u1" in r.stdout


def test_apply_expect_id_pins_the_reviewed_plan(tech, tmp_path):
    f = tmp_path / "plan.json"
    reviewed = tech.ok("redefine", "uses_technology", "--cardinality", "single", "--plan-out", str(f))["plan"]["id"]
    other = tmp_path / "other.json"
    tech.ok("redefine", "uses_technology", "--historical", "--plan-out", str(other))
    pos = position(tech)
    err = tech.fail("apply", str(other), "--expect-id", reviewed)
    assert err["code"] == "invalid_plan"
    assert f"not the plan you expected ({reviewed}); nothing was applied" in err["message"]
    assert position(tech) == pos
    assert tech.ok("apply", str(f), "--expect-id", reviewed)["applied"] == reviewed
