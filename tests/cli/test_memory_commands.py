"""Memory commands end to end, in --json mode, asserting the contract's fields."""

from __future__ import annotations

import json

import pytest

from recall_admin.cli import app
from recall_engine.instants import parse_instant

BELIEF_FIELDS = {
    "subject",
    "predicate",
    "value",
    "observed_at",
    "event_id",
    "source",
    "confidence",
    "kind",
    "replaced",
    "elsewhere",
}


def said(h: dict) -> dict:
    """A history without recorded_at: each store records when it received an event, so
    two stores holding the same statements differ only there (docs/history-diff-explain.md)."""
    return {**h, "steps": [{k: v for k, v in st.items() if k != "recorded_at"} for st in h["steps"]]}


def values(beliefs):
    return [b["value"] for b in beliefs]


# --- init ------------------------------------------------------------------------------


def test_init_declares_the_registries_then_nothing_new(cli, tmp_path):
    data = cli.ok("--operator", "ana", "init", "--registry", "coding", "--registry", "personal-assistant")
    assert data["store"] == f"sqlite:///{tmp_path / 'recall.db'}"
    assert data["collection"] == "memories"
    declared = data["declared"]
    assert declared == sorted(declared)
    assert {"prefers_editor", "experience_level", "likes", "did", "timezone"} <= set(declared)
    assert "note" not in declared  # built in already, identical

    again = cli.ok("--operator", "ana", "init", "--registry", "coding", "--registry", "personal-assistant")
    assert again["declared"] == []

    log = cli.ok("registry", "log")["changes"]
    assert [c["name"] for c in log] == declared  # one declare each, in sorted name order
    assert {c["op"] for c in log} == {"declare"}
    assert {c["operator"] for c in log} == {"ana"}
    ats = [parse_instant(c["at"]) for c in log]
    assert ats == list(range(ats[0], ats[0] + len(ats)))  # one write instant + i ns


def test_init_without_registry_creates_the_store(cli, tmp_path):
    data = cli.ok("init")
    assert data["declared"] == []
    assert (tmp_path / "recall.db").exists()


def test_init_declares_again_only_what_a_file_changes(cli, tmp_path):
    cli.ok("init", "--registry", "coding")
    data = cli.ok("init", "--registry", "coding", "--registry", "personal-assistant")
    # shared names keep coding's wording; only the names coding lacks are new
    assert "prefers_editor" not in data["declared"]
    assert {"likes", "lives_in"} <= set(data["declared"])
    assert "timezone" not in data["declared"]


def test_init_open_appends_one_vocabulary_record(cli):
    data = cli.ok("init", "--registry", "coding", "--open")
    assert data["opened"] is True and data["open_vocabulary"] is True
    again = cli.ok("init", "--open")
    assert again["opened"] is False and again["declared"] == []
    ops = [c["op"] for c in cli.ok("registry", "log")["changes"]]
    assert ops.count("vocabulary") == 1
    assert ops[-1] == "vocabulary"


# --- remember, recall, history: the flow ---------------------------------------------


def test_remember_returns_the_stored_belief(coding):
    data = coding.ok(
        "remember",
        "User",
        "prefers_editor",
        "vim",
        "--at",
        "2026-09-01",
        "--source",
        "agent_inferred",
        "--confidence",
        "0.8",
        "--evidence",
        "I use vim",
        "--evidence-id",
        "msg-1",
        "--kind",
        "preference",
    )
    assert set(data) >= {"stored", "already_known", "displaced", "unreplaced", "related"}
    s = data["stored"]
    assert set(s) >= BELIEF_FIELDS
    assert (s["subject"], s["predicate"], s["value"]) == ("user", "prefers_editor", "vim")
    assert s["observed_at"] == "2026-09-01T00:00:00Z"
    assert (s["source"], s["confidence"], s["kind"]) == ("agent_inferred", 0.8, "preference")
    assert (s["evidence"], s["evidence_id"]) == ("I use vim", "msg-1")
    assert s["event_id"].startswith("m-")
    assert data["already_known"] is False and data["displaced"] == [] and data["unreplaced"] == []

    again = coding.ok("remember", "user", "prefers_editor", "VIM", "--at", "2026-09-02")
    assert again["already_known"] is True
    assert again["stored"]["event_id"] == s["event_id"]


def test_editor_flow_history_and_recall(editors):
    third = editors.ok("remember", "user", "prefers_editor", "zed", "--at", "2026-10-05")
    assert third["already_known"] is True

    h = editors.ok("history", "user", "prefers_editor")
    assert (h["subject"], h["predicate"]) == ("user", "prefers_editor")
    assert h["believed_now"] == ["zed"]
    steps = h["steps"]
    assert len(steps) == 3
    assert {"at", "event_id", "action", "value", "stored_as", "before", "after"} <= set(steps[0])
    assert [s["at"] for s in steps] == ["2026-09-01T00:00:00Z", "2026-09-20T00:00:00Z", "2026-10-05T00:00:00Z"]
    assert [s["action"] for s in steps] == ["assert"] * 3
    assert [(s["before"], s["after"]) for s in steps] == [([], ["vim"]), (["vim"], ["emacs"]), (["emacs"], ["zed"])]

    now = editors.ok("recall", "user", "prefers_editor")
    assert values(now["beliefs"]) == ["zed"]
    assert now["as_of"].endswith("Z")

    then = editors.ok("recall", "user", "prefers_editor", "--as-of", "2026-09-25")
    assert then["as_of"] == "2026-09-25T00:00:00Z"
    (b,) = then["beliefs"]
    assert b["value"] == "emacs"
    assert [r["value"] for r in b["replaced"]] == ["vim"]
    assert set(b["replaced"][0]) >= {"value", "observed_at", "event_id"}

    early = editors.ok("recall", "user", "prefers_editor", "--as-of", "2026-08-01T12:00:00+02:00")
    assert early == {"as_of": "2026-08-01T10:00:00Z", "beliefs": []}


def test_remember_reports_what_it_displaced(editors):
    data = editors.ok("remember", "user", "prefers_editor", "helix", "--at", "2026-10-10")
    assert values(data["displaced"]) == ["zed"]


def test_recall_a_subject_alone_is_its_profile(editors):
    editors.ok("remember", "user", "likes", "tea", "--at", "2026-09-03")
    editors.ok("remember", "user", "likes", "jazz", "--at", "2026-09-04")
    data = editors.ok("recall", "user")
    pairs = sorted((b["predicate"], b["value"]) for b in data["beliefs"])
    assert pairs == [("likes", "jazz"), ("likes", "tea"), ("prefers_editor", "zed")]


def test_replaces_withdraws_a_belief_under_another_predicate(coding):
    coding.ok("remember", "user", "lives_in", "Paris", "--at", "2026-09-01")
    data = coding.ok("remember", "user", "works_at", "Acme", "--at", "2026-09-05", "--replaces", "lives_in=paris")
    assert data["unreplaced"] == []
    assert [(b["predicate"], b["value"]) for b in data["displaced"]] == [("lives_in", "Paris")]
    assert coding.ok("recall", "user", "lives_in")["beliefs"] == []


def test_replaces_reports_what_it_could_not_replace(editors):
    data = editors.ok(
        "remember",
        "user",
        "prefers_shell",
        "zsh",
        "--at",
        "2026-10-06",
        "--replaces",
        "prefers_shell=fish",
        "--replaces",
        "prefers_editor=zed",
        "--replaces",
        "no_such_thing=1",
        "--replaces",
        "note=whatever",
    )
    got = {(u["predicate"], u["value"]): u["reason"] for u in data["unreplaced"]}
    assert got[("prefers_shell", "fish")] == "never believed"
    assert got[("no_such_thing", "1")] == "not in the registry"
    assert "note is never replaced" in got[("note", "whatever")]
    assert ("prefers_editor", "zed") not in got  # that one was replaced
    assert values(editors.ok("recall", "user", "prefers_editor")["beliefs"]) == []


def test_replaces_of_a_later_statement_is_unreplaced(editors):
    data = editors.ok(
        "remember",
        "user",
        "prefers_shell",
        "bash",
        "--at",
        "2026-09-02",
        "--replaces",
        "prefers_editor=zed",
    )
    (u,) = data["unreplaced"]
    assert u == {"predicate": "prefers_editor", "value": "zed", "reason": "stated later than this statement"}


def test_values_are_typed_by_their_predicate(cli, typed_registry):
    cli.ok("init", "--registry", typed_registry)
    assert cli.ok("remember", "acme", "budget", "8000")["stored"]["value"] == 8000
    assert cli.ok("remember", "acme", "budget", "12.5")["stored"]["value"] == 12.5
    assert cli.ok("remember", "acme", "remote", "true")["stored"]["value"] is True
    assert cli.ok("remember", "acme", "plan_tier", "PRO")["stored"]["value"] == "pro"
    got = cli.ok("recall", "acme")
    assert sorted((b["predicate"], b["value"]) for b in got["beliefs"]) == [
        ("budget", 12.5),
        ("plan_tier", "pro"),
        ("remote", True),
    ]
    # --replaces values are typed by their own predicate
    data = cli.ok("remember", "acme", "plan_tier", "team", "--replaces", "budget=12.5")
    assert data["unreplaced"] == []


def test_open_vocabulary_defines_new_predicates_with_inferred_types(cli):
    cli.ok("init", "--open")
    n = cli.ok("remember", "user", "monthly_budget", "8000")
    assert n["stored"]["value"] == 8000
    assert n["registry_changes"] == [{"op": "define", "name": "monthly_budget"}]
    assert cli.ok("remember", "user", "is_vegetarian", "true")["stored"]["value"] is True
    s = cli.ok("remember", "user", "home_city", "Lyon", "--cardinality", "single", "--description", "Where they live")
    assert s["stored"]["value"] == "Lyon"
    preds = {p["name"]: p for p in cli.ok("registry", "list")["predicates"]}
    assert preds["monthly_budget"]["value_type"] == "number"
    assert preds["is_vegetarian"]["value_type"] == "boolean"
    assert preds["home_city"]["value_type"] == "string"
    assert preds["home_city"]["description"] == "Where they live"
    assert preds["monthly_budget"]["origin"] == "defined"


# --- forget -----------------------------------------------------------------------------------


def test_forget_one_value_and_all(coding):
    coding.ok("remember", "user", "likes", "tea", "--at", "2026-09-03")
    coding.ok("remember", "user", "likes", "jazz", "--at", "2026-09-04")
    data = coding.ok("forget", "user", "likes", "TEA")
    assert [(b["predicate"], b["value"]) for b in data["withdrawn"]] == [("likes", "tea")]
    assert set(data["withdrawn"][0]) >= BELIEF_FIELDS
    assert coding.ok("forget", "user", "likes", "tea") == {"withdrawn": []}  # writes nothing
    data = coding.ok("forget", "user", "likes", "--all")
    assert values(data["withdrawn"]) == ["jazz"]
    assert coding.ok("recall", "user", "likes")["beliefs"] == []
    h = coding.ok("history", "user", "likes")
    assert [s["action"] for s in h["steps"]] == ["assert", "assert", "retract", "retract_all"]


def test_forget_a_typed_value(cli, typed_registry):
    cli.ok("init", "--registry", typed_registry)
    cli.ok("remember", "acme", "budget", "8000")
    assert values(cli.ok("forget", "acme", "budget", "8000")["withdrawn"]) == [8000]


# --- diff, explain, search ----------------------------------------------------------------------


def test_diff_between_two_instants(editors):
    editors.ok("remember", "bob", "likes", "tea", "--at", "2026-09-15")
    data = editors.ok("diff", "--from", "2026-09-10", "--to", "2026-10-10")
    assert (data["from"], data["to"]) == ("2026-09-10T00:00:00Z", "2026-10-10T00:00:00Z")
    changes = {(c["subject"], c["predicate"]): c for c in data["changes"]}
    ed = changes[("user", "prefers_editor")]
    assert (ed["before"], ed["after"], ed["began"], ed["stopped"]) == (["vim"], ["zed"], ["zed"], ["vim"])
    assert changes[("bob", "likes")]["began"] == ["tea"]

    only = editors.ok("diff", "--from", "2026-09-10", "--to", "2026-10-10", "--subject", "Bob")
    assert [(c["subject"], c["predicate"]) for c in only["changes"]] == [("bob", "likes")]

    assert editors.ok("diff", "--from", "2026-09-21", "--to", "2026-10-01")["changes"] == []
    assert editors.ok("diff", "--from", "2026-09-10")["to"].endswith("Z")  # default: now


def test_explain_shows_rules_reasons_and_steps(editors):
    data = editors.ok("explain", "user", "prefers_editor", "--as-of", "2026-09-25")
    assert values(data["beliefs"]) == ["emacs"]
    rules = data["rules"]
    assert rules and {
        "at",
        "op",
        "name",
        "change",
        "cardinality",
        "value_type",
        "excludes",
        "historical",
        "operator",
    } <= set(rules[0])
    assert (rules[0]["op"], rules[0]["name"], rules[0]["operator"]) == ("declare", "prefers_editor", "ana")
    assert rules[0]["cardinality"] == "single"
    reasons = {r["value"]: r for r in data["reasons"]}
    assert reasons["emacs"]["held"] is True
    assert reasons["vim"]["held"] is False and "replaced by 'emacs'" in reasons["vim"]["reason"]
    assert "zed" not in reasons  # stated after the instant asked
    assert len(data["steps"]) == 3  # the whole history, as in `history`
    assert {e["value"] for e in data["events"]} == {"vim", "emacs", "zed"}


def test_explain_an_exclusion(coding):
    coding.ok("remember", "user", "likes", "olives", "--at", "2026-09-01")
    coding.ok("remember", "user", "dislikes", "olives", "--at", "2026-09-10")
    data = coding.ok("explain", "user", "likes")
    assert data["beliefs"] == []
    (r,) = data["reasons"]
    assert "exclusion" in r["reason"]
    assert any(rule["name"] == "dislikes" for rule in data["rules"])


def test_search_answers_with_what_the_pair_holds(editors):
    data = editors.ok("search", "zed editor", "--limit", "5")
    assert data["as_of"].endswith("Z")
    assert values(data["beliefs"])[:1] == ["zed"]
    old = editors.ok("search", "vim")  # a superseded value answers with the current one
    assert values(old["beliefs"])[:1] == ["zed"]


# --- import and export --------------------------------------------------------------------------


def test_export_then_import_round_trip(editors, tmp_path):
    editors.ok("remember", "bob", "likes", "tea", "--at", "2026-09-15")
    path = tmp_path / "events.jsonl"
    data = editors.ok("export", "-o", str(path))
    lines = path.read_text(encoding="utf-8").splitlines()
    assert data == {"exported": len(lines), "file": str(path)}
    events = [json.loads(line) for line in lines]
    assert {"id", "subject", "predicate", "value", "observed_at"} <= set(events[-1])
    assert any(e["subject"] == "recall:registry" for e in events)  # the registry travels with the data

    other = f"sqlite:///{tmp_path / 'other.db'}"
    assert editors.ok("import", str(path), store=other) == {"imported": len(lines), "skipped": 0}
    assert editors.ok("import", str(path), store=other) == {"imported": 0, "skipped": len(lines)}

    assert said(editors.ok("history", "user", "prefers_editor", store=other)) == said(
        editors.ok("history", "user", "prefers_editor")
    )
    assert editors.ok("recall", "bob", "--as-of", "2026-10-01", store=other) == editors.ok(
        "recall", "bob", "--as-of", "2026-10-01"
    )


def test_export_one_subject_to_stdout(editors):
    editors.ok("remember", "bob", "likes", "tea", "--at", "2026-09-15")
    r = editors.run("export", "--subject", "bob", json_mode=False)
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    assert [json.loads(line)["value"] for line in lines] == ["tea"]
    assert "exported 1 event" in r.stderr
    data = editors.ok("export", "--subject", "user")
    assert data["exported"] == 3 and [e["value"] for e in data["events"]] == ["vim", "emacs", "zed"]


def test_import_from_stdin(editors, tmp_path):
    text = editors.run("export", json_mode=False).stdout
    other = f"sqlite:///{tmp_path / 'other.db'}"
    data = editors.ok("import", "-", store=other, input=text)
    assert data == {"imported": len(text.splitlines()), "skipped": 0}


# --- collections, environment, output streams -------------------------------------------------------


def test_collections_are_separate(coding):
    coding.ok("remember", "user", "prefers_editor", "vim")
    coding.ok("--collection", "scratch", "init", "--registry", "voice")
    assert coding.ok("--collection", "scratch", "recall", "user")["beliefs"] == []
    data = coding.ok("collections")
    got = {c["name"]: c for c in data["collections"]}
    assert set(got) == {"memories", "scratch"}
    assert got["memories"]["events"] == len(coding.ok("registry", "log")["changes"]) + 1
    assert got["memories"]["registry"] == len(coding.ok("registry", "list")["predicates"]) - 1  # without note


def test_environment_variables_choose_store_collection_and_operator(cli, tmp_path):
    env = {"RECALL_STORE": cli.url, "RECALL_COLLECTION": "team", "RECALL_OPERATOR": "rui"}
    r = cli.runner.invoke(app, ["--json", "init", "--registry", "coding"], env=env)
    assert r.exit_code == 0, r.stdout
    data = json.loads(r.stdout)["data"]
    assert data["collection"] == "team" and data["store"] == cli.url
    log = cli.ok("--collection", "team", "registry", "log")["changes"]
    assert {c["operator"] for c in log} == {"rui"}


def test_default_store_lives_in_the_user_data_folder(cli, tmp_path):
    r = cli.runner.invoke(app, ["--json", "init"])
    assert r.exit_code == 0, r.stdout
    store = json.loads(r.stdout)["data"]["store"]
    assert store.startswith(f"sqlite:///{tmp_path / 'xdg-data'}")
    assert store.endswith("recall.db")


def test_human_output_goes_to_stdout_and_messages_to_stderr(coding):
    r = coding.run("init", "--registry", "coding", "--registry", "personal-assistant", json_mode=False)
    assert r.exit_code == 0
    assert "nothing declared" in r.stdout
    assert "describe it differently" in r.stderr and "describe it differently" not in r.stdout

    coding.ok("remember", "user", "prefers_editor", "vim", "--at", "2026-09-01")
    r = coding.run("recall", "user", "prefers_editor", "--as-of", "2026-09-02", json_mode=False)
    assert r.exit_code == 0
    assert "prefers_editor" in r.stdout and "vim" in r.stdout and "2026-09-01T00:00:00Z" in r.stdout
    assert r.stderr == ""

    for args in (
        ("history", "user", "prefers_editor"),
        ("explain", "user", "prefers_editor"),
        ("diff", "--from", "2026-08-01"),
        ("registry", "list"),
        ("registry", "show", "prefers_editor"),
        ("registry", "log"),
        ("collections",),
        ("remember", "user", "likes", "tea"),
        ("forget", "user", "likes", "tea"),
        ("recall", "nobody"),
        ("search", "vim"),
    ):
        r = coding.run(*args, json_mode=False)
        assert r.exit_code == 0, (args, r.stdout, r.stderr)
        assert r.stdout.strip(), args
        assert not r.stdout.lstrip().startswith("{"), args


def test_json_stdout_is_exactly_one_document(editors):
    for args in (
        ("recall", "user"),
        ("history", "user", "prefers_editor"),
        ("registry", "list"),
        ("init", "--registry", "coding", "--registry", "personal-assistant"),
        ("export",),
        ("remember", "user", "likes", "tea"),
    ):
        r = editors.run(*args)
        assert r.exit_code == 0
        doc = json.loads(r.stdout)  # raises if anything else shares stdout
        assert set(doc) == {"ok", "data"} and doc["ok"] is True
        assert r.stdout.count("\n") == 1


@pytest.mark.postgres
def test_the_editor_flow_on_postgresql(cli, pg_url, tmp_path):
    import os

    from tests.pg_server import fresh_database

    url = fresh_database(pg_url, f"cli{os.getpid()}")
    data = cli.ok("--operator", "ana", "init", "--registry", "coding", store=url)
    assert "prefers_editor" in data["declared"]
    assert data["store"].startswith("postgresql://")
    for value, day in (("vim", "2026-09-01"), ("emacs", "2026-09-20"), ("zed", "2026-10-05")):
        cli.ok("remember", "user", "prefers_editor", value, "--at", day, store=url)
    h = cli.ok("history", "user", "prefers_editor", store=url)
    assert h["believed_now"] == ["zed"] and len(h["steps"]) == 3
    then = cli.ok("recall", "user", "prefers_editor", "--as-of", "2026-09-25", store=url)
    assert [(b["value"], [r["value"] for r in b["replaced"]]) for b in then["beliefs"]] == [("emacs", ["vim"])]
    assert values(cli.ok("search", "zed", store=url)["beliefs"])[:1] == ["zed"]

    path = tmp_path / "pg.jsonl"
    n = cli.ok("export", "-o", str(path), store=url)["exported"]
    assert cli.ok("import", str(path)) == {"imported": n, "skipped": 0}  # into SQLite
    assert said(cli.ok("history", "user", "prefers_editor")) == said(h)


def test_match_threshold_decides_whether_a_new_name_is_filed_under_an_existing_one(cli):
    cli.ok("init", "--registry", "coding", "--open")
    matched = cli.ok("remember", "u1", "favorite editor", "helix")["stored"]
    assert (matched["predicate"], matched["stored_as"]) == ("prefers_editor", "favorite_editor")
    own = cli.ok("--match-threshold", "-1", "remember", "u1", "editor of choice", "zed")["stored"]
    assert own["predicate"] == "editor_of_choice"
    err = cli.fail("--match-threshold", "1.5", "remember", "u1", "x", "y")
    assert err["message"] == (
        "--match-threshold (RECALL_MATCH_THRESHOLD) must be at most 1 (a negative one turns matching off), got 1.5"
    )


def test_import_statements_answers_as_remember_one_at_a_time(coding, tmp_path):
    lines = [
        {"subject": "user", "predicate": "prefers_editor", "value": "vim", "at": "2026-09-01"},
        {"subject": "user", "predicate": "prefers_editor", "value": "emacs", "at": "2026-09-20"},
        {"subject": "user", "predicate": "prefers_editor", "value": "EMACS", "at": "2026-09-21"},
        {"subject": "bob", "predicate": "prefers_editor", "value": "zed", "replaces": [["prefers_editor", "vim"]]},
    ]
    path = tmp_path / "statements.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n\n", encoding="utf-8")
    assert coding.ok("import", "--statements", str(path)) == {"imported": 3, "skipped": 1}
    assert [b["value"] for b in coding.ok("recall", "user", "prefers_editor")["beliefs"]] == ["emacs"]
    # the same statements through remember, one at a time, into another store
    other = f"sqlite:///{tmp_path / 'other.db'}"
    coding.ok("init", "--registry", "coding", store=other)
    for x in lines[:3]:
        coding.ok("remember", x["subject"], x["predicate"], x["value"], "--at", x["at"], store=other)
    assert said(coding.ok("history", "user", "prefers_editor", store=other)) == said(
        coding.ok("history", "user", "prefers_editor")
    )


def test_import_statements_names_the_bad_line_and_writes_nothing(coding, tmp_path):
    before = coding.ok("collections")["collections"][0]["events"]
    path = tmp_path / "statements.jsonl"
    path.write_text(
        '{"subject": "user", "predicate": "prefers_editor", "value": "vim"}\n\n{"subject": "user", "value": 1}\n',
        encoding="utf-8",
    )
    err = coding.fail("import", "--statements", str(path))
    assert (err["code"], err["message"]) == ("invalid_input", "line 3: predicate is missing")
    path.write_text(
        '{"subject": "user", "predicate": "prefers_editor", "value": "vim"}\n'
        '{"subject": "user", "predicate": "no_such_thing", "value": "x"}\n',
        encoding="utf-8",
    )
    err = coding.fail("import", "--statements", str(path))
    assert err["code"] == "unknown_predicate" and err["message"].startswith("line 2: predicate 'no_such_thing'")
    assert coding.ok("collections")["collections"][0]["events"] == before


def test_remember_says_when_cardinality_and_description_were_not_used(coding):
    # they shape only a predicate the write defines: on a registered one they were
    # dropped without a word, and an over-long description was refused naming a
    # registry event the user never saw
    r = coding.run("remember", "user", "prefers_editor", "vim", "--cardinality", "multi", json_mode=False)
    assert r.exit_code == 0
    assert (
        "--cardinality and --description were not used: this write defined no predicate ('prefers_editor' is "
        "registered, or was read as a registered name); `redefine` changes a predicate's rules"
    ) in " ".join(r.stderr.split())
    assert coding.ok("registry", "show", "prefers_editor")["cardinality"] == "single"
    err = coding.fail("remember", "user", "prefers_editor", "vim", "--description", "x" * 1025)
    assert err == {"code": "invalid_input", "message": "--description must be UTF-8 of at most 1024 bytes, got 1025"}
