"""Reading a bundle: strict JSON, the envelope's field types, and its format (docs/audit.md).

Nothing here validates meaning; ``verify`` does, in a fixed order.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import AuditError, InvalidInput
from ..instants import format_rfc3339, parse_instant
from .bundle_format import GO_ZERO, RFC3339, BundleFormat, Envelope
from .digest import q
from .go_v1 import AUDIT_V1, GoV1
from .ours_v2 import AUDIT_V2, OursV2

MAX_INPUT_BYTES = 64 * 1024 * 1024
FORMATS: dict[str, BundleFormat] = {AUDIT_V2: OursV2(), AUDIT_V1: GoV1()}
_SCOPE_FIELDS = ("subject", "predicate")


def format_of(version: str) -> BundleFormat | None:
    """The format a bundle ``version`` names, or None for a version this build does not read."""
    return FORMATS.get(version)


def _bad_number(text: str) -> float:
    shown = text if len(text) <= 40 else f"{text[:20]}... ({len(text)} characters)"
    raise AuditError(f"decode audit: number {shown} is out of range")


def _parse_float(text: str) -> float:
    f = float(text)
    if f in (float("inf"), float("-inf")):
        _bad_number(text)
    return f


def _parse_int(text: str) -> int | float:
    if len(text) > 310:  # past any float; int() would refuse it anyway (past 4300 digits) with Python's words
        _bad_number(text)
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
    if not RFC3339.match(v):
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


def envelope(raw: Mapping[str, Any]) -> Envelope:
    version = raw.get("version")
    # an unknown version is refused later, by name; its fields are read as ours
    fmt = FORMATS.get(version) if isinstance(version, str) else None
    fmt = fmt or FORMATS[AUDIT_V2]
    _unknown(raw, fmt.envelope_fields)
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
    def_fields = fmt.definition_fields
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
    return Envelope(
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
        recorded=_recorded(raw.get("recorded_at")),
    )


def _recorded(v: Any) -> dict[str, int] | None:
    """``recorded_at``: event ids to the instants their store recorded them."""
    if v is None:
        return None
    if not isinstance(v, dict):
        raise AuditError("decode audit: recorded_at must map event ids to RFC3339 instants")
    out: dict[str, int] = {}
    for eid, t in v.items():
        at = _parse_as_of(t) if isinstance(t, str) and t else None
        if at is None:
            raise AuditError(f"decode audit: recorded_at of event {q(eid)} must be an RFC3339 instant")
        out[eid] = at
    return out
