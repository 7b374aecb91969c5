"""Matching quality of vocabulary suggestions, and the rules of ``vocab suggest``.

The labelled set is ``benchmarks/match_pairs.json`` (at least 50 same-meaning and
50 different-meaning predicate name pairs); at the engine's default threshold the
merge suggestions must be right at least 95% of the time.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recall_admin import vocab
from recall_admin.vocab import pair_score
from recall_engine.vocabulary import descriptions_disagree
from recall_engine.instants import parse_instant
from recall_engine.memory import Memory
from recall_engine.registry import Definition, RegistryRecord
from recall_engine.storage import open_backend
from recall_engine.vocabulary import DEFAULT_THRESHOLD

PAIRS = Path(__file__).resolve().parents[2] / "benchmarks" / "match_pairs.json"


def d(name: str, description: str = "", value_type: str = "string", cardinality: str = "single") -> Definition:
    return Definition(name, cardinality, value_type, description)


def labelled() -> list[dict]:
    return json.loads(PAIRS.read_text(encoding="utf-8"))["pairs"]


def test_the_labelled_set_is_large_enough_and_well_formed():
    pairs = labelled()
    assert sum(p["same"] for p in pairs) >= 50
    assert sum(not p["same"] for p in pairs) >= 50
    seen = set()
    for p in pairs:
        assert isinstance(p["same"], bool) and p["a"] != p["b"]
        key = tuple(sorted((p["a"], p["b"])))
        assert key not in seen, key
        seen.add(key)


def test_precision_at_the_default_threshold():
    tp = fp = fn = 0
    for p in labelled():
        s = pair_score(d(p["a"], p.get("a_description", "")), d(p["b"], p.get("b_description", "")))
        if s >= DEFAULT_THRESHOLD:
            tp, fp = (tp + 1, fp) if p["same"] else (tp, fp + 1)
        elif p["same"]:
            fn += 1
    precision = tp / (tp + fp)
    recall = tp / (tp + fn)
    assert precision >= 0.95, (precision, recall)
    assert recall >= 0.6, recall  # reported by benchmarks/bench_matching.py; guard against collapse


@pytest.mark.parametrize("a,b", [
    ("likes", "dislikes"), ("avoids", "likes"), ("uses_technology", "avoids_technology"),
    ("open_task", "completed_task"), ("owns", "gave_away"), ("current_city", "previous_city"),
])
def test_names_of_opposite_meaning_are_never_suggested(a, b):
    assert pair_score(d(a), d(b)) < DEFAULT_THRESHOLD


def test_the_scores_are_symmetric_and_need_one_storage_class():
    a, b = d("editor_preference", "The editor someone prefers"), d("prefers_editor", "The code editor someone prefers")
    assert pair_score(a, b) == pair_score(b, a) == 1.0
    assert pair_score(d("budget", value_type="number"), d("budget_text")) == 0.0
    assert pair_score(d("deal_value", value_type="number"), d("value_of_deal", value_type="number")) == 1.0


def test_descriptions_that_share_nothing_veto_a_name_match():
    plans = d("plans", "Something the person intends to do, with its time when given")
    plan = d("plan", "The subscription plan or tier the customer is on now")
    assert descriptions_disagree(plans.description, plan.description)
    assert pair_score(plans, plan) < DEFAULT_THRESHOLD
    # a short or missing description is no evidence either way
    assert pair_score(d("plans", "Intentions"), plan) == 1.0
    assert pair_score(d("plans"), plan) == 1.0
    # examples are not what a description is about
    assert not descriptions_disagree("The shell someone uses, e.g. fish", "Shell preferred at the command line")


# --- suggest on a real store -----------------------------------------------------------


@pytest.fixture
def memory(tmp_path):
    backend = open_backend(f"sqlite:///{tmp_path / 'v.db'}")
    clock = {"t": parse_instant("2026-01-01")}

    def now() -> int:
        clock["t"] += 1000
        return clock["t"]

    m = Memory(backend.store("memories"), now=now)
    m.clock = clock  # type: ignore[attr-defined]
    yield m
    backend.close()


def declare(m: Memory, *defs: Definition, op: str = "declare") -> None:
    m.append_records([RegistryRecord(op=op, name=x.name, definition=x, auto=(op == "define")) for x in defs])


def test_direction_declared_then_older_then_more_used(memory: Memory):
    declare(memory, d("prefers_editor", "The editor someone prefers"))
    declare(memory, d("editor_preference"), op="define")
    declare(memory, d("shell_preference"), op="define")
    declare(memory, d("preferred_shell"), op="define")
    declare(memory, d("favorite_language"), op="define")
    declare(memory, d("language_preference"), op="define")
    memory.append_records([RegistryRecord(op="vocabulary", name="", open=True)])
    for i in range(3):
        memory.remember(f"s{i}", "language_preference", "rust")
    clusters = {tuple(c.names): c for c in vocab.suggest(memory)}
    assert clusters[("editor_preference", "prefers_editor")].into == "prefers_editor"
    assert "declared" in clusters[("editor_preference", "prefers_editor")].reason
    assert clusters[("preferred_shell", "shell_preference")].into == "shell_preference"  # older
    assert "older" in clusters[("preferred_shell", "shell_preference")].reason
    # both defined at one instant: the more used one
    facts = {"a": (False, 5, 1), "b": (False, 5, 9)}
    into, why = vocab.direction(["a", "b"], facts)
    assert into == "b" and "more used" in why


def test_clusters_join_three_names_and_never_pairs_leave(memory: Memory):
    declare(memory, d("prefers_editor"))
    declare(memory, d("editor_preference"), d("preferred_editor"), d("favorite_editor"), op="define")
    [c] = vocab.suggest(memory)
    assert c.names == ["editor_preference", "favorite_editor", "preferred_editor", "prefers_editor"]
    assert c.into == "prefers_editor" and len(c.merges) == 3
    from recall_admin.governance import Stager, preview

    st = Stager(memory, "memories", "ana")
    plan = vocab.merge_plan(st, c)
    assert [(r.op, r.name, r.into) for r in plan.records] == [
        ("merge", n, "prefers_editor") for n in ("editor_preference", "favorite_editor", "preferred_editor")
    ]
    assert preview(memory, plan).plan.id == plan.id
    vocab.never(memory, [(a, b) for a, b, _ in c.pairs], "ana", "not the same")
    assert vocab.suggest(memory) == []
    assert len(vocab.suggest(memory, include_never=True)) == 1
