"""Browsing reads for the TUI: a subject's pairs with their answers, and when each value held.

Pure service code over ``Memory`` (no Textual): the TUI shows what these return and
decides nothing. Every answer comes from the engine's fold (``Memory.profile``,
``Memory.history``); this module only groups and reshapes it.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from recall_engine.history import Explanation, HistoryStep, answer_at
from recall_engine.memory import Memory
from recall_engine.records import Belief
from recall_engine.registry import Definition
from recall_engine.text import NOTE, normalize_subject
from recall_engine.values import Value, value_key

SUBJECTS_SHOWN = 500  # subjects listed at once; a prefix narrows the list


@dataclass(frozen=True)
class PairRow:
    """One pair of a subject: its answer at an instant, and what marks it."""

    subject: str
    predicate: str  # the canonical name
    beliefs: tuple[Belief, ...]
    events: int  # events stored for the subject under every name of the predicate
    stored_names: tuple[str, ...]  # names the subject's events were stored under

    @property
    def values(self) -> tuple[Value, ...]:
        return tuple(b.value for b in self.beliefs)

    @property
    def replaced(self) -> bool:
        """A value held now replaced an earlier one."""
        return any(b.replaced for b in self.beliefs)

    @property
    def elsewhere(self) -> bool:
        """A value held now is also held under another predicate of the subject."""
        return any(b.elsewhere for b in self.beliefs)


def list_subjects(memory: Memory, prefix: str = "", limit: int = SUBJECTS_SHOWN) -> list[tuple[str, int]]:
    """Subjects with their event counts, most events first, optionally by name prefix."""
    prefix = (prefix or "").strip()
    if prefix:
        prefix = normalize_subject(prefix)
    return memory.store.subjects(prefix, limit=limit)


def subject_pairs(memory: Memory, subject: str, as_of: int | None = None) -> list[PairRow]:
    """Every pair of a subject, typed pairs first and notes last, with the answer at ``as_of``.

    A pair whose values were all withdrawn is listed with no values: it still has a history.
    """
    tl = memory.timeline()
    s = normalize_subject(subject)
    beliefs = memory.profile(s, as_of)
    by_pred: dict[str, list[Belief]] = {}
    for b in beliefs:
        by_pred.setdefault(b.predicate, []).append(b)
    counts: dict[str, int] = {}
    names: dict[str, list[str]] = {}
    for stored, n in memory.store.pairs(s):
        c = tl.canonical(stored)
        counts[c] = counts.get(c, 0) + n
        names.setdefault(c, []).append(stored)
    preds = sorted(set(by_pred) | set(counts), key=lambda p: (p == NOTE, p))
    return [PairRow(s, p, tuple(by_pred.get(p, ())), counts.get(p, 0), tuple(sorted(names.get(p, ())))) for p in preds]


# --- when each value held ------------------------------------------------------------


@dataclass
class HeldSpan:
    """The instants one value of a pair was believed: [start, end) spans, end None while held."""

    value: Value
    spans: list[tuple[int, int | None]] = field(default_factory=list)

    @property
    def held_now(self) -> bool:
        return bool(self.spans) and self.spans[-1][1] is None


def held_spans(steps: Sequence[HistoryStep]) -> list[HeldSpan]:
    """Read off a pair's history (each step's ``after`` is an as-of read) when each value held.

    Values come in the order they were first held.
    """
    out: dict[str, HeldSpan] = {}
    open_at: dict[str, int] = {}
    for st in steps:
        after = {value_key(v): v for v in st.after}
        for k, start in list(open_at.items()):
            if k not in after:
                out[k].spans.append((start, st.at))
                del open_at[k]
        for k, v in after.items():
            if k not in open_at:
                open_at[k] = st.at
                out.setdefault(k, HeldSpan(v))
    for k, start in open_at.items():
        out[k].spans.append((start, None))
    return list(out.values())


@dataclass(frozen=True)
class PairHistory:
    """A pair's history, its answer re-folded at an instant, and when each value held."""

    subject: str
    predicate: str
    steps: list[HistoryStep]
    answer: tuple[Value, ...]  # what the pair held at ``at``
    at: int
    now: int
    spans: list[HeldSpan]


def pair_history(
    memory: Memory, subject: str, predicate: str, as_of: int | None = None, known_at: int | None = None
) -> PairHistory:
    """Every step of a pair (oldest first) and its answer at ``as_of`` (default now).

    Given an instant, the pair is folded again at it (``Memory.read_pair``). For now,
    the answer is read off the last step, which is the same read (each step's
    ``after`` is an as-of read) without folding the pair a second time. Known at an
    instant: the steps recorded by then, answered as a read then (as of it by default).
    """
    if known_at is not None:
        memory, as_of = memory.known(known_at), known_at if as_of is None else as_of
    s, p, steps, spans = _kept_history(memory, subject, predicate)
    now = memory.now()
    if as_of is None:
        return PairHistory(s, p, steps, answer_at(steps, now), now, now, spans)
    answer = tuple(b.value for b in memory.read_pair(s, p, as_of))
    return PairHistory(s, p, steps, answer, as_of, now, spans)


HISTORIES_KEPT = 8  # pairs whose steps are kept per memory: an operator steps back and forth between a few
_histories: weakref.WeakKeyDictionary[Memory, OrderedDict[tuple[str, str, int], Any]] = weakref.WeakKeyDictionary()
_histories_lock = threading.Lock()


def _kept_history(memory: Memory, subject: str, predicate: str) -> tuple[str, str, list[HistoryStep], list[HeldSpan]]:
    """``Memory.history`` and its held spans, kept for the last few pairs asked while the log
    stays at the same position: the steps are a pure function of the log and its registry
    (both grow only by appends), so a pair opened again, with nothing appended since, has
    the same steps; 1,000 of them take tens of milliseconds to walk. The answer, which
    depends on the clock, is read off them at every call."""
    key = (subject, predicate, memory.store.position())
    with _histories_lock:
        kept = _histories.setdefault(memory, OrderedDict())
        hit = kept.get(key)
        if hit is not None:
            kept.move_to_end(key)
            return hit
    s, p, steps = memory.history(subject, predicate)
    out = (s, p, steps, held_spans(steps))
    with _histories_lock:
        kept[key] = out
        while len(kept) > HISTORIES_KEPT:
            kept.popitem(last=False)
    return out


# --- explain -------------------------------------------------------------------------


@dataclass(frozen=True)
class AnswerExplanation:
    """An explanation with the definition that decided the answer at its instant."""

    explanation: Explanation
    in_force: Definition | None  # the predicate's rules at that instant
    deciding_record: int | None  # index in explanation.rules of the record that set them
    writers: dict[str, dict[str, Any]] = field(default_factory=dict)  # event id -> the agent key that wrote it

    def to_json(self) -> dict[str, Any]:
        x = self.explanation
        return {
            "subject": x.subject,
            "predicate": x.predicate,
            "in_force": self.in_force.to_json() if self.in_force else None,
            "deciding_record": self.deciding_record,
        }


def explain_answer(
    memory: Memory, subject: str, predicate: str, as_of: int | None = None, known_at: int | None = None
) -> AnswerExplanation:
    """``Memory.explain`` plus the rule in force at the instant and the record that set it;
    known at an instant, as a read then explained it (the rules recorded by then)."""
    if known_at is not None:
        memory, as_of = memory.known(known_at), known_at if as_of is None else as_of
    x = memory.explain(subject, predicate, as_of)
    tl = memory.timeline()
    d = tl.rule(x.predicate, x.at)
    deciding = None
    if d is not None:
        names = set(tl.stored_names(x.predicate))
        for i, r in enumerate(x.rules):
            rd = r.record.definition
            if rd is None or r.record.name not in names:
                continue
            if (r.at <= x.at or r.record.retroactive) and rd.rules() == d.rules():
                deciding = i  # the latest record that set exactly these rules by the instant
    from .agents.attribution import written_by

    return AnswerExplanation(x, d, deciding, written_by(memory.store, [e.id for e in x.events]))
