"""Plans: the exact events a registry change would append, content-addressed.

A plan is computed against a store position and a registry digest; its id is
the hash of its content, so what is reviewed is what is applied.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from recall_engine.errors import InvalidInput, PlanError
from recall_engine.records import Event, check_id, decode_event
from recall_engine.registry import RegistryRecord, record_from_json
from recall_engine.timeline import LoggedRecord

from .display import visible
from .files import write_whole
from .inputs import json_problem

PLAN_FORMAT = "recall-plan-v1"


@dataclass(frozen=True)
class Plan:
    kind: str  # redefine, merge, split, define, promote, registry-load, confirm, exclude, revert
    title: str
    collection: str
    operator: str
    position: int
    registry_digest: str
    records: tuple[RegistryRecord, ...]
    statements: tuple[Event, ...] = ()  # operator statements and their retractions (conflict decisions)
    at: int = 0  # the instant of the plan's registry records
    scope: tuple[str, ...] = ()  # stored predicate names whose new events make the plan stale
    details: dict[str, Any] = field(default_factory=dict)  # per-note parse results and the like
    id: str = ""
    store: str = ""  # the store's identity (the id of its first event): a plan never applies to another store
    names_digest: str = ""  # the registry records of the scope's names when planned (Timeline.names_digest)

    def based_on(self) -> dict[str, Any]:
        out: dict[str, Any] = {"position": self.position, "registry_digest": self.registry_digest}
        if self.names_digest:
            out["names_digest"] = self.names_digest
        if self.store:
            out["store"] = self.store
        return out

    def content(self) -> dict[str, Any]:
        return {
            "format": PLAN_FORMAT,
            "kind": self.kind,
            "collection": self.collection,
            "based_on": self.based_on(),
            "ops": [replace(r, plan="").to_json() for r in self.records],
            # the planning instant is left out (docs/governance.md, "Plan file"): a preview and
            # its --apply run of one change are one plan id; the instant only dates its events
            "statements": [_without_instant(e) for e in self.statements],
            "scope": list(self.scope),
        }

    def sealed(self) -> Plan:
        """The plan with its id, and that id written into each of its records."""
        raw = json.dumps(self.content(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        pid = "plan-" + hashlib.sha256(raw.encode()).hexdigest()[:24]
        return replace(self, id=pid, records=tuple(replace(r, plan=pid) for r in self.records))

    def events(self) -> list[Event]:
        """Exactly what apply appends: the registry records, then any statements."""
        return [r.to_event(self.at + i) for i, r in enumerate(self.records)] + list(self.statements)

    def logged(self) -> list[LoggedRecord]:
        return [LoggedRecord(e.observed_at, e.id, r) for e, r in zip(self.events(), self.records, strict=False)]

    def to_json(self) -> dict[str, Any]:
        return {
            "format": PLAN_FORMAT,
            "id": self.id,
            "kind": self.kind,
            "title": self.title,
            "collection": self.collection,
            "operator": self.operator,
            "based_on": self.based_on(),
            "ops": [r.to_json() for r in self.records],
            "statements": [e.to_json() for e in self.statements],
            "events": [e.to_json() for e in self.events()],
            "at": self.at,
            "scope": list(self.scope),
            "details": self.details,
        }


def _without_instant(e: Event) -> dict[str, Any]:
    out = e.to_json()
    out.pop("id", None)
    out.pop("observed_at", None)
    out.pop("caused_by", None)  # the id of the statement it follows: that id holds the instant too
    return out


_NOUNS = {str: "text", int: "an integer", list: "a list", dict: "an object"}


def _json_kind(v: Any) -> str:
    if v is None or isinstance(v, bool):
        return json.dumps(v)
    if isinstance(v, float):
        return "a number with a fraction"
    return _NOUNS.get(type(v), type(v).__name__)


def _field(raw: dict[str, Any], key: str, kind: type, source: str, where: str = "", **default: Any) -> Any:
    """One field of a plan file, of its JSON type: a hand-edited file is refused naming the
    field, not with Python's words ("'int' object is not iterable")."""
    name = f"{where}{key}"
    if key not in raw:
        if "default" in default:
            return default["default"]
        raise PlanError(f"{source} is not a valid plan file: it has no {name!r}")
    v = raw[key]
    if not isinstance(v, kind) or (kind is int and isinstance(v, bool)):
        raise PlanError(f"{source} is not a valid plan file: {name!r} must be {_NOUNS[kind]}, got {_json_kind(v)}")
    return v


def plan_from_json(raw: Any, source: str = "plan") -> Plan:
    """Read a plan file back, refusing one whose content does not match its id."""
    if not isinstance(raw, dict) or raw.get("format") != PLAN_FORMAT:
        raise PlanError(f"{source} is not a {PLAN_FORMAT} plan file")
    based = _field(raw, "based_on", dict, source)
    scope = _field(raw, "scope", list, source, default=[])
    if not all(isinstance(n, str) for n in scope):
        raise PlanError(f"{source} is not a valid plan file: 'scope' must be a list of predicate names")
    try:
        records = [record_from_json(op, f"op {i + 1}") for i, op in enumerate(_field(raw, "ops", list, source))]
        plan = Plan(
            kind=_field(raw, "kind", str, source),
            title=_field(raw, "title", str, source, default=""),
            collection=_field(raw, "collection", str, source),
            operator=_field(raw, "operator", str, source, default=""),
            position=_field(based, "position", int, source, "based_on."),
            registry_digest=_field(based, "registry_digest", str, source, "based_on."),
            names_digest=_field(based, "names_digest", str, source, "based_on.", default=""),
            store=_field(based, "store", str, source, "based_on.", default=""),
            records=tuple(replace(r, plan="") for r in records),
            statements=tuple(decode_event(e) for e in _field(raw, "statements", list, source, default=[])),
            at=_field(raw, "at", int, source),
            scope=tuple(scope),
            details=_field(raw, "details", dict, source, default={}),
        )
        for e in plan.statements:  # a statement is appended as it is: its id must be its content's
            check_id(e)
    except PlanError:
        raise
    except Exception as exc:  # a hand-edited or truncated file
        raise PlanError(f"{source} is not a valid plan file: {exc}") from None
    sealed = plan.sealed()
    if raw.get("id") != sealed.id:
        raise PlanError(
            f"{source} was changed after it was planned: its content does not match its id {raw.get('id')!r}"
        )
    return sealed


def expect_plan(plan: Plan, expected: str, source: str) -> None:
    """Refuse a plan other than the one a reviewer approved (``apply --expect-id``)."""
    if plan.id != expected.strip():
        raise PlanError(
            f"{source} holds {plan.id}, not the plan you expected ({visible(expected.strip())}); nothing was applied"
        )


def write_plan(plan: Plan, path: str | Path) -> None:
    """Write the plan file whole or not at all (a temporary file beside it, then renamed)."""
    text = json.dumps(plan.to_json(), indent=2, ensure_ascii=False) + "\n"
    write_whole(path, lambda f: f.write(text), "write the plan to")


MAX_PLAN_BYTES = 64 << 20  # as an audit bundle; a plan of every note in a large store stays far below


def read_plan(path: str | Path) -> Plan:
    p = Path(path)
    try:
        with p.open("rb") as f:  # read at most the limit: /dev/zero or a huge file is refused, not loaded
            data = f.read(MAX_PLAN_BYTES + 1)
        if len(data) > MAX_PLAN_BYTES:
            raise PlanError(f"plan file {str(p)!r} is larger than {MAX_PLAN_BYTES >> 20} MiB; it is not a plan")
        raw = json.loads(data.decode("utf-8"))
    except FileNotFoundError:
        raise PlanError(f"plan file {str(p)!r} does not exist") from None
    except IsADirectoryError:
        raise InvalidInput(f"{str(p)!r} is a folder, not a plan file") from None
    except OSError as exc:
        raise InvalidInput(f"cannot read the plan file {str(p)!r}: {exc.strerror or exc}") from None
    except ValueError as exc:  # UnicodeDecodeError too
        raise PlanError(f"plan file {str(p)!r} is not valid JSON: {json_problem(exc)}") from None
    except RecursionError:  # a plan nests a few levels; thousands are an attack on the parser
        raise PlanError(f"plan file {str(p)!r} is not a plan: its JSON is nested too deeply") from None
    return plan_from_json(raw, f"plan file {str(p)!r}")
