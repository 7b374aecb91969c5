"""The memory API over one collection: remember, forget, recall, history, diff, explain.

Every read folds complete pair histories (docs/semantics.md §5); every write is
a read followed by one transaction (§4). The clock is read here, never
in the pure core below.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import clock
from .batch import PendingStore, collection_paused, statement_fields
from .errors import IncompleteHistory, InvalidEvent, InvalidInput, LimitExceeded, RecallError, UnknownPredicate
from .fold import attach_elsewhere, fold
from .instants import MINUTE_NS, check_instant, format_rfc3339
from .integrity import readable_registry
from .pair_cache import CATCH_UP_LIMIT, Entry, PairCache
from .records import (
    KINDS,
    REGISTRY_SUBJECT,
    RESERVED_PAIRS,
    SOURCES,
    Belief,
    Event,
    Replace,
    make_event,
)
from .registry import Definition, RegistryRecord
from .storage.base import MAX_PAIR_EVENTS, Store
from .storage.known import KnownAt
from .text import NOTE, RESERVED_PREDICATES, check_predicate_name, check_text, normalize_subject, snake_case
from .timeline import LoggedRecord, Timeline
from .values import Value, normalize_value, storage_class_of, value_key

if TYPE_CHECKING:  # history, diff and explain load their module when asked (docs/benchmarks.md, "Start-up")
    from .history import Change, Explanation, HistoryStep

MAX_BELIEFS = 1000
SUBJECT_VALUES_EVENTS = 200  # a subject with more: Memory._value_predicates reads value by value


@dataclass(frozen=True, slots=True)
class Unreplaced:
    predicate: str
    value: Value
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"predicate": self.predicate, "value": self.value, "reason": self.reason}


@dataclass(frozen=True)
class RememberResult:
    stored: Belief
    already_known: bool
    displaced: list[Belief]
    unreplaced: list[Unreplaced]
    related: list[Belief]
    events: list[Event] = field(default_factory=list)  # what was appended

    def to_json(self) -> dict[str, Any]:
        return {
            "stored": self.stored.to_json(),
            "already_known": self.already_known,
            "displaced": [b.to_json() for b in self.displaced],
            "unreplaced": [u.to_json() for u in self.unreplaced],
            "related": [b.to_json() for b in self.related],
        }


def order_beliefs(beliefs: Iterable[Belief]) -> list[Belief]:
    """Typed beliefs first, notes after, each group in its own order."""
    bs = list(beliefs)
    return [b for b in bs if b.predicate != NOTE] + [b for b in bs if b.predicate == NOTE]


KNOWN_VIEWS = 8  # known-at instants kept with their folded pairs (Memory.known)
KNOWN_VIEW_BUDGET = 20_000  # events each of them may hold


def _replace_pairs(replaces: object) -> Sequence[tuple[str, Value]]:
    """``remember``'s ``replaces`` as (predicate, value) pairs; None is none. Anything else
    is refused naming the shape, not with Python's "cannot unpack"."""
    if replaces is None:
        return ()
    if isinstance(replaces, (list, tuple)) and all(isinstance(r, (list, tuple)) and len(r) == 2 for r in replaces):
        return replaces
    raise InvalidInput(f"replaces must be a list of (predicate, value) pairs, got {replaces!r:.80}")


class Memory:
    """One collection, read and written through its registry timeline."""

    def __init__(
        self,
        store: Store,
        *,
        now: Callable[[], int] = clock.now_ns,
        match_threshold: float | None = None,
    ) -> None:
        if match_threshold is not None and (not (match_threshold <= 1) or math.isnan(match_threshold)):
            raise InvalidInput("match threshold must be at most 1")
        self.store = store
        self.now = now
        self._match_threshold = match_threshold
        self._timeline: Timeline | None = None
        self._timeline_at = -1
        self._registry_recorded = 0  # the latest recorded instant of the timeline's records
        self._pairs = PairCache()
        self._known_views: OrderedDict[int, Memory] = OrderedDict()  # see known()
        # (timeline, folded pairs' position, subject, value key -> stored names): what the
        # last pair read of this operation told of its values (_keep_names)
        self._names_read: tuple[Timeline, int, str, dict[str, set[str]]] | None = None

    @property
    def match_threshold(self) -> float:
        """The similarity a new name needs to match a registered one (default: the vocabulary's)."""
        if self._match_threshold is None:
            # imported when needed: the matcher brings numpy and the model, which a
            # read never uses (CLI start-up, tests/engine/test_lazy_imports.py)
            from .vocabulary import DEFAULT_THRESHOLD

            return DEFAULT_THRESHOLD
        return self._match_threshold

    # --- registry -----------------------------------------------------------

    def timeline(self) -> Timeline:
        """The registry timeline, re-read whenever a registry record was appended; the
        folded pairs caught up with everything else appended (recall_engine.pair_cache)."""
        self._names_read = None  # value names a pair read brought live for one operation
        pos = self.store.position()
        if isinstance(self.store, KnownAt):
            # a known-at view's folded pairs hold for one log position: any append may be
            # one it knows (a known-at instant after the append's), so it starts over
            if self._timeline is None or pos != self._timeline_at:
                self._read_registry()
                self._timeline_at = pos
            assert self._timeline is not None
            if self._pairs.timeline is not self._timeline or self._pairs.at != pos:
                self._pairs.reset(self._timeline, pos)
            return self._timeline
        if self._timeline is not None and pos == self._timeline_at and pos <= self._pairs.at:
            return self._timeline
        try:
            news = self.store.events_after(self._pairs.at, CATCH_UP_LIMIT) if self._timeline is not None else None
        except InvalidEvent:  # a row that does not decode refuses only the reads that need it: start over
            news = None
        if news is None or any(e.subject == REGISTRY_SUBJECT for _, e in news):
            self._pairs.reset(self._read_registry(), pos)
        else:
            self._pairs.catch_up(news, pos)
        self._timeline_at = pos
        assert self._timeline is not None, "set above, or kept from the last read"
        return self._timeline

    def _read_registry(self) -> Timeline:
        """Build the registry timeline from the log's registry records (and note the
        latest instant one was recorded at, for known-at reads)."""
        records = self.store.registry_events()
        self._timeline = Timeline(readable_registry(records)[0])
        self._registry_recorded = max((e.recorded_at or 0 for e in records), default=0)
        return self._timeline

    def registry_instant(self, tl: Timeline | None = None) -> int:
        """A registry write instant: now, moved after every registry event (docs/formats.md, "Registry write instants")."""
        tl = tl or self.timeline()
        t = self.now()
        if tl.log:
            t = max(t, tl.log[-1].at + 1)
        return t

    def append_records(self, records: Sequence[RegistryRecord], *, source: str = "operator") -> list[Event]:
        tl = self.timeline()
        t = self.registry_instant(tl)
        events = [r.to_event(t + i, source=source) for i, r in enumerate(records)]
        self.store.append(events)
        return events

    # --- names --------------------------------------------------------------

    def resolve(self, predicate: str, tl: Timeline | None = None, *, must_exist: bool = True) -> str:
        """A predicate name as given, to the canonical predicate it reads as."""
        tl = tl or self.timeline()
        name = self.predicate_name(predicate, tl)
        c = tl.canonical(name)
        if must_exist and not tl.knows(c):
            raise self.unknown_predicate(name, tl)
        return c

    def predicate_name(self, predicate: str, tl: Timeline) -> str:
        """A predicate name as written to its stored form: under an open vocabulary any
        text is snake_cased ("Shell Used" -> ``shell_used``); under a closed one it must
        already be a valid name. Raises InvalidInput otherwise (docs/registry.md)."""
        if not isinstance(predicate, str):
            raise InvalidInput("predicate must be text")
        if tl.open_vocabulary:
            name = snake_case(predicate)
            if not name or not name[0].isalpha():
                raise InvalidInput(f"{predicate!r} cannot name a predicate")
            return check_predicate_name(name)
        return check_predicate_name(predicate)

    def unknown_predicate(self, name: str, tl: Timeline) -> UnknownPredicate:
        """The error for a name the registry does not know, listing the registered ones."""
        names = ", ".join(sorted(tl.predicates()))
        return UnknownPredicate(
            f"predicate {name!r} is not in the registry; registered predicates are: {names}. "
            f'If none of them fits, remember it with predicate "note" and the statement as the value'
        )

    # --- reads --------------------------------------------------------------

    def pair_input(self, subject: str, predicate: str, tl: Timeline) -> list[Event]:
        """Everything the fold of one pair needs, each listing complete or refused.

        The pair's own input, and the input of every pair it excludes or names in a
        ``replaces``: what those stopped holding because of this pair's statements is
        this pair's ``replaced`` (docs/fold.md).
        """
        return self._gather(subject, predicate, tl, {})[0]

    def _gather(
        self, subject: str, predicate: str, tl: Timeline, own: dict[str, list[Event]], every: list[Event] | None = None
    ) -> tuple[list[Event], set[str]]:
        """``pair_input`` and the pairs its cross moves come from, reading only the own
        inputs ``own`` lacks (and adding them to it): the pairs a first remember folds share
        their reads."""
        if not tl.rules_at_read:
            self._own_inputs(subject, [predicate], tl, own, every)
            return list(own[predicate]), set()
        excluded = tl.excluded_by(predicate)
        self._own_inputs(subject, [predicate, *sorted(q for q in excluded if tl.knows(q))], tl, own, every)
        events = list(own[predicate])
        others = excluded
        for e in events:
            if e.replaces and not e.retraction and tl.canonical(e.predicate) == predicate:
                others.update(tl.canonical(r.predicate) for r in e.replaces)
        others.discard(predicate)
        if not others:
            return events, others
        known = sorted(q for q in others if tl.knows(q))
        self._own_inputs(subject, known, tl, own, every)
        seen = {e.id for e in events}
        for q in known:
            for e in own[q]:
                if e.id not in seen:
                    seen.add(e.id)
                    events.append(e)
        return events, others

    def _own_inputs(
        self, subject: str, preds: list[str], tl: Timeline, own: dict[str, list[Event]], every: list[Event] | None
    ) -> None:
        """``_own_input`` of each of ``preds`` not in ``own`` yet, into ``own``: taken from
        ``every`` (all the subject's events) when given, else read in two queries for all
        of them. Each is the list ``_own_input`` gives, in its order. A listing past its
        limit, or a row that does not decode, is read pair by pair, so that the refusal
        is the one those reads give."""
        preds = [q for q in preds if q not in own]
        if not preds:
            return
        parts = []
        for q in preds:
            ex = sorted(tl.excluders(q))
            parts.append((q, set(tl.stored_names(q)), {n for x in ex for n in tl.stored_names(x)}, ex))
        rows = replacing = every
        if rows is None:
            every_name = sorted(set().union(*(n | x for _, n, x, _ in parts)))
            replaced = sorted(set().union(*(n for _, n, _, _ in parts)))
            try:
                got = self.store.pair_read(subject, every_name, replaced, MAX_PAIR_EVENTS * len(every_name))
            except (IncompleteHistory, InvalidEvent):
                rows = None
            else:
                rows, replacing = got.events, got.replacing
                self._keep_names(subject, tl, got.value_names)
        for q, names, ex_names, ex in parts:
            if rows is None or replacing is None:
                own[q] = self._own_input(subject, q, tl)
                continue
            events = [e for e in rows if e.predicate in names]
            excluding = [e for e in rows if e.predicate in ex_names] if ex else []
            if len(events) > MAX_PAIR_EVENTS or len(excluding) > MAX_PAIR_EVENTS:
                own[q] = self._own_input(subject, q, tl)  # refused as its own reads refuse it
                continue
            proms = tl.promotions_into(q, subject)
            if ex:
                events.extend(e for e in excluding if not e.retraction)
                for x in ex:  # notes promoted into an excluder exclude like its assertions
                    proms = proms + tl.promotions_into(x, subject)
            events.extend(e for e in replacing if e.replaces and any(r.predicate in names for r in e.replaces))
            if proms:
                events.extend(self.store.events_by_id([p.event_id for p in proms]))
            own[q] = events

    def _own_input(self, subject: str, predicate: str, tl: Timeline) -> list[Event]:
        """The pair's events, its excluders' assertions, events replacing it, notes promoted into it."""
        names = tl.stored_names(predicate)
        events = list(self.store.pair_events(subject, names))
        if len(events) > MAX_PAIR_EVENTS:
            raise LimitExceeded(
                f"the pair {subject}/{predicate} has more than {MAX_PAIR_EVENTS} events (the limit); refused"
            )
        ex = tl.excluders(predicate)
        proms = tl.promotions_into(predicate, subject)
        if ex:
            ex_names = [n for q in sorted(ex) for n in tl.stored_names(q)]
            events.extend(e for e in self.store.pair_events(subject, ex_names) if not e.retraction)
            for q in sorted(ex):  # notes promoted into an excluder exclude like its assertions
                proms = proms + tl.promotions_into(q, subject)
        events.extend(self.store.replacing_events(subject, names))
        if proms:
            events.extend(self.store.events_by_id([p.event_id for p in proms]))
        return events

    def _as_of(self, as_of: int | None) -> int:
        return self.now() if as_of is None else as_of

    def _pair(self, subject: str, predicate: str, tl: Timeline) -> Entry:
        """The pair's fold input and state, from the folded-pair cache when ``tl`` is the
        timeline it was folded under (``timeline()`` has caught it up), else read now."""
        if tl is not self._pairs.timeline:
            return self._load_pair(subject, predicate, tl)
        entry = self._pairs.get(subject, predicate)
        if entry is None:
            entry = self._load_pair(subject, predicate, tl)
            self._pairs.put(entry)
        elif entry.own > MAX_PAIR_EVENTS:
            raise LimitExceeded(
                f"the pair {subject}/{predicate} has more than {MAX_PAIR_EVENTS} events (the limit); refused"
            )
        return entry

    def _load_pair(self, subject: str, predicate: str, tl: Timeline) -> Entry:
        # what a pair's first read builds (its events, the memo's rows) is kept, so the
        # collector's young generations would only walk it (batch.collection_paused)
        with collection_paused():
            events, others = self._gather(subject, predicate, tl, {})
            return Entry.build(subject, predicate, events, others, tl)

    def _preload(self, s: str, p: str, key: str, tl: Timeline) -> None:
        """Before a remember, put in the folded pairs each pair it folds that they lack, from
        reads those pairs share: its own, the pairs it excludes (what its statement withdrew
        from them) and the pairs holding the same value (``related``). A subject's first
        remember reads the subject once (its value names are kept for ``related`` anyway)
        and takes every pair's input from that read, so that it costs about what the next
        remember costs. Errors are those of loading the pair: the others are loaded best
        effort, and one that cannot be read is refused where it is folded, as before."""
        if tl is not self._pairs.timeline or self._pairs.get(s, p) is not None:
            return  # a pair already kept: the others it needs, if not kept, are loaded where folded
        every = None
        if s not in self._pairs.subject_values and len(self._pairs.value_names) <= 10_000:
            every = self._read_subject(s)
        extra = {q for q in tl.excluded_by(p) | tl.excluders(p) if tl.knows(q)}
        d = tl.definition(p)
        if d is not None:
            extra.update(c for c in map(tl.canonical, d.excludes) if tl.knows(c))
        values = self._pairs.subject_values.get(s)
        if values:
            extra.update(c for c in map(tl.canonical, values.get(key, ())) if c != NOTE)
        extra.discard(p)
        own: dict[str, list[Event]] = {}
        events, others = self._gather(s, p, tl, own, every)
        entry = Entry.build(s, p, events, others, tl)
        wanted = sorted(q for q in extra if self._pairs.get(s, q) is None)
        if wanted:
            with suppress(RecallError):
                self._own_inputs(s, wanted, tl, own, every)
                for q in wanted:
                    events, others = self._gather(s, q, tl, own, every)
                    self._pairs.put(Entry.build(s, q, events, others, tl))
        self._pairs.put(entry)  # last: the most recently used

    def _fold_pair(self, subject: str, predicate: str, tl: Timeline, at: int) -> list[Belief]:
        """What is believed about one pair at an instant: every read of a whole pair comes here."""
        return self._pair(subject, predicate, tl).beliefs_at(at, tl)

    # --- the second time axis (docs/history-diff-explain.md, "Two time axes") ---

    def known(self, known_at: int | None) -> Memory:
        """This memory as a read at ``known_at`` saw it: only the statements and registry
        records the log had recorded by then (the whole log for None).

        A ``Memory`` over ``storage.known.KnownAt``, a filtered view of the store. The last
        few views asked for are kept, each with folded pairs of its own (a smaller budget),
        valid while the log's position stays where the view last read it: an operator steps
        through a handful of known-at instants, and each step reads the same pairs again.
        The view's registry timeline is built from the records recorded by ``known_at``,
        except when every record was recorded by then: the timeline is a pure function of
        the records, so today's is the same one and is not built again.
        """
        if known_at is None:
            return self
        t = check_instant(known_at, "known_at")
        tl = self.timeline()
        then = self._known_views.get(t)
        if then is None:
            then = Memory(KnownAt(self.store, t), now=self.now, match_threshold=self._match_threshold)
            then._pairs = PairCache(KNOWN_VIEW_BUDGET)
            self._known_views[t] = then
            if len(self._known_views) > KNOWN_VIEWS:
                self._known_views.popitem(last=False)
        else:
            self._known_views.move_to_end(t)
        if then._timeline_at != self._timeline_at and self._registry_recorded <= t:
            then._timeline, then._timeline_at = tl, self._timeline_at
        return then

    def _then(self, as_of: int | None, known_at: int) -> tuple[Memory, int]:
        """The memory known at ``known_at`` and the valid instant of its read: ``as_of``,
        or ``known_at`` itself ("what a read at that instant answered")."""
        return self.known(known_at), known_at if as_of is None else as_of

    def read_pair(
        self, subject: str, predicate: str, as_of: int | None = None, known_at: int | None = None
    ) -> list[Belief]:
        """An exact read: one pair folded at an instant, with `elsewhere`."""
        if known_at is not None:
            m, at = self._then(as_of, known_at)
            return m.read_pair(subject, predicate, at)
        tl = self.timeline()
        s = normalize_subject(subject)
        p = self.resolve(predicate, tl)
        at = self._as_of(as_of)
        beliefs = self._fold_pair(s, p, tl, at)
        return self._with_elsewhere(s, beliefs, tl, at)

    def _with_elsewhere(self, subject: str, beliefs: list[Belief], tl: Timeline, at: int) -> list[Belief]:
        typed = [b for b in beliefs if b.predicate != NOTE]
        if not typed:
            return beliefs
        keys = sorted({b.key for b in typed})
        mine = {b.predicate for b in beliefs}
        others: set[str] = set()
        for name in self._value_predicates(subject, keys, tl):
            c = tl.canonical(name)
            if c not in mine and c != NOTE:
                others.add(c)
        extra: list[Belief] = []
        for q in sorted(others):
            extra.extend(self._fold_pair(subject, q, tl, at))
        combined = attach_elsewhere([*beliefs, *extra])
        return combined[: len(beliefs)]

    def _value_predicates(self, subject: str, keys: list[str], tl: Timeline, *, whole: bool = False) -> set[str]:
        """``Store.value_predicates``, kept with the folded pairs and caught up with them:
        with ``whole`` (a remember), every value of a subject with few events, read once so
        the next remember of the subject asks nothing; else the values asked for (a read
        asks once, and reading the whole subject would double a first read's decoding)."""
        if tl is not self._pairs.timeline or len(self._pairs.value_names) > 10_000:
            if tl is self._pairs.timeline:
                self._pairs.value_names.clear()
            return self.store.value_predicates(subject, keys)
        every = self._pairs.subject_values
        if subject not in every and whole:
            self._read_subject(subject)
        values = every.get(subject)
        if values is not None:
            return set().union(*(values.get(k, ()) for k in keys))
        known = self._pairs.value_names.setdefault(subject, {})
        names = known.get(tuple(keys))
        if names is None:
            names = self._names_of_read(subject, keys, tl)
            if names is None:
                names = self.store.value_predicates(subject, keys)
            known[tuple(keys)] = names
        return names

    def _keep_names(self, subject: str, tl: Timeline, names: dict[str, set[str]]) -> None:
        """Keep the value names a pair read brought (``Store.pair_read``) for this operation's
        ``elsewhere``: read with the pair, they spare it a round trip. Those of earlier pair
        reads of the subject at the same log position are kept beside them."""
        if not names or tl is not self._pairs.timeline:
            return
        held = self._kept_names(subject, tl)
        if held is None:
            self._names_read = (tl, self._pairs.at, subject, dict(names))
        else:
            for k, n in names.items():
                held[k] = held.get(k, set()) | n

    def _names_of_read(self, subject: str, keys: list[str], tl: Timeline) -> set[str] | None:
        """``Store.value_predicates(subject, keys)`` from the names kept by ``_keep_names``
        when they hold every key; None otherwise."""
        names = self._kept_names(subject, tl)
        if names is None or not all(k in names for k in keys):
            return None
        return set().union(*(names[k] for k in keys))

    def _kept_names(self, subject: str, tl: Timeline) -> dict[str, set[str]] | None:
        """The names ``_keep_names`` kept for ``subject``, if read under this timeline at the
        folded pairs' position (any append they caught up with moves it); None otherwise."""
        kept = self._names_read
        if kept is None or kept[0] is not tl or kept[1] != self._pairs.at or kept[2] != subject:
            return None
        return kept[3]

    def _read_subject(self, subject: str) -> list[Event] | None:
        """Every event of a subject with at most ``SUBJECT_VALUES_EVENTS`` events, its value
        names (value key -> stored names asserting it) kept with the folded pairs; None
        (kept as such) for a bigger subject, or one a row of which does not decode (its
        values are then read value by value, by index)."""
        every = self._pairs.subject_values
        if len(every) > 10_000:
            every.clear()
        try:
            events = self.store.subject_events(subject, SUBJECT_VALUES_EVENTS)
        except (IncompleteHistory, InvalidEvent):
            every[subject] = None
            return None
        out: dict[str, set[str]] = {}
        for e in events:
            if not e.retraction:
                out.setdefault(e.key, set()).add(e.predicate)
        every[subject] = out
        return events

    def profile(self, subject: str, as_of: int | None = None, known_at: int | None = None) -> list[Belief]:
        """Everything believed about a subject at an instant, typed beliefs before notes."""
        if known_at is not None:
            m, at = self._then(as_of, known_at)
            return m.profile(subject, at)
        tl = self.timeline()
        s = normalize_subject(subject)
        at = self._as_of(as_of)
        events = self.store.subject_events(s)
        return order_beliefs(attach_elsewhere(self._fold_subject(s, events, tl, at)))[:MAX_BELIEFS]

    def _fold_subject(self, subject: str, events: list[Event], tl: Timeline, at: int) -> list[Belief]:
        preds: set[str] = set()
        for e in events:
            c = tl.canonical(e.predicate)
            if c == NOTE and not e.retraction:
                promo = tl.promotion(e.id)
                if promo is not None:
                    c = promo[0]
            preds.add(c)
        out: list[Belief] = []
        for p in sorted(preds):
            if (subject, p) in RESERVED_PAIRS:
                continue
            out.extend(fold(events, subject, p, tl, at))
        return out

    def history(self, subject: str, predicate: str, known_at: int | None = None) -> tuple[str, str, list[HistoryStep]]:
        if known_at is not None:
            return self.known(known_at).history(subject, predicate)
        tl = self.timeline()
        s = normalize_subject(subject)
        p = self.resolve(predicate, tl)
        from .history import history

        return s, p, history(self.pair_input(s, p, tl), s, p, tl)

    def explain(
        self, subject: str, predicate: str, as_of: int | None = None, known_at: int | None = None
    ) -> Explanation:
        if known_at is not None:
            m, at = self._then(as_of, known_at)
            return m.explain(subject, predicate, at)
        tl = self.timeline()
        s = normalize_subject(subject)
        p = self.resolve(predicate, tl)
        at = self._as_of(as_of)
        from .history import explain

        x = explain(self.pair_input(s, p, tl), s, p, tl, at)
        x.beliefs[:] = self._with_elsewhere(s, x.beliefs, tl, at)
        return x

    def diff(
        self,
        from_at: int,
        to_at: int | None = None,
        subject: str | None = None,
        *,
        known_at: int | None = None,
        known_to: int | None = None,
    ) -> list[Change]:
        """Each pair whose answer differs between two reads: as of ``from_at`` known at
        ``known_at``, and as of ``to_at`` known at ``known_to`` (default ``known_at``).
        A known instant of None reads the whole log; ``to_at`` defaults to the second
        read's known instant, or now."""
        from .history import diff_answers

        known_after = known_at if known_to is None else known_to
        then, later = self.known(known_at), self.known(known_after)
        to = to_at if to_at is not None else self._as_of(known_after)
        subjects = [normalize_subject(subject)] if subject else [s for s, _ in self.store.subjects(limit=10**9)]
        tl, tl_later = then.timeline(), later.timeline()
        out: list[Change] = []
        for s in subjects:
            events = then.store.subject_events(s)
            later_events = events if later is then else later.store.subject_events(s)
            before: dict[tuple[str, str], list[Value]] = {}
            after: dict[tuple[str, str], list[Value]] = {}
            for b in then._fold_subject(s, events, tl, from_at):
                before.setdefault((s, b.predicate), []).append(b.value)
            for b in later._fold_subject(s, later_events, tl_later, to):
                after.setdefault((s, b.predicate), []).append(b.value)
            out.extend(diff_answers(before, after))
        return out

    # --- writes -------------------------------------------------------------

    def remember(
        self,
        subject: str,
        predicate: str,
        value: Value,
        *,
        at: int | None = None,
        kind: str = "fact",
        source: str = "user_stated",
        confidence: float = 1.0,
        evidence: str = "",
        evidence_id: str = "",
        replaces: Sequence[tuple[str, Value]] = (),
        cardinality: str | None = None,
        description: str = "",
    ) -> RememberResult:
        now = self.now()
        s = normalize_subject(subject)
        if s.startswith("recall:"):
            raise InvalidInput(f"subject {s!r} is reserved for the engine's own records")
        if kind not in KINDS:
            raise InvalidInput(f'kind must be "fact" or "preference", got {kind!r}')
        if source not in SOURCES:
            raise InvalidInput(
                f'source must be "user_stated", "agent_inferred", "tool_result", or "operator", got {source!r}'
            )
        if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not (0 <= confidence <= 1):
            raise InvalidInput(f"confidence must be in [0, 1], got {confidence!r}")
        for field_name, text in (("evidence", evidence), ("evidence_id", evidence_id)):
            if text is not None and not isinstance(text, str):  # a JSON line or a caller may pass anything
                raise InvalidInput(f"{field_name} must be text, got {type(text).__name__}")
        evidence = check_text((evidence or "").strip(), "evidence")
        evidence_id = check_text((evidence_id or "").strip(), "evidence_id")
        replaces = _replace_pairs(replaces)
        if cardinality not in (None, "single", "multi"):
            raise InvalidInput(f"cardinality must be single or multi, got {cardinality!r}")
        t = now if at is None else check_instant(at)
        if t > now + MINUTE_NS:
            raise InvalidInput(
                f"observed_at {format_rfc3339(t)} is in the future; a statement can only be recorded as made now or earlier"
            )
        tl = self.timeline()
        name = self.predicate_name(predicate, tl)
        if name in RESERVED_PREDICATES:
            raise InvalidInput(f"predicate {name!r} is reserved for the engine's own records")
        p = tl.canonical(name)
        define: RegistryRecord | None = None
        define_at = 0
        if not tl.knows(p):
            if not tl.open_vocabulary:
                raise self.unknown_predicate(name, tl)
            define = self._define_record(name, value, tl, cardinality, description)
            if define.op == "merge":
                p = define.into
            define_at = self.registry_instant(tl)
            tl = tl.with_records([_logged(define, define_at)])
        d = tl.definition(p)
        assert d is not None
        value = normalize_value(p, d.value_type, d.allowed, value)
        wants = [self._replace_target(r, tl) for r in replaces]
        key = value_key(value)

        self._preload(s, p, key, tl)
        entry = self._pair(s, p, tl)
        pair = entry.events
        # never share an instant with an event the pair's fold reads: not its own, nor
        # another pair's statement naming it in ``replaces`` (which would withdraw it at once)
        while t in entry.taken:
            t += 1
        before, before_keys = entry.keyed_at(t, tl)
        held = before[before_keys.index(key)] if key in before_keys else None

        stored_name = name if (tl.is_merged(name) and tl.canonical(name) == p) else p
        statement: Event | None = None
        if held is None:
            statement = make_event(
                s,
                stored_name,
                value,
                t,
                kind=kind,
                confidence=float(confidence),
                source=source,
                evidence=evidence,
                evidence_id=evidence_id,
                replaces=[Replace(rp, rv) for rp, rv, _ in wants if rp],
            )
            cause = statement.id
        else:
            cause = held.event_id

        retractions: list[Event] = []
        unreplaced: list[Unreplaced] = []
        withdrawn: list[Belief] = []
        for rp, rv, problem in wants:
            if problem:
                unreplaced.append(Unreplaced(rp, rv, problem))
                continue
            target, why = self._resolve_replace(s, rp, rv, t, tl, p, pair)
            if target is None:
                unreplaced.append(Unreplaced(rp, rv, why))
                continue
            stored = target.stored_as or target.predicate
            if target.predicate != p:
                n = sum(1 for w in withdrawn if w.predicate == target.predicate) + 1
                self._check_room(
                    s, target.predicate, len(self.store.pair_events(s, tl.stored_names(target.predicate))), n
                )
            retractions.append(make_event(s, stored, target.value, t, retraction=True, source=source, caused_by=cause))
            withdrawn.append(target)

        # the cap refuses a write that would exceed it; restating a held value writes nothing here
        here = (1 if statement else 0) + sum(1 for w in withdrawn if w.predicate == p)
        if here:
            self._check_room(s, p, entry.own, here)
        events = [define.to_event(define_at, source="tool_result")] if define else []
        events += ([statement] if statement else []) + retractions
        if events:
            self._write(events)
        if statement is None:
            assert held is not None, "nothing new is stated only when the value is held"
            # its replaces may have corrected something just now: read it back with them
            after = entry.fold_with(retractions, t, tl) if retractions else before
            stored_belief = next((b for b in after if b.key == key), held)
            already = True
        else:
            after, after_keys = entry.keyed_with([statement, *retractions], t, tl)
            stored_belief = after[after_keys.index(key)]
            already = False
            gone = set(after_keys)
            withdrawn = [b for b, k in zip(before, before_keys, strict=True) if k not in gone] + [
                w for w in withdrawn if w.predicate != p
            ]
            withdrawn += self._excluded_by(s, p, statement, t, tl, {(w.predicate, w.key) for w in withdrawn})
        related = self._related(s, p, stored_belief, tl)
        return RememberResult(stored_belief, already, withdrawn, unreplaced, related, events)

    def _write(self, events: list[Event]) -> None:
        """Append, and catch the folded pairs up with what was just written (for `related`).

        When the store says what it wrote and the log stood where the cache last looked,
        the cache takes the written events as they are: the same catch-up ``timeline()``
        makes from the log, without reading them back. Otherwise (another writer came
        between, a registry record was written, the store cannot say) ``timeline()``
        reads the log."""
        done = self.store.appended(events)
        if (
            done is not None
            and self._timeline is not None
            and done.before == self._pairs.at == self._timeline_at
            and not any(e.subject == REGISTRY_SUBJECT for _, e in done.placed)
        ):
            top = max([done.before, *(p for p, _ in done.placed)])
            self._pairs.catch_up(done.placed, top)
            self._timeline_at = top
            return
        self.timeline()

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Writes inside are held back and appended in one transaction at the end (all of
        them, or none if the block raises); reads inside see them as if stored, so every
        answer is the one a write at a time would give (recall_engine.batch)."""
        if isinstance(self.store, PendingStore):
            yield  # already in a batch: it joins the outer one
            return
        real = self.store
        pending = PendingStore(real)
        self.store = pending  # type: ignore[assignment]
        try:
            with collection_paused():
                yield
                pending.commit()
        finally:
            self.store = real
            self._timeline = None  # the batch's positions were its own: catch up from the store

    def remember_many(self, statements: Iterable[Mapping[str, Any]]) -> list[RememberResult]:
        """Remember each statement (``remember``'s arguments by name) in order, in one
        batch: the answers of one ``remember`` at a time, and either the whole batch is
        stored or, on the first error, nothing of it (the error names the statement,
        counted from 1)."""
        results: list[RememberResult] = []
        statements = list(statements)
        with self.batch():
            if isinstance(self.store, PendingStore):
                self.store.expect(_subjects_of(statements))
            for i, st in enumerate(statements, 1):
                fields = statement_fields(st, i)
                try:
                    results.append(self.remember(**fields))
                except RecallError as e:
                    raise type(e)(f"statement {i}: {e.message}", code=e.code) from None
        return results

    def _check_room(self, s: str, p: str, own: int, adding: int) -> None:
        """Refuse a write that would push a pair past the cap (semantics: limits)."""
        if own + adding > MAX_PAIR_EVENTS:
            raise LimitExceeded(
                f"the pair {s}/{p} has {own} events and the limit is {MAX_PAIR_EVENTS}; the write is refused"
            )

    def _excluded_by(self, s: str, p: str, statement: Event, t: int, tl: Timeline, seen: set) -> list[Belief]:
        """Beliefs of predicates this one excludes that the new statement withdraws."""
        out: list[Belief] = []
        for x in sorted(tl.excluded_by(p)):
            # the pair's input from the folded-pair cache (the store's when not cached), as it
            # was before the write
            entry = self._pair(s, x, tl)
            if not statement.replaces and not entry.carrying(statement.key, tl) and not tl.promotions_into(x, s):
                continue  # it never held the value, the only one an exclusion withdraws (docs/fold.md)
            events = [e for e in entry.events if e.id != statement.id]
            # after the write: the kept pair once it holds the statement (its write came back
            # to the cache), so the pair is folded from scratch only for before it
            kept = next((e for e in reversed(entry.events) if e.id == statement.id), None)
            if kept is not None and kept == statement:
                after = set(entry.keyed_at(t, tl)[1])
            else:
                after = {b.key for b in fold([*events, statement], s, x, tl, t)}
            out.extend(b for b in fold(events, s, x, tl, t) if b.key not in after and (x, b.key) not in seen)
        return out

    def _replace_target(self, r: tuple[str, Value], tl: Timeline) -> tuple[str, Value, str]:
        rp_raw, rv = r
        try:
            rp = tl.canonical(self.predicate_name(rp_raw, tl))
        except InvalidInput as e:  # validated before anything is written (docs/semantics.md)
            raise InvalidInput(f"replaces: {e.message}") from None
        if not tl.knows(rp):
            return (rp, rv, "not in the registry")
        d = tl.definition(rp)
        assert d is not None
        try:
            v = normalize_value(rp, d.value_type, d.allowed, rv)
        except InvalidInput as e:
            # a value its type no longer takes (an enum value since dropped) may still be
            # believed; one no event of this predicate could hold is an error, as another
            # type is (it was never believed: say so)
            try:
                v = normalize_value(rp, d.storage_class, (), rv)
            except InvalidInput:
                raise InvalidInput(f"replaces {rp}: {e.message}") from None
        return (rp, v, "")

    def _resolve_replace(
        self, s: str, rp: str, rv: Value, t: int, tl: Timeline, p: str, pair: list[Event]
    ) -> tuple[Belief | None, str]:
        if rp == NOTE:
            return None, "a note is never replaced; promote it or forget it"
        if tl.historical_at(rp, t):
            return None, f"{rp} is historical: what happened is withdrawn only by an explicit retraction"
        events = pair if rp == p else self.pair_input(s, rp, tl)
        k = value_key(rv)
        then = fold(events, s, rp, tl, t)
        hit = next((b for b in then if b.key == k), None)
        if hit is not None:
            return hit, ""
        if any(b.key == k for b in fold(events, s, rp, tl, self.now() + MINUTE_NS)):
            return None, "stated later than this statement"
        return None, "never believed" if not any(
            e.key == k and not e.retraction for e in events if tl.canonical(e.predicate) == rp
        ) else "not believed at that instant"

    def _related(self, s: str, p: str, stored: Belief, tl: Timeline) -> list[Belief]:
        """Current beliefs of the subject that may contradict the new one."""
        at = self.now() + MINUTE_NS
        preds: set[str] = set(tl.excluders(p))
        d = tl.definition(p)
        if d is not None:
            preds |= {tl.canonical(x) for x in d.excludes}
        for name in self._value_predicates(s, [stored.key], tl, whole=True):
            c = tl.canonical(name)
            if c not in (p, NOTE):
                preds.add(c)
        out: list[Belief] = []
        for q in sorted(preds - {p}):
            entry = self._pair(s, q, tl)
            if not entry.carrying(stored.key, tl) and not tl.promotions_into(q, s):
                continue  # no event of the pair carries the value: it cannot hold it
            for b in entry.beliefs_at(at, tl):
                if b.key == stored.key:  # only the same value held elsewhere (docs/memory.md)
                    out.append(b)
        return out

    def _define_record(
        self, name: str, value: Value, tl: Timeline, cardinality: str | None, description: str
    ) -> RegistryRecord:
        if isinstance(value, bool):
            vt = "boolean"
        elif isinstance(value, (int, float)):
            vt = "number"
        elif isinstance(value, str):
            vt = "string"
        else:
            raise InvalidInput(f"value must be a string, number, or boolean to define {name!r}")
        from .matching import best_match  # numpy and the model, only when a new name is written

        match = best_match(
            name,
            storage_class_of(value),
            tl.predicates(),
            description=description,
            cardinality=cardinality,
            threshold=self.match_threshold,
        )
        if match is not None:
            return RegistryRecord(op="merge", name=name, into=match.name, score=match.score, auto=True)
        d = Definition(name, cardinality or "single", vt, (description or "").strip())
        return RegistryRecord(op="define", name=name, definition=d, auto=True)

    def forget(
        self, subject: str, predicate: str, value: Value | None = None, *, all_values: bool = False
    ) -> list[Belief]:
        """Withdraw one value, or every value of the pair; forgetting what is not believed writes nothing."""
        if (value is None) == (not all_values):
            raise InvalidInput("forget needs exactly one of a value or --all")
        tl = self.timeline()
        s = normalize_subject(subject)
        p = self.resolve(predicate, tl)
        pair = self.pair_input(s, p, tl)
        t = max([self.now(), *(e.observed_at + 1 for e in pair)])
        held = fold(pair, s, p, tl, t)
        if all_values:
            gone = held
            names = sorted({b.stored_as or b.predicate for b in held})
            events = [make_event(s, n, None, t, retraction=True) for n in names]
        else:
            d = tl.definition(p)
            assert d is not None
            try:
                v = normalize_value(p, d.value_type, d.allowed, value)
            except InvalidInput:
                if not isinstance(value, str) or not value.strip():
                    raise
                v = value.strip()  # a value the type no longer allows can still be forgotten
            k = value_key(v)
            gone = [b for b in held if b.key == k]
            events = [make_event(s, b.stored_as or b.predicate, b.value, t, retraction=True) for b in gone]
        if events:
            self.store.append(events)
        return gone


def check_import_room(store: Store, events: Callable[[], Iterable[Event]]) -> None:
    """Refuse, before any row is written, a batch that would push a pair past the cap.

    ``events`` gives the batch (called at most twice: once to count, once more only for
    the pairs that might overflow, since events already stored are skipped on import).
    Pairs are read through the registry as it will be, the batch's own records included.
    Raises ``LimitExceeded`` naming the pair; reads only.
    """
    counts: dict[tuple[str, str], int] = {}
    records: list[Event] = []
    for e in events():
        if e.subject == REGISTRY_SUBJECT:
            records.append(e)
        elif (e.subject, e.predicate) not in RESERVED_PAIRS:
            counts[(e.subject, e.predicate)] = counts.get((e.subject, e.predicate), 0) + 1
    if not counts:
        return
    tl = Timeline([*store.registry_events(), *records])
    empty = store.count() == 0
    by_pair: dict[tuple[str, str], int] = {}
    for (s, name), n in counts.items():
        key = (s, tl.canonical(name))
        by_pair[key] = by_pair.get(key, 0) + n
    stored_by_subject: dict[str, dict[str, int]] = {}
    suspects: list[tuple[str, str, int]] = []
    for (s, p), n in sorted(by_pair.items()):
        if empty:
            have = 0
        else:
            if s not in stored_by_subject:
                stored_by_subject[s] = dict(store.pairs(s))
            have = sum(stored_by_subject[s].get(name, 0) for name in tl.stored_names(p))
        if have + n > MAX_PAIR_EVENTS:
            suspects.append((s, p, have))
    for s, p, have in suspects:
        names = set(tl.stored_names(p))
        ids = {e.id for e in events() if e.subject == s and e.predicate in names}
        new = len(ids) - len(store.events_by_id(sorted(ids))) if ids else 0
        if have + new > MAX_PAIR_EVENTS:
            raise LimitExceeded(
                f"the import would give the pair {s}/{p} {have + new} events ({have} stored, {new} new), past the "
                f"limit of {MAX_PAIR_EVENTS} a pair can be read with; nothing was imported"
            )


def _subjects_of(statements: list[Mapping[str, Any]]) -> list[str]:
    """The subjects a batch will write, as stored (statements that will fail are left out)."""
    out: dict[str, str] = {}  # as given -> as stored
    for st in statements:
        subject = st.get("subject") if isinstance(st, dict) else None
        if isinstance(subject, str) and subject not in out:
            with suppress(RecallError):
                out[subject] = normalize_subject(subject)
    return list(out.values())


def _logged(record: RegistryRecord, at: int) -> LoggedRecord:
    return LoggedRecord(at, record.to_event(at, source="tool_result").id, record)
