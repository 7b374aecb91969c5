"""A preview leaves out the predicates a plan of declarations names without changing how they
read (a starter that only rewords a description): the preview is the same as the one that
folds them, and it reads fewer events (docs/governance.md, "Preview")."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from recall_admin import governance
from recall_admin.demo import build_demo
from recall_admin.governance import Stager, preview, revert
from recall_admin.registry_sync import load_plan
from recall_engine.memory import Memory
from recall_engine.registry import Definition, RegistryRecord
from recall_engine.registry_files import load_starter
from recall_engine.storage import open_backend
from recall_engine.timeline import Timeline


def shown(pv: governance.Preview) -> dict[str, Any]:
    """Everything a reviewer reads, less what counts the work done (pairs and events folded)."""
    out = pv.to_json()
    for k in ("pairs", "subjects", "events_read"):
        out["impact"].pop(k, None)
    return out


def full(memory: Memory, plan: Any, monkeypatch: pytest.MonkeyPatch) -> governance.Preview:
    """The preview that folds every predicate the plan names."""
    with monkeypatch.context() as m:
        m.setattr(governance, "_inert", lambda *a: set())
        return preview(memory, plan)


@pytest.fixture
def demo(backend_url: str):
    backend = open_backend(backend_url)
    build_demo(backend, events=3000)
    yield Memory(backend.store("memories"))
    backend.close()


def test_a_starter_load_and_its_revert_preview_the_same_reading_fewer_events(demo, monkeypatch):
    stager = Stager(demo, "memories", "tester")
    plan, _ = load_plan(stager, load_starter("sales"))
    statuses = {d["name"]: d for d in plan.details["predicates"]}
    reworded = [n for n, d in statuses.items() if d["status"] == "changed" and list(d["fields"]) == ["description"]]
    assert reworded, "the sales starter rewords predicates the demo declares: the case this test is about"
    assert statuses["works_at"]["status"] == "changed" and "value_type" in statuses["works_at"]["fields"]
    counts = demo.store.predicate_counts()

    quick, slow = preview(demo, plan), full(demo, plan, monkeypatch)
    assert shown(quick) == shown(slow)
    assert slow.impact.events_read == sum(counts.get(n, 0) for n in plan.scope)
    assert quick.impact.events_read == counts["works_at"]  # the reworded predicates are not read

    governance.apply(demo, plan)
    back = revert(stager, plan.id)
    quick, slow = preview(demo, back), full(demo, back, monkeypatch)
    assert shown(quick) == shown(slow)
    assert quick.impact.events_read == counts["works_at"] < slow.impact.events_read


def test_rewording_beside_a_change_of_answers(demo, monkeypatch):
    """Three predicates reworded and dislikes no longer excluding likes: only dislikes and likes are read."""
    stager = Stager(demo, "memories", "tester")
    tl = demo.timeline()
    records = [
        RegistryRecord("declare", n, definition=replace(tl.own_definition(n), description="reworded"))
        for n in ("lives_in", "prefers_editor", "phone_number")
    ]
    records.append(
        RegistryRecord("declare", "dislikes", definition=replace(tl.own_definition("dislikes"), excludes=()))
    )
    plan = stager.registry_records(records, "load registry reworded")
    quick, slow = preview(demo, plan), full(demo, plan, monkeypatch)
    assert quick.impact.changes, "a value dislikes withdrew from likes comes back: the previews are not both empty"
    assert shown(quick) == shown(slow)
    counts = demo.store.predicate_counts()
    assert quick.impact.events_read == counts["likes"] + counts["dislikes"] < slow.impact.events_read

    governance.apply(demo, plan)
    back = revert(stager, plan.id)
    quick, slow = preview(demo, back), full(demo, back, monkeypatch)
    assert quick.impact.changes and shown(quick) == shown(slow)
    assert quick.impact.events_read < slow.impact.events_read


def timelines(*records: RegistryRecord) -> tuple[Timeline, Timeline]:
    base = [
        RegistryRecord("declare", "a", definition=Definition("a", "single", description="first")),
        RegistryRecord("declare", "b", definition=Definition("b", "multi")),
    ]
    from recall_engine.timeline import LoggedRecord

    logged = [LoggedRecord(i + 1, f"r{i}", r) for i, r in enumerate(base)]
    before = Timeline(records=logged)
    after = before.with_records(LoggedRecord(100 + i, f"n{i}", r) for i, r in enumerate(records))
    return before, after


@pytest.mark.parametrize(
    "record, inert",
    [
        (RegistryRecord("declare", "a", definition=Definition("a", "single", description="reworded")), {"a"}),
        (RegistryRecord("declare", "a", definition=Definition("a", "single")), {"a"}),
        (RegistryRecord("declare", "a", definition=Definition("a", "multi")), set()),
        (RegistryRecord("declare", "a", definition=Definition("a", "single", aliases=("alpha",))), set()),
        (RegistryRecord("declare", "a", definition=Definition("a", "single", historical=True)), set()),
        (RegistryRecord("redefine", "a", definition=Definition("a", "single"), retroactive=True), {"a"}),
        (RegistryRecord("declare", "new", definition=Definition("new", "single")), set()),
    ],
)
def test_which_declarations_change_no_reading(record: RegistryRecord, inert: set[str]) -> None:
    before, after = timelines(record)
    assert governance._inert([record], [], before, after) == inert


def test_a_reworded_predicate_is_read_when_another_record_excludes_it() -> None:
    reword = RegistryRecord("declare", "a", definition=Definition("a", "single", description="reworded"))
    exclude = RegistryRecord("declare", "b", definition=Definition("b", "multi", excludes=("a",)))
    before, after = timelines(reword, exclude)
    assert governance._inert([reword, exclude], [], before, after) == set()


def test_other_kinds_of_plan_are_previewed_whole() -> None:
    merge = RegistryRecord("merge", "b", into="a")
    before, after = timelines(merge)
    assert governance._inert([merge], [], before, after) == set()


@pytest.mark.parametrize(
    "definitions, retro, expected",
    [
        (["single", "single"], -1, [(None, "single")]),
        (["single", "multi"], -1, [(None, "single"), (2, "multi")]),
        (["single", "multi", "multi", "single"], -1, [(None, "single"), (2, "multi"), (4, "single")]),
        (["single", "multi", "single"], 2, [(None, "single")]),  # the retroactive one covers what came before
        (["single", "multi", "single"], 1, [(None, "multi"), (3, "single")]),
    ],
)
def test_rules_history(definitions: list[str], retro: int, expected: list[tuple[int | None, str]]) -> None:
    from recall_engine.timeline import LoggedRecord

    logged = [
        LoggedRecord(
            i + 1,
            f"r{i}",
            RegistryRecord(
                "declare" if i == 0 else "redefine",
                "p",
                definition=Definition("p", c, description=f"wording {i}"),
                retroactive=i == retro,
            ),
        )
        for i, c in enumerate(definitions)
    ]
    history = Timeline(records=logged).rules_history("p")
    assert [(at, r["cardinality"]) for at, r in history] == expected
    assert Timeline(records=[]).rules_history("p") == []
