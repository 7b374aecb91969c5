"""Governance: stage registry changes as plans, preview their impact, apply exactly them.

The CLI and the TUI both call these functions; neither holds a rule of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from recall_engine.batch import collection_paused
from recall_engine.errors import InvalidInput, PlanError, RecallError, RegistryError, StalePlan
from recall_engine.instants import format_rfc3339
from recall_engine.matching import best_match
from recall_engine.memory import Memory
from recall_engine.preview import Impact, subject_impact, summarize
from recall_engine.records import REGISTRY_SUBJECT, Event
from recall_engine.registry import Definition, Promotion, RegistryRecord, check_definition, check_registry
from recall_engine.text import NOTE, RESERVED_PREDICATES, normalize_subject
from recall_engine.timeline import Timeline
from recall_engine.values import normalize_value, parse_cli_value, value_text

from .patterns import Pattern
from .plans import Plan
from .session import check_operator

LARGE_BLAST_RADIUS = 1000  # answers changed before a plan is flagged as large


@dataclass
class Preview:
    plan: Plan
    impact: Impact
    risks: list[dict[str, str]] = field(default_factory=list)

    @property
    def changes_answers(self) -> bool:
        return (
            self.impact.answers_changed > 0 or self.impact.history_changed > 0 or self.impact.answers_changed_as_of > 0
        )

    def to_json(self) -> dict[str, Any]:
        imp = self.impact.to_json()
        return {
            "plan": {
                "id": self.plan.id,
                "kind": self.plan.kind,
                "title": self.plan.title,
                "ops": [r.to_json() for r in self.plan.records],
                "statements": [e.to_json() for e in self.plan.statements],
                "events": [e.to_json() for e in self.plan.events()],
                "based_on": self.plan.based_on(),
                "details": self.plan.details,
            },
            "impact": imp,
            "risks": self.risks,
        }


# --- staging ----------------------------------------------------------------


class Stager:
    """Builds plans against one memory's current registry timeline and position."""

    def __init__(self, memory: Memory, collection: str, operator: str) -> None:
        self.memory = memory
        self.collection = collection
        self.operator = operator

    def seal(
        self,
        kind: str,
        title: str,
        records: Sequence[RegistryRecord],
        scope: Iterable[str],
        *,
        statements: Sequence[Event] = (),
        details: dict[str, Any] | None = None,
        reason: str = "",
    ) -> Plan:
        """Seal a plan; ``scope`` is the names it read, and ``details`` what a reviewer needs."""
        tl = self.memory.timeline()
        at = self.memory.registry_instant(tl)
        recs = tuple(replace(r, operator=self.operator, reason=reason or r.reason) for r in records)
        after = tl.with_records(Plan(kind, title, self.collection, self.operator, 0, "", recs, at=at).logged())
        names: set[str] = set()
        for p in scope:
            for t in (tl, after):
                names.update(t.stored_names(p))
                for q in t.excluders(t.canonical(p)):
                    names.update(t.stored_names(q))
        scope_names = tuple(sorted(names))
        plan = Plan(
            kind=kind,
            title=title,
            collection=self.collection,
            operator=self.operator,
            position=self.memory.store.position(),
            registry_digest=tl.digest,
            records=recs,
            statements=tuple(statements),
            at=at,
            scope=scope_names,
            details=details or {},
            store=store_identity(self.memory),
            names_digest=tl.names_digest(scope_names),
        )
        return plan.sealed()

    def _known(self, name: str) -> str:
        return self.memory.resolve(name)

    def redefine(
        self,
        name: str,
        *,
        cardinality: str | None = None,
        add_excludes: Sequence[str] = (),
        remove_excludes: Sequence[str] = (),
        historical: bool | None = None,
        allowed: Sequence[str] | None = None,
        description: str | None = None,
        retroactive: bool = False,
        reason: str = "",
    ) -> Plan:
        tl = self.memory.timeline()
        p = self._known(name)
        if p == NOTE:
            raise PlanError('"note" cannot be redefined: it is always multi-valued free text')
        d = tl.definition(p)
        assert d is not None
        excludes = list(d.excludes)
        for x in add_excludes:
            cx = self._known(x)
            if cx == p:
                raise PlanError(f"{p} cannot exclude itself")
            if cx not in excludes:
                excludes.append(cx)
        for x in remove_excludes:
            cx = tl.canonical(x)
            if cx not in excludes and x not in excludes:
                raise PlanError(f"{p} does not exclude {x}")
            excludes = [e for e in excludes if e not in (x, cx)]
        if allowed is not None and d.value_type != "enum":
            raise PlanError(f"{p} is {d.value_type or 'string'}-valued; only an enum lists allowed values")
        new = replace(
            d,
            cardinality=cardinality or d.cardinality,
            excludes=tuple(excludes),
            historical=d.historical if historical is None else historical,
            allowed=tuple(allowed) if allowed is not None else d.allowed,
            description=d.description if description is None else description,
        )
        try:
            check_definition(new, "redefine")
        except RegistryError as exc:
            raise PlanError(str(exc)) from None
        if new == d and not retroactive:
            raise PlanError(f"redefine {p}: nothing to change (the definition already says that)")
        changes = _describe_changes(d, new)
        rec = RegistryRecord(op="redefine", name=p, definition=new, retroactive=retroactive)
        # excludes and historical are read as the registry stands at every read (docs/registry.md):
        # only a change of cardinality or allowed values is "from now on"
        now_only = new.cardinality != d.cardinality or new.allowed != d.allowed
        title = f"redefine {p}: {changes or 'same rules'}" + (
            " (whole history)" if retroactive else " (from now on)" if now_only else ""
        )
        scope = {p, *d.excludes, *new.excludes}
        return self.seal(
            "redefine", title, [rec], scope, reason=reason, details={"from": d.to_json(), "to": new.to_json()}
        )

    def merge(self, name: str, into: str, reason: str = "") -> Plan:
        tl = self.memory.timeline()
        a = self.memory.predicate_name(name, tl)
        if not tl.knows(a):
            raise self.memory.unknown_predicate(a, tl)
        if tl.canonical(a) != a:
            raise PlanError(f"{a} already reads as {tl.canonical(a)}; merge that predicate instead")
        b = self._known(into)
        if NOTE in (a, b):
            raise PlanError(f'cannot merge "{a}" into "{b}": notes are promoted, not merged')
        if a == b:
            raise PlanError(f"cannot merge {a} into itself")
        da, db = tl.definition(a), tl.definition(b)
        assert da and db
        if da.storage_class != db.storage_class:
            raise PlanError(
                f'cannot merge: "{a}" stores {da.storage_class} values and "{b}" stores {db.storage_class} values'
            )
        rec = RegistryRecord(op="merge", name=a, into=b)
        return self.seal(
            "merge",
            f"merge {a} into {b}",
            [rec],
            {a, b},
            reason=reason,
            details={"from": da.to_json(), "into": db.to_json()},
        )

    def split(self, name: str, reason: str = "") -> Plan:
        tl = self.memory.timeline()
        a = self.memory.predicate_name(name, tl)
        owner = tl.merged_into(a)
        if owner is None:
            raise PlanError(f"predicate {a!r} is not a merged name")
        base = tl.own_definition(a) or tl.definition(owner)
        assert base is not None
        d = replace(base, name=a, aliases=())
        rec = RegistryRecord(op="split", name=a, definition=d)
        return self.seal("split", f"split {a} from {tl.canonical(a)}", [rec], {a, tl.canonical(a)}, reason=reason)

    def define(
        self,
        name: str,
        *,
        cardinality: str,
        value_type: str,
        allowed: Sequence[str] = (),
        description: str = "",
        excludes: Sequence[str] = (),
        historical: bool = False,
        reason: str = "",
    ) -> Plan:
        tl = self.memory.timeline()
        n = self.memory.predicate_name(name, tl)
        if tl.knows(n):
            raise PlanError(f"predicate {n!r} already exists; use redefine to change it")
        d = Definition(
            n,
            cardinality,
            value_type,
            description,
            tuple(allowed),
            (),
            tuple(self._known(x) for x in excludes),
            historical,
        )
        try:
            check_definition(d, "define")
        except RegistryError as exc:
            raise PlanError(str(exc)) from None
        rec = RegistryRecord(op="declare", name=n, definition=d)
        return self.seal(
            "define", f"define {n} ({cardinality}-valued {value_type})", [rec], {n, *d.excludes}, reason=reason
        )

    def promote(
        self,
        predicate: str,
        *,
        notes: dict[str, str] | None = None,
        match: str | None = None,
        subject: str | None = None,
        new_definition: Definition | None = None,
        reason: str = "",
    ) -> Plan:
        """Promote note events into a typed predicate: listed ids with values, or a regex whose group is the value."""
        tl = self.memory.timeline()
        records: list[RegistryRecord] = []
        if new_definition is not None:
            # the new name is normalised here, for both front ends ("Shell Used" -> shell_used
            # under an open vocabulary), as remember normalises a name it defines
            new_definition = replace(new_definition, name=self.memory.predicate_name(new_definition.name, tl))
            if tl.knows(new_definition.name):
                raise PlanError(f"predicate {new_definition.name!r} already exists")
            check_definition(new_definition, "promote")
            records.append(RegistryRecord(op="declare", name=new_definition.name, definition=new_definition))
            p, d = new_definition.name, new_definition
        else:
            p = self._known(predicate)
            known = tl.definition(p)
            assert known is not None  # _known refuses a name the registry does not define
            d = known
        if p == NOTE:
            raise PlanError('promote files notes under another predicate, not "note"')
        if (notes is None) == (match is None):
            raise PlanError("promote needs either --note EVENT_ID=VALUE (one or more) or --match REGEX")
        candidates = self._note_candidates(notes, match, subject, tl)
        parsed: list[Promotion] = []
        results: list[dict[str, Any]] = []
        for e, raw in candidates:
            try:
                if raw is None:
                    raise InvalidInput("the pattern matched but captured no value")
                v = normalize_value(
                    p, d.value_type, d.allowed, parse_cli_value(d.value_type, raw) if isinstance(raw, str) else raw
                )
            except InvalidInput as exc:
                results.append(
                    {"event_id": e.id, "subject": e.subject, "note": e.value, "ok": False, "error": str(exc)}
                )
                continue
            parsed.append(Promotion(e.id, e.subject, v))
            results.append({"event_id": e.id, "subject": e.subject, "note": e.value, "ok": True, "value": v})
        if not parsed:
            raise PlanError(
                f"no note could be promoted into {p}: "
                + ("; ".join(r["error"] for r in results[:5]) or "no note matched")
            )
        records.append(RegistryRecord(op="promote", name=p, notes=tuple(parsed)))
        return self.seal(
            "promote",
            f"promote {len(parsed)} note(s) into {p}",
            records,
            {p, NOTE},
            reason=reason,
            details={
                "notes": results,
                "parsed": len(parsed),
                "unparsed": len(results) - len(parsed),
                "selection": {"match": match or "", "subject": normalize_subject(subject) if subject else ""},
            },
        )

    def _note_candidates(
        self, notes: dict[str, str] | None, match: str | None, subject: str | None, tl: Timeline
    ) -> list[tuple[Event, Any]]:
        store = self.memory.store
        if notes is not None:
            found = {e.id: e for e in store.events_by_id(list(notes))}
            out = []
            for eid, raw in notes.items():
                e = found.get(eid)
                if e is None or tl.canonical(e.predicate) != NOTE or e.retraction:
                    raise PlanError(f"event {eid!r} is not a note event of this collection")
                promo = tl.promotion(eid)
                if promo is not None:
                    raise PlanError(f"note {eid!r} is already promoted into {promo[0]}")
                out.append((e, raw))
            return out
        rx = Pattern(match or "", error=PlanError)
        out = []
        seen: set[str] = set()
        subjects = [normalize_subject(subject)] if subject else None
        for e in store.predicate_events(tl.stored_names(NOTE), subjects=subjects):
            if e.retraction or e.id in seen or tl.promotion(e.id) is not None:
                continue
            seen.add(e.id)
            m = rx.search(str(e.value))
            if not m:
                continue
            if "value" in rx.groupindex:
                raw = m.group("value")
            elif rx.groups:
                raw = m.group(1)
            else:
                raw = m.group(0)
            out.append((e, raw.strip() if isinstance(raw, str) else raw))
        return out

    def registry_records(
        self,
        records: Sequence[RegistryRecord],
        title: str,
        reason: str = "",
        definitions: dict[str, Definition] | None = None,
    ) -> Plan:
        """A registry file load: the declare records for what differs (built by registry_sync).

        ``definitions`` (the whole file) lets the details list every predicate of the
        file as new, changed (field by field, before -> after) or unchanged."""
        if not records:
            raise PlanError("the registry file declares nothing new: every predicate already reads that way")
        tl = self.memory.timeline()
        details = {
            "predicates": load_details(
                tl, definitions or {r.name: r.definition for r in records if r.definition is not None}
            )
        }
        for r in records:
            old = tl.own_definition(r.name) or tl.definition(r.name)
            if r.definition is not None and old is not None and old.storage_class != r.definition.storage_class:
                raise PlanError(
                    f"{r.name} stores {old.storage_class} values and the registry file makes it "
                    f"{r.definition.value_type or 'string'}-valued: the stored value class of a predicate never "
                    f"changes; define a new predicate (under another name) instead"
                )
        return self.seal("registry-load", title, records, {r.name for r in records}, reason=reason, details=details)

    def statements(
        self,
        kind: str,
        title: str,
        statements: Sequence[Event],
        scope: Iterable[str],
        details: dict[str, Any] | None = None,
    ) -> Plan:
        return self.seal(kind, title, [], scope, statements=statements, details=details)


def load_details(tl: Timeline, definitions: dict[str, Definition]) -> list[dict[str, Any]]:
    """Per predicate of a registry file: new, changed (each field before -> after) or unchanged."""
    out = []
    for name in sorted(definitions):
        new = definitions[name]
        old = tl.own_definition(name) or (tl.definition(name) if name == NOTE else None)
        if old is None:
            out.append({"name": name, "status": "new", "definition": new.to_json()})
            continue
        a, b = old.to_json(), new.to_json()
        fields = {k: {"before": a[k], "after": b[k]} for k in a if a[k] != b[k] and k != "name"}
        out.append({"name": name, "status": "changed" if fields else "unchanged", "fields": fields})
    return out


def _describe_changes(a: Definition, b: Definition) -> str:
    parts = []
    if a.cardinality != b.cardinality:
        parts.append(f"{a.cardinality} -> {b.cardinality}")
    if set(a.excludes) != set(b.excludes):
        added = sorted(set(b.excludes) - set(a.excludes))
        removed = sorted(set(a.excludes) - set(b.excludes))
        if added:
            parts.append("excludes +" + ", +".join(added))
        if removed:
            parts.append("excludes -" + ", -".join(removed))
    if a.historical != b.historical:
        parts.append("historical" if b.historical else "not historical")
    if a.allowed != b.allowed:
        parts.append("allowed " + ", ".join(b.allowed))
    if a.description != b.description:
        parts.append("description")
    return "; ".join(parts)


# --- preview ----------------------------------------------------------------


def preview(
    memory: Memory, plan: Plan, *, as_of: int | None = None, progress: Callable[[int], None] | None = None
) -> Preview:
    """Fold every affected pair under the registry now and with the plan; compare."""
    # every event read and every answer folded lives until the end: a collection while they
    # grow would only walk them again (recall_engine.batch)
    with collection_paused():
        return _preview(memory, plan, as_of, progress)


def _preview(memory: Memory, plan: Plan, as_of: int | None, progress: Callable[[int], None] | None) -> Preview:
    tl = memory.timeline()
    after = tl.with_records(plan.logged())
    store = memory.store
    now = memory.now() + 60 * 10**9
    names = set(plan.scope)
    records, statements = _effective(plan, tl, memory)
    predicates_of = _affected_predicates(records, statements, tl, after)
    inert = _inert(records, statements, tl, after)
    if inert:
        predicates_of -= inert
        names &= _read_names(predicates_of, tl, after)
    subjects = None
    if records and all(r.op == "promote" for r in records):
        subjects = sorted({p.subject for r in records for p in r.notes})
    stmt_events = list(plan.statements)
    if statements and not records:
        subjects = sorted({e.subject for e in statements})
    groups = _group_by_subject(store.predicate_events(sorted(names), subjects=subjects))
    per_subject = []
    read = 0
    # per stored name, asked once: the affected predicates it reads as (under either timeline),
    # and whether it is a note's name (a note's promotion is its own)
    read_as: dict[str, tuple[set[str], bool]] = {}
    for i, (subject, events) in enumerate(groups):
        read += len(events)
        preds = set()
        for name in {e.predicate for e in events}:
            hit = read_as.get(name)
            if hit is None:
                hit = read_as[name] = (
                    {c for t in (tl, after) if (c := t.canonical(name)) in predicates_of},
                    tl.canonical(name) == NOTE,
                )
            preds |= hit[0]
            if hit[1]:
                for e in events:
                    if e.predicate == name and e.retraction is False:
                        for t in (tl, after):
                            pr = t.promotion(e.id)
                            if pr is not None:
                                preds.add(pr[0])
        later = [s for s in stmt_events if s.subject == subject]
        if later:
            preds.update(tl.canonical(s.predicate) for s in later)
            per_subject.append(_statement_impact(subject, events, later, sorted(preds), tl, now, as_of))
        else:
            per_subject.append(subject_impact(subject, events, preds, tl, after, now, as_of))
        if progress is not None and i % 500 == 0:
            progress(read)
    impact = summarize(per_subject)
    impact.events_read = read
    risks = _risks(plan, impact, tl, after, memory, [pi for pairs in per_subject for pi in pairs])
    return Preview(plan, impact, risks)


# per changed pair of a preview: the values a read answered then (None: no predicate then)
Answered = dict[tuple[str, str], list[Any] | None]


def answered_then(memory: Memory, pv: Preview, known_at: int, as_of: int | None, limit: int | None = None) -> Answered:
    """What each changed pair of a preview (the first ``limit``) was answered by a read at
    ``known_at``, about ``as_of`` or about ``known_at`` itself: the engine's own known-at read
    (docs/history-diff-explain.md, "Two time axes"), so a reviewer sees whether a plan
    brings an answer back to what was said then."""
    then = memory.known(known_at)
    at = known_at if as_of is None else as_of
    out: Answered = {}
    for c in pv.impact.changes[:limit]:
        try:
            out[(c.subject, c.predicate)] = [b.value for b in then.read_pair(c.subject, c.predicate, at)]
        except RecallError:  # the name was not a predicate then: nothing was answered under it
            out[(c.subject, c.predicate)] = None
    return out


def _statement_impact(subject, events, statements, preds, tl, now, as_of):
    """Statements change answers through the same timeline: compare without and with them."""
    from recall_engine.preview import PairImpact, answers_over_time, series_differ

    out = []
    with_st = [*events, *statements]
    for p in preds:
        sb, nb, ab = answers_over_time(events, subject, p, tl, now, as_of)
        sa, na, aa = answers_over_time(with_st, subject, p, tl, now, as_of)
        if sb or sa:
            out.append(PairImpact(subject, p, nb, na, ab, aa, series_differ(sb, sa)))
    return out


def _effective(plan: Plan, tl: Timeline, memory: Memory) -> tuple[list[RegistryRecord], list[Event]]:
    """The records and statements a plan adds or, for a revert, takes back."""
    records = [r for r in plan.records if r.op != "withdraw"]
    statements = list(plan.statements)
    for w in plan.records:
        if w.op == "withdraw":
            records.extend(r.record for r in tl.log if r.record.plan == w.withdraws and r.record.op != "applied")
            if w.events:
                statements.extend(memory.store.events_by_id(list(w.events)))
    return records, statements


def _affected_predicates(
    records: Sequence[RegistryRecord], statements: Sequence[Event], before: Timeline, after: Timeline
) -> set[str]:
    out: set[str] = set()
    for r in records:
        if r.op == "promote":
            out.add(NOTE)  # the promoted notes stop being held as notes
        for t in (before, after):
            out.add(t.canonical(r.name))
            if r.into:
                out.add(t.canonical(r.into))
            if r.definition is not None:
                out.update(t.canonical(x) for x in r.definition.excludes)
            old = before.definition(r.name)
            if old is not None:
                out.update(t.canonical(x) for x in old.excludes)
    for e in statements:
        out.add(before.canonical(e.predicate))
    return out


def _inert(
    records: Sequence[RegistryRecord], statements: Sequence[Event], before: Timeline, after: Timeline
) -> set[str]:
    """The names a plan of declarations touches without changing how any of their pairs reads: a
    registry load that only rewords a description, or declares rules a predicate has already.
    Their names, rules over time and exclusions are the same under both timelines, so the
    preview leaves them out, as it would a plan that did not name them (docs/governance.md,
    "Preview"). Other kinds of plan are previewed whole."""
    if statements or any(r.op not in ("declare", "redefine") for r in records):
        return set()
    out: set[str] = set()
    for r in records:
        p = r.name
        if p == NOTE or any(t.canonical(p) != p for t in (before, after)):
            continue
        near = {p} | before.excluders(p) | after.excluders(p) | before.excluded_by(p) | after.excluded_by(p)
        if all(
            before.canonical(q) == after.canonical(q)
            and before.stored_names(q) == after.stored_names(q)
            and before.rules_history(q) == after.rules_history(q)
            for q in near
        ) and (before.excluders(p), before.excluded_by(p)) == (after.excluders(p), after.excluded_by(p)):
            out.add(p)
    return out


def _read_names(predicates: Iterable[str], before: Timeline, after: Timeline) -> set[str]:
    """The stored names a fold of these predicates reads: their own, and those of the predicates
    that exclude them or that they exclude (an exclusion withdraws values across pairs)."""
    out: set[str] = set()
    for p in predicates:
        for t in (before, after):
            c = t.canonical(p)
            for q in (c, *t.excluders(c), *t.excluded_by(c)):
                out.update(t.stored_names(q))
    return out


def _group_by_subject(events: Iterable[Event]) -> Iterable[tuple[str, list[Event]]]:
    """The store streams events grouped by subject; cut the stream at each new subject."""
    current: str | None = None
    bucket: list[Event] = []
    seen: dict[str, list[Event]] = {}
    for e in events:
        if e.subject != current:
            if current is not None:
                # a backend that did not group would repeat a subject: merge, never lose events
                seen.setdefault(current, []).extend(bucket)
            current, bucket = e.subject, []
        bucket.append(e)
    if current is not None:
        seen.setdefault(current, []).extend(bucket)
    return list(seen.items())


def _risks(
    plan: Plan, impact: Impact, before: Timeline, after: Timeline, memory: Memory, pairs: Sequence[Any] = ()
) -> list[dict[str, str]]:
    risks: list[dict[str, str]] = []
    retro: list[str] = []
    for r in plan.records:
        old = before.definition(r.name)
        # a declare of a registered name (a registry load) changes its rules like a redefine from now on
        if r.op in ("redefine", "declare") and r.definition is not None and old is not None:
            new = r.definition
            if old.cardinality == "multi" and new.cardinality == "single":
                if r.retroactive:
                    shrunk = [c for c in impact.changes if c.predicate == r.name and len(c.after) < len(c.before)]
                    hidden = sum(len(c.before) - len(c.after) for c in shrunk)
                    detail = (
                        f"{r.name} becomes single-valued for its whole history: {hidden} value(s) held now "
                        f"stop being believed at once, across {_pairs(len(shrunk))}"
                    )
                else:
                    several = [pi for pi in pairs if pi.predicate == r.name and len(pi.after) > 1]
                    held = sum(len(pi.after) for pi in several)
                    detail = (
                        f"{r.name} becomes single-valued from now on: {_pairs(len(several))} {'holds' if len(several) == 1 else 'hold'} several values "
                        f"now ({held} in all); the next value stated for each of them hides the others"
                    )
                risks.append({"flag": "values_hidden", "detail": detail})
            if r.retroactive:
                retro.append(r.name)
            kept = {a.lower() for a in new.allowed}
            dropped = sorted(a for a in old.allowed if a.lower() not in kept)
            if new.value_type == "enum" and dropped:
                risks.append(
                    {
                        "flag": "enum_narrowed",
                        "detail": (
                            f"{r.name} no longer allows {', '.join(dropped)}: values already stored stay readable, "
                            f"but new statements of them will be refused"
                        ),
                    }
                )
        if r.op == "declare" and old is None and r.definition is not None:
            near = best_match(
                r.name, r.definition.storage_class, before.predicates(), description=r.definition.description
            )
            if near is not None:
                risks.append(
                    {
                        "flag": "near_duplicate",
                        "detail": (
                            f"{r.name} is near the registered {near.name} (score {near.score:.2f}, the vocabulary inbox's "
                            f"rule): if they mean the same, use {near.name} instead of defining {r.name}"
                        ),
                    }
                )
        if r.op == "merge":
            a, b = before.definition(r.name), before.definition(r.into)
            if a is not None and b is not None and a.cardinality != b.cardinality:
                risks.append(
                    {
                        "flag": "cardinality_mismatch",
                        "detail": (
                            f"{r.name} is {a.cardinality}-valued and {r.into} is {b.cardinality}-valued: after the merge, "
                            f"{r.name}'s history folds under {r.into}'s {b.cardinality}-valued rules"
                        ),
                    }
                )
    ruled = [
        r.name
        for r in plan.records
        if r.definition is not None and _rules_changed(before.definition(r.name), r.definition)
    ]
    if ruled:
        per_rule: dict[str, int] = {}
        for c in impact.changes:
            if c.history_changed or c.replaced_changes:
                per_rule[c.predicate] = per_rule.get(c.predicate, 0) + 1
        where = ", ".join(f"{n} of {p}" for p, n in sorted(per_rule.items())) or "none"
        risks.append(
            {
                "flag": "whole_log",
                "detail": (
                    f"the excludes or historical rule of {_names(ruled)} covers the whole log, old statements included: "
                    + (
                        f"{_pairs(sum(per_rule.values()))} change history or what is listed as replaced ({where})"
                        if per_rule
                        else "no pair in the store changes its history today; statements to come are read by it"
                    )
                ),
            }
        )
    if retro:
        per: dict[str, int] = {}
        for c in impact.changes:
            if c.history_changed:
                per[c.predicate] = per.get(c.predicate, 0) + 1
        where = ", ".join(f"{n} of {p}" for p, n in sorted(per.items())) or "none"
        risks.append(
            {
                "flag": "retroactive",
                "detail": (
                    f"{_names(retro)} {'is' if len(retro) == 1 else 'are'} redefined for the whole history: "
                    f"{_pairs(impact.history_changed)} would have answered differently in the past ({where}), "
                    f"and every as-of read of them changes"
                ),
            }
        )
    restated = plan.details.get("restated") if isinstance(plan.details, dict) else None
    if isinstance(restated, dict):
        risks.append(
            {
                "flag": "restated",
                "detail": (
                    f"{restated['subject']} {restated['predicate']} = {value_text(restated['value'])} is restated by the operator: "
                    f"its since becomes {restated['since_after']} (was {restated['since_before']}) and its source "
                    f"{restated['source_after']} (was {restated['source_before']})"
                ),
            }
        )
    unparsed = plan.details.get("unparsed", 0) if isinstance(plan.details, dict) else 0
    if unparsed:
        bad = [n for n in plan.details.get("notes", []) if not n.get("ok")]
        risks.append(
            {
                "flag": "unparsed_notes",
                "detail": (
                    f"{unparsed} matching note(s) would not parse as {plan.records[-1].name} and stay notes: "
                    + "; ".join(f"{n['event_id']}: {n['error']}" for n in bad[:3])
                ),
            }
        )
    if impact.answers_changed >= LARGE_BLAST_RADIUS:
        risks.append(
            {
                "flag": "large_blast_radius",
                "detail": (f"{impact.answers_changed} answers across {impact.subjects} subjects would change"),
            }
        )
    if impact.conflicts_created:
        risks.append(
            {
                "flag": "new_conflicts",
                "detail": (f"{len(impact.conflicts_created)} subject(s) would hold one value under two predicates"),
            }
        )
    return risks


def _names(names: Sequence[str], shown: int = 4) -> str:
    """'a', 'a and b', 'a, b and c', or 'a, b, c, d and 3 more': a risk names what it covers, briefly."""
    if len(names) <= shown:
        head, tail = list(names[:-1]), names[-1]
        return f"{', '.join(head)} and {tail}" if head else tail
    return f"{', '.join(names[:shown])} and {len(names) - shown} more"


def _pairs(n: int) -> str:
    return "1 pair" if n == 1 else f"{n} pairs"


def _rules_changed(old: Definition | None, new: Definition) -> bool:
    """Does a definition change excludes or historical (rules read at every read)?"""
    if old is None:
        return bool(new.excludes) or new.historical
    return set(old.excludes) != set(new.excludes) or old.historical != new.historical


# --- apply and revert -------------------------------------------------------


def store_identity(memory: Memory) -> str:
    """What tells one store's log from another's: the id of its first event ("" while empty)."""
    events = memory.store.all_events(0)
    try:
        first = next(iter(events), None)
    finally:
        close = getattr(events, "close", None)
        if close is not None:
            close()
    return first.id if first is not None else ""


def check_stale(memory: Memory, plan: Plan) -> None:
    """Refuse a plan when something it read changed since it was computed, saying what.

    What a plan read (docs/governance.md, "Staleness"): the registry records of the
    names in its scope, and the events of those names; for a promote, the notes its
    selection would include. Anything else (a declaration of another name, a write to
    another predicate) leaves it valid."""
    store = memory.store
    if plan.collection and plan.collection != getattr(store, "collection", plan.collection):
        raise PlanError(f"the plan is for collection {plan.collection!r}, not {store.collection!r}")
    if plan.store and plan.store != store_identity(memory):
        raise PlanError(
            "the plan was made against another store (its log begins with a different event); "
            "plan it again against this one"
        )
    tl = memory.timeline()
    if plan.names_digest and tl.names_digest(plan.scope) != plan.names_digest:
        raise StalePlan(
            "the plan is stale: the registry records of the names it touches changed since it was planned "
            f"({', '.join(plan.scope[:5])}{' ...' if len(plan.scope) > 5 else ''}); plan it again to see the new impact"
        )
    if store.position() == plan.position:
        return
    touched = [t for t in store.touched_since(plan.position) if t.subject != REGISTRY_SUBJECT]
    if not plan.names_digest:  # a plan from before the per-name digest: any registry change counts
        if tl.digest != plan.registry_digest:
            raise StalePlan(
                f"the plan is stale: the registry changed since position {plan.position}; "
                "plan it again to see the new impact"
            )
    scope = set(plan.scope)
    notes = set(tl.stored_names(NOTE)) if plan.kind == "promote" else set()
    hits = [t for t in touched if t.predicate in scope and t.predicate not in notes]
    if notes:
        hits.extend(_selected_notes(memory, plan, [t for t in touched if t.predicate in notes]))
    if hits:
        pairs = sorted({f"{t.subject}/{t.predicate}" for t in hits})
        raise StalePlan(
            f"the plan is stale: {len(hits)} event(s) touching its pairs landed since position {plan.position} "
            f"({', '.join(pairs[:5])}{' ...' if len(pairs) > 5 else ''}); plan it again to see the new impact"
        )


def _selected_notes(memory: Memory, plan: Plan, touched: list[Any]) -> list[Any]:
    """New note events a promote's selection would include: a match by its pattern, or a change to a listed note's pair."""
    sel = plan.details.get("selection") if isinstance(plan.details, dict) else None
    listed = {p.subject for r in plan.records for p in r.notes}
    if not isinstance(sel, dict) or not sel.get("match"):
        return [t for t in touched if t.subject in listed]  # a retraction or a new note of a promoted note's subject
    rx = Pattern(str(sel["match"]), error=PlanError)
    subject = sel.get("subject") or None
    out = []
    for t in touched:
        if subject and t.subject != subject:
            continue
        # the value key of a string is "s:" + its text (records.value_key): match the text
        text = t.value_key[2:] if t.value_key.startswith("s:") else t.value_key
        if rx.search(text) or t.subject in listed:
            out.append(t)
    return out


# what each kind of plan may append (records by op; statements only from the conflict queue)
KIND_OPS = {
    "redefine": {"redefine"},
    "merge": {"merge"},
    "split": {"split"},
    "define": {"declare"},
    "promote": {"declare", "promote"},
    "registry-load": {"declare", "vocabulary"},
    "exclude": {"redefine"},
    "revert": {"withdraw"},
    "confirm": set(),
    "never": set(),
}
FUTURE_SLACK_NS = 24 * 3600 * 10**9  # a plan's instants may run ahead of this clock by a day, not more


def check_plan(memory: Memory, plan: Plan) -> None:
    """Re-derive what a plan file may append against the current store; refuse anything else.

    A plan file is untrusted (anyone can edit and reseal it): each record must be one its
    kind produces, decode, keep every predicate's value class and leave a registry that
    reads; each statement must be what ``remember`` would accept from the operator."""
    tl = memory.timeline()
    bad = f"plan {plan.id} cannot be applied:"
    try:
        check_operator(plan.operator)
    except InvalidInput as err:
        raise PlanError(
            f"{bad} its planner is not an operator name ({err.message.replace('--operator', 'a planner')})"
        ) from None
    allowed = KIND_OPS.get(plan.kind)
    if allowed is None:
        raise PlanError(f"{bad} unknown kind {plan.kind!r}")
    horizon = memory.now() + FUTURE_SLACK_NS
    if plan.records and not 0 < plan.at <= horizon:
        raise PlanError(f"{bad} its instant {plan.at} is not a time it could have been planned at")
    # a plan is dated after every registry record it was planned against; those of its own
    # names are unchanged since (check_stale), so none may come after it: a plan file dated
    # back would rewrite how the past reads without saying so
    names = set(plan.scope) | {n for r in plan.records for n in (r.name, r.into) if n}
    before = [x.at for x in tl.log if x.record.name in names or x.record.into in names]
    if plan.records and before and plan.at <= max(before):
        raise PlanError(
            f"{bad} it is dated {format_rfc3339(plan.at)}, before the registry records of its names it was "
            f"planned against (the last one {format_rfc3339(max(before))}); plan it again"
        )
    for r in plan.records:
        if r.op not in allowed:
            raise PlanError(f"{bad} a {plan.kind} plan does not append {r.op} records")
        if r.operator != plan.operator or not r.operator.strip():
            raise PlanError(f"{bad} its records name operator {r.operator!r}, not its planner {plan.operator!r}")
        if r.auto or r.score is not None:
            raise PlanError(f"{bad} an operator's plan holds no automatic records")
        if r.definition is not None:
            old = tl.own_definition(r.name) or tl.definition(r.name)
            if old is not None and old.storage_class != r.definition.storage_class:
                raise PlanError(f"{bad} it changes the stored value class of {r.name}")
            if r.op == "redefine" and old is None:
                raise PlanError(f"{bad} it redefines {r.name}, which is not registered")
        if r.op == "merge":
            a, b = tl.definition(r.name), tl.definition(r.into)
            if a is None or b is None or a.storage_class != b.storage_class:
                raise PlanError(f"{bad} it merges {r.name} into {r.into}, which do not store the same value class")
        if r.op == "withdraw" and (not any(x.record.plan == r.withdraws for x in tl.log) or tl.withdrawn(r.withdraws)):
            raise PlanError(f"{bad} it withdraws plan {r.withdraws}, which is not an applied plan that counts")
    try:
        after = tl.with_records(plan.logged())
    except RegistryError as exc:
        raise PlanError(f"{bad} {exc}") from None
    for r in plan.records:
        for prom in r.notes:
            found = memory.store.events_by_id([prom.event_id])
            if not found or tl.canonical(found[0].predicate) != NOTE or found[0].subject != prom.subject:
                raise PlanError(f"{bad} it promotes {prom.event_id!r}, which is not a note of {prom.subject!r}")
            d = after.definition(r.name)
            if d is not None and r.name != NOTE:
                try:
                    ok = normalize_value(r.name, d.value_type, d.allowed, prom.value) == prom.value
                except InvalidInput:
                    ok = False
                if not ok:
                    raise PlanError(
                        f"{bad} the value promoted from {prom.event_id} is not a {d.value_type or 'string'}"
                    )
    ids = {e.id for e in plan.statements}
    for e in plan.statements:
        if e.caused_by and e.caused_by not in ids:
            raise PlanError(f"{bad} statement {e.id} follows {e.caused_by}, which is not a statement of the plan")
        if plan.kind != "confirm":
            raise PlanError(f"{bad} a {plan.kind} plan writes no statements")
        if e.source != "operator" or e.subject.startswith("recall:") or e.predicate in RESERVED_PREDICATES:
            raise PlanError(f"{bad} statement {e.id} is not an operator statement about an ordinary subject")
        if e.observed_at > horizon or e.observed_at < 0:
            raise PlanError(f"{bad} statement {e.id} is dated {e.observed_at}, outside any time it could be made")
        p = after.canonical(e.predicate)
        d = after.definition(p)
        if d is None:
            raise PlanError(f"{bad} statement {e.id} names {e.predicate!r}, which is not registered")
        if e.value is not None:
            try:
                ok = normalize_value(p, d.value_type, d.allowed, e.value) == e.value
            except InvalidInput:
                ok = False
            if not ok:
                raise PlanError(f"{bad} statement {e.id} holds {e.value!r}, not a {d.value_type or 'string'} of {p}")


# --- apply runs the plan again (docs/governance.md, "Plan file") ---------------------------
# A plan file is sealed with an unkeyed hash, so anyone who can edit it can reseal it.
# ``apply`` runs each of its operations again, through the same Stager method the command
# that planned it used, against the current store and as its planner, and refuses the plan
# when what that produces differs from what the file holds. What cannot be re-derived (an
# operation no command plans) is refused.


def check_rederived(stager: Stager, plan: Plan) -> None:
    """Refuse ``plan`` unless its operations, run again now, produce exactly its events."""
    bad = f"plan {plan.id} cannot be applied:"
    try:
        records, statements = _rederive(stager, plan)
    except RecallError as err:
        raise PlanError(f"{bad} its operations cannot be made against this store now: {err.message}") from None
    mine = [replace(r, plan="") for r in plan.records]
    theirs = [replace(r, plan="") for r in records]
    for i, (a, b) in enumerate(zip(mine, theirs, strict=False)):
        if a != b:
            raise PlanError(
                f"{bad} its record {i + 1} ({a.op} {a.name or a.withdraws}) is not what its operation "
                "produces against this store now; plan it again"
            )
    if len(mine) != len(theirs):
        raise PlanError(f"{bad} it holds {len(mine)} record(s) where its operations produce {len(theirs)}")
    for e, f in zip(plan.statements, statements, strict=False):
        if e != f:
            raise PlanError(
                f"{bad} its statement {e.id} is not what its confirm produces against this store now; plan it again"
            )
    if len(plan.statements) != len(statements):
        raise PlanError(
            f"{bad} it holds {len(plan.statements)} statement(s) where its confirm produces {len(statements)}"
        )


def _rederive(stager: Stager, plan: Plan) -> tuple[Sequence[RegistryRecord], Sequence[Event]]:
    kind, recs = plan.kind, plan.records
    if kind == "confirm":
        return (), _rederive_confirm(stager, plan)
    if not recs:
        raise PlanError(f"a {kind} plan holds at least one record")
    reason = recs[0].reason
    if kind in ("redefine", "exclude"):
        return [x for r in recs for x in _rederive_redefine(stager, r)], ()
    if kind == "merge" and len(recs) == 1:
        return stager.merge(recs[0].name, recs[0].into, reason=reason).records, ()
    if kind == "split" and len(recs) == 1:
        return stager.split(recs[0].name, reason=reason).records, ()
    if kind == "define" and len(recs) == 1 and recs[0].definition is not None:
        d = recs[0].definition
        return stager.define(
            d.name,
            cardinality=d.cardinality,
            value_type=d.value_type,
            allowed=d.allowed,
            description=d.description,
            excludes=d.excludes,
            historical=d.historical,
            reason=reason,
        ).records, ()
    if kind == "promote" and recs[-1].op == "promote" and len(recs) <= 2:
        declared = recs[0].definition if len(recs) == 2 else None
        notes = {p.event_id: p.value for p in recs[-1].notes}
        return stager.promote(recs[-1].name, notes=notes, new_definition=declared, reason=reason).records, ()
    if kind == "registry-load":
        defs = {r.name: r.definition for r in recs if r.op == "declare" and r.definition is not None}
        opened = any(r.op == "vocabulary" and r.open for r in recs)
        tl = stager.memory.timeline()
        # the checks of a registry file, every declaration kept (one that changes nothing is
        # harmless), in the plan's order: declarations of different names are independent
        check_registry(dict(defs), where="registry files", known=tl.predicates().keys())
        found = [RegistryRecord(op="declare", name=n, definition=d, operator=stager.operator) for n, d in defs.items()]
        if opened and not tl.open_vocabulary:
            found.append(RegistryRecord(op="vocabulary", name="", open=True, operator=stager.operator))
        return stager.registry_records(found, plan.title, reason=reason).records, ()
    if kind == "revert" and len(recs) == 1:
        return revert(stager, recs[0].withdraws, reason=reason).records, ()
    raise PlanError(f"no command plans a {kind} of {len(recs)} {'/'.join(sorted({r.op for r in recs}))} record(s)")


def _rederive_redefine(stager: Stager, r: RegistryRecord) -> Sequence[RegistryRecord]:
    """The redefine record the command would make for the change ``r`` states."""
    new = r.definition
    old = stager.memory.timeline().definition(r.name)
    if r.op != "redefine" or new is None or old is None:
        raise PlanError(f"{r.op} {r.name} is not a redefine of a registered predicate")
    return stager.redefine(
        r.name,
        cardinality=new.cardinality,
        add_excludes=[x for x in new.excludes if x not in old.excludes],
        remove_excludes=[x for x in old.excludes if x not in new.excludes],
        historical=new.historical,
        allowed=new.allowed if old.value_type == "enum" else None,
        description=new.description,
        retroactive=r.retroactive,
        reason=r.reason,
    ).records


def _rederive_confirm(stager: Stager, plan: Plan) -> Sequence[Event]:
    """The statements a confirm of the same conflict, keeping the same predicate, makes at the plan's instant."""
    from .conflicts import confirm_evidence, confirm_plan, find_conflicts  # conflicts builds on the Stager

    if plan.records or not plan.statements:
        raise PlanError("a confirm plan holds one operator statement and its retractions, and no record")
    first = plan.statements[0]
    opening = confirm_evidence(stager.operator)
    if first.evidence != opening and not first.evidence.startswith(opening + ": "):
        raise PlanError(f"its statement does not say it was confirmed by its planner {stager.operator!r}")
    reason = first.evidence[len(opening) + 2 :]
    conflicts = [
        c
        for c in find_conflicts(stager.memory, first.subject, include_dismissed=True).conflicts
        if c.subject == first.subject and c.belief(first.predicate) is not None
    ]
    made: Sequence[Event] = ()
    for c in conflicts:
        made = confirm_plan(stager, c, first.predicate, reason, at=first.observed_at).statements
        if list(made) == list(plan.statements):
            break
    if not conflicts:
        raise PlanError(f"no open conflict of {first.subject!r} holds {first.predicate}")
    return made


def apply(memory: Memory, plan: Plan, operator: str = "") -> dict[str, Any]:
    """Append exactly the plan's events, and an ``applied`` record naming who applied it, in one transaction.

    Who is named (docs/governance.md, "Who planned, who applied"): the plan's records name
    its planner, as the plan file says (a plan file is not signed: that name is its
    word); the ``applied`` record names the operator running apply, which the store
    knows. The plan is first run again against the store now (``check_rederived``): a file
    edited and resealed by hand is refused, whoever it names."""
    events = plan.events()
    if events and len(memory.store.events_by_id([e.id for e in events])) == len({e.id for e in events}):
        raise PlanError(f"plan {plan.id} is already applied: every one of its events is in the log")
    applier = check_operator(operator) if operator else ""
    check_stale(memory, plan)
    check_plan(memory, plan)
    check_rederived(Stager(memory, plan.collection, plan.operator), plan)
    applier = applier or plan.operator
    tl = memory.timeline()
    at = max(memory.registry_instant(tl), plan.at + len(plan.records))
    applied = RegistryRecord(
        op="applied",
        name="",
        plan=plan.id,
        operator=applier,
        events=tuple(e.id for e in plan.statements),
    )
    position = memory.store.append([*events, applied.to_event(at)])
    out = {"applied": plan.id, "events": [e.id for e in events], "position": position, "applied_by": applier}
    if plan.operator != applier:
        out["planned_by"] = plan.operator
    return out


def records_of_plan(memory: Memory, plan_id: str) -> list[tuple[int, RegistryRecord]]:
    return [(r.at, r.record) for r in memory.timeline().log if r.record.plan == plan_id]


def _plan_names(tl: Timeline, records: Iterable[RegistryRecord], statements: Iterable[Event]) -> set[str]:
    """Every stored name a plan's records and statements bear on, under this timeline."""
    out: set[str] = set()
    for r in records:
        for n in (r.name, r.into, *(r.definition.excludes if r.definition else ())):
            if n:
                out.update(tl.stored_names(n))
                out.add(n)
        if r.op == "promote":
            out.update(tl.stored_names(NOTE))
    for e in statements:
        out.update(tl.stored_names(e.predicate))
        out.add(e.predicate)
    return out


def revert(stager: Stager, plan_id: str, reason: str = "") -> Plan:
    """A plan whose one ``withdraw`` record takes an applied plan back, records and statements.

    The timeline then reads as if the plan had never been applied (docs/governance.md,
    "Revert"); refused when the plan was reverted already or a later plan builds on it."""
    memory = stager.memory
    tl = memory.timeline()
    mine = [r for r in tl.log if r.record.plan == plan_id]
    if not mine:
        raise PlanError(f"no applied plan {plan_id!r} in this collection's registry log (see `registry log`)")
    by = tl.withdrawn(plan_id)
    if by:
        raise PlanError(f"plan {plan_id} was already reverted by plan {by}; there is nothing left to revert")
    if any(r.record.op == "withdraw" for r in mine):
        raise PlanError(f"plan {plan_id} is itself a revert; to bring the change back, plan it again")
    records = [r.record for r in mine if r.record.op not in ("applied",)]
    stmt_ids = [i for r in mine if r.record.op == "applied" for i in r.record.events]
    statements = memory.store.events_by_id(stmt_ids) if stmt_ids else []
    names = _plan_names(tl, records, statements)
    last = max(r.at for r in mine)
    for r in tl.log:
        if r.at <= last or not r.live or r.record.plan == plan_id:
            continue
        rec = r.record
        theirs: set[str] = set()
        if rec.op == "applied" and rec.events:
            theirs = {e.predicate for e in memory.store.events_by_id(list(rec.events))}
        elif rec.op == "withdraw":
            continue
        else:
            theirs = {n for n in (rec.name, rec.into, *(rec.definition.excludes if rec.definition else ())) if n}
        if theirs & names:
            who = f"plan {rec.plan}" if rec.plan else f"the automatic {rec.op} of {rec.name}"
            raise PlanError(
                f"cannot revert plan {plan_id}: {who} (applied later) builds on it ({', '.join(sorted(theirs & names))}); "
                f"revert {'that plan' if rec.plan else 'it'} first"
            )
    # a name the plan declared first, now holding events, cannot go back to not existing
    before = Timeline(records=[x for x in tl.log if x.record.plan != plan_id])
    counts = None
    for rec in records:
        if rec.definition is not None and not before.knows(rec.name):
            counts = counts if counts is not None else memory.store.predicate_counts()
            n = counts.get(rec.name, 0)
            if n:
                raise PlanError(
                    f"cannot revert plan {plan_id}: it declared {rec.name}, and {n} event(s) were stored under "
                    f"{rec.name} since; redefine it instead"
                )
    withdraw = RegistryRecord(op="withdraw", name="", withdraws=plan_id, events=tuple(e.id for e in statements))
    title = f"revert {plan_id}: withdraw its {len(records)} registry record(s)" + (
        f" and {len(statements)} operator statement(s)" if statements else ""
    )
    return stager.seal(
        "revert",
        title,
        [withdraw],
        names,
        reason=reason or f"revert of {plan_id}",
        details={
            "reverts": plan_id,
            "records": [r.to_json() for r in records],
            "statements": [e.to_json() for e in statements],
        },
    )
