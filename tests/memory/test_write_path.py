"""A remember does each piece of its work once (docs/benchmarks.md, "Seventh round, writes").

Each test counts one piece of work: the answers stay those of a fold from scratch
(tests/memory/test_pair_cache.py checks that with random writes); here the count is
what a profile of one remember at a time found done twice.
"""

from __future__ import annotations

import builtins

import recall_engine.memory as memory_module
from recall_engine.records import make_event
from recall_engine.storage.sqlite.backend import SQLiteBackend


def _counting(monkeypatch, module, name: str) -> list[int]:
    """Count the calls of ``module.name`` (as the code under test looks it up)."""
    calls = [0]
    real = getattr(module, name)

    def counted(*args, **kwargs):
        calls[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_kept_keys_are_the_beliefs_keys(memory):
    """``keyed_at`` gives each belief's value key, from the kept state and from an as-of fold."""
    for v in ("Vim", "zed", "emacs"):
        memory.remember("ann", "uses_technology", v)
    tl = memory.timeline()
    entry = memory._pairs.get("ann", "uses_technology")
    for at in (memory.now(), entry.last - 1):
        beliefs, keys = entry.keyed_at(at, tl)
        assert keys == [b.key for b in beliefs]
    beliefs, keys = entry.keyed_with([make_event("ann", "uses_technology", "nano", memory.now())], memory.now(), tl)
    assert keys == [b.key for b in beliefs] and "s:nano" in keys


def test_an_excluded_pair_is_folded_from_scratch_once(memory, monkeypatch):
    """A statement withdrawing a value from a pair it excludes: that pair is folded from
    scratch for before the write only; after it, its kept state answers (it was folded
    from scratch twice)."""
    memory.remember("ann", "dislikes", "vim")
    memory.remember("ann", "likes", "emacs")  # both pairs kept
    calls = _counting(monkeypatch, memory_module, "fold")
    r = memory.remember("ann", "likes", "vim")
    assert [(b.predicate, b.value) for b in r.displaced] == [("dislikes", "vim")]
    assert calls[0] == 1
    assert [b.value for b in memory.read_pair("ann", "dislikes")] == []


def test_an_append_imports_nothing_after_the_first(tmp_path, monkeypatch):
    """The SQLite append renders its index rows with modules it imported once (an import
    statement in the append cost about 3 us every time)."""
    backend = SQLiteBackend(tmp_path / "s.db")
    try:
        store = backend.store("c")
        store.append([make_event("ann", "likes", "vim", 1)])
        imports = _counting(monkeypatch, builtins, "__import__")
        store.append([make_event("ann", "likes", "zed", 2)])
        assert imports[0] == 0
        assert len(store.pair_events("ann", ["likes"])) == 2
    finally:
        backend.close()
