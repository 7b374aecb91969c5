"""Group commit in `serve` (docs/agents.md): concurrent writes share one transaction, and
each caller gets exactly the answer (or error) it would get alone, in arrival order.

Every test applies the same calls twice, on two fresh stores of the same backend: once
as a group (``Agents.apply`` or concurrent ``Agents.run``), once one call at a time
(``Agents.call``), and compares every answer and every stored event. Both backends.
"""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pytest

from recall_admin.agents.http import Agents, Limits
from recall_admin.agents.keys import Key, KeyRing
from recall_admin.registry_sync import sync_registry
from recall_engine.errors import RecallError, StorageError
from recall_engine.memory import Memory
from recall_engine.records import REGISTRY_SUBJECT, WRITER_SUBJECT
from recall_engine.registry_files import load_starter
from recall_engine.storage import open_backend

_n = itertools.count()
DAY = "2026-03-0{}T12:00:00Z"


@pytest.fixture(params=["sqlite", "postgres"])
def urls(request: pytest.FixtureRequest, tmp_path) -> tuple[str, str]:
    """Two fresh stores of one backend: the grouped one and the reference."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'grouped.db'}", f"sqlite:///{tmp_path / 'alone.db'}"
    from tests.pg_server import fresh_database

    base = request.getfixturevalue("pg_url")
    return tuple(fresh_database(base, f"g{os.getpid()}_{next(_n)}_{side}") for side in ("a", "b"))  # type: ignore[return-value]


def prepared(backend: Any) -> dict[str, Key]:
    """Three keys: two writers on one namespace, a read-only one on another; fixed ids, so
    both stores record the same writers."""
    ring = KeyRing(backend)
    keys = {}
    for name, ns, ro in (("a", "team:one", False), ("b", "team:one", False), ("ro", "team:two", True)):
        key = ring.create(ns, expires_in=None, read_only=ro)[1]
        key.id = f"key-{name}"  # the writer's name recorded beside each event
        keys[name] = key
        sync_registry(Memory(backend.store(key.collection)), [load_starter("coding")], "test")
    return keys


def remember(subject: str, predicate: str, value: Any, day: int, **more: Any) -> dict[str, Any]:
    return {"subject": subject, "predicate": predicate, "value": value, "at": DAY.format(day), **more}


# each call: (key, tool, arguments); good calls, restatements and bad calls, interleaved
CALLS: list[tuple[str, str, dict[str, Any]]] = [
    ("a", "remember", remember("user", "prefers_editor", "vim", 1)),
    ("b", "remember", remember("user", "prefers_editor", "zed", 2)),  # replaces a's vim
    ("a", "remember", remember("user", "no_such_predicate", "x", 2)),  # unknown predicate
    ("b", "remember", remember("user", "prefers_editor", "zed", 3)),  # already known
    ("ro", "remember", remember("user", "prefers_editor", "emacs", 3)),  # read-only key
    ("a", "remember", remember("user", "uses_technology", "x" * 20_000, 3)),  # value too large
    ("a", "remember", remember("user", "uses_technology", "rust", 4)),
    (
        "b",
        "remember",
        remember("user", "uses_technology", "go", 5, replaces=[{"predicate": "uses_technology", "value": "rust"}]),
    ),
    ("a", "remember", remember("user", "uses_technology", "go", 6, confidence=7)),  # bad confidence
    ("a", "forget", {"subject": "user", "predicate": "prefers_editor", "value": "zed"}),
    ("b", "forget", {"subject": "user", "predicate": "prefers_editor", "value": "zed"}),  # nothing held now
    ("a", "remember", remember("ticket-7", "uses_technology", "python", 6)),
]


def outcome_json(o: Any) -> Any:
    if isinstance(o, RecallError):
        return {"error": o.code, "message": o.message}
    assert not isinstance(o, Exception), o
    return o


def stored(backend: Any, keys: dict[str, Key]) -> list[tuple]:
    out = []
    for collection in sorted({k.collection for k in keys.values()}):
        store = backend.store(collection, create=False)
        events = [e for e in store.all_events() if e.subject != REGISTRY_SUBJECT]  # set-up, own instants
        ids = {e.id for e in events}
        # a forget is stated now, so its id differs between the stores: compare what was written
        for e in events:
            if e.subject == WRITER_SUBJECT:
                assert e.value in ids  # each writer record names an event of the same store
            value = "(an event)" if e.subject == WRITER_SUBJECT else e.value
            out.append((collection, e.subject, e.predicate, value, e.retraction, e.evidence))
    return sorted(out)


def alone(url: str) -> tuple[list[Any], list[tuple]]:
    with open_backend(url) as b:
        keys = prepared(b)
        agents = Agents(b, Limits())
        answers = []
        for k, tool, args in CALLS:
            try:
                answers.append(outcome_json(agents.call(keys[k], tool, args)))
            except RecallError as e:
                answers.append(outcome_json(e))
        return answers, stored(b, keys)


def test_a_group_answers_every_call_as_if_applied_alone(urls):
    grouped, reference = urls
    with open_backend(grouped) as b:
        keys = prepared(b)
        agents = Agents(b, Limits())
        answers = [outcome_json(o) for o in agents.apply([(keys[k], tool, args) for k, tool, args in CALLS])]
        events = stored(b, keys)
    expected, expected_events = alone(reference)
    assert [a.get("error") for a in answers if "error" in a] == [
        "unknown_predicate",
        "read_only",
        "too_large",
        "invalid_input",
    ]
    assert answers == expected
    assert events == expected_events  # each statement stored exactly once, as alone


class FailingCommit:
    """A real backend whose group commit fails at the end (as a lost connection or a full
    disk would make it): the transaction is rolled back by the real backend."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.failed = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.backend, name)

    @contextmanager
    def group(self, collections: Sequence[str] = ()) -> Iterator[None]:
        with self.backend.group(collections):
            yield
            self.failed += 1
            raise StorageError("the commit failed")


def test_a_group_that_cannot_commit_is_applied_one_call_at_a_time(urls):
    grouped, reference = urls
    with open_backend(grouped) as real:
        keys = prepared(real)
        b = FailingCommit(real)
        agents = Agents(b, Limits())  # type: ignore[arg-type]
        # a first group warms the caches, then fails: nothing of it may remain anywhere
        answers = [outcome_json(o) for o in agents.apply([(keys[k], tool, args) for k, tool, args in CALLS])]
        events = stored(real, keys)
    expected, expected_events = alone(reference)
    assert b.failed == 1
    assert answers == expected
    assert events == expected_events


def test_concurrent_writes_share_commits_and_get_their_own_answers(urls):
    grouped, reference = urls
    with open_backend(grouped) as b:
        keys = prepared(b)
        agents = Agents(b, Limits())

        async def main() -> list[Any]:
            async def one(k: str, tool: str, args: dict[str, Any]) -> Any:
                try:
                    return await agents.run(keys[k], tool, args)
                except RecallError as e:
                    return e

            return await asyncio.gather(*(one(k, tool, args) for k, tool, args in CALLS))

        answers = [outcome_json(o) for o in asyncio.run(main())]
        events = stored(b, keys)
        assert agents.writes is not None
        assert agents.writes.calls == len(CALLS)
        assert agents.writes.groups < len(CALLS)  # they were grouped
    expected, expected_events = alone(reference)
    assert answers == expected
    assert events == expected_events
