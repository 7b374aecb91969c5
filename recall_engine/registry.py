"""Predicate definitions, whole-registry validation, and registry log records.

A registry never changes in place: every change is a record filed as an event
about ``recall:registry`` (docs/semantics.md §2). This module owns the record
format; ``timeline`` folds the records into names and rules.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .errors import InvalidInput, RegistryError
from .instants import check_instant
from .records import REGISTRY_PREDICATE, REGISTRY_SUBJECT, Event, make_event
from .text import NOTE, PREDICATE_RE, RESERVED_PREDICATES, simple_lower, text_problem
from .values import STORAGE_CLASS, VALUE_TYPES

CARDINALITIES = ("single", "multi")
NOTE_DESCRIPTION = "A statement worth keeping that no other predicate fits, in the words it was stated"


@dataclass(frozen=True, slots=True)
class Definition:
    name: str
    cardinality: str = "single"
    value_type: str = "string"
    description: str = ""
    allowed: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()
    historical: bool = False

    @property
    def storage_class(self) -> str:
        return STORAGE_CLASS.get(self.value_type, "string")

    @property
    def multi(self) -> bool:
        return self.cardinality == "multi"

    def rules(self) -> dict[str, Any]:
        """The fields that change answers (and so what a registry digest covers)."""
        return {
            "cardinality": self.cardinality,
            "value_type": self.value_type,
            "allowed": list(self.allowed),
            "excludes": sorted(self.excludes),
            "historical": self.historical,
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "cardinality": self.cardinality,
            "value_type": self.value_type,
            "description": self.description,
            "allowed": list(self.allowed),
            "aliases": list(self.aliases),
            "excludes": list(self.excludes),
            "historical": self.historical,
        }


NOTE_DEFINITION = Definition(NOTE, "multi", "string", NOTE_DESCRIPTION)


def check_definition(d: Definition, where: str = "predicate registry") -> None:
    """Rules that one definition must satisfy on its own."""
    n = d.name
    if not isinstance(n, str) or not PREDICATE_RE.match(n) or len(n.encode()) > 64:
        raise RegistryError(f"{where}: {n!r} is not snake_case")
    if n in RESERVED_PREDICATES:
        raise RegistryError(f"{where}: {n!r} is reserved for the engine's own records")
    if d.cardinality not in CARDINALITIES:
        raise RegistryError(f"{where}: {n!r} has cardinality {d.cardinality!r}, want single or multi")
    if d.value_type not in VALUE_TYPES and d.value_type != "":
        raise RegistryError(
            f"{where}: {n!r} has value_type {d.value_type!r}, want string, number, boolean, enum, date, or ref"
        )
    if d.value_type == "enum":
        if not d.allowed:
            raise RegistryError(f"{where}: {n!r} is an enum and must list its allowed values")
    elif d.allowed:
        raise RegistryError(f"{where}: {n!r} lists allowed values but has value_type {d.value_type!r}, want enum")
    seen: set[str] = set()
    for a in d.allowed:
        if not isinstance(a, str) or not a or a != a.strip():
            raise RegistryError(f"{where}: {n!r} has an allowed value that is empty or padded with spaces")
        low = simple_lower(a)
        if low in seen:
            raise RegistryError(f"{where}: {n!r} lists allowed value {a!r} twice")
        seen.add(low)
    for a in d.aliases:
        if not isinstance(a, str) or not PREDICATE_RE.match(a) or a in RESERVED_PREDICATES or a == NOTE:
            raise RegistryError(f"{where}: {n!r} has alias {a!r}, which is not a usable predicate name")
    for x in d.excludes:
        if not isinstance(x, str) or not PREDICATE_RE.match(x):
            raise RegistryError(f"{where}: {n!r} excludes {x!r}, which is not a predicate name")
        if x == n:
            raise RegistryError(f"{where}: {n!r} cannot exclude itself")
    for field, text in (("description", d.description), *(("value", a) for a in d.allowed)):
        problem = text_problem(text, field) if isinstance(text, str) else None
        if problem is not None:
            what = "a description" if field == "description" else "an allowed value"
            raise RegistryError(f"{where}: {n!r} has {what} {'holding ' if 'NUL' in problem else ''}{problem}")
    if d.historical and d.cardinality != "multi":
        raise RegistryError(f"{where}: {n!r} is historical and must be multi-valued (things that happened accumulate)")
    if n == NOTE and (d.cardinality != "multi" or d.value_type not in ("", "string") or d.historical or d.excludes):
        raise RegistryError(
            f'{where}: "note" is reserved for statements no other predicate fits and must be multi-valued string'
        )


def check_registry(
    defs: Mapping[str, Definition], where: str = "predicate registry", known: Iterable[str] = ()
) -> None:
    """Rules across definitions: aliases unique, excludes name known predicates."""
    claimed: dict[str, str] = {}
    for name in sorted(defs):
        d = defs[name]
        check_definition(d, where)
        for a in d.aliases:
            if a in defs:
                raise RegistryError(
                    f"{where}: {a!r} is both a predicate and an alias of {name!r}; remove the old entry to rename it"
                )
            if a in claimed:
                raise RegistryError(f"{where}: alias {a!r} is claimed by both {claimed[a]!r} and {name!r}")
            claimed[a] = name
    names = set(defs) | set(claimed) | set(known)
    for name in sorted(defs):
        for x in defs[name].excludes:
            if x not in names:
                raise RegistryError(f"{where}: {name!r} excludes {x!r}, which is not a registered predicate")


# --- registry log records ---------------------------------------------------

OPS = ("declare", "define", "redefine", "merge", "split", "promote", "vocabulary", "applied", "withdraw")
# Records about plans rather than names (docs/governance.md, "Revert"): `applied` says who
# applied a plan and which operator statements it wrote; `withdraw` takes an applied plan's
# records and statements out of the timeline, as if the plan had never been applied.
PLAN_OPS = ("applied", "withdraw")


@dataclass(frozen=True, slots=True)
class Promotion:
    """One note event read as ``predicate = value`` at the note's own instant."""

    event_id: str
    subject: str
    value: Any

    def to_json(self) -> dict[str, Any]:
        return {"event_id": self.event_id, "subject": self.subject, "value": self.value}


@dataclass(frozen=True, slots=True)
class RegistryRecord:
    op: str
    name: str
    definition: Definition | None = None  # declare, define, redefine, split
    into: str = ""  # merge
    retroactive: bool = False  # redefine
    notes: tuple[Promotion, ...] = ()  # promote
    operator: str = ""
    reason: str = ""
    plan: str = ""
    score: float | None = None  # an automatic match: its similarity
    auto: bool = False  # written by a write under an open vocabulary, not by an operator
    open: bool | None = None  # vocabulary: whether writes may define new predicates
    withdraws: str = ""  # withdraw: the id of the applied plan it takes back
    events: tuple[str, ...] = ()  # applied, withdraw: the ids of the plan's operator statements

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"op": self.op, "name": self.name}
        if self.definition is not None:
            d = self.definition.to_json()
            d.pop("name")
            out["definition"] = d
        if self.into:
            out["into"] = self.into
        if self.retroactive:
            out["retroactive"] = True
        if self.notes:
            out["notes"] = [p.to_json() for p in self.notes]
        if self.operator:
            out["operator"] = self.operator
        if self.reason:
            out["reason"] = self.reason
        if self.plan:
            out["plan"] = self.plan
        if self.score is not None:
            out["score"] = round(self.score, 6)
        if self.auto:
            out["auto"] = True
        if self.open is not None:
            out["open"] = self.open
        if self.withdraws:
            out["withdraws"] = self.withdraws
        if self.op in PLAN_OPS:
            out["events"] = list(self.events)
        return out

    def encode(self) -> str:
        return json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    def to_event(self, at: int, source: str = "operator") -> Event:
        """The record as a registry event at ``at``; InvalidInput for an instant or a field out of bounds."""
        check_instant(at, "registry record instant")
        for field in ("operator", "reason"):
            problem = text_problem(getattr(self, field), field)
            if problem is not None:
                raise InvalidInput(f"registry record {field} must not be {problem}".replace("be a NUL", "hold a NUL"))
        return make_event(REGISTRY_SUBJECT, REGISTRY_PREDICATE, self.encode(), at, source=source)


def _definition_from(name: str, d: Mapping[str, Any], where: str) -> Definition:
    known = {"cardinality", "value_type", "description", "allowed", "aliases", "excludes", "historical"}
    extra = set(d) - known
    if extra:
        raise RegistryError(f"{where}: unknown field {sorted(extra)[0]!r}")

    def strs(key: str) -> tuple[str, ...]:
        v = d.get(key) or []
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise RegistryError(f"{where}: {key} must be a list of strings")
        return tuple(v)

    hist = d.get("historical", False)
    if not isinstance(hist, bool):
        raise RegistryError(f"{where}: historical must be true or false")
    desc = d.get("description", "")
    if not isinstance(desc, str):
        raise RegistryError(f"{where}: description must be text")
    out = Definition(
        name=name,
        cardinality=d.get("cardinality", ""),
        value_type=d.get("value_type", "") if d.get("value_type", "") is not None else "",
        description=desc,
        allowed=strs("allowed"),
        aliases=strs("aliases"),
        excludes=strs("excludes"),
        historical=hist,
    )
    check_definition(out, where)
    return out


def decode_record(e: Event) -> RegistryRecord:
    """Decode a registry event; both our records and the Go engine's are read."""
    where = f"registry event {e.id!r}"
    if e.subject != REGISTRY_SUBJECT or e.predicate != REGISTRY_PREDICATE or e.retraction:
        raise RegistryError(f"{where} is not a registry record")
    if not isinstance(e.value, str):
        raise RegistryError(f"{where} does not hold a record")
    try:
        raw = json.loads(e.value)
    except ValueError:
        raise RegistryError(f"{where} does not hold valid JSON") from None
    return record_from_json(raw, where)


def record_from_json(raw: object, where: str = "registry record") -> RegistryRecord:
    """Decode one record from its JSON object (ours, with ``op``, or the Go engine's)."""
    if not isinstance(raw, dict):
        raise RegistryError(f"{where} does not hold a record")
    name = raw.get("name")
    if raw.get("op") in PLAN_OPS:
        return _decode_plan_record(raw, where)
    if raw.get("op") == "vocabulary":
        if set(raw) - {"op", "name", "open", "operator", "reason", "plan"} or not isinstance(raw.get("open"), bool):
            raise RegistryError(f"{where}: a vocabulary record holds only open: true or false")
        for key in ("operator", "reason", "plan"):
            if not isinstance(raw.get(key, ""), str):
                raise RegistryError(f"{where}: {key} must be text")
        return RegistryRecord(
            op="vocabulary",
            name="",
            open=raw["open"],
            operator=raw.get("operator", ""),
            reason=raw.get("reason", ""),
            plan=raw.get("plan", ""),
        )
    if not isinstance(name, str) or not PREDICATE_RE.match(name) or name in RESERVED_PREDICATES:
        raise RegistryError(f"{where} names no usable predicate")
    if "op" not in raw:
        return _decode_go_record(raw, name, where)
    op = raw["op"]
    if op not in OPS:
        raise RegistryError(f"{where} has unknown op {op!r}")
    known = {
        "op",
        "name",
        "definition",
        "into",
        "retroactive",
        "notes",
        "operator",
        "reason",
        "plan",
        "score",
        "auto",
        "open",
    }
    extra = set(raw) - known
    if extra:
        raise RegistryError(f"{where}: unknown field {sorted(extra)[0]!r}")
    definition = None
    if op in ("declare", "define", "redefine", "split"):
        d = raw.get("definition")
        if not isinstance(d, dict):
            raise RegistryError(f"{where}: {op} needs a definition")
        definition = _definition_from(name, d, where)
    into = raw.get("into", "")
    if op == "merge":
        if not isinstance(into, str) or not PREDICATE_RE.match(into) or into == name or NOTE in (name, into):
            raise RegistryError(f"{where}: cannot merge {name!r} into {into!r}")
    notes: tuple[Promotion, ...] = ()
    if op == "promote":
        items = raw.get("notes")
        if not isinstance(items, list) or not items:
            raise RegistryError(f"{where}: promote needs a list of notes")
        ps = []
        for it in items:
            if (
                not isinstance(it, dict)
                or set(it) != {"event_id", "subject", "value"}
                or not isinstance(it["event_id"], str)
                or not isinstance(it["subject"], str)
                or it["value"] is None
                or isinstance(it["value"], (list, dict))
            ):
                raise RegistryError(f"{where}: a promoted note needs event_id, subject and value")
            ps.append(Promotion(it["event_id"], it["subject"], it["value"]))
        notes = tuple(ps)
    for key in ("operator", "reason", "plan"):
        if not isinstance(raw.get(key, ""), str):
            raise RegistryError(f"{where}: {key} must be text")
    score = raw.get("score")
    if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))):
        raise RegistryError(f"{where}: score must be a number")
    return RegistryRecord(
        op=op,
        name=name,
        definition=definition,
        into=into,
        retroactive=_flag(raw, "retroactive", where),
        notes=notes,
        operator=raw.get("operator", ""),
        reason=raw.get("reason", ""),
        plan=raw.get("plan", ""),
        score=score,
        auto=_flag(raw, "auto", where),
    )


def _decode_plan_record(raw: dict[str, Any], where: str) -> RegistryRecord:
    """An `applied` or `withdraw` record: about a plan, naming no predicate."""
    op = raw["op"]
    allowed = {"op", "name", "plan", "events", "operator", "reason"} | ({"withdraws"} if op == "withdraw" else set())
    extra = set(raw) - allowed
    if extra:
        raise RegistryError(f"{where}: unknown field {sorted(extra)[0]!r}")
    for key in ("name", "operator", "reason", "plan", "withdraws"):
        if not isinstance(raw.get(key, ""), str):
            raise RegistryError(f"{where}: {key} must be text")
    if raw.get("name", ""):
        raise RegistryError(f"{where}: an {op} record names no predicate")
    if not raw.get("plan", "").startswith("plan-"):
        raise RegistryError(f"{where}: an {op} record needs the plan it belongs to")
    if op == "withdraw" and not raw.get("withdraws", "").startswith("plan-"):
        raise RegistryError(f"{where}: a withdraw record needs the plan it withdraws")
    ids = raw.get("events", [])
    if not isinstance(ids, list) or not all(isinstance(x, str) and x for x in ids):
        raise RegistryError(f"{where}: events must be a list of event ids")
    return RegistryRecord(
        op=op,
        name="",
        operator=raw.get("operator", ""),
        reason=raw.get("reason", ""),
        plan=raw["plan"],
        withdraws=raw.get("withdraws", ""),
        events=tuple(ids),
    )


def _decode_go_record(raw: dict[str, Any], name: str, where: str) -> RegistryRecord:
    """The Go engine's flat record: {name, auto?, retroactive?, alias_of?, cardinality, ...}."""
    alias_of = raw.get("alias_of", "")
    if alias_of:
        if not isinstance(alias_of, str) or not PREDICATE_RE.match(alias_of) or alias_of == name:
            raise RegistryError(f"{where}: cannot merge {name!r} into {alias_of!r}")
        return RegistryRecord(op="merge", name=name, into=alias_of, auto=_flag(raw, "auto", where))
    fields: dict[str, Any] = {
        k: raw[k] for k in ("cardinality", "value_type", "description", "allowed", "aliases") if k in raw
    }
    extra = set(raw) - {
        "name",
        "auto",
        "retroactive",
        "alias_of",
        "cardinality",
        "value_type",
        "description",
        "allowed",
        "aliases",
    }
    if extra:
        raise RegistryError(f"{where}: unknown field {sorted(extra)[0]!r}")
    definition = _definition_from(name, fields, where)
    auto = _flag(raw, "auto", where)
    retro = _flag(raw, "retroactive", where)
    op = "redefine" if retro else ("define" if auto else "declare")
    return RegistryRecord(op=op, name=name, definition=definition, retroactive=retro, auto=auto)


def _flag(raw: dict[str, Any], key: str, where: str) -> bool:
    v = raw.get(key, False)
    if not isinstance(v, bool):
        raise RegistryError(f"{where}: {key} must be true or false")
    return v
