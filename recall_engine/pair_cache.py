"""Folded pairs kept between reads (docs/memory.md, "Folded pairs kept between reads").

An entry holds what a pair's fold reads (the pair's events, its excluders' and the
events naming it in ``replaces``, and the same for the pairs its statements withdrew
from), the fold's state after all of them, and the latest instant among them. The
cache is caught up with the log by ``Memory.timeline``: everything appended since its
watermark (one indexed read of the new rows) is offered to the entries of the same
subject, so an entry never re-reads its pair.

Caught up, an entry answers:
- at an instant at or after its latest event: the kept state (no fold at all);
- at an earlier instant (an as-of read): the fold of the kept events, from scratch;
- after a new event later than all it holds, of a pair with no cross moves (it
  excludes nothing and names no other pair in ``replaces``): the kept state moved on
  by that event alone (``fold.extend_state``);
- after anything else (an event at an earlier instant, one that already was in it,
  a pair with cross moves): the state is dropped and folded again on the next read,
  from the kept events.
An event that widens what the fold reads (a ``replaces`` naming a pair it did not
read, a note promoted into it) drops the entry: the next read loads it from the
store. A registry record appended starts the whole cache over, since every name and
rule may have changed. The fold is pure and the log append-only, so each of these
equals a fold from scratch (tests/memory/test_pair_cache.py checks it on both backends).

Memory is bounded by the number of events held: past ``budget`` the least recently
used entries go first.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field

from .fold import Held, extend_state, fold, fold_state, state_beliefs
from .records import Belief, Event
from .text import NOTE
from .timeline import Timeline

DEFAULT_BUDGET = 200_000  # events held over all entries (a few hundred bytes each, shared with the decode memo)
CATCH_UP_LIMIT = 2_000  # more appended than this since the last look: start over instead of catching up


def bearing_names(predicate: str, others: Iterable[str], tl: Timeline) -> tuple[frozenset[str], frozenset[str]]:
    """Stored names whose events a pair's fold reads, and those a ``replaces`` must name to bear on it.

    The same sets ``Memory.pair_input`` reads by: the pair and each of ``others``,
    every name resolving to it and to its excluders."""
    names: set[str] = set()
    replaced: set[str] = set()
    for q in (predicate, *others):
        own = tl.stored_names(q)
        names.update(own)
        replaced.update(own)
        for x in tl.excluders(q):
            names.update(tl.stored_names(x))
    return frozenset(names), frozenset(replaced)


@dataclass(slots=True)
class Entry:
    """One pair's fold input and its state, as of the cache's watermark."""

    subject: str
    predicate: str
    events: list[Event]
    names: frozenset[str]
    replace_names: frozenset[str]
    others: frozenset[str]  # the pairs its cross moves come from (empty: none)
    ids: set[str] = field(default_factory=set)
    own: int = 0  # the pair's own events, as the cap counts them
    taken: set[int] = field(default_factory=set)  # the instants of every event held
    last: int | None = None  # the latest instant of any event held
    state: dict[str, Held] | None = None  # after every event held
    beliefs: list[Belief] | None = None  # of ``state``
    # value key -> (held value, its belief): a state moved on by one event keeps most of
    # its held values, whose beliefs are not built again (a held value is never changed)
    made: dict[str, tuple[Held, Belief]] = field(default_factory=dict)
    made_under: Timeline | None = None
    # value key -> the pair's own assertions carrying it, counted under ``keys_under`` when first asked
    keys: dict[str, int] | None = None
    keys_under: Timeline | None = None

    @classmethod
    def build(cls, subject: str, predicate: str, events: list[Event], others: set[str], tl: Timeline) -> Entry:
        names, replaced = bearing_names(predicate, others, tl)
        e = cls(subject, predicate, [], names, replaced, frozenset(others))
        ids = {ev.id for ev in events}
        if len(ids) < len(events):  # an event listed twice is held once
            for ev in events:
                if ev.id not in e.ids:
                    e._add(ev, tl)
            return e
        # ``_add`` for each event, in bulk: a first read builds an entry for every pair
        e.events, e.ids = list(events), ids
        e.taken = {ev.observed_at for ev in events}
        own = {n for n in {ev.predicate for ev in events} if tl.canonical(n) == predicate}
        e.own = sum(1 for ev in events if ev.predicate in own)
        e.last = max(e.taken) if events else None
        return e

    def _add(self, ev: Event, tl: Timeline) -> None:
        self.events.append(ev)
        self.ids.add(ev.id)
        self.taken.add(ev.observed_at)
        if tl.canonical(ev.predicate) == self.predicate:
            self.own += 1
            if self.keys is not None and not ev.retraction:
                if self.keys_under is tl:
                    self.keys[ev.key] = self.keys.get(ev.key, 0) + 1
                else:
                    self.keys = None
        if self.last is None or ev.observed_at > self.last:
            self.last = ev.observed_at

    def carrying(self, key: str, tl: Timeline) -> int:
        """How many of the pair's own assertions held carry a value of this key. A value
        none of them carries is never held by the pair, unless a note is promoted into it
        (the callers check that): only an assertion of the pair makes it hold a value."""
        if self.keys is None or self.keys_under is not tl:
            counts: dict[str, int] = {}
            for ev in self.events:
                if not ev.retraction and tl.canonical(ev.predicate) == self.predicate:
                    counts[ev.key] = counts.get(ev.key, 0) + 1
            self.keys, self.keys_under = counts, tl
        return self.keys.get(key, 0)

    @property
    def crossless(self) -> bool:
        return not self.others

    def offer(self, ev: Event, tl: Timeline) -> bool:
        """Take a newly appended event of the subject; False when the entry must be loaded again."""
        if ev.id in self.ids:
            return True
        c = tl.canonical(ev.predicate)
        if c == NOTE and not ev.retraction and tl.promotion(ev.id) is not None:
            return False
        if ev.predicate not in self.names and not any(r.predicate in self.replace_names for r in ev.replaces):
            return True  # the fold would ignore it
        if (
            tl.rules_at_read
            and c == self.predicate
            and ev.replaces
            and not ev.retraction
            and any(tl.canonical(r.predicate) not in self.others | {self.predicate} for r in ev.replaces)
        ):
            return False  # it names a pair whose events were not read
        later = self.last is None or ev.observed_at > self.last
        self._add(ev, tl)
        self.beliefs = None
        if self.state is not None:
            self.state = (
                extend_state(self.state, [ev], self.subject, self.predicate, tl) if later and self.crossless else None
            )
        return True

    def _state(self, tl: Timeline) -> dict[str, Held]:
        if self.state is None:
            at = self.last if self.last is not None else 0
            self.state = fold_state(self.events, self.subject, self.predicate, tl, at)
        return self.state

    def beliefs_at(self, at: int, tl: Timeline) -> list[Belief]:
        """The fold of the pair at ``at``."""
        return self.keyed_at(at, tl)[0]

    def keyed_at(self, at: int, tl: Timeline) -> tuple[list[Belief], list[str]]:
        """``beliefs_at`` and each belief's value key, in the same order (the kept state is
        keyed by them: a remember looks its value up without working them out again)."""
        if self.last is not None and at < self.last:
            beliefs = fold(self.events, self.subject, self.predicate, tl, at)
            return beliefs, [b.key for b in beliefs]
        if self.beliefs is None:
            self.beliefs = self._beliefs_of(self._state(tl), tl)
        return list(self.beliefs), list(self._state(tl))

    def _beliefs_of(self, held: dict[str, Held], tl: Timeline) -> list[Belief]:
        """``state_beliefs(held, ...)``, reusing the beliefs of held values built before."""
        if self.made_under is not tl:
            self.made.clear()
            self.made_under = tl
        made = self.made
        out = []
        for k, h in held.items():
            got = made.get(k)
            if got is None or got[0] is not h:
                got = made[k] = (h, state_beliefs({k: h}, self.predicate, tl)[0])
            out.append(got[1])
        if len(made) > 2 * len(held) + 8:  # values no longer held
            for k in [k for k in made if k not in held]:
                del made[k]
        return out

    def fold_with(self, extra: list[Event], at: int, tl: Timeline) -> list[Belief]:
        """The fold at ``at`` of the pair's events and ``extra`` (events just appended, or about to be)."""
        return self.keyed_with(extra, at, tl)[0]

    def keyed_with(self, extra: list[Event], at: int, tl: Timeline) -> tuple[list[Belief], list[str]]:
        """``fold_with`` and each belief's value key, in the same order."""
        extra = [e for e in extra if e.id not in self.ids]  # already caught up: folded in
        if not extra:
            return self.keyed_at(at, tl)
        if (
            self.crossless
            and (self.last is None or (at >= self.last and all(e.observed_at > self.last for e in extra)))
            and all(at >= e.observed_at and not e.replaces for e in extra)
        ):
            held = extend_state(self._state(tl), extra, self.subject, self.predicate, tl)
            return self._beliefs_of(held, tl), list(held)
        beliefs = fold([*self.events, *extra], self.subject, self.predicate, tl, at)
        return beliefs, [b.key for b in beliefs]


class PairCache:
    """Entries by (subject, predicate), least recently used first, for one registry timeline."""

    def __init__(self, budget: int = DEFAULT_BUDGET) -> None:
        self.budget = budget
        self.timeline: Timeline | None = None
        self.at = 0  # the log position every entry is caught up to
        self._entries: OrderedDict[tuple[str, str], Entry] = OrderedDict()
        self._by_subject: dict[str, set[str]] = {}
        self._size = 0
        # subject -> value keys -> stored names asserting them (``Store.value_predicates``),
        # kept up by ``catch_up``
        self.value_names: dict[str, dict[tuple[str, ...], set[str]]] = {}
        # subject -> value key -> stored names asserting it, for every value of a subject
        # with few events (None: too many to keep), kept up by ``catch_up`` the same way
        self.subject_values: dict[str, dict[str, set[str]] | None] = {}

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def size(self) -> int:
        """Events held over all entries."""
        return self._size

    def reset(self, timeline: Timeline, at: int) -> None:
        self.timeline = timeline
        self.at = at
        self._entries.clear()
        self._by_subject.clear()
        self._size = 0
        self.value_names.clear()
        self.subject_values.clear()

    def get(self, subject: str, predicate: str) -> Entry | None:
        e = self._entries.get((subject, predicate))
        if e is not None:
            self._entries.move_to_end((subject, predicate))
        return e

    def put(self, entry: Entry) -> None:
        key = (entry.subject, entry.predicate)
        self._drop(key)
        if len(entry.events) > self.budget:
            return
        self._entries[key] = entry
        self._by_subject.setdefault(entry.subject, set()).add(entry.predicate)
        self._size += len(entry.events)
        self._trim()

    def _drop(self, key: tuple[str, str]) -> None:
        e = self._entries.pop(key, None)
        if e is not None:
            self._size -= len(e.events)
            preds = self._by_subject.get(key[0])
            if preds is not None:
                preds.discard(key[1])
                if not preds:
                    del self._by_subject[key[0]]

    def _trim(self) -> None:
        while self._size > self.budget and self._entries:
            self._drop(next(iter(self._entries)))

    def catch_up(self, news: list[tuple[int, Event]], at: int) -> None:
        """Offer events appended after the watermark (position order) to the entries of their subjects."""
        tl = self.timeline
        assert tl is not None
        for pos, ev in news:
            if not ev.retraction:  # the names asserting a value only grow, and only by assertions
                every = self.subject_values.get(ev.subject)
                if every is not None:
                    every.setdefault(ev.key, set()).add(ev.predicate)
                known = self.value_names.get(ev.subject)
                if known:
                    k = ev.key
                    for keys, names in known.items():
                        if k in keys:
                            names.add(ev.predicate)
            for p in list(self._by_subject.get(ev.subject, ())):
                entry = self._entries[(ev.subject, p)]
                before = len(entry.events)
                if entry.offer(ev, tl):
                    self._size += len(entry.events) - before
                else:
                    self._drop((ev.subject, p))
            at = max(at, pos)
        self.at = max(self.at, at)
        self._trim()
