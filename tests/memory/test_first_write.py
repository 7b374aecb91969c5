"""A subject's first remember reads about what the next one reads (both backends).

The store is wrapped in a real ``WrappedStore`` that counts the reads the engine asks
of it; the writes go through to the real store. Before the first remember reused its
reads (docs/memory.md, "Folded pairs kept between reads"), a first ``likes`` (which
excludes ``dislikes``) read its pair, the excluded pair and their ``replaces`` links
twice each, the excluded pair again after the write, then the whole subject: 15
reads, against 1 for the next remember of the pair.
"""

from __future__ import annotations

from recall_engine.instants import parse_instant as T
from recall_engine.memory import Memory
from recall_engine.storage.wrapped import WrappedStore

from .conftest import declare

READS = [
    "position",
    "count",
    "touched_since",
    "events_after",
    "pair_events",
    "pair_read",
    "subject_events",
    "events_by_id",
    "replacing_events",
    "value_events",
    "value_predicates",
    "absent_subjects",
    "registry_events",
    "subjects",
    "pairs",
]


class CountingStore(WrappedStore):
    """The wrapped store, with the name of every read asked of it in ``reads``."""

    def __init__(self, inner) -> None:
        super().__init__(inner)
        self.reads: list[str] = []

    def appended(self, events):
        # as the agents' store does: the engine learns what it wrote without reading it back
        return self.inner.appended(events)


def _counted(name):
    def read(self, *args, **kwargs):
        self.reads.append(name)
        return getattr(self.inner, name)(*args, **kwargs)

    return read


for _name in READS:
    setattr(CountingStore, _name, _counted(_name))


def reads_of(memory: Memory, counting: CountingStore, *args, **kwargs) -> list[str]:
    counting.reads.clear()
    memory.remember(*args, **kwargs)
    return list(counting.reads)


def test_a_first_remember_reads_the_subject_once_and_the_next_reads_nothing_more(store, clock):
    counting = CountingStore(store)
    m = Memory(counting, now=clock)
    declare(m)
    m.timeline()  # the registry, read once by any first call
    other = Memory(store, now=clock)  # another writer: the subject already holds events
    other.remember("ann", "dislikes", "emacs")
    other.remember("ann", "likes", "zed", replaces=[("dislikes", "emacs")])
    first = reads_of(m, counting, "ann", "likes", "vim")
    assert first == ["position", "events_after", "subject_events"]
    assert reads_of(m, counting, "ann", "likes", "emacs") == ["position"]
    # what it withdrew from the excluded pair, and where the value is held, from what it read
    r = m.remember("ann", "likes", "zed")
    assert r.already_known and [b.value for b in m.read_pair("ann", "dislikes")] == []
    assert reads_of(m, counting, "ann", "dislikes", "vim") == ["position"]
    assert [b.value for b in m.read_pair("ann", "likes")] == ["zed", "emacs"]


def test_a_first_remember_of_a_new_subject_and_of_a_new_pair(store, clock):
    counting = CountingStore(store)
    m = Memory(counting, now=clock)
    declare(m)
    m.timeline()
    assert reads_of(m, counting, "bob", "likes", "vim") == ["position", "subject_events"]
    assert reads_of(m, counting, "bob", "likes", "rust") == ["position"]
    # a new pair of a subject already read: the pair and its replaces links, in one query each
    assert reads_of(m, counting, "bob", "goal", "ship") == ["position", "pair_read"]
    assert reads_of(m, counting, "bob", "goal", "rest") == ["position"]


def reads_of_read(memory: Memory, counting: CountingStore, *args, **kwargs) -> tuple[list[str], list]:
    counting.reads.clear()
    beliefs = memory.read_pair(*args, **kwargs)
    return list(counting.reads), beliefs


def test_a_first_read_asks_for_its_pair_and_the_names_of_its_values_at_once(store, clock):
    counting = CountingStore(store)
    m = Memory(counting, now=clock)
    declare(m)
    other = Memory(store, now=clock)
    other.remember("ann", "goal", "run a marathon", at=T("2026-02-01"))
    other.remember("ann", "did", "run a marathon", at=T("2026-05-01"))
    other.remember("ann", "goal", "swim", at=T("2026-06-01"))
    m.timeline()  # caught up with the log
    reads, beliefs = reads_of_read(m, counting, "ann", "goal")
    # PostgreSQL reads the names of the pair's values with it; SQLite asks for them after.
    # Then the pair holding one of them, read for ``elsewhere``
    names = [] if store.backend.url_for_display.startswith("postgresql") else ["value_predicates"]
    assert reads == ["position", "pair_read", *names, "pair_read"]
    assert beliefs == Memory(store, now=clock).read_pair("ann", "goal")
    assert [[(e.predicate, e.value) for e in b.elsewhere] for b in beliefs] == [[("did", "run a marathon")], []]


def test_value_names_read_with_a_pair_are_not_used_after_a_write(store, clock):
    writer = Memory(store, now=clock)
    declare(writer)
    writer.remember("ann", "uses_technology", "rust", at=T("2026-03-01"))
    writer.remember("ann", "uses_technology", "go", at=T("2026-04-01"))
    m = Memory(store, now=clock)
    assert [b.elsewhere for b in m.read_pair("ann", "uses_technology")] == [(), ()]  # a first read
    writer.remember("ann", "goal", "rust", at=T("2026-01-15"))
    # a value the first read saw, asked about for the first time: where it is held now
    (rust,) = m.read_pair("ann", "uses_technology", as_of=T("2026-03-15"))
    assert [(e.predicate, e.value) for e in rust.elsewhere] == [("goal", "rust")]
    assert [rust] == Memory(store, now=clock).read_pair("ann", "uses_technology", as_of=T("2026-03-15"))
