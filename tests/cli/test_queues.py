"""Review queues through the CLI: conflicts, the vocabulary inbox, notes.

The demo store (``recall_admin.demo``) carries the issue's cases: goal/did "run a
marathon", ``avoids`` beside ``likes`` for three subjects, ``editor_preference``
beside ``prefers_editor``, and shell notes. Each is found, previewed, settled
with --apply, and then leaves its queue. Smaller stores built with ``remember``
cover the rest (dismissals that reopen, automatic matches and their split).
"""

from __future__ import annotations

import json

import pytest

from recall_admin.demo import build_demo
from recall_engine.records import REVIEW_PREDICATE, REVIEW_SUBJECT
from recall_engine.storage import open_backend

from .conftest import Cli


@pytest.fixture
def demo(cli: Cli) -> Cli:
    with open_backend(cli.url) as backend:
        build_demo(backend, "memories")
    return cli


def conflict(data, subject: str, value: str):
    hits = [c for c in data["conflicts"] if c["subject"] == subject and c["value"].lower() == value.lower()]
    assert len(hits) <= 1
    return hits[0] if hits else None


def position(cli: Cli) -> int:
    with open_backend(cli.url) as backend:
        return backend.store("memories").position()


def values(data) -> list:
    return [b["value"] for b in data["beliefs"]]


# --- conflicts -------------------------------------------------------------------------


def test_demo_conflicts_hold_goal_did_and_one_avoids_likes_group(demo: Cli):
    data = demo.ok("conflicts", "list")
    marathon = conflict(data, "user", "run a marathon")
    assert marathon is not None
    assert sorted(h["predicate"] for h in marathon["held"]) == ["did", "goal"]
    for h in marathon["held"]:
        assert set(h) >= {"predicate", "value", "observed_at", "event_id"}
        assert h["observed_at"].endswith("Z")
    assert set(marathon) >= {"id", "subject", "value", "held"}
    # avoids beside likes, for several subjects: one group, settled by one exclusion
    groups = [g for g in data["groups"] if g["predicates"] == ["avoids", "likes"]]
    assert len(groups) == 1
    g = groups[0]
    assert g["count"] == 3 and g["subjects"] == ["alice", "bob", "carol"]
    assert data["groups"][0]["id"] == g["id"]  # ranked first: most subjects
    assert "conflicts exclude " + g["id"] in g["settle"]["exclude"]
    # most recent first
    latest = [c["latest"] for c in data["conflicts"]]
    assert latest == sorted(latest, reverse=True)
    # a likes/dislikes story that an exclusion already settled is no conflict
    assert conflict(data, "user", "mangoes") is None


def test_conflict_ids_are_stable_and_subject_filter(demo: Cli):
    a = demo.ok("conflicts", "list")
    b = demo.ok("conflicts", "list")
    assert [c["id"] for c in a["conflicts"]] == [c["id"] for c in b["conflicts"]]
    only = demo.ok("conflicts", "list", "--subject", "Alice")
    assert [c["subject"] for c in only["conflicts"]] == ["alice"]
    assert only["conflicts"][0]["id"] == conflict(a, "alice", "cilantro")["id"]


def test_exclude_previews_every_subject_then_settles_the_group(demo: Cli):
    data = demo.ok("conflicts", "list")
    gid = next(g["id"] for g in data["groups"] if g["predicates"] == ["avoids", "likes"])
    before = position(demo)
    pv = demo.ok("conflicts", "exclude", gid)
    assert position(demo) == before  # a preview writes nothing
    ops = pv["plan"]["ops"]
    assert {o["name"] for o in ops} == {"avoids", "likes"}  # both ways
    assert all(o["op"] == "redefine" and not o.get("retroactive") for o in ops)  # a plain exclusion plan
    changed = {(c["subject"], c["predicate"]) for c in pv["impact"]["changes"]}
    assert {("alice", "likes"), ("bob", "likes"), ("carol", "likes")} <= changed
    assert len(pv["impact"]["conflicts_resolved"]) == 3
    assert any(r["flag"] == "whole_log" for r in pv["risks"]) and not any(
        r["flag"] == "retroactive" for r in pv["risks"]
    )
    r = demo.run("conflicts", "exclude", gid, "--detailed-exitcode")
    assert r.exit_code == 2
    # the human preview too: an exclude plan's details name its predicates as plain text
    human = demo.run("conflicts", "exclude", gid, json_mode=False, env={"COLUMNS": "160"})
    assert human.exit_code == 0, human.stderr
    assert "internal_error" not in human.stdout + human.stderr and "Traceback" not in human.stdout
    assert "redefine avoids" in human.stdout and "redefine likes" in human.stdout
    applied = demo.ok("--operator", "ana", "conflicts", "exclude", gid, "--apply")
    assert applied["applied"] == applied["plan"]["id"] and len(applied["events"]) == 2
    after = demo.ok("conflicts", "list")
    assert not [c for c in after["conflicts"] if c["predicates"] == ["avoids", "likes"]]
    assert conflict(after, "user", "run a marathon") is not None
    # the later statement wins: alice avoids cilantro, no longer likes it
    assert values(demo.ok("recall", "alice", "likes")) == []
    assert values(demo.ok("recall", "alice", "avoids")) == ["cilantro"]
    log = demo.ok("registry", "log")["changes"]
    assert {c["operator"] for c in log[-2:]} == {"ana"}


def test_exclude_by_one_side_and_historical_targets(demo: Cli):
    data = demo.ok("conflicts", "list")
    marathon = conflict(data, "user", "run a marathon")
    pv = demo.ok("conflicts", "exclude", marathon["id"])
    # did is historical: never withdrawn by an exclusion, so only did excludes goal
    assert [(o["name"], o["definition"]["excludes"]) for o in pv["plan"]["ops"]] == [("did", ["goal"])]
    gid = next(g["id"] for g in data["groups"] if g["predicates"] == ["avoids", "likes"])
    pv = demo.ok("conflicts", "exclude", gid, "--by", "avoids")
    assert [o["name"] for o in pv["plan"]["ops"]] == ["avoids"]
    err = demo.fail("conflicts", "exclude", gid, "--by", "goal")
    assert err["code"] == "invalid_plan"


def test_confirm_goal_did_appends_operator_statement_and_leaves_the_queue(demo: Cli, tmp_path):
    data = demo.ok("conflicts", "list")
    cid = conflict(data, "user", "run a marathon")["id"]
    pv = demo.ok("conflicts", "confirm", cid, "--keep", "did", "--plan-out", str(tmp_path / "p.json"))
    st, rt = pv["plan"]["statements"]
    assert st["predicate"] == "did" and st["source"] == "operator" and not st["retraction"]
    assert st["replaces"] == [{"predicate": "goal", "value": "run a marathon"}]
    assert rt["predicate"] == "goal" and rt["retraction"] and rt["caused_by"] == st["id"]
    assert rt["observed_at"] == st["observed_at"]
    ch = pv["impact"]["changes"]
    assert [(c["predicate"], c["before"], c["after"]) for c in ch] == [
        ("goal", ["run a marathon", "learn piano"], ["learn piano"])
    ]
    # the saved plan applies exactly the previewed events
    applied = demo.ok("apply", str(tmp_path / "p.json"))
    assert applied["events"] == [st["id"], rt["id"]]
    assert conflict(demo.ok("conflicts", "list"), "user", "run a marathon") is None
    assert values(demo.ok("recall", "user", "goal")) == ["learn piano"]
    did = demo.ok("recall", "user", "did")["beliefs"]
    assert [b["value"] for b in did] == ["run a marathon"] and did[0]["source"] == "operator"


def test_confirm_refuses_a_predicate_outside_the_conflict_and_unknown_ids(demo: Cli):
    cid = conflict(demo.ok("conflicts", "list"), "user", "run a marathon")["id"]
    assert demo.fail("conflicts", "confirm", cid, "--keep", "likes")["code"] == "invalid_plan"
    assert demo.fail("conflicts", "confirm", "c-0000", "--keep", "did")["code"] == "not_found"
    gid = next(g["id"] for g in demo.ok("conflicts", "list")["groups"] if g["count"] > 1)
    assert demo.fail("conflicts", "confirm", gid, "--keep", "likes")["code"] == "invalid_plan"


def test_dismiss_hides_until_either_belief_changes(demo: Cli):
    data = demo.ok("conflicts", "list")
    alice = conflict(data, "alice", "cilantro")
    out = demo.ok("--operator", "ana", "conflicts", "dismiss", alice["id"], "--reason", "she likes it in salsa only")
    assert out["dismissed"] == alice["id"] and len(out["events"]) == 1
    after = demo.ok("conflicts", "list")
    assert conflict(after, "alice", "cilantro") is None and after["dismissed"] == 1
    assert conflict(demo.ok("conflicts", "list", "--all"), "alice", "cilantro") is not None
    # the decision is a review_decision event, never a belief
    with open_backend(demo.url) as backend:
        ev = backend.store("memories").pair_events(REVIEW_SUBJECT, [REVIEW_PREDICATE])
    body = json.loads(ev[-1].value)
    assert body["kind"] == "dismiss_conflict" and body["conflict"] == alice["id"]
    assert body["operator"] == "ana" and body["reason"] == "she likes it in salsa only"
    assert sorted(body["held"]) == sorted(h["event_id"] for h in alice["held"])
    assert all(b["subject"] != REVIEW_SUBJECT for b in demo.ok("search", "salsa")["beliefs"])
    # restating a held value changes no belief: still dismissed
    assert demo.ok("remember", "alice", "likes", "cilantro")["already_known"]
    assert conflict(demo.ok("conflicts", "list"), "alice", "cilantro") is None
    # a change to one of the beliefs (withdrawn, then stated again) reopens it
    demo.ok("forget", "alice", "avoids", "cilantro")
    assert conflict(demo.ok("conflicts", "list", "--all"), "alice", "cilantro") is None
    demo.ok("remember", "alice", "avoids", "cilantro")
    again = conflict(demo.ok("conflicts", "list"), "alice", "cilantro")
    assert again is not None and again["id"] == alice["id"]


def test_dismiss_a_group(demo: Cli):
    gid = next(g["id"] for g in demo.ok("conflicts", "list")["groups"] if g["count"] == 3)
    out = demo.ok("conflicts", "dismiss", gid)
    assert len(out["conflicts"]) == 3
    assert all(c["predicates"] != ["avoids", "likes"] for c in demo.ok("conflicts", "list")["conflicts"])


def test_conflicts_of_a_fresh_store_and_human_output(coding: Cli):
    assert coding.ok("conflicts", "list")["conflicts"] == []
    coding.ok("remember", "sam", "uses_technology", "Python")
    coding.ok("remember", "sam", "prefers_language", "python")
    data = coding.ok("conflicts", "list")
    c = data["conflicts"][0]
    assert c["subject"] == "sam" and c["predicates"] == ["prefers_language", "uses_technology"]
    r = coding.run("conflicts", "list", json_mode=False)
    assert r.exit_code == 0 and c["id"] in r.stdout


# --- vocabulary inbox ----------------------------------------------------------------------


def test_inbox_and_suggestion_merge_editor_preference_into_prefers_editor(demo: Cli):
    inbox = demo.ok("vocab", "list")["predicates"]
    ep = next(p for p in inbox if p["name"] == "editor_preference")
    assert ep["origin"] == "defined" and ep["status"] == "open"
    assert ep["caused_by"]["subject"] == "alice" and ep["caused_by"]["value"] == "helix"
    clusters = demo.ok("vocab", "suggest")["clusters"]
    c = next(c for c in clusters if "editor_preference" in c["names"])
    assert c["names"] == ["editor_preference", "prefers_editor"] and c["score"] >= 0.9
    assert c["suggestion"]["into"] == "prefers_editor" and c["suggestion"]["merge"] == ["editor_preference"]
    assert "declared" in c["suggestion"]["reason"]
    assert c["suggestion"]["commands"] == ["recall-admin merge editor_preference prefers_editor"]
    pv = demo.ok("vocab", "merge", c["id"])
    assert pv["plan"]["ops"][0] == {
        **pv["plan"]["ops"][0],
        "op": "merge",
        "name": "editor_preference",
        "into": "prefers_editor",
    }
    changed = {(x["subject"], x["predicate"], tuple(x["after"])) for x in pv["impact"]["changes"]}
    assert ("alice", "prefers_editor", ("helix",)) in changed
    demo.ok("vocab", "merge", c["id"], "--apply")
    assert not [c for c in demo.ok("vocab", "suggest")["clusters"] if "editor_preference" in c["names"]]
    assert "editor_preference" not in [p["name"] for p in demo.ok("vocab", "list")["predicates"]]
    merged = [p for p in demo.ok("vocab", "list", "--all")["predicates"] if p["name"] == "editor_preference"]
    assert merged[0]["status"] == "merged" and merged[0]["into"] == "prefers_editor"
    assert values(demo.ok("recall", "alice", "prefers_editor")) == ["helix"]


def test_never_merge_keeps_a_pair_from_returning(demo: Cli):
    c = next(c for c in demo.ok("vocab", "suggest")["clusters"] if "editor_preference" in c["names"])
    out = demo.ok("vocab", "never", c["id"], "--reason", "agents mean something else")
    assert out["never"] == [["editor_preference", "prefers_editor"]] and len(out["events"]) == 1
    assert not [x for x in demo.ok("vocab", "suggest")["clusters"] if x["id"] == c["id"]]
    assert demo.ok("vocab", "never", "prefers_editor", "editor_preference")["events"] == []  # already recorded
    assert demo.fail("vocab", "merge", c["id"])["code"] == "not_found"


def test_automatic_match_is_listed_with_score_and_write_and_can_be_split(coding: Cli):
    coding.ok("init", "--open")
    r = coding.ok("remember", "sam", "preferred_editor", "helix", "--at", "2026-05-01")
    assert r["registry_changes"] == [{"op": "merge", "name": "preferred_editor", "into": "prefers_editor"}]
    inbox = coding.ok("vocab", "list")["predicates"]
    m = next(p for p in inbox if p["name"] == "preferred_editor")
    assert m["origin"] == "matched" and m["into"] == "prefers_editor" and m["score"] >= 0.9
    assert m["caused_by"]["value"] == "helix" and m["caused_by"]["subject"] == "sam"
    assert "recall-admin vocab split preferred_editor" in m["actions"]
    pv = coding.ok("vocab", "split", "preferred_editor")
    assert pv["plan"]["ops"][0]["op"] == "split"
    coding.ok("vocab", "split", "preferred_editor", "--apply")
    assert "preferred_editor" not in [p["name"] for p in coding.ok("vocab", "list")["predicates"]]
    assert values(coding.ok("recall", "sam", "preferred_editor")) == ["helix"]
    assert values(coding.ok("recall", "sam", "prefers_editor")) == []
    # split apart, the pair is a suggestion again until an operator says never
    c = next(c for c in coding.ok("vocab", "suggest")["clusters"] if "preferred_editor" in c["names"])
    coding.ok("vocab", "never", "preferred_editor,prefers_editor")
    assert not [x for x in coding.ok("vocab", "suggest")["clusters"] if x["id"] == c["id"]]


def test_defined_names_in_the_inbox_and_unknown_names(coding: Cli):
    coding.ok("init", "--open")
    coding.ok("remember", "sam", "favourite_snack", "crisps", "--description", "A snack someone likes best")
    inbox = coding.ok("vocab", "list")["predicates"]
    d = next(p for p in inbox if p["name"] == "favourite_snack")
    assert d["origin"] == "defined" and d["cardinality"] == "single" and d["events"] == 1
    assert coding.fail("vocab", "never", "favourite_snack", "no_such_thing")["code"] == "unknown_predicate"
    assert coding.fail("vocab", "never", "v-000000000000")["code"] == "not_found"


# --- notes ----------------------------------------------------------------------------------


def test_notes_list_search_and_clusters(demo: Cli):
    notes = demo.ok("notes", "list")["notes"]
    assert len(notes) == 6 and all(n["predicate"] == "note" for n in notes)
    at = [n["observed_at"] for n in notes]
    assert at == sorted(at, reverse=True)
    assert [n["value"] for n in demo.ok("notes", "list", "--subject", "dan")["notes"]] == ["my shell is nushell"]
    assert len(demo.ok("notes", "list", "--match", "SHELL")["notes"]) == 5
    assert demo.fail("notes", "list", "--match", "(")["code"] == "invalid_input"
    clusters = demo.ok("notes", "clusters")["clusters"]
    shell = clusters[0]
    assert shell["size"] == 5 and "shell" in shell["about"]
    assert shell["suggestion"]["predicate"] == "prefers_shell" and shell["suggestion"]["existing"]
    got = {n["subject"]: n["value"] for n in shell["notes"]}
    assert got == {"dan": "nushell", "carol": "bash", "bob": "fish", "alice": "zsh", "user": "fish"}


def test_shell_notes_promote_into_prefers_shell_and_leave_the_queue(demo: Cli):
    shell = demo.ok("notes", "clusters")["clusters"][0]
    pv = demo.ok("notes", "promote", "prefers_shell", "--cluster", shell["id"])
    op = pv["plan"]["ops"][0]
    assert op["op"] == "promote" and op["name"] == "prefers_shell" and len(op["notes"]) == 5
    assert all(n["ok"] for n in pv["plan"]["details"]["notes"])
    after = {(c["subject"], tuple(c["after"])) for c in pv["impact"]["changes"] if c["predicate"] == "prefers_shell"}
    assert ("dan", ("nushell",)) in after and ("alice", ("zsh",)) in after
    demo.ok("notes", "promote", "prefers_shell", "--cluster", shell["id"], "--apply")
    assert [n["value"] for n in demo.ok("notes", "list")["notes"]] == ["Prefers answers with code first"]
    assert demo.ok("notes", "clusters")["clusters"] == []
    b = demo.ok("recall", "dan", "prefers_shell")["beliefs"][0]
    assert b["value"] == "nushell" and b["promoted_from"] == shell["notes"][0]["event_id"]


def test_promote_with_the_suggested_regex_reports_each_note(demo: Cli):
    shell = demo.ok("notes", "clusters")["clusters"][0]
    pv = demo.ok("promote", "prefers_shell", "--match", shell["suggestion"]["regex"])
    parsed = {n["subject"]: n.get("value") for n in pv["plan"]["details"]["notes"] if n["ok"]}
    assert parsed == {"alice": "zsh", "bob": "fish", "carol": "bash", "user": "fish"}


def test_promote_into_a_predicate_defined_in_the_same_plan(demo: Cli):
    notes = demo.ok("notes", "list", "--match", "code first")["notes"]
    eid = notes[0]["event_id"]
    pv = demo.ok(
        "notes",
        "promote",
        "answer_order",
        "--note",
        f"{eid}=code first",
        "--define",
        "--cardinality",
        "single",
        "--type",
        "string",
        "--description",
        "How answers should be ordered",
    )
    assert [o["op"] for o in pv["plan"]["ops"]] == ["declare", "promote"]
    demo.ok("notes", "promote", "answer_order", "--note", f"{eid}=code first", "--define", "--apply")
    assert values(demo.ok("recall", "user", "answer_order")) == ["code first"]
    assert demo.fail("notes", "promote", "prefers_shell")["code"] == "invalid_plan"


def test_note_clusters_on_a_store_built_with_remember(coding: Cli):
    texts = {
        "ana": "I drink oat milk in my coffee",
        "ben": "I drink whole milk in my coffee",
        "cy": "I drink oat milk in my coffee",
        "di": "I drink soy milk in my coffee",
        "ed": "Call me after 6pm",
    }
    for who, text in texts.items():
        coding.ok("remember", who, "note", text)
    [c] = coding.ok("notes", "clusters")["clusters"]
    assert c["size"] == 4 and {"coffee", "drink"} <= set(c["about"])
    got = {n["subject"]: n.get("value") for n in c["notes"]}
    # a value two notes share is still a value, not part of the phrasing
    assert got == {"ana": "oat", "ben": "whole", "cy": "oat", "di": "soy"}
    assert not c["suggestion"]["existing"] or c["suggestion"]["score"] >= 0.25
    pv = coding.ok("notes", "promote", "milk_preference", "--cluster", c["id"], "--define")
    assert [o["op"] for o in pv["plan"]["ops"]] == ["declare", "promote"]
    assert {n["subject"]: n["value"] for n in pv["plan"]["details"]["notes"]} == got
    assert coding.ok("notes", "clusters", "--subject", "ed")["clusters"] == []


def test_queue_services_agree_on_both_backends(backend):
    """The services read only through the Store contract: SQLite and PostgreSQL agree."""
    from recall_admin import conflicts, notes, vocab
    from recall_engine.memory import Memory

    build_demo(backend, "memories")
    m = Memory(backend.store("memories"))
    listing = conflicts.find_conflicts(m)
    got = sorted((c.subject, c.key, c.predicates) for c in listing.conflicts)
    assert got == [
        ("alice", "s:cilantro", ("avoids", "likes")),
        ("bob", "s:coffee", ("avoids", "likes")),
        ("carol", "s:spicy food", ("avoids", "likes")),
        ("user", "s:run a marathon", ("did", "goal")),
    ]
    assert [g.count for g in listing.groups] == [3, 1]
    assert [c.names for c in vocab.suggest(m)] == [["editor_preference", "prefers_editor"]]
    assert {e.name for e in vocab.inbox(m)} == {"avoids", "editor_preference"}
    [cluster] = notes.note_clusters(m)
    assert cluster.predicate == "prefers_shell" and len(cluster.notes) == 5


def test_a_common_word_does_not_join_two_kinds_of_note(coding: Cli):
    for who, text in {
        "ana": "I use fish as my shell",
        "ben": "I use zsh as my shell",
        "cy": "my shell is bash",
        "di": "I use React at work",
        "ed": "I use Django at work",
        "fy": "I use Vue at work",
    }.items():
        coding.ok("remember", who, "note", text)
    clusters = coding.ok("notes", "clusters")["clusters"]
    kinds = sorted(sorted(n["subject"] for n in c["notes"]) for c in clusters)
    assert kinds == [["ana", "ben", "cy"], ["di", "ed", "fy"]]
    values = {n["subject"]: n.get("value") for c in clusters for n in c["notes"]}
    assert values == {"ana": "fish", "ben": "zsh", "cy": "bash", "di": "React", "ed": "Django", "fy": "Vue"}


def test_conflicts_found_by_index_are_exactly_those_of_folding_every_subject(sqlite_url):
    """The index-driven listing agrees with a brute force: every subject's profile, folded now."""
    from recall_admin.conflicts import find_conflicts
    from recall_engine.memory import Memory

    with open_backend(sqlite_url) as backend:
        build_demo(backend, "memories", events=12000, seed=3)
        m = Memory(backend.store("memories"))
        brute = set()
        for s, _ in m.store.subjects(limit=10**6):
            by_key: dict[str, set[str]] = {}
            for b in m.profile(s):
                if b.predicate != "note":
                    by_key.setdefault(b.key, set()).add(b.predicate)
            brute |= {(s, k, tuple(sorted(ps))) for k, ps in by_key.items() if len(ps) > 1}
        found = {(c.subject, c.key, c.predicates) for c in find_conflicts(m).conflicts}
        assert found == brute and len(found) > 4


def test_dismissed_conflicts_are_marked_with_all_refused_twice_and_undismissed(coding: Cli):
    coding.ok("remember", "u1", "likes", "coffee", "--at", "2026-01-01")
    coding.ok("remember", "u1", "prefers_language", "coffee", "--at", "2026-01-02")
    cid = coding.ok("conflicts", "list")["conflicts"][0]["id"]
    coding.ok("conflicts", "dismiss", cid, "--reason", "both true")
    assert coding.ok("conflicts", "list")["conflicts"] == []
    listed = coding.ok("conflicts", "list", "--all")
    assert [(c["id"], c["dismissed"]) for c in listed["conflicts"]] == [(cid, True)]
    assert listed["dismissed"] == 1
    human = coding.run("conflicts", "list", "--all", json_mode=False)
    assert "[dismissed]" in human.stdout and "1 dismissed conflict(s) marked" in human.stdout
    err = coding.fail("conflicts", "dismiss", cid)
    assert err["code"] == "invalid_input" and "already dismissed" in err["message"]
    coding.ok("conflicts", "undismiss", cid, "--reason", "not both true after all")
    assert [c["id"] for c in coding.ok("conflicts", "list")["conflicts"]] == [cid]
    err = coding.fail("conflicts", "undismiss", cid)
    assert err["code"] == "not_found" and "no dismissed conflict" in err["message"]


def test_confirm_statement_carries_the_operator_and_reason(coding: Cli):
    coding.ok("remember", "u1", "likes", "coffee", "--at", "2026-01-01")
    coding.ok("remember", "u1", "prefers_language", "coffee", "--at", "2026-01-02")
    cid = coding.ok("conflicts", "list")["conflicts"][0]["id"]
    data = coding.ok("--operator", "bo", "conflicts", "confirm", cid, "--keep", "likes", "--reason", "asked u1")
    assert data["plan"]["statements"][0]["evidence"] == "conflicts confirm by bo: asked u1"


def test_registry_log_filters_and_shows_reason_and_applier(coding: Cli, tmp_path):
    f = str(tmp_path / "p.json")
    p = coding.ok(
        "--operator", "bo", "redefine", "likes", "--description", "Liked.", "--reason", "clearer", "--plan-out", f
    )
    coding.ok("--operator", "cy", "apply", f)
    log = coding.ok("registry", "log", "--name", "likes", "--op", "redefine")["changes"]
    assert [(c["op"], c["operator"], c["applied_by"], c["reason"]) for c in log] == [
        ("redefine", "bo", "cy", "clearer")
    ]
    assert coding.ok("registry", "log", "--operator", "cy")["changes"][-1]["plan"] == p["plan"]["id"]
    assert len(coding.ok("registry", "log", "--limit", "2")["changes"]) == 2
    assert coding.ok("registry", "log", "--since", "2100-01-01")["changes"] == []
    human = coding.run("registry", "log", "--name", "likes", json_mode=False)
    assert "reason: clearer" in human.stdout and "applied by cy" in human.stdout
    err = coding.fail("registry", "log", "--op", "rename")
    assert err["code"] == "invalid_input" and "--op must be one of" in err["message"]


def test_out_of_range_thresholds_and_limits_are_refused(demo: Cli):
    # `vocab suggest --threshold -1` (or `--match-threshold -1`, matching turned off) made
    # every predicate one cluster; `notes list --limit -2` listed all but the last two
    for args in (
        ("suggest", "--threshold", "-1"),
        ("suggest", "--threshold", "2"),
        ("never", "v-7246e8996551", "--threshold", "nan"),
    ):
        err = demo.fail("vocab", *args)
        assert err == {
            "code": "invalid_input",
            "message": f"--threshold takes a similarity from 0 to 1, got {args[-1]}",
        }
    off = demo.ok("--match-threshold", "-1", "vocab", "suggest")
    assert off["threshold"] == 0.7  # the vocabulary's default: lint finds near-duplicates there too
    assert off["clusters"] == demo.ok("vocab", "suggest")["clusters"]
    for limit in ("0", "-2"):
        err = demo.fail("notes", "list", "--limit", limit)
        assert err == {"code": "invalid_input", "message": f"--limit must be 1 or more, got {limit}"}
    assert len(demo.ok("notes", "list", "--limit", "2")["notes"]) == 2
