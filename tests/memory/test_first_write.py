"""A subject's first remember reads about what the next one reads (both backends).

The store is wrapped in a real ``WrappedStore`` that counts the reads the engine asks
of it; the writes go through to the real store. Before the first remember reused its
reads (docs/memory.md, "Folded pairs kept between reads"), a first ``likes`` (which
excludes ``dislikes``) read its pair, the excluded pair and their ``replaces`` links
twice each, the excluded pair again after the write, then the whole subject: 15
reads, against 1 for the next remember of the pair.
"""

from __future__ import annotations

from recall_engine.memory import Memory
from recall_engine.storage.wrapped import WrappedStore

from .conftest import declare

READS = [
    "position",
    "count",
    "touched_since",
    "events_after",
    "pair_events",
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
    assert reads_of(m, counting, "bob", "goal", "ship") == ["position", "pair_events", "replacing_events"]
    assert reads_of(m, counting, "bob", "goal", "rest") == ["position"]
