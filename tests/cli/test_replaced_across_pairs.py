"""Issues 18 and 19 through the CLI, on SQLite and on PostgreSQL.

The seed's typed session answers word for word (a belief's ``replaced`` names what
its statement withdrew under other predicates); an exclusion declared later covers
the old log; the per-pair cap never blocks a restatement and never lets an import
make a pair unreadable; a promoted note stays in the note's history.
"""

from __future__ import annotations

import json

import pytest

import recall_engine.memory as memory_module

from .conftest import Cli, isolated_cli


@pytest.fixture
def pa(backend_url, tmp_path, monkeypatch) -> Cli:
    cli = isolated_cli(backend_url, tmp_path, monkeypatch)
    cli.ok("init", "--registry", "personal-assistant")
    return cli


def replaced(belief: dict) -> list[tuple[str, str]]:
    return [(p["predicate"], p["value"]) for p in belief["replaced"]]


def test_the_typed_session_answers_as_the_seed_says(pa: Cli):
    pa.ok("remember", "user", "likes", "mangoes")
    r = pa.ok("remember", "user", "dislikes", "mangoes")
    assert [(b["predicate"], b["value"]) for b in r["displaced"]] == [("likes", "mangoes")]
    [b] = pa.ok("recall", "user", "dislikes")["beliefs"]
    assert (b["value"], replaced(b)) == ("mangoes", [("likes", "mangoes")])
    likes_event = pa.ok("history", "user", "likes")["steps"][0]["event_id"]
    assert b["replaced"][0]["event_id"] == likes_event and b["replaced"][0]["observed_at"]

    pa.ok("remember", "user", "goal", "run a marathon")
    r = pa.ok(
        "remember",
        "user",
        "did",
        "run a marathon",
        "--replaces",
        "goal=run a marathon",
        "--replaces",
        "goal=learn piano",
    )
    assert [(b["predicate"], b["value"]) for b in r["displaced"]] == [("goal", "run a marathon")]
    assert [(u["predicate"], u["value"]) for u in r["unreplaced"]] == [("goal", "learn piano")]
    [b] = pa.ok("recall", "user", "did")["beliefs"]
    assert (b["value"], replaced(b)) == ("run a marathon", [("goal", "run a marathon")])

    # every surface: the profile, search hits, history steps, explain's reason line
    profile = {b["predicate"]: b for b in pa.ok("recall", "user")["beliefs"]}
    assert replaced(profile["did"]) == [("goal", "run a marathon")]
    assert replaced(profile["dislikes"]) == [("likes", "mangoes")]
    hits = {h["predicate"]: h for h in pa.ok("search", "mangoes")["beliefs"]}
    assert replaced(hits["dislikes"]) == [("likes", "mangoes")]
    [step] = pa.ok("history", "user", "did")["steps"]
    assert replaced(step) == [("goal", "run a marathon")]
    x = pa.ok("explain", "user", "dislikes")
    [why] = x["reasons"]
    assert why["reason"] == "stated; replaced likes: 'mangoes' (withdrawn by exclusion: dislikes excludes likes)"
    [why] = pa.ok("explain", "user", "likes")["reasons"]
    assert why["reason"].startswith("withdrawn by exclusion: dislikes excludes likes")
    assert why["event_id"] == r["stored"]["event_id"] or why["event_id"] == profile["dislikes"]["event_id"]
    [why] = pa.ok("explain", "user", "did")["reasons"]
    assert why["reason"] == "stated; replaced goal: 'run a marathon' (withdrawn by its replaces)"

    # and in words: the human forms name the other predicate
    out = pa.run("recall", "user", "dislikes", json_mode=False).stdout
    assert "replaced likes: mangoes" in out
    out = pa.run("history", "user", "did", json_mode=False).stdout
    assert "replaced goal: run a marathon" in out


def test_as_of_reads_show_the_replacement_then_in_force(pa: Cli):
    pa.ok("remember", "user", "likes", "mangoes", "--at", "2026-09-01")
    pa.ok("remember", "user", "dislikes", "mangoes", "--at", "2026-09-10")
    pa.ok("remember", "user", "likes", "mangoes", "--at", "2026-09-20")  # likes excludes dislikes too
    [b] = pa.ok("recall", "user", "dislikes", "--as-of", "2026-09-15")["beliefs"]
    assert replaced(b) == [("likes", "mangoes")]
    assert pa.ok("recall", "user", "dislikes")["beliefs"] == []
    [b] = pa.ok("recall", "user", "likes")["beliefs"]
    assert replaced(b) == [("dislikes", "mangoes")]
    [b] = pa.ok("recall", "user", "likes", "--as-of", "2026-09-09")["beliefs"]
    assert b["replaced"] == []


def test_an_exclusion_added_later_covers_the_old_log_and_removing_it_restores(pa: Cli):
    pa.ok("define", "enjoys", "--cardinality", "multi", "--type", "string", "--apply")
    pa.ok("define", "hates", "--cardinality", "multi", "--type", "string", "--apply")
    pa.ok("remember", "user", "enjoys", "mangoes", "--at", "2026-09-01")
    pa.ok("remember", "user", "hates", "mangoes", "--at", "2026-09-10")
    before = pa.ok("recall", "user", "enjoys", "--as-of", "2026-09-12")["beliefs"]
    assert [b["value"] for b in before] == ["mangoes"]

    preview = pa.ok("redefine", "hates", "--excludes", "enjoys")  # not --retroactive
    changes = {c["predicate"]: c for c in preview["impact"]["changes"]}
    assert (changes["enjoys"]["before"], changes["enjoys"]["after"]) == (["mangoes"], [])
    assert changes["enjoys"]["history_changed"] is True
    assert [(p["predicate"], p["value"]) for p in changes["hates"]["replaced_changes"][0]["after"]] == [
        ("enjoys", "mangoes")
    ]
    pa.ok("redefine", "hates", "--excludes", "enjoys", "--apply")
    assert pa.ok("recall", "user", "enjoys")["beliefs"] == []
    assert pa.ok("recall", "user", "enjoys", "--as-of", "2026-09-12")["beliefs"] == []
    [h] = pa.ok("recall", "user", "hates")["beliefs"]
    assert replaced(h) == [("enjoys", "mangoes")]

    preview = pa.ok("redefine", "hates", "--no-excludes", "enjoys")
    assert {c["predicate"] for c in preview["impact"]["changes"]} == {"enjoys", "hates"}
    pa.ok("redefine", "hates", "--no-excludes", "enjoys", "--apply")
    assert pa.ok("recall", "user", "enjoys", "--as-of", "2026-09-12")["beliefs"] == before
    assert pa.ok("recall", "user", "hates")["beliefs"][0]["replaced"] == []


def test_retroactive_help_says_it_no_longer_changes_exclusions(pa: Cli):
    r = pa.run("redefine", "--help", json_mode=False)
    assert "Excludes and historical always cover the whole log" in " ".join(r.stdout.replace("│", " ").split())


def test_a_promoted_note_stays_in_the_notes_history(pa: Cli):
    pa.ok("define", "shell", "--cardinality", "single", "--type", "string", "--apply")
    note = pa.ok("remember", "user", "note", "I use fish as my shell")["stored"]["event_id"]
    applied = pa.ok("promote", "shell", "--note", f"{note}=fish", "--apply")
    plan = applied["plan"]["id"]
    [step] = pa.ok("history", "user", "note")["steps"]
    assert (step["action"], step["event_id"], step["before"], step["after"]) == ("promoted_to", note, [], [])
    assert step["promoted_to"]["text"] == f"promoted to shell = 'fish' by plan {plan}"
    assert (step["promoted_to"]["predicate"], step["promoted_to"]["value"], step["promoted_to"]["plan"]) == (
        "shell",
        "fish",
        plan,
    )
    out = pa.run("history", "user", "note", json_mode=False).stdout
    assert f"promoted to shell = 'fish' by plan {plan}" in " ".join(out.split())
    assert pa.ok("recall", "user", "note")["beliefs"] == []


# --- the per-pair cap -------------------------------------------------------------------


def lines(*events: dict) -> str:
    return "".join(json.dumps(e) + "\n" for e in events)


def test_restating_on_a_full_pair_is_already_known(pa: Cli, monkeypatch):
    monkeypatch.setattr(memory_module, "MAX_PAIR_EVENTS", 3)
    for i in range(3):
        pa.ok("remember", "user", "likes", f"fruit {i}", "--at", f"2026-09-0{i + 1}")
    r = pa.ok("remember", "user", "likes", "Fruit 1")
    assert r["already_known"] is True
    err = pa.fail("remember", "user", "likes", "kiwis")
    assert err["code"] == "limit_exceeded" and "the pair user/likes has 3 events" in err["message"]


def test_an_import_that_would_overfill_a_pair_is_refused_before_any_row(pa: Cli, monkeypatch, tmp_path):
    monkeypatch.setattr(memory_module, "MAX_PAIR_EVENTS", 3)
    for i in range(2):
        pa.ok("remember", "user", "likes", f"fruit {i}", "--at", f"2026-09-0{i + 1}")
    # an export of the pair, and two new events of it: re-importing the export adds nothing,
    # the new events would make four
    path = tmp_path / "events.jsonl"
    pa.ok("export", "-o", str(path), "--subject", "user")
    exported = path.read_text(encoding="utf-8")
    from recall_engine.records import make_event

    extra = [make_event("user", "likes", v, 1790000000000000000 + i).to_json() for i, v in enumerate(("kiwis", "figs"))]
    other = make_event("bob", "likes", "plums", 1790000000000000000).to_json()
    path.write_text(exported + lines(other, *extra), encoding="utf-8")
    count = pa.ok("collections")["collections"][0]["events"]
    err = pa.fail("import", str(path))
    assert err["code"] == "limit_exceeded"
    assert (
        "the pair user/likes 4 events (2 stored, 2 new)" in err["message"] and "nothing was imported" in err["message"]
    )
    assert pa.ok("collections")["collections"][0]["events"] == count  # not one row, bob's neither
    path.write_text(exported + lines(other, extra[0]), encoding="utf-8")
    assert pa.ok("import", str(path))["imported"] == 2  # exactly at the cap: fine
    assert len(pa.ok("recall", "user", "likes")["beliefs"]) == 3


def test_an_audit_import_that_would_overfill_a_pair_is_refused(pa: Cli, monkeypatch, tmp_path):
    for i in range(3):
        pa.ok("remember", "user", "likes", f"fruit {i}", "--at", f"2026-09-0{i + 1}")
    bundle = tmp_path / "bundle.json"
    pa.ok("audit", "export", "-o", str(bundle), "--subject", "user")
    target = Cli(pa.url, pa.runner)
    target.ok("--collection", "other", "init", "--registry", "personal-assistant")
    target.ok("--collection", "other", "remember", "user", "likes", "kiwis", "--at", "2026-08-01")
    monkeypatch.setattr(memory_module, "MAX_PAIR_EVENTS", 3)
    err = target.fail("--collection", "other", "audit", "import", str(bundle))
    assert err["code"] == "limit_exceeded" and "user/likes 4 events (1 stored, 3 new)" in err["message"]
    assert [b["value"] for b in target.ok("--collection", "other", "recall", "user", "likes")["beliefs"]] == ["kiwis"]
    monkeypatch.setattr(memory_module, "MAX_PAIR_EVENTS", 4)
    target.ok("--collection", "other", "audit", "import", str(bundle))
    assert len(target.ok("--collection", "other", "recall", "user", "likes")["beliefs"]) == 4
