"""The conflicts queue: one subject holding one value under two or more typed predicates now.

Found without folding the whole store (docs/semantics.md section 6, docs/review-queues.md "Performance"):

1. candidates come from the store's index by value (``Store.shared_values``): every
   (subject, value key) asserted under two or more stored names, notes left out;
2. names are read through the registry (merged names are one predicate), and only
   candidates still naming two or more typed predicates are kept;
3. just those pairs are folded now, so only values really held now under two or
   more predicates are conflicts.

A conflict's id is derived from its content (subject, value key, predicates), so it
is the same in every listing and in every process. Conflicts with the same
predicates form a group: one exclusion (a ``redefine``) settles the whole group.

Decisions (each previewed as a plan, except dismiss):

- **confirm** keeps one predicate: an operator statement re-asserting the kept value
  with ``replaces`` naming each losing belief, plus the explicit retraction of each
  losing belief ``caused_by`` that statement (the events ``Memory.remember`` appends
  for a correction);
- **exclude** adds the exclusion both ways, a plain ``redefine`` (exclusions are read as
  the registry stands at every read, so old logs are covered), so that whichever of
  the two was stated later wins; a historical predicate is never the target of an
  exclusion (it would never be withdrawn anyway);
- **dismiss** appends a ``review_decision``; the conflict stays away until either
  belief changes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from recall_engine.errors import InvalidInput, LimitExceeded, NotFound, PlanError
from recall_engine.fold import fold
from recall_engine.instants import format_rfc3339
from recall_engine.memory import Memory
from recall_engine.records import Belief, Event, Replace, make_event
from recall_engine.registry import RegistryRecord
from recall_engine.storage.base import MAX_PAIR_EVENTS
from recall_engine.text import NOTE, normalize_subject
from recall_engine.timeline import Timeline
from recall_engine.values import Value

from . import review
from .plans import Plan

if TYPE_CHECKING:  # governance re-derives confirm plans through this module (governance.check_rederived)
    from .governance import Stager

GROUP_SUBJECTS_SHOWN = 20
MAX_EVIDENCE = 500  # characters of a confirm's evidence (operator and reason)


def conflict_id(subject: str, key: str, predicates: Sequence[str]) -> str:
    raw = "\x00".join([subject, key, *sorted(predicates)])
    return "c-" + hashlib.sha256(raw.encode()).hexdigest()[:16]


def group_id(predicates: Sequence[str]) -> str:
    raw = "\x00".join(sorted(predicates))
    return "g-" + hashlib.sha256(raw.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Conflict:
    id: str
    subject: str
    key: str
    value: Value
    predicates: tuple[str, ...]  # sorted canonical names
    held: tuple[Belief, ...]  # one belief per predicate, in predicates order
    dismissed: bool = False  # listed with --all although a dismissal hides it

    @property
    def latest(self) -> int:
        return max(b.observed_at for b in self.held)

    @property
    def group(self) -> str:
        return group_id(self.predicates)

    @property
    def held_ids(self) -> list[str]:
        return sorted(b.event_id for b in self.held)

    def belief(self, predicate: str) -> Belief | None:
        return next((b for b in self.held if b.predicate == predicate), None)

    def to_json(self) -> dict[str, Any]:
        held = []
        for b in self.held:
            h: dict[str, Any] = {
                "predicate": b.predicate,
                "value": b.value,
                "observed_at": format_rfc3339(b.observed_at),
                "event_id": b.event_id,
                "source": b.source,
                "confidence": b.confidence,
            }
            if b.stored_as:
                h["stored_as"] = b.stored_as
            if b.evidence:
                h["evidence"] = b.evidence
            held.append(h)
        return {
            "id": self.id,
            "subject": self.subject,
            "value": self.value,
            "predicates": list(self.predicates),
            "held": held,
            "latest": format_rfc3339(self.latest),
            "group": self.group,
            "dismissed": self.dismissed,
        }


@dataclass
class ConflictGroup:
    id: str
    predicates: tuple[str, ...]
    conflicts: list[Conflict] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len({c.subject for c in self.conflicts})

    @property
    def latest(self) -> int:
        return max(c.latest for c in self.conflicts)

    def to_json(self) -> dict[str, Any]:
        subjects = sorted({c.subject for c in self.conflicts})
        return {
            "id": self.id,
            "predicates": list(self.predicates),
            "count": self.count,
            "conflicts": [c.id for c in self.conflicts],
            "subjects": subjects[:GROUP_SUBJECTS_SHOWN],
            "latest": format_rfc3339(self.latest),
            "settle": {
                "exclude": f"recall-admin conflicts exclude {self.id}",
                "detail": f"one redefine adding the exclusion between {' and '.join(self.predicates)} settles "
                f"{self.count} subject(s)",
            },
        }


@dataclass
class Listing:
    conflicts: list[Conflict]
    groups: list[ConflictGroup]
    dismissed: int = 0
    candidates: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "conflicts": [c.to_json() for c in self.conflicts],
            "groups": [g.to_json() for g in self.groups],
            "dismissed": self.dismissed,
            "candidates": self.candidates,
        }


# --- finding ------------------------------------------------------------------------


def _candidates(memory: Memory, tl: Timeline, subject: str | None) -> dict[str, dict[str, set[str]]]:
    """subject -> value key -> canonical typed predicates that asserted it (from the index)."""
    out: dict[str, dict[str, set[str]]] = {}
    notes = set(tl.stored_names(NOTE))
    canonical = tl.canonical
    if subject is not None:
        by_key: dict[str, set[str]] = {}
        for e in memory.store.subject_events(subject):
            if not e.retraction and e.predicate not in notes:
                by_key.setdefault(e.key, set()).add(e.predicate)
        rows: Iterable[tuple[str, str, list[str]]] = (
            (subject, k, sorted(ns)) for k, ns in by_key.items() if len(ns) >= 2
        )
    else:
        rows = memory.store.shared_values(exclude_predicates=sorted(notes))
    for s, key, names in rows:
        preds = {canonical(n) for n in names}
        preds.discard(NOTE)
        if len(preds) < 2:
            continue
        preds = {p for p in preds if tl.knows(p)}
        if len(preds) >= 2:
            out.setdefault(s, {})[key] = preds
    return out


def _subject_input(memory: Memory, tl: Timeline, subject: str, predicates: Sequence[str]) -> list[Event]:
    """What ``Memory.pair_input`` reads for each of these pairs, in two queries for all of them.

    The fold ignores what does not bear on its pair, so one superset serves every
    pair; each pair is still read complete or refused (its own limit)."""
    store = memory.store
    own: dict[str, str] = {}
    for p in predicates:
        for n in tl.stored_names(p):
            own[n] = p
    names = set(own)
    for p in predicates:
        for q in tl.excluders(p):
            names.update(tl.stored_names(q))
    events = store.pair_events(subject, sorted(names), limit=MAX_PAIR_EVENTS * max(1, len(names)))
    per: dict[str, int] = {}
    for e in events:
        owner = own.get(e.predicate)
        if owner is not None:
            per[owner] = per.get(owner, 0) + 1
            if per[owner] > MAX_PAIR_EVENTS:
                raise LimitExceeded(
                    f"the pair {subject}/{owner} has more than {MAX_PAIR_EVENTS} events (the limit); refused"
                )
    events = [e for e in events if e.predicate in own or not e.retraction]
    events.extend(store.replacing_events(subject, sorted(own)))
    proms = [pr.event_id for p in predicates for pr in tl.promotions_into(p, subject)]
    if proms:
        events.extend(store.events_by_id(proms))
    return events


def _fold_subject(
    memory: Memory, tl: Timeline, subject: str, predicates: Iterable[str], at: int
) -> dict[str, list[Belief]]:
    preds = sorted(predicates)
    events = _subject_input(memory, tl, subject, preds)
    return {p: fold(events, subject, p, tl, at) for p in preds}


def find_conflicts(
    memory: Memory, subject: str | None = None, *, at: int | None = None, include_dismissed: bool = False
) -> Listing:
    """Every conflict now (or at ``at``), most recent first, with its groups ranked."""
    tl = memory.timeline()
    now = memory.now() if at is None else at
    s_filter = normalize_subject(subject) if subject else None
    cands = _candidates(memory, tl, s_filter)
    dismissed = dismissed_conflicts(memory)
    found: list[Conflict] = []
    hidden = 0
    n_cands = 0
    for s in sorted(cands):
        keys = cands[s]
        n_cands += len(keys)
        needed: set[str] = set().union(*keys.values())
        answers = _fold_subject(memory, tl, s, needed, now)
        for key in sorted(keys):
            held = []
            for p in sorted(keys[key]):
                b = next((b for b in answers.get(p, ()) if b.key == key), None)
                if b is not None:
                    held.append(b)
            if len(held) < 2:
                continue
            preds = tuple(b.predicate for b in held)
            c = Conflict(conflict_id(s, key, preds), s, key, held[0].value, preds, tuple(held))
            seen = dismissed.get(c.id)
            if seen is not None and seen == frozenset(c.held_ids):
                hidden += 1
                if not include_dismissed:
                    continue
                c = replace(c, dismissed=True)
            found.append(c)
    found.sort(key=lambda c: (-c.latest, c.subject, c.id))
    return Listing(found, group_conflicts(found), hidden, n_cands)


def group_conflicts(conflicts: Iterable[Conflict]) -> list[ConflictGroup]:
    """Conflicts with the same predicates, ranked by subjects then most recent first."""
    groups: dict[tuple[str, ...], ConflictGroup] = {}
    for c in conflicts:
        g = groups.get(c.predicates)
        if g is None:
            g = groups[c.predicates] = ConflictGroup(c.group, c.predicates)
        g.conflicts.append(c)
    return sorted(groups.values(), key=lambda g: (-g.count, -g.latest, g.id))


def dismissed_conflicts(memory: Memory) -> dict[str, frozenset[str]]:
    """conflict id -> the held event ids its latest dismissal saw."""
    out: dict[str, frozenset[str]] = {}
    for d in review.decisions(memory):
        if d.kind == review.DISMISS and isinstance(d.body.get("conflict"), str):
            held = d.body.get("held") or []
            out[d.body["conflict"]] = frozenset(str(x) for x in held)
        elif d.kind == review.UNDISMISS and isinstance(d.body.get("conflict"), str):
            out.pop(d.body["conflict"], None)
    return out


def lookup(memory: Memory, ident: str, subject: str | None = None) -> tuple[list[Conflict], ConflictGroup | None]:
    """A conflict id (``c-...``) or a group id (``g-...``) to the conflicts it names now."""
    ident = (ident or "").strip()
    listing = find_conflicts(memory, subject, include_dismissed=True)
    for c in listing.conflicts:
        if c.id == ident:
            return [c], None
    for g in listing.groups:
        if g.id == ident:
            return list(g.conflicts), g
    raise NotFound(
        f"no conflict or conflict group {ident!r} is open now (ids come from `conflicts list`; "
        f"a conflict that was settled is gone)"
    )


# --- decisions ----------------------------------------------------------------------


def confirm(stager: Stager, ident: str, keep: str, reason: str = "") -> Plan:
    """Confirm by id: one conflict (``c-...``); a group holds many values, so it is refused."""
    found, group = lookup(stager.memory, ident)
    if group is not None and len(found) > 1:
        raise PlanError(f"{ident.strip()} is a group of {len(found)} conflicts: confirm takes one conflict id (c-...)")
    return confirm_plan(stager, found[0], keep, reason)


def confirm_evidence(operator: str) -> str:
    """The evidence a confirm statement opens with (its reason follows after ": ")."""
    return f"conflicts confirm by {operator}"


def confirm_plan(stager: Stager, conflict: Conflict, keep: str, reason: str = "", *, at: int | None = None) -> Plan:
    """Keep one predicate: an operator statement whose ``replaces`` withdraws the others.

    ``at`` dates the statement (apply re-derives a saved plan at its own instant); by
    default, now, moved past any instant the conflict's pairs already use."""
    memory = stager.memory
    tl = memory.timeline()
    p = memory.resolve(keep, tl)
    kept = conflict.belief(p)
    if kept is None:
        raise PlanError(
            f"{keep!r} is not one of the predicates of conflict {conflict.id}: choose one of "
            + ", ".join(conflict.predicates)
        )
    losers = [b for b in conflict.held if b.predicate != p]
    s = conflict.subject
    if at is None:
        used: set[int] = set()
        for q in conflict.predicates:
            used.update(e.observed_at for e in memory.pair_input(s, q, tl) if e.subject == s)
        t = memory.now()
        while t in used:
            t += 1  # never share an instant with another event of these pairs
    else:
        t = at
    # the operator who decided, in the statement itself (the `applied` record names who applied it)
    evidence = confirm_evidence(stager.operator) + (f": {reason}" if reason else "")
    statement = make_event(
        s,
        p,
        kept.value,
        t,
        kind=kept.kind,
        confidence=1.0,
        source="operator",
        evidence=evidence[:MAX_EVIDENCE],
        replaces=[Replace(b.predicate, b.value) for b in losers],
    )
    retractions = [
        make_event(
            s, b.stored_as or b.predicate, b.value, t, retraction=True, source="operator", caused_by=statement.id
        )
        for b in losers
    ]
    title = f"confirm {s}: keep {p} = {kept.value}, withdraw " + ", ".join(f"{b.predicate} = {b.value}" for b in losers)
    return stager.statements(
        "confirm",
        title,
        [statement, *retractions],
        conflict.predicates,
        details={
            "conflict": conflict.to_json(),
            "keep": p,
            "withdraw": [b.predicate for b in losers],
            # what the operator statement does to the kept belief's provenance (docs/review-queues.md)
            "restated": {
                "subject": s,
                "predicate": p,
                "value": kept.value,
                "since_before": format_rfc3339(kept.observed_at),
                "source_before": kept.source,
                "since_after": format_rfc3339(t),
                "source_after": "operator",
                "operator": stager.operator,
            },
        },
    )


def exclude_plan(stager: Stager, conflicts: Sequence[Conflict], by: str | None = None, reason: str = "") -> Plan:
    """A redefine adding the exclusion (both ways unless ``by`` names the one that excludes)."""
    memory = stager.memory
    tl = memory.timeline()
    preds = sorted({p for c in conflicts for p in c.predicates})
    if by is not None:
        b = memory.resolve(by, tl)
        if b not in preds:
            raise PlanError(f"{by!r} is not one of the predicates of this conflict: choose one of {', '.join(preds)}")
        owners = [b]
    else:
        owners = preds
    records: list[RegistryRecord] = []
    added: dict[str, list[str]] = {}
    for a in owners:
        d = tl.definition(a)
        assert d is not None
        have = {tl.canonical(x) for x in d.excludes}
        targets = [x for x in preds if x != a and x not in have and not (tl.definition(x) or d).historical]
        if not targets:
            continue
        sub = stager.redefine(a, add_excludes=targets, reason=reason)
        records.extend(sub.records)
        added[a] = targets
    if not records:
        raise PlanError(
            f"nothing to add: {' and '.join(preds)} already exclude each other where an exclusion can withdraw "
            f"anything (a historical predicate is never withdrawn by an exclusion); confirm or dismiss instead"
        )
    title = "exclude: " + "; ".join(f"{a} excludes {', '.join(x)}" for a, x in added.items())
    subjects = sorted({c.subject for c in conflicts})
    return stager.seal(
        "exclude",
        title,
        records,
        preds,
        reason=reason,
        details={
            "predicates": preds,
            "excludes": added,
            "conflicts": [c.id for c in conflicts],
            "subjects": subjects[:GROUP_SUBJECTS_SHOWN],
            "subjects_count": len(subjects),
        },
    )


def dismiss(memory: Memory, conflicts: Sequence[Conflict], operator: str, reason: str = "") -> list[str]:
    """Append one review decision per conflict (one transaction); returns their event ids.

    A conflict its latest dismissal already hides is refused: dismissing twice says nothing new."""
    hidden = dismissed_conflicts(memory)
    again = [c.id for c in conflicts if hidden.get(c.id) == frozenset(c.held_ids)]
    if again:
        raise InvalidInput(
            f"conflict {', '.join(again[:5])} is already dismissed; `conflicts undismiss ID` shows it again"
        )
    bodies = [
        {
            "kind": review.DISMISS,
            "conflict": c.id,
            "subject": c.subject,
            "value": c.value,
            "predicates": list(c.predicates),
            "held": c.held_ids,
            "reason": reason,
            "operator": operator,
        }
        for c in conflicts
    ]
    return [e.id for e in review.record(memory, bodies)]


def undismiss(memory: Memory, ident: str, operator: str, reason: str = "") -> list[str]:
    """Show a dismissed conflict again: a review decision that ends its dismissal."""
    ident = (ident or "").strip()
    if ident not in dismissed_conflicts(memory):
        raise NotFound(f"no dismissed conflict {ident!r} (dismissed ones are marked in `conflicts list --all`)")
    body = {"kind": review.UNDISMISS, "conflict": ident, "reason": reason, "operator": operator}
    return [e.id for e in review.record(memory, [body])]
