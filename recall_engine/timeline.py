"""The registry timeline: the registry log folded into names and rules.

Two clocks, kept apart on purpose (docs/semantics.md §2, docs/registry.md "Two
clocks"): names (renames, merge, split, promote) and the correction rules
(excludes, historical) are read from the whole log as it stands at read time;
cardinality is read as of each event's instant unless a retroactive redefine
covers the whole history. Pure: no clock, no I/O.

A timeline built for an older fold version (``recall-fold-v4`` bundles, the Go
engine's v2/v3) reads excludes and historical as of each event's instant, as
those folds did (docs/fold.md "Fold versions").
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .records import FOLD_VERSION, Event, sha256
from .registry import NOTE_DEFINITION, Definition, Promotion, RegistryRecord, decode_record
from .text import NOTE

DEFINING = ("declare", "define", "redefine", "split")


@dataclass(frozen=True, slots=True)
class LoggedRecord:
    at: int
    event_id: str
    record: RegistryRecord
    ignored: bool = False  # a `define` of a name that already had a definition
    withdrawn_by: str = ""  # the revert plan whose `withdraw` record takes this record back

    @property
    def live(self) -> bool:
        return not self.ignored and not self.withdrawn_by


class Timeline:
    """Names and rules of one collection's registry, folded from its log."""

    def __init__(
        self,
        events: Iterable[Event] = (),
        records: Iterable[LoggedRecord] | None = None,
        *,
        fold_version: str = FOLD_VERSION,
    ) -> None:
        self.fold_version = fold_version
        # fold v5 on: excludes and historical as the registry stands at the read
        self.rules_at_read = fold_version == FOLD_VERSION
        if records is None:
            items = []
            seen: set[str] = set()
            # the value breaks ties: two records can share an id (ids lower-case the
            # record's JSON), and which one is read must not depend on input order
            for e in sorted(events, key=lambda e: (e.observed_at, e.id, str(e.value))):
                if e.id in seen:
                    continue
                seen.add(e.id)
                items.append(LoggedRecord(e.observed_at, e.id, decode_record(e)))
        else:
            items = sorted(records, key=lambda r: (r.at, r.event_id))
        withdrawn, self.withdrawn_events = _withdrawals([r.record for r in items])
        self._withdrawn_plans = withdrawn
        self.log: list[LoggedRecord] = []
        defined: set[str] = set()
        for r in items:
            rec = r.record
            by = withdrawn.get(rec.plan, "") if rec.plan else ""
            ignored = not by and rec.op == "define" and rec.name in defined
            if rec.op in DEFINING and not by:
                defined.add(rec.name)
            if ignored != r.ignored or by != r.withdrawn_by:
                r = LoggedRecord(r.at, r.event_id, rec, ignored, by)
            self.log.append(r)
        self._build()

    # --- construction -------------------------------------------------------

    def _build(self) -> None:
        # a withdrawn record counts for nothing: the registry reads as if its plan was never applied
        log = [r for r in self.log if not r.withdrawn_by]
        defs: dict[str, list[tuple[int, int, LoggedRecord]]] = {}
        last_def_index: dict[str, int] = {}
        for i, r in enumerate(log):
            if r.ignored or r.record.op not in DEFINING:
                continue
            defs.setdefault(r.record.name, []).append((r.at, i, r))
            last_def_index[r.record.name] = i

        # Renames: names listed as aliases in a predicate's latest definition,
        # unless that name has a definition of its own recorded later.
        renamed: dict[str, str] = {}
        for name in sorted(defs):
            latest_i, latest = defs[name][-1][1], defs[name][-1][2]
            assert latest.record.definition is not None
            for a in latest.record.definition.aliases:
                if last_def_index.get(a, -1) > latest_i or a in renamed:
                    continue
                renamed[a] = name

        # Merges, in log order; a definition of the name recorded after the merge
        # (a split, or a re-definition) ends it. The first effective merge wins.
        merged: dict[str, tuple[str, int]] = {}
        for i, r in enumerate(log):
            rec = r.record
            if rec.op != "merge":
                continue
            if last_def_index.get(rec.name, -1) > i or rec.name in renamed:
                continue
            if rec.name in merged:
                prev_i = merged[rec.name][1]
                if last_def_index.get(rec.name, -1) < prev_i:
                    continue
            merged[rec.name] = (rec.into, i)

        self._renamed = renamed
        self._merged = {k: v[0] for k, v in merged.items()}
        self._merge_index = {k: v[1] for k, v in merged.items()}
        self._canon: dict[str, str] = {}

        # Rule history per owner: its own definitions and those of its former names.
        owners: dict[str, list[tuple[int, int, LoggedRecord]]] = {}
        for name, items in defs.items():
            owner, seen = name, {name}
            while owner in renamed and renamed[owner] not in seen:  # a rename of a rename
                owner = renamed[owner]
                seen.add(owner)
            # a merged name keeps its own definitions (not its owner's), for the day it is split again
            owners.setdefault(owner, []).extend(items)
        self._rules: dict[str, tuple[list[int], list[Definition], int]] = {}
        for owner, items in owners.items():
            items.sort(key=lambda t: t[1])
            ats = [t[0] for t in items]
            ds = [_definition(t[2]) for t in items]
            last_retro = max((k for k, t in enumerate(items) if t[2].record.retroactive), default=-1)
            self._rules[owner] = (ats, ds, last_retro)
        # predicates whose cardinality is the same at every instant (it never changed, or a
        # retroactive definition covers the history and none after it changed it): the fold's
        # hot path skips the rule lookup
        self._fixed_multi: dict[str, bool] = {
            owner: ds[-1].cardinality == "multi"
            for owner, (_, ds, last_retro) in self._rules.items()
            if all(d.cardinality == ds[-1].cardinality for d in ds[max(last_retro, 0) :])
        }
        self._fixed_multi.setdefault(NOTE, True)

        # Predicates readable now: every defined name that is not renamed or merged away.
        self._predicates: dict[str, Definition] = {NOTE: NOTE_DEFINITION}
        for owner in self._rules:
            if owner in self._merged or owner in renamed:
                continue
            d = self._rules[owner][1][-1]
            self._predicates[owner] = d
        if NOTE in self._rules:
            self._predicates[NOTE] = self._rules[NOTE][1][-1]

        # Exclusions, resolved to canonical names: target -> predicates that exclude it,
        # by the readable predicates' latest definitions (a merged name's own rules do not
        # apply while it is merged); under an older fold, by any definition ever.
        self._excluders: dict[str, set[str]] = {}
        self._ever_excluders: dict[str, set[str]] = {}  # explain lists a rule that stopped excluding too
        for owner, (_, ds, _) in self._rules.items():
            q = self.canonical(owner)
            for d in ds:
                for x in d.excludes:
                    p = self.canonical(x)
                    if p != q:
                        self._ever_excluders.setdefault(p, set()).add(q)
        if self.rules_at_read:
            for q, d in self._predicates.items():
                for x in d.excludes:
                    p = self.canonical(x)
                    if p != q:
                        self._excluders.setdefault(p, set()).add(q)
        else:
            self._excluders = {p: set(qs) for p, qs in self._ever_excluders.items()}
        self._excluded: dict[str, set[str]] = {}
        for p, qs in self._excluders.items():
            for q in qs:
                self._excluded.setdefault(q, set()).add(p)

        # Promotions: the latest promote record naming a note decides where it reads.
        self._promoted: dict[str, tuple[str, Promotion, str]] = {}
        self._by_id: dict[str, LoggedRecord] = {r.event_id: r for r in self.log}
        for r in log:  # live records only: a withdrawn promote no longer moves its notes
            if r.record.op == "promote":
                for note in r.record.notes:
                    self._promoted[note.event_id] = (r.record.name, note, r.event_id)

        # Vocabulary mode: the latest vocabulary record decides (closed by default).
        self.open_vocabulary = False
        for r in log:
            if r.record.op == "vocabulary" and r.record.open is not None:
                self.open_vocabulary = r.record.open

        h = sha256()
        for r in self.log:
            h.update(r.event_id.encode())
            h.update(b"\n")
        self.digest = "sha256:" + h.hexdigest()

    # --- names --------------------------------------------------------------

    def canonical(self, name: str) -> str:
        """The predicate a name reads as now (through renames and merges)."""
        hit = self._canon.get(name)
        if hit is not None:
            return hit
        seen = {name}
        cur = name
        while True:
            nxt = self._renamed.get(cur) or self._merged.get(cur)
            if nxt is None or nxt in seen:
                break
            seen.add(nxt)
            cur = nxt
        self._canon[name] = cur
        return cur

    def stored_names(self, predicate: str) -> list[str]:
        """Every name whose events fold as this predicate, the predicate first."""
        p = self.canonical(predicate)
        others = sorted(n for n in set(self._renamed) | set(self._merged) if n != p and self.canonical(n) == p)
        return [p, *others]

    def is_merged(self, name: str) -> bool:
        return name in self._merged

    def merged_into(self, name: str) -> str | None:
        return self._merged.get(name)

    def merged_names(self) -> dict[str, str]:
        return dict(self._merged)

    def renamed_names(self) -> dict[str, str]:
        return dict(self._renamed)

    def knows(self, name: str) -> bool:
        return self.canonical(name) in self._predicates

    def predicates(self) -> dict[str, Definition]:
        """Readable predicates now, by canonical name, with their current definitions."""
        return dict(self._predicates)

    def definition(self, name: str) -> Definition | None:
        return self._predicates.get(self.canonical(name))

    def own_definition(self, name: str) -> Definition | None:
        """A name's own latest definition, even when it is merged away."""
        rules = self._rules.get(name)
        return rules[1][-1] if rules else None

    # --- rules --------------------------------------------------------------

    def rule(self, predicate: str, at: int) -> Definition | None:
        """The definition governing an event of this canonical predicate at an instant."""
        rules = self._rules.get(predicate)
        if rules is None:
            return NOTE_DEFINITION if predicate == NOTE else None
        ats, ds, last_retro = rules
        if len(ds) == 1:
            return ds[0]
        idx = max(bisect_right(ats, at) - 1, last_retro, 0)
        return ds[idx]

    def rules_history(self, predicate: str) -> list[tuple[int | None, dict[str, Any]]]:
        """The rules that decide how this canonical predicate's events fold, as a value to compare:
        (from instant, rules) in log order, the first from the start (a retroactive definition
        covers everything before it) and a definition that repeats the rules before it left out.
        Two timelines that give a predicate the same history, names and exclusions fold its pairs
        alike (what ``rule`` answers at every instant is the same)."""
        rules = self._rules.get(predicate)
        if rules is None:
            return [(None, NOTE_DEFINITION.rules())] if predicate == NOTE else []
        ats, ds, last_retro = rules
        start = max(last_retro, 0)
        out: list[tuple[int | None, dict[str, Any]]] = [(None, ds[start].rules())]
        for at, d in zip(ats[start + 1 :], ds[start + 1 :], strict=True):
            if d.rules() != out[-1][1]:
                out.append((at, d.rules()))
        return out

    def fixed_multi(self, predicate: str) -> bool | None:
        """True or False when the predicate's cardinality is the same at every instant; None when not (or unknown)."""
        return self._fixed_multi.get(predicate)

    def multi_at(self, predicate: str, at: int) -> bool:
        fixed = self._fixed_multi.get(predicate)
        if fixed is not None:
            return fixed
        d = self.rule(predicate, at)
        return d is not None and d.cardinality == "multi"

    def _latest(self, predicate: str) -> Definition | None:
        rules = self._rules.get(predicate)
        if rules is None:
            return NOTE_DEFINITION if predicate == NOTE else None
        return rules[1][-1]

    def historical_at(self, predicate: str, at: int) -> bool:
        """Is the predicate historical (never withdrawn by an exclusion or a replaces)?

        Read as the registry stands now; ``at`` matters only under an older fold version.
        """
        d = self._latest(predicate) if self.rules_at_read else self.rule(predicate, at)
        return d is not None and d.historical

    def excluders(self, predicate: str) -> set[str]:
        """Canonical predicates that exclude this one (now; under an older fold, ever)."""
        return set(self._excluders.get(predicate, ()))

    def excluded_by(self, predicate: str) -> set[str]:
        """Canonical predicates this one excludes (now; under an older fold, ever)."""
        return set(self._excluded.get(predicate, ()))

    def excludes_at(self, excluder: str, predicate: str, at: int) -> bool:
        """Does an assertion of ``excluder`` withdraw the same value from ``predicate``?

        Read as the registry stands now, so a rule added later covers the old log;
        ``at`` (the excluding event's instant) matters only under an older fold version.
        """
        if self.rules_at_read:
            return excluder in self._excluders.get(predicate, ())
        d = self.rule(excluder, at)
        return d is not None and any(self.canonical(x) == predicate for x in d.excludes)

    # --- promotions ---------------------------------------------------------

    def promotion(self, note_event_id: str) -> tuple[str, Promotion, str] | None:
        """Where a note event reads now: (canonical predicate, promotion, record id), or None."""
        hit = self._promoted.get(note_event_id)
        if hit is None:
            return None
        target = self.canonical(hit[0])
        if target == NOTE:
            return None  # promoted back: a note again
        return (target, hit[1], hit[2])

    def promotions_into(self, predicate: str, subject: str | None = None) -> list[Promotion]:
        p = self.canonical(predicate)
        out = []
        for _eid, (target, prom, _) in self._promoted.items():
            if target != NOTE and self.canonical(target) == p and (subject is None or prom.subject == subject):
                out.append(prom)
        return out

    def record(self, event_id: str) -> LoggedRecord | None:
        """The registry record logged with this event id."""
        return self._by_id.get(event_id)

    def promoted_note_ids(self) -> set[str]:
        return {eid for eid, (t, _, _) in self._promoted.items() if self.canonical(t) != NOTE}

    # --- explain ------------------------------------------------------------

    def governing(self, predicate: str) -> list[LoggedRecord]:
        """Registry records that decide answers of this predicate, oldest first."""
        p = self.canonical(predicate)
        names = set(self.stored_names(p))
        excluders = set(self._ever_excluders.get(p, ()))
        out = []
        merged_in: set[str] = set()  # names merged into p at some point
        excluding: dict[str, bool] = {}  # excluder name -> did its latest definition exclude p
        for r in self.log:
            rec = r.record
            if not r.live:
                continue
            if rec.op == "merge" and self.canonical(rec.into) == p:
                merged_in.add(rec.name)
            if rec.name in names or (rec.op == "merge" and self.canonical(rec.into) == p):
                out.append(r)
            elif rec.op in DEFINING and rec.name in merged_in:
                out.append(r)  # a split (or re-definition) that ended a merge into p
            elif rec.op == "promote" and self.canonical(rec.name) == p:
                out.append(r)
            elif rec.definition is not None and self.canonical(rec.name) in excluders:
                # a definition that adds, keeps or removes an exclusion of p decides p's answers
                now_excl = any(self.canonical(x) == p for x in rec.definition.excludes)
                if now_excl or excluding.get(rec.name, False):
                    out.append(r)
                excluding[rec.name] = now_excl
        return out

    def withdrawn(self, plan_id: str) -> str:
        """The revert plan that withdrew this plan, or "" while it counts."""
        return self._withdrawn_plans.get(plan_id, "")

    def names_digest(self, names: Iterable[str]) -> str:
        """A digest of the live records bearing on these names: what a plan that read them depends on.

        A record bears on a name when it names it (as the predicate, the merge target, an
        excluded or former name) or promotes a note into it; records of other names, and
        records about no name, leave it unchanged (docs/governance.md, "Staleness")."""
        wanted = set(names)
        h = sha256()
        for r in self.log:
            if r.live and wanted & _record_names(r.record):
                h.update(r.event_id.encode())
                h.update(b"\n")
        return "sha256:" + h.hexdigest()

    def with_records(self, extra: Iterable[LoggedRecord]) -> Timeline:
        """The timeline as it would be with these records appended (for previews)."""
        return Timeline(records=[*self.log, *extra], fold_version=self.fold_version)


def _definition(r: LoggedRecord) -> Definition:
    d = r.record.definition
    assert d is not None, "a defining record carries its definition"
    return d


def _withdrawals(records: list[RegistryRecord]) -> tuple[dict[str, str], frozenset[str]]:
    """Plans withdrawn by a live `withdraw` record (plan id -> revert plan id), and their statements.

    Newest first: a withdrawal can only name an earlier plan, so by the time one is
    reached, whether its own plan was withdrawn later is already known."""
    withdrawn: dict[str, str] = {}
    events: set[str] = set()
    for rec in reversed(records):
        if rec.op != "withdraw" or rec.plan in withdrawn or rec.withdraws in withdrawn:
            continue
        withdrawn[rec.withdraws] = rec.plan
        events.update(rec.events)
    return withdrawn, frozenset(events)


def _record_names(rec: RegistryRecord) -> set[str]:
    out = {rec.name, rec.into} - {""}
    if rec.definition is not None:
        out.update(rec.definition.excludes)
        out.update(rec.definition.aliases)
    return out
