"""The open-vocabulary inbox: names agents invented, automatic matches, near-duplicates.

- ``inbox``: predicates defined by first use (``define`` records written by a write)
  and names matched automatically into another predicate (``merge`` records with
  ``auto``), each with its score, when, and the first statement filed under it (the
  write that caused it). An entry is *open* until an operator acts on the name (any
  later operator record naming it: a redefine, a merge, a split, a declaration).
- ``suggest``: clusters of near-duplicate readable predicates. Pairs of predicates
  of one storage class are scored by the engine's one matching rule
  (``recall_engine.matching``: the sentence model, the antonym guard, descriptions
  as a veto; docs/review-queues.md); pairs
  at or above the threshold (default: the engine's matching threshold) are joined
  into clusters, and pairs an operator marked "never merge" are left out. Each
  cluster suggests one merge direction: into the declared name (a registry file said
  so), else the older one, else the more used one.
- ``never``: a ``review_decision`` so a dismissed pair never returns.
- merge and split are ordinary governance plans (``Stager.merge`` / ``Stager.split``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from recall_engine import matching
from recall_engine.errors import InvalidInput, NotFound, PlanError
from recall_engine.instants import format_rfc3339
from recall_engine.memory import Memory
from recall_engine.records import Event
from recall_engine.registry import Definition, RegistryRecord
from recall_engine.text import NOTE
from recall_engine.timeline import DEFINING, LoggedRecord, Timeline

from . import review
from .governance import Stager
from .plans import Plan

FIRST_WRITE_SCAN = 20_000  # events read per name to find the write that caused a record


def pair_key(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


def cluster_id(names: Iterable[str]) -> str:
    raw = "\x00".join(sorted(names))
    return "v-" + hashlib.sha256(raw.encode()).hexdigest()[:12]


def pair_score(a: Definition, b: Definition) -> float:
    """Similarity of two definitions for a merge suggestion, in [0, 1] (``matching.pair_score``)."""
    return matching.pair_score(a, b)


# --- inbox --------------------------------------------------------------------------


def _first_write(memory: Memory, name: str) -> Event | None:
    """The first statement filed under a stored name: the write that defined or matched it.

    The write that causes an automatic record is the first one naming it, so the
    earliest assertion under the name is taken (ties by id)."""
    best: Event | None = None
    for i, e in enumerate(memory.store.predicate_events([name])):
        if i >= FIRST_WRITE_SCAN:
            break
        if e.retraction:
            continue
        if best is None or (e.observed_at, e.id) < (best.observed_at, best.id):
            best = e
    return best


def _reviewed_after(tl: Timeline, name: str, index: int) -> LoggedRecord | None:
    """A later operator record about this name (an operator acted on it)."""
    for r in tl.log[index + 1 :]:
        rec = r.record
        if rec.auto or r.ignored:
            continue
        if rec.name == name:
            return r
    return None


@dataclass
class InboxEntry:
    name: str
    origin: str  # "defined" (first use) or "matched" (merged automatically)
    at: int
    event_id: str
    into: str = ""
    score: float | None = None
    definition: Definition | None = None
    status: str = "open"  # open | reviewed | merged | split
    reviewed_by: dict[str, Any] | None = None
    events: int = 0
    first_write: Event | None = None
    actions: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "origin": self.origin,
            "at": format_rfc3339(self.at),
            "event_id": self.event_id,
            "status": self.status,
            "events": self.events,
        }
        if self.into:
            out["into"] = self.into
        if self.score is not None:
            out["score"] = round(self.score, 4)
        if self.definition is not None:
            d = self.definition
            out["cardinality"] = d.cardinality
            out["value_type"] = d.value_type or "string"
            out["description"] = d.description
        if self.reviewed_by:
            out["reviewed_by"] = self.reviewed_by
        if self.first_write is not None:
            e = self.first_write
            out["caused_by"] = {
                "event_id": e.id,
                "subject": e.subject,
                "predicate": e.predicate,
                "value": e.value,
                "observed_at": format_rfc3339(e.observed_at),
                "source": e.source,
            }
        out["actions"] = self.actions
        return out


def inbox(memory: Memory, *, include_reviewed: bool = False) -> list[InboxEntry]:
    """Names defined by first use and names matched automatically, newest first."""
    tl = memory.timeline()
    counts = memory.store.predicate_counts()
    out: list[InboxEntry] = []
    for i, r in enumerate(tl.log):
        rec = r.record
        if not rec.auto or r.ignored or rec.op not in ("define", "merge"):
            continue
        entry = InboxEntry(
            rec.name,
            "defined" if rec.op == "define" else "matched",
            r.at,
            r.event_id,
            into=rec.into,
            score=rec.score,
            definition=rec.definition,
        )
        later = _reviewed_after(tl, rec.name, i)
        if rec.op == "merge":
            if tl.merged_into(rec.name) != rec.into:
                entry.status = "split" if later is not None and later.record.op == "split" else "reviewed"
            elif later is not None:
                entry.status = "reviewed"
            entry.actions = [f"recall-admin vocab split {rec.name}", f"recall-admin vocab never {rec.name} {rec.into}"]
        else:
            target = tl.merged_into(rec.name)
            if target is not None:
                entry.status = "merged"
                entry.into = tl.canonical(rec.name)
            elif later is not None:
                entry.status = "reviewed"
            entry.actions = ["recall-admin vocab suggest", f"recall-admin registry show {rec.name}"]
        if later is not None:
            entry.reviewed_by = {
                "op": later.record.op,
                "at": format_rfc3339(later.at),
                "operator": later.record.operator,
                "plan": later.record.plan,
            }
        entry.events = counts.get(rec.name, 0)
        if entry.status == "open" or include_reviewed:
            out.append(entry)
    for e in out:
        e.first_write = _first_write(memory, e.name)
    out.sort(key=lambda e: (-e.at, e.name))
    return out


# --- never merge ----------------------------------------------------------------------


def never_pairs(memory: Memory) -> set[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    for d in review.decisions(memory):
        if d.kind == review.NEVER_MERGE:
            names = d.body.get("names")
            if isinstance(names, list) and len(names) == 2 and all(isinstance(n, str) for n in names):
                out.add(pair_key(names[0], names[1]))
    return out


def never(memory: Memory, pairs: Sequence[tuple[str, str]], operator: str, reason: str = "") -> list[str]:
    """Record that each pair of names must never be suggested for a merge."""
    known = never_pairs(memory)
    bodies = []
    for a, b in pairs:
        k = pair_key(a, b)
        if k in known or a == b:
            continue
        known.add(k)
        bodies.append({"kind": review.NEVER_MERGE, "names": list(k), "reason": reason, "operator": operator})
    return [e.id for e in review.record(memory, bodies)]


# --- suggestions --------------------------------------------------------------------


@dataclass
class Cluster:
    id: str
    names: list[str]
    pairs: list[tuple[str, str, float]]
    into: str
    reason: str
    cardinality_differs: bool = False
    threshold: float | None = None  # the --threshold it was found at, when not the default

    @property
    def score(self) -> float:
        return max(s for _, _, s in self.pairs)

    @property
    def merges(self) -> list[str]:
        return [n for n in self.names if n != self.into]

    def commands(self) -> list[str]:
        return [f"recall-admin merge {n} {self.into}" for n in self.merges]

    def _at(self) -> str:
        # a printed id must work in the command it names: that command finds the cluster
        # again at the same threshold (docs/review-queues.md)
        return "" if self.threshold is None else f" --threshold {self.threshold:g}"

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "names": self.names,
            "score": round(self.score, 4),
            "pairs": [{"names": [a, b], "score": round(s, 4)} for a, b, s in self.pairs],
            "suggestion": {
                "into": self.into,
                "merge": self.merges,
                "reason": self.reason,
                "commands": self.commands(),
                "stage": f"recall-admin vocab merge {self.id}{self._at()}",
                "never": f"recall-admin vocab never {self.id}{self._at()}",
                **(
                    {"risk": "cardinality differs: the merged history folds under the target's rules"}
                    if self.cardinality_differs
                    else {}
                ),
            },
        }


def _facts(tl: Timeline, counts: dict[str, int]) -> dict[str, tuple[bool, int, int]]:
    """name -> (declared, first definition instant, events under every stored name)."""
    first: dict[str, tuple[str, int]] = {}
    for r in tl.log:
        rec = r.record
        if r.ignored or rec.op not in DEFINING or rec.name in first:
            continue
        first[rec.name] = (rec.op, r.at)
    out = {}
    for n in tl.predicates():
        op, at = first.get(n, ("", 0))
        out[n] = (op == "declare", at, sum(counts.get(x, 0) for x in tl.stored_names(n)))
    return out


def direction(names: Sequence[str], facts: dict[str, tuple[bool, int, int]]) -> tuple[str, str]:
    """The name to merge into: declared, else older, else more used (then by name)."""

    def rank(n: str) -> tuple:
        declared, at, used = facts.get(n, (False, 0, 0))
        return (0 if declared else 1, at, -used, n)

    ordered = sorted(names, key=rank)
    best, second = ordered[0], ordered[1]
    db, ds = facts.get(best, (False, 0, 0)), facts.get(second, (False, 0, 0))
    if db[0] and not ds[0]:
        why = f"{best} is declared in a registry file; the others were defined by agents"
    elif db[1] != ds[1]:
        why = f"{best} is the older name"
    elif db[2] != ds[2]:
        why = f"{best} is the more used name ({db[2]} events)"
    else:
        why = f"{best} comes first by name"
    return best, why


def merge_direction(memory: Memory, names: Sequence[str]) -> tuple[str, str]:
    """The name a merge of ``names`` goes into, and why: the rule ``suggest`` follows (lint findings too)."""
    return direction(names, _facts(memory.timeline(), memory.store.predicate_counts()))


def effective_threshold(memory: Memory, threshold: float | None = None) -> float:
    """The similarity suggestions are found at: ``threshold`` (from 0 to 1), else the
    engine's matching threshold. A negative one turns matching on write off; review still
    looks for near-duplicates, at the vocabulary's default as `registry lint` does (at -1
    every pair of names was one cluster)."""
    if threshold is None:
        thr = memory.match_threshold
        return thr if thr >= 0 else matching.DEFAULT_THRESHOLD
    if not 0 <= threshold <= 1:  # NaN too
        raise InvalidInput(f"--threshold takes a similarity from 0 to 1, got {threshold:g}")
    return threshold


def suggest(memory: Memory, threshold: float | None = None, *, include_never: bool = False) -> list[Cluster]:
    """Clusters of near-duplicate predicates, each with its suggested merge, best first."""
    tl = memory.timeline()
    default = effective_threshold(memory)
    thr = effective_threshold(memory, threshold)
    defs = {n: d for n, d in tl.predicates().items() if n != NOTE}
    banned = set() if include_never else never_pairs(memory)
    edges = matching.near_duplicates(defs, thr, skip=banned)
    if not edges:
        return []
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.get(x, x) != x:
            x = parent[x]
        return x

    for a, b, _ in edges:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    groups: dict[str, list[str]] = {}
    for n in sorted({x for e in edges for x in e[:2]}):
        groups.setdefault(find(n), []).append(n)
    facts = _facts(tl, memory.store.predicate_counts())
    out = []
    by_root: dict[str, list[tuple[str, str, float]]] = {}
    for e in edges:  # each edge to its cluster once (thousands of edges, hundreds of clusters)
        by_root.setdefault(find(e[0]), []).append(e)
    for root, names in groups.items():
        pairs = by_root[root]
        into, why = direction(names, facts)
        cards = {defs[n].cardinality for n in names}
        at = None if thr == default else thr
        out.append(Cluster(cluster_id(names), names, pairs, into, why, len(cards) > 1, at))
    out.sort(key=lambda c: (-c.score, c.names))
    return out


def _not_found(ident: str, threshold: float | None, what: str) -> NotFound:
    at = "" if threshold is None else f" at --threshold {threshold:g}"
    return NotFound(f"no {what} {ident!r}{at} (ids come from `vocab suggest`, with the same --threshold)")


def find_cluster(memory: Memory, ident: str, threshold: float | None = None) -> Cluster:
    ident = (ident or "").strip()
    for c in suggest(memory, threshold, include_never=False):
        if c.id == ident:
            return c
    raise _not_found(ident, threshold, "open suggestion")


def merge_plan(stager: Stager, cluster: Cluster, into: str | None = None, reason: str = "") -> Plan:
    """Stage the cluster's merge (or merges, for three names or more) as one plan."""
    memory = stager.memory
    tl = memory.timeline()
    target = cluster.into if into is None else memory.resolve(into, tl)
    if target not in cluster.names:
        raise PlanError(f"{into!r} is not in this cluster: choose one of {', '.join(cluster.names)}")
    others = [n for n in cluster.names if n != target]
    if len(others) == 1:
        return stager.merge(others[0], target, reason=reason)
    records: list[RegistryRecord] = []
    for n in others:
        records.extend(stager.merge(n, target, reason=reason).records)
    return stager.seal(
        "merge",
        f"merge {', '.join(others)} into {target}",
        records,
        [*others, target],
        reason=reason,
        details={"cluster": cluster.id, "into": target},
    )


def resolve_pairs(
    memory: Memory, target: str, other: str | None, threshold: float | None = None
) -> list[tuple[str, str]]:
    """``vocab never`` arguments: a cluster id (found at ``threshold``), ``A B``, or ``A,B``."""
    target = (target or "").strip()
    if other is None and target.startswith("v-"):
        for c in suggest(memory, threshold, include_never=True):
            if c.id == target:
                return [(a, b) for a, b, _ in c.pairs]
        raise _not_found(target, threshold, "suggestion")
    if other is None:
        for sep in (",", "+", "/"):
            if sep in target:
                a, _, b = target.partition(sep)
                target, other = a.strip(), b.strip()
                break
    if not other:
        raise PlanError("vocab never takes a suggestion id (v-...) or two predicate names")
    tl = memory.timeline()
    a, b = memory.resolve(target, tl), memory.resolve(other, tl)
    if a == b:
        raise PlanError(f"{target} and {other} already read as one predicate ({a})")
    return [(a, b)]
