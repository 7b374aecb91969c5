"""Audit bundles: export, standalone verify, offline replay (docs/audit.md).

A bundle holds the complete histories in a scope, the registry and its log, an
explicit as-of instant, the event and fold versions and a checksum. ``verify``
and ``replay`` need no database and no embedder: they read the bundle, check it
in a fixed order (each failure names what failed) and fold it with the pure
core (records, values, registry, timeline, fold). Nothing here imports the
storage path, so a storage bug cannot hide inside a verification.

Two formats are read:

- ``recall-audit-v2`` (ours, written by ``build_bundle``): ``recall-event-v3``
  events (with ``replaces`` and ``caused_by``), ``recall-fold-v4``, the registry
  log of op records, every field inside the ``sha256:audit-v2:`` checksum, and
  per-event fingerprints so that a changed event is named.
- ``recall-audit-v1`` (the Go engine's): ``recall-event-v1``/``v2``,
  ``recall-fold-v2``/``v3``, checksum ``sha256:audit-v1:`` exactly as reference 7.4;
  the bundle registry plays the part of the Go client's configured registry.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field as dc_field, replace
from typing import Any, Iterable, Mapping, Sequence

from .audit_digest import (
    bundle_checksum_v1,
    bundle_checksum_v2,
    digest_order,
    digest_v2,
    digest_v3,
    digest_v4,
    event_fingerprint,
    q,
)
from .errors import AuditError, DigestMismatch, InvalidEvent, InvalidInput, RegistryError
from .fold import fold, scope_ids
from .instants import format_fixed, format_rfc3339, parse_instant
from .records import (
    EVENT_VERSION,
    FOLD_VERSION,
    REGISTRY_PREDICATE,
    RESERVED_PAIRS,
    SOURCES,
    Belief,
    Event,
    decode_event,
)
from .registry import NOTE_DEFINITION, Definition, RegistryRecord, check_definition, decode_record
from .text import NOTE, PREDICATE_RE, simple_lower
from .timeline import LoggedRecord, Timeline
from .values import STORAGE_CLASS, VALUE_TYPES, describe, storage_class_of

AUDIT_V1 = "recall-audit-v1"  # the Go engine's envelope (read only)
AUDIT_V2 = "recall-audit-v2"  # ours (written and read)
GO_EVENT_VERSIONS = ("recall-event-v2", "recall-event-v1")
GO_FOLD_VERSIONS = ("recall-fold-v3", "recall-fold-v2")
OUR_FOLD_VERSIONS = (FOLD_VERSION, "recall-fold-v4")  # v4: excludes as of each event, replaced in-pair only
GO_SOURCES = ("user_stated", "agent_inferred", "tool_result")

MAX_EVENTS = 10_000  # per bundle (events), and per registry log
MAX_INPUT_BYTES = 64 * 1024 * 1024

# Go's zero time.Time: what a missing or zeroed instant reads as.
GO_ZERO = parse_instant("0001-01-01T00:00:00Z")
_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$")

_ENVELOPE_V1 = ("version", "event_version", "fold_version", "scope", "as_of", "registry", "registry_log", "events", "digest")
_ENVELOPE_V2 = _ENVELOPE_V1 + ("fingerprints",)
_SCOPE_FIELDS = ("subject", "predicate")
_GO_DEF_FIELDS = ("cardinality", "value_type", "description", "allowed", "aliases")
_DEF_FIELDS = _GO_DEF_FIELDS + ("excludes", "historical")
_GO_EVENT_FIELDS = frozenset(
    ("id", "kind", "subject", "predicate", "value", "confidence", "source", "retraction", "observed_at", "evidence", "evidence_id")
)
_EVENT_FIELDS = _GO_EVENT_FIELDS | {"replaces", "caused_by"}
_NEG_INF = -(2**63)
_POS_INF = 2**63


# --- results ------------------------------------------------------------------


@dataclass(frozen=True)
class VerifyResult:
    """A bundle that passed every check. ``events`` is the number of events it holds."""

    valid: bool
    digest: str
    events: int
    version: str = ""
    event_version: str = ""
    fold_version: str = ""
    as_of: int = 0
    scope_subject: str = ""
    scope_predicate: str = ""
    event_list: tuple[Event, ...] = ()
    registry_log: tuple[Event, ...] = ()
    registry: Mapping[str, Definition] = dc_field(default_factory=dict)
    timeline: Timeline | None = None

    def to_json(self) -> dict[str, Any]:
        return {"valid": self.valid, "digest": self.digest, "events": self.events}


# --- reading the input --------------------------------------------------------


def _bad_number(text: str) -> float:
    raise AuditError(f"decode audit: number {text} is out of range")


def _parse_float(text: str) -> float:
    f = float(text)
    if f in (float("inf"), float("-inf")):
        _bad_number(text)
    return f


def _parse_int(text: str) -> int | float:
    n = int(text)
    if abs(n) > 1.7976931348623157e308:
        _bad_number(text)
    return n


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise AuditError(f"decode audit: duplicate key {q(k)}")
        out[k] = v
    return out


def _no_constant(name: str) -> Any:
    raise AuditError(f"decode audit: {name} is not JSON")


def load_bundle(data: dict | str | bytes | bytearray) -> dict[str, Any]:
    """The bundle as a JSON object: UTF-8, at most 64 MiB, exactly one JSON value.

    A dict goes through JSON text too, so it meets exactly the checks a file meets.
    """
    if isinstance(data, dict):
        try:
            data = json.dumps(data)
        except (TypeError, ValueError) as e:
            raise AuditError(f"decode audit: {e}") from None
    if isinstance(data, (bytes, bytearray)):
        if len(data) > MAX_INPUT_BYTES:
            raise AuditError("audit input exceeds 64 MiB")
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError:
            raise AuditError("audit input must be UTF-8") from None
    elif isinstance(data, str):
        try:
            size = len(data.encode("utf-8"))
        except UnicodeEncodeError:
            raise AuditError("audit input must be UTF-8") from None
        if size > MAX_INPUT_BYTES:
            raise AuditError("audit input exceeds 64 MiB")
        text = data
    else:
        raise AuditError(f"audit input must be JSON text or an object, got {type(data).__name__}")
    if text.startswith("\ufeff"):
        raise AuditError("decode audit: input starts with a byte order mark")
    decoder = json.JSONDecoder(
        object_pairs_hook=_no_duplicate_keys,
        parse_float=_parse_float,
        parse_int=_parse_int,
        parse_constant=_no_constant,
    )
    start = len(text) - len(text.lstrip(" \t\r\n"))
    try:
        obj, end = decoder.raw_decode(text, start)
    except json.JSONDecodeError as e:
        raise AuditError(f"decode audit: {e.msg} at line {e.lineno} column {e.colno}") from None
    except RecursionError:
        raise AuditError("decode audit: nested too deeply") from None
    if text[end:].strip(" \t\r\n"):
        raise AuditError("audit input must contain exactly one JSON bundle")
    if not isinstance(obj, dict):
        raise AuditError("decode audit: a bundle is a JSON object")
    return obj


# --- the envelope -------------------------------------------------------------


@dataclass
class _Envelope:
    version: str
    event_version: str
    fold_version: str
    scope_subject: str
    scope_predicate: str
    as_of: int | None  # None: missing, zero or unreadable
    registry: dict[str, dict[str, Any]]
    registry_log: list[Any]
    events: list[Any]
    digest: str
    fingerprints: dict[str, dict[str, str]]


def _str_field(raw: Mapping[str, Any], key: str, where: str = "") -> str:
    v = raw.get(key)
    if v is None:
        return ""
    if not isinstance(v, str):
        raise AuditError(f"decode audit: {where}{key} must be a string")
    return v


def _list_field(raw: Mapping[str, Any], key: str) -> list[Any]:
    v = raw.get(key)
    if v is None:
        return []
    if not isinstance(v, list):
        raise AuditError(f"decode audit: {key} must be a list")
    return v


def _unknown(obj: Mapping[str, Any], allowed: Iterable[str], where: str = "") -> None:
    extra = [k for k in obj if k not in allowed]
    if extra:
        raise AuditError(f"decode audit: {where}unknown field {q(extra[0])}")


def _parse_as_of(v: Any) -> int | None:
    if v is None or v == "":
        return None
    if not isinstance(v, str):
        raise AuditError("decode audit: as_of must be an RFC3339 string")
    if not _RFC3339.match(v):
        return None
    try:
        at = parse_instant(v)
    except InvalidInput:
        return None
    if at == GO_ZERO:
        return None
    try:
        format_rfc3339(at)  # representable as a calendar instant (year 1 to 9999)
    except (ValueError, OverflowError, OSError):
        return None
    return at


def _envelope(raw: Mapping[str, Any]) -> _Envelope:
    version = raw.get("version")
    _unknown(raw, _ENVELOPE_V1 if version == AUDIT_V1 else _ENVELOPE_V2)
    scope = raw.get("scope")
    if scope is None:
        scope = {}
    if not isinstance(scope, dict):
        raise AuditError("decode audit: scope must be an object")
    _unknown(scope, _SCOPE_FIELDS, "scope: ")
    registry = raw.get("registry")
    if registry is None:
        registry = {}
    if not isinstance(registry, dict):
        raise AuditError("decode audit: registry must be an object")
    def_fields = _GO_DEF_FIELDS if version == AUDIT_V1 else _DEF_FIELDS
    for name, d in registry.items():
        if not isinstance(d, dict):
            raise AuditError(f"decode audit: registry entry {q(name)} must be an object")
        _unknown(d, def_fields, f"registry entry {q(name)}: ")
        for k in ("cardinality", "value_type", "description"):
            _str_field(d, k, f"registry entry {q(name)}: ")
        for k in ("allowed", "aliases", "excludes"):
            v = d.get(k)
            if v is not None and (not isinstance(v, list) or not all(isinstance(x, str) for x in v)):
                raise AuditError(f"decode audit: registry entry {q(name)}: {k} must be a list of strings")
        if not isinstance(d.get("historical", False), bool):
            raise AuditError(f"decode audit: registry entry {q(name)}: historical must be true or false")
    fingerprints: dict[str, dict[str, str]] = {"events": {}, "registry_log": {}}
    fp = raw.get("fingerprints")
    if fp is not None:
        if not isinstance(fp, dict):
            raise AuditError("decode audit: fingerprints must be an object")
        _unknown(fp, ("events", "registry_log"), "fingerprints: ")
        for k in ("events", "registry_log"):
            m = fp.get(k) or {}
            if not isinstance(m, dict) or not all(isinstance(x, str) for x in m.values()):
                raise AuditError(f"decode audit: fingerprints: {k} must map event ids to strings")
            fingerprints[k] = m
    return _Envelope(
        version=_str_field(raw, "version"),
        event_version=_str_field(raw, "event_version"),
        fold_version=_str_field(raw, "fold_version"),
        scope_subject=_str_field(scope, "subject", "scope: "),
        scope_predicate=_str_field(scope, "predicate", "scope: "),
        as_of=_parse_as_of(raw.get("as_of")),
        registry=registry,
        registry_log=_list_field(raw, "registry_log"),
        events=_list_field(raw, "events"),
        digest=_str_field(raw, "digest"),
        fingerprints=fingerprints,
    )


# --- step 1: header -----------------------------------------------------------


def _check_versions(env: _Envelope) -> None:
    if env.version == AUDIT_V2:
        if env.event_version != EVENT_VERSION:
            raise AuditError(
                f"event version {q(env.event_version)} cannot be replayed by this build, which writes {q(EVENT_VERSION)}"
            )
        if env.fold_version not in OUR_FOLD_VERSIONS:
            raise AuditError(
                f"fold version {q(env.fold_version)} cannot be replayed by this build, which writes {q(FOLD_VERSION)} "
                f"and reads {q(OUR_FOLD_VERSIONS[1])} with the rules it was written under"
            )
    elif env.version == AUDIT_V1:
        if env.event_version not in GO_EVENT_VERSIONS:
            raise AuditError(
                f"event version {q(env.event_version)} cannot be replayed by this build, which reads "
                f"{q(GO_EVENT_VERSIONS[0])} and {q(GO_EVENT_VERSIONS[1])} in {q(AUDIT_V1)} bundles"
            )
        if env.fold_version not in GO_FOLD_VERSIONS:
            raise AuditError(
                f"fold version {q(env.fold_version)} cannot be replayed by this build, which reads "
                f"{q(GO_FOLD_VERSIONS[0])} and {q(GO_FOLD_VERSIONS[1])} in {q(AUDIT_V1)} bundles"
            )
    else:
        raise AuditError(
            f"bundle version {q(env.version)} cannot be replayed by this build, which writes {q(AUDIT_V2)} "
            f"and reads {q(AUDIT_V2)} and {q(AUDIT_V1)}"
        )


def _registry_definitions(env: _Envelope) -> dict[str, Definition]:
    """Step 1: the registry must be non-empty and valid; descriptions UTF-8."""
    if not env.registry:
        raise AuditError("registry must not be empty")
    defs: dict[str, Definition] = {}
    where = "predicate registry"
    for name in sorted(env.registry):
        d = env.registry[name]
        desc = d.get("description") or ""
        try:
            desc.encode("utf-8")
        except UnicodeEncodeError:
            raise AuditError(f"{where}: {q(name)} has a description that is not valid UTF-8") from None
        defs[name] = Definition(
            name=name,
            cardinality=d.get("cardinality") or "",
            value_type=d.get("value_type") or "",
            description=desc,
            allowed=tuple(d.get("allowed") or ()),
            aliases=tuple(d.get("aliases") or ()),
            excludes=tuple(d.get("excludes") or ()),
            historical=bool(d.get("historical", False)),
        )
    if env.version == AUDIT_V1:
        _check_go_registry(defs)
    else:
        for d in defs.values():
            try:
                check_definition(d)
            except RegistryError as e:
                raise AuditError(_requote(str(e))) from None
    return defs


def _check_go_registry(defs: Mapping[str, Definition]) -> None:
    """The Go engine's registry rules (reference 3.1, 3.3), with its messages."""
    w = "predicate registry"
    claimed: dict[str, str] = {}
    for name in sorted(defs):
        d = defs[name]
        if not PREDICATE_RE.match(name):
            raise AuditError(f"{w}: {q(name)} is not snake_case")
        if name == REGISTRY_PREDICATE:
            raise AuditError(f'{w}: "registry_change" is reserved for the registry\'s own history')
        if d.cardinality not in ("single", "multi"):
            raise AuditError(f"{w}: {q(name)} has cardinality {q(d.cardinality)}, want single or multi")
        if d.value_type not in VALUE_TYPES and d.value_type != "":
            raise AuditError(
                f"{w}: {q(name)} has value_type {q(d.value_type)}, want string, number, boolean, enum, date, or ref"
            )
        if d.value_type == "enum" and not d.allowed:
            raise AuditError(f"{w}: {q(name)} is an enum and must list its allowed values")
        if d.value_type != "enum" and d.allowed:
            raise AuditError(f"{w}: {q(name)} lists allowed values but has value_type {q(d.value_type)}, want enum")
        seen: set[str] = set()
        for a in d.allowed:
            if not a or a != a.strip():
                raise AuditError(f"{w}: {q(name)} has an allowed value that is empty or padded with spaces")
            if simple_lower(a) in seen:
                raise AuditError(f"{w}: {q(name)} lists allowed value {q(a)} twice")
            seen.add(simple_lower(a))
        if name == NOTE and (d.cardinality != "multi" or d.value_type not in ("", "string")):
            raise AuditError(
                f'{w}: "note" is reserved for statements no other predicate fits and must be multi-valued string'
            )
        for a in d.aliases:
            if not PREDICATE_RE.match(a) or a in (REGISTRY_PREDICATE, NOTE):
                raise AuditError(f"{w}: {q(name)} has alias {q(a)}, which is not a usable predicate name")
            if a in defs:
                raise AuditError(
                    f"{w}: {q(a)} is both a predicate and an alias of {q(name)}; remove the old entry to rename it"
                )
            if a in claimed:
                raise AuditError(f"{w}: alias {q(a)} is claimed by both {q(claimed[a])} and {q(name)}")
            claimed[a] = name


def _check_header(env: _Envelope) -> dict[str, Definition]:
    _check_versions(env)
    if env.as_of is None:
        raise AuditError("as_of must be an explicit RFC3339 instant")
    s = env.scope_subject
    try:
        s.encode("utf-8")
        ok = s == simple_lower(s.strip())
    except UnicodeEncodeError:
        ok = False
    if not ok:
        raise AuditError("subject scope must be normalized UTF-8")
    defs = _registry_definitions(env)
    if env.scope_predicate and env.scope_predicate not in defs:
        raise AuditError("predicate scope is not in the registry")
    return defs


# --- step 3: events -----------------------------------------------------------


_PY_QUOTED = re.compile(r"'([^'\\\"]*)'")


def _requote(msg: str, eid: object = None) -> str:
    """Messages of the pure core quote names Python's way ('x'); bundle messages quote them "x"."""
    if isinstance(eid, str):
        msg = msg.replace(repr(eid), q(eid), 1)
    return _PY_QUOTED.sub(lambda m: q(m.group(1)), msg)


def _decode(obj: Any, *, ours: bool, where: str = "event") -> Event:
    """Strictly decode one bundle event (reference 1.7); the message names the event and field."""
    if not isinstance(obj, dict):
        raise AuditError(f"decode audit: each {where} must be a JSON object")
    eid = obj.get("id")
    fields = _EVENT_FIELDS if ours else _GO_EVENT_FIELDS
    extra = [k for k in obj if k not in fields]
    if extra:
        raise AuditError(f"decode audit: {where} {q(eid)} has unknown field {q(extra[0])}")
    at = obj.get("observed_at")
    if isinstance(eid, str) and eid.strip() and (not isinstance(at, str) or not _RFC3339.match(at)):
        raise AuditError(f"event {q(eid)} has invalid observed_at")
    try:
        e = decode_event(obj, allowed_sources=SOURCES if ours else GO_SOURCES)
    except InvalidEvent as err:
        raise AuditError(_requote(str(err), eid)) from None
    except (TypeError, ValueError, OverflowError):
        raise AuditError(f"{where} {q(eid)} is not a valid event") from None
    if e.observed_at == GO_ZERO:
        raise AuditError(f"event {q(e.id)} has invalid observed_at")
    return e


def _decode_events(env: _Envelope, ours: bool) -> tuple[list[Event], list[Event]]:
    events = [_decode(o, ours=ours) for o in env.events]
    log = [_decode(o, ours=ours, where="registry event") for o in env.registry_log]
    if env.event_version == "recall-event-v1":
        for e in events:
            if e.evidence or e.evidence_id:
                raise AuditError(f"event {q(e.id)} carries evidence, which recall-event-v1 bundles cannot record")
    return events, log


# --- the Go engine's registry schema, compiled into a Timeline ----------------


def _go_log(log: Sequence[Event]) -> list[tuple[Event, RegistryRecord]]:
    """Decode a Go registry log (reference 3.7): flat records only, oldest first."""
    out = []
    for e in digest_order(log):
        try:
            raw = json.loads(e.value) if isinstance(e.value, str) else None
        except ValueError:
            raw = None
        if isinstance(raw, dict) and "op" in raw:
            raise AuditError(f"registry event {q(e.id)} is not a recall-audit-v1 record")
        try:
            rec = decode_record(e)
        except RegistryError as err:
            raise AuditError(_requote(str(err), e.id)) from None
        if rec.op == "merge" and NOTE in (rec.name, rec.into):
            raise AuditError(f"registry event {q(e.id)}: cannot merge {q(rec.name)} into {q(rec.into)}")
        out.append((e, rec))
    return out


def _needs_fold_v3(log: Sequence[tuple[Event, RegistryRecord]]) -> bool:
    """A retroactive definition, a merge, or an automatic definition of an already defined name."""
    defined: set[str] = set()
    for _, rec in log:
        if rec.op == "merge" or rec.retroactive:
            return True
        if rec.auto and rec.name in defined:
            return True
        defined.add(rec.name)
    return False


def go_timeline(registry: Mapping[str, Definition], log: Sequence[tuple[Event, RegistryRecord]]) -> Timeline:
    """The Go engine's schema (reference 3.8, no mismatch checks) as a Timeline.

    The bundle registry is the configured registry. The result holds, per readable
    predicate, exactly the definitions Go's ``cardAt`` reads (its log definitions
    grouped by canonical owner, or else its configured one), and one merge record
    per name that Go reads as another (configured aliases, renames, merges).
    """
    cfg = dict(registry)
    cfg.setdefault(NOTE, NOTE_DEFINITION)
    # 1. drop an automatic definition of a name that already has an earlier definition
    kept: list[tuple[int, Event, RegistryRecord]] = []
    defined: set[str] = set()
    for e, rec in log:
        if rec.op != "merge":
            if rec.auto and rec.name in defined:
                continue
            defined.add(rec.name)
        kept.append((len(kept), e, rec))
    # 2. configured aliases
    alias: dict[str, str] = {}
    for owner in sorted(cfg):
        for a in cfg[owner].aliases:
            alias.setdefault(a, owner)
    # 3. latest definition of each name
    latest: dict[str, tuple[int, RegistryRecord]] = {}
    for i, _, rec in kept:
        if rec.op != "merge":
            latest[rec.name] = (i, rec)
    # 4. renames: aliases listed in a latest definition, unless taken back later
    renamed: dict[str, str] = {}
    for name in sorted(latest):
        li, rec = latest[name]
        assert rec.definition is not None
        for a in rec.definition.aliases:
            if (a in latest and latest[a][0] > li) or a in renamed:
                continue
            renamed[a] = name
    # 5. merges in log order; the first effective merge of a name wins
    for i, _, rec in kept:
        if rec.op != "merge":
            continue
        if (rec.name in latest and latest[rec.name][0] > i) or rec.name in renamed:
            continue
        renamed[rec.name] = rec.into
    # 6. renamed/merged names join the alias map unless still configured (left alone)
    for name in sorted(renamed):
        if name in cfg:
            continue
        alias.setdefault(name, renamed[name])
    # 7. readable: configured, plus log-only names that are neither renamed nor aliases
    readable = set(cfg)
    for name in sorted(latest):
        if name in renamed or name in cfg or name in alias:
            continue
        readable.add(name)

    # 8. re-point aliases through renames
    def resolve(n: str) -> str:
        seen = {n}
        while n not in readable and n in alias and alias[n] not in seen:
            n = alias[n]
            seen.add(n)
        return n

    alias = {a: resolve(t) for a, t in alias.items()}

    def canonical(n: str) -> str:
        return n if n in readable else alias.get(n, n)

    # 9. definitions grouped by the canonical owner of the name they were made under
    owned: dict[str, list[tuple[Event, RegistryRecord]]] = {}
    for _, e, rec in kept:
        if rec.op != "merge":
            owned.setdefault(canonical(rec.name), []).append((e, rec))
    records: list[LoggedRecord] = []
    for owner in sorted(readable | set(owned)):
        items = owned.get(owner)
        if items:
            for e, rec in items:
                assert rec.definition is not None
                d = replace(rec.definition, name=owner, aliases=())
                op = "redefine" if rec.retroactive else "declare"
                records.append(LoggedRecord(e.observed_at, e.id, RegistryRecord(op, owner, d, retroactive=rec.retroactive)))
        else:
            d = replace(cfg[owner], name=owner, aliases=())
            records.append(LoggedRecord(_NEG_INF, f"configured:{owner}", RegistryRecord("declare", owner, d)))
    for a in sorted(alias):
        target = canonical(a)
        if target != a and a not in readable:
            records.append(LoggedRecord(_POS_INF, f"alias:{a}", RegistryRecord("merge", a, into=target)))
    return Timeline(records=records, fold_version=GO_FOLD_VERSIONS[0])  # Go's rules, Go's replaced


# --- our registry view --------------------------------------------------------


def registry_view(timeline: Timeline) -> dict[str, dict[str, Any]]:
    """The readable predicates of a timeline as bundle registry entries (aliases: every stored name)."""
    out: dict[str, dict[str, Any]] = {}
    for p, d in sorted(timeline.predicates().items()):
        out[p] = {
            "cardinality": d.cardinality,
            "value_type": d.value_type,
            "description": d.description,
            "allowed": list(d.allowed),
            "aliases": timeline.stored_names(p)[1:],
            "excludes": sorted(d.excludes),
            "historical": d.historical,
        }
    return out


def _check_registry_matches_log(registry: Mapping[str, dict[str, Any]], timeline: Timeline) -> None:
    want = registry_view(timeline)
    for name in sorted(set(registry) | set(want)):
        if name not in want:
            raise AuditError(f"registry entry {q(name)} is not a predicate of the registry log")
        if name not in registry:
            raise AuditError(f"registry entry {q(name)} is missing; the registry log defines it")
        got, exp = registry[name], want[name]
        for k in _DEF_FIELDS:
            g = got.get(k)
            if g is None:
                g = False if k == "historical" else ([] if k in ("allowed", "aliases", "excludes") else "")
            w = exp[k]
            if k in ("aliases", "excludes"):
                g, w = sorted(g), sorted(w)
            if g != w:
                raise AuditError(
                    f"registry entry {q(name)} has {k} {json.dumps(g, ensure_ascii=False)}, "
                    f"but the registry log gives {json.dumps(w, ensure_ascii=False)}"
                )


def _our_timeline(log: Sequence[Event], fold_version: str = FOLD_VERSION) -> Timeline:
    try:
        return Timeline(log, fold_version=fold_version)
    except RegistryError as err:
        raise AuditError(_requote(str(err))) from None


# --- scope --------------------------------------------------------------------


def _target(e: Event, timeline: Timeline) -> str:
    """The pair an event belongs to: its canonical predicate, or where its note was promoted."""
    c = timeline.canonical(e.predicate)
    if c == NOTE and not e.retraction:
        promo = timeline.promotion(e.id)
        if promo is not None:
            return promo[0]
    return c


def _class_error(e: Event, owner: str, d: Definition) -> AuditError:
    return AuditError(
        f"event {q(e.id)} has invalid value: {q(owner)} stores {STORAGE_CLASS.get(d.value_type, 'string')} "
        f"values, got {describe(e.value)}"
    )


def _check_scope_go(env: _Envelope, defs: Mapping[str, Definition], events: Sequence[Event]) -> None:
    reg = dict(defs)
    reg.setdefault(NOTE, NOTE_DEFINITION)
    alias = {a: owner for owner, d in reg.items() for a in d.aliases}
    for e in events:
        owner = e.predicate if e.predicate in reg else alias.get(e.predicate, e.predicate)
        if (env.scope_subject and simple_lower(e.subject.strip()) != env.scope_subject) or (
            env.scope_predicate and owner != env.scope_predicate
        ):
            raise AuditError(f"event {q(e.id)} is outside scope")
        d = reg.get(owner)
        if d is None:
            raise AuditError(f"event {q(e.id)} predicate is not in registry")
        if e.value is not None and storage_class_of(e.value) != d.storage_class:
            raise _class_error(e, owner, d)


def _check_scope_ours(env: _Envelope, timeline: Timeline, events: Sequence[Event]) -> None:
    wanted = scope_ids(events, env.scope_predicate, timeline) if env.scope_predicate else set()
    for e in events:
        if (e.subject, e.predicate) in RESERVED_PAIRS:
            raise AuditError(f"event {q(e.id)} belongs to the reserved pair {e.subject} / {e.predicate}")
        if (env.scope_subject and e.subject != env.scope_subject) or (
            env.scope_predicate and e.id not in wanted
        ):
            raise AuditError(f"event {q(e.id)} is outside scope")
        owner = timeline.canonical(e.predicate)
        d = timeline.definition(owner)
        if d is None:
            raise AuditError(f"event {q(e.id)} predicate is not in registry")
        if e.value is not None and storage_class_of(e.value) != d.storage_class:
            raise _class_error(e, owner, d)


# --- fingerprints -------------------------------------------------------------


def _check_fingerprints(expected: Mapping[str, str], events: Sequence[Event], what: str) -> None:
    ids = set()
    for e in events:
        ids.add(e.id)
        fp = expected.get(e.id)
        if fp is None:
            raise DigestMismatch(
                f"digest mismatch: {what} {q(e.id)} is not in the bundle's fingerprints (its id was changed, or it was added)"
            )
        if fp != event_fingerprint(e):
            raise DigestMismatch(
                f"digest mismatch: {what} {q(e.id)} ({e.subject} / {e.predicate} at {format_rfc3339(e.observed_at)}) "
                f"was changed: it no longer matches its fingerprint"
            )
    for eid in expected:
        if eid not in ids:
            raise DigestMismatch(f"digest mismatch: {what} {q(eid)} of the fingerprints is missing from the bundle")


# --- verify -------------------------------------------------------------------


def verify(bundle: dict | str | bytes | bytearray, *, digest: str | None = None) -> VerifyResult:
    """Check a bundle standalone (no database, no embedder); raise AuditError naming what failed.

    Order (docs/audit.md "Verifier checks"): decode; header; counts; events (strict
    decoding, duplicate ids, UTF-8, event digest); registry log; scope, registry
    membership and value class; fingerprints (ours); checksum; then ``digest``, a
    digest obtained separately, must equal the bundle's exactly.
    """
    raw = load_bundle(bundle)
    env = _envelope(raw)
    defs = _check_header(env)  # 1
    if len(env.events) > MAX_EVENTS:  # 2
        raise AuditError(f"more than {MAX_EVENTS} events")
    if len(env.registry_log) > MAX_EVENTS:
        raise AuditError(f"registry log has more than {MAX_EVENTS} events")
    ours = env.version == AUDIT_V2
    events, log = _decode_events(env, ours)  # 3
    if ours:
        events_digest = digest_v4(events)
        log_digest = digest_v4(log)
        timeline = _our_timeline(log, env.fold_version)  # 4
        _check_registry_matches_log(env.registry, timeline)
        _check_scope_ours(env, timeline, events)  # 5
        _check_fingerprints(env.fingerprints["events"], events, "event")  # 6
        _check_fingerprints(env.fingerprints["registry_log"], log, "registry event")
        want = bundle_checksum_v2(
            version=env.version,
            event_version=env.event_version,
            fold_version=env.fold_version,
            scope_subject=env.scope_subject,
            scope_predicate=env.scope_predicate,
            as_of=env.as_of,  # type: ignore[arg-type]
            events_digest=events_digest,
            registry=env.registry,
            registry_log_digest=log_digest,
        )
        hint = (
            "; every event and registry event matches its fingerprint and the registry matches the "
            "registry log, so its scope, as_of or digest field was changed"
        )
        registry = {n: d for n, d in timeline.predicates().items()}
    else:
        events_digest = digest_v2(events) if env.event_version == "recall-event-v1" else digest_v3(events)
        log_digest = digest_v3(log) if log else None
        _check_scope_go(env, defs, events)  # 4
        go_log = _go_log(log)  # 5
        if env.fold_version == "recall-fold-v2" and _needs_fold_v3(go_log):
            raise AuditError(
                'fold version "recall-fold-v2" cannot replay this registry log, which needs "recall-fold-v3"'
            )
        timeline = go_timeline(defs, go_log)
        want = bundle_checksum_v1(  # 6
            version=env.version,
            event_version=env.event_version,
            fold_version=env.fold_version,
            scope_subject=env.scope_subject,
            scope_predicate=env.scope_predicate,
            as_of=env.as_of,  # type: ignore[arg-type]
            events_digest=events_digest,
            registry=env.registry,
            registry_log_digest=log_digest,
        )
        hint = ""
        registry = defs
    if env.digest != want:
        raise DigestMismatch(
            f"digest mismatch: the bundle's digest is {q(env.digest)}, but its content digests to {q(want)}{hint}"
        )
    if digest is not None and digest != env.digest:
        raise DigestMismatch(f"digest mismatch: the bundle's digest {q(env.digest)} differs from the expected {q(digest)}")
    return VerifyResult(
        valid=True,
        digest=env.digest,
        events=len(events),
        version=env.version,
        event_version=env.event_version,
        fold_version=env.fold_version,
        as_of=env.as_of,  # type: ignore[arg-type]
        scope_subject=env.scope_subject,
        scope_predicate=env.scope_predicate,
        event_list=tuple(digest_order(events)),
        registry_log=tuple(digest_order(log)),
        registry=registry,
        timeline=timeline,
    )


# --- replay -------------------------------------------------------------------


def replay(
    bundle: dict | str | bytes | bytearray | VerifyResult, *, notes_only: bool = False, digest: str | None = None
) -> list[Belief]:
    """The beliefs at the bundle's as_of: verify, group by (subject, canonical predicate), fold each.

    Pairs are sorted by subject then predicate (byte order); beliefs keep fold order
    within a pair. ``notes_only`` keeps only ``note`` beliefs. No ``elsewhere`` is
    attached: a replay is the fold of each pair, as in the Go engine.
    """
    v = bundle if isinstance(bundle, VerifyResult) else verify(bundle, digest=digest)
    if isinstance(bundle, VerifyResult) and digest is not None and digest != v.digest:
        raise DigestMismatch(f"digest mismatch: the bundle's digest {q(v.digest)} differs from the expected {q(digest)}")
    tl = v.timeline
    assert tl is not None
    events = list(v.event_list)
    original: dict[str, Event] = {}
    if v.version == AUDIT_V1:
        # Go groups by normalized subject; a belief keeps its event's own spelling.
        norm = []
        for e in events:
            s = simple_lower(e.subject.strip())
            if s != e.subject:
                original[e.id] = e
                e = replace(e, subject=s)
            norm.append(e)
        events = norm
    pairs = sorted({(e.subject, _target(e, tl)) for e in events})
    if v.scope_predicate:
        pairs = [p for p in pairs if p[1] == v.scope_predicate]
    if notes_only:
        pairs = [p for p in pairs if p[1] == NOTE]
    out: list[Belief] = []
    for subject, predicate in pairs:
        for b in fold(events, subject, predicate, tl, v.as_of):
            if b.event_id in original:
                b = replace(b, subject=original[b.event_id].subject)
            out.append(b)
    return out


# --- export -------------------------------------------------------------------


def event_json(e: Event) -> dict[str, Any]:
    """An event as a bundle writes it: ``Event.to_json`` with the fixed nine-digit instant."""
    out = e.to_json()
    out["observed_at"] = format_fixed(e.observed_at)
    return out


def _unique_events(events: Iterable[Event], what: str) -> list[Event]:
    by_id: dict[str, Event] = {}
    for e in events:
        prev = by_id.get(e.id)
        if prev is not None and prev != e:
            raise AuditError(f"duplicate {what} {q(e.id)} with different content")
        by_id[e.id] = e
        if len(by_id) > MAX_EVENTS:
            break  # the caller reports the limit; nothing past it is read
    return digest_order(by_id.values())


def build_bundle(
    events: Iterable[Event],
    registry_events: Iterable[Event],
    *,
    as_of: int,
    scope_subject: str = "",
    scope_predicate: str = "",
) -> dict[str, Any]:
    """A ``recall-audit-v2`` bundle of the histories in scope at an explicit instant.

    ``events`` may be any superset of the scope (a whole collection, or a subject's
    events plus those that bear on the scope); the bundle keeps every event of the
    scope's pairs under every name that resolves to them, promoted notes, and the
    events of the same subjects that bear on them through excludes or ``replaces``,
    including events after ``as_of``. Reserved pairs are left out. More than 10,000
    events in scope is refused (nothing is truncated). The bundle is verified before
    it is returned, so an export never writes a bundle that does not verify.
    """
    if isinstance(as_of, bool) or not isinstance(as_of, int):
        raise AuditError("as_of must be an explicit instant (integer nanoseconds)")
    if as_of == GO_ZERO:
        raise AuditError("as_of must be an explicit RFC3339 instant")
    try:
        format_rfc3339(as_of)
    except (ValueError, OverflowError, OSError):
        raise AuditError("as_of must be an explicit RFC3339 instant") from None
    log = _unique_events(registry_events, "registry event")
    if len(log) > MAX_EVENTS:
        raise AuditError(f"the registry log holds more than {MAX_EVENTS} events; nothing was exported")
    timeline = _our_timeline(log)
    subject = simple_lower(scope_subject.strip()) if scope_subject else ""
    if scope_subject and not subject:
        raise AuditError("subject scope must not be blank")
    predicate = ""
    if scope_predicate:
        if not timeline.knows(scope_predicate.strip()):
            raise AuditError("predicate scope is not in the registry")
        predicate = timeline.canonical(scope_predicate.strip())

    def in_scope(e: Event) -> bool:
        return (e.subject, e.predicate) not in RESERVED_PAIRS and (not subject or e.subject == subject)

    if predicate:  # what the scope's folds read, its `replaced` included (fold.scope_ids)
        events = [e for e in events if in_scope(e)]
        wanted = scope_ids(events, predicate, timeline)
        events = [e for e in events if e.id in wanted]

    # filter while streaming, so a whole collection can be passed without holding it
    kept: list[Event] = []
    for e in _unique_events((e for e in events if in_scope(e)), "event"):
        kept.append(e)
        if len(kept) > MAX_EVENTS:
            scope = " / ".join(x for x in (subject, predicate) if x) or "the whole collection"
            raise AuditError(
                f"export of {scope} holds more than {MAX_EVENTS} events (the limit of a bundle); "
                f"narrow the scope by subject or predicate: nothing was exported"
            )
    registry = registry_view(timeline)
    events_digest = digest_v4(kept)
    log_digest = digest_v4(log)
    checksum = bundle_checksum_v2(
        version=AUDIT_V2,
        event_version=EVENT_VERSION,
        fold_version=FOLD_VERSION,
        scope_subject=subject,
        scope_predicate=predicate,
        as_of=as_of,
        events_digest=events_digest,
        registry=registry,
        registry_log_digest=log_digest,
    )
    bundle: dict[str, Any] = {
        "version": AUDIT_V2,
        "event_version": EVENT_VERSION,
        "fold_version": FOLD_VERSION,
        "scope": {"subject": subject, "predicate": predicate},
        "as_of": format_fixed(as_of),
        "registry": registry,
        "registry_log": [event_json(e) for e in log],
        "events": [event_json(e) for e in kept],
        "fingerprints": {
            "events": {e.id: event_fingerprint(e) for e in kept},
            "registry_log": {e.id: event_fingerprint(e) for e in log},
        },
        "digest": checksum,
    }
    try:
        verify(bundle)
    except AuditError as err:
        raise AuditError(f"the export would not verify, so nothing was exported: {err}") from None
    return bundle


def encode_bundle(bundle: Mapping[str, Any]) -> bytes:
    """The bundle as UTF-8 JSON text, indented with two spaces, ending with a newline."""
    return (json.dumps(bundle, ensure_ascii=False, indent=2, allow_nan=False) + "\n").encode("utf-8")


# --- import -------------------------------------------------------------------


def import_events(result: VerifyResult, *, declare_at: int | None = None) -> tuple[list[Event], list[Event]]:
    """(registry events, events) to append to a store to import a verified bundle.

    Our bundles: exactly their registry log and events, so importing twice adds
    nothing (same ids) and exporting again reproduces the digest. Go bundles: the
    Go registry log (its flat records read as declare/define/redefine/merge) plus,
    for each registry entry the log does not define, a ``declare`` record (with
    the entry's aliases) at ``declare_at``, by default 1 ns before the bundle's
    earliest instant, so the configured definition governs the whole imported
    history as it did in Go. Those records are deterministic: a second import
    appends nothing.
    """
    if result.version == AUDIT_V2:
        return list(result.registry_log), list(result.event_list)
    defined: set[str] = set()
    for e in result.registry_log:
        try:
            rec = decode_record(e)
        except RegistryError as err:
            raise AuditError(str(err)) from None
        if rec.op != "merge":
            defined.add(rec.name)
    instants = [e.observed_at for e in (*result.event_list, *result.registry_log)]
    at = declare_at if declare_at is not None else (min(instants) if instants else result.as_of) - 1
    declares = []
    for name in sorted(result.registry):
        if name in defined:
            continue
        d = result.registry[name]
        if name == NOTE and d == NOTE_DEFINITION:
            continue
        rec = RegistryRecord(op="declare", name=name, definition=d, reason=f"imported from audit bundle {result.digest}")
        declares.append(rec.to_event(at))
    return [*declares, *result.registry_log], list(result.event_list)
