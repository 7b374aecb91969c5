"""Event digests and bundle checksums (docs/audit.md, section 4).

Every digest is SHA-256 over a stream of length-prefixed fields: a field is its
UTF-8 byte length in decimal, ``:``, then its bytes, with no separators.
Timestamps are the fixed nine-digit UTC form; numbers in typed digests are the
16 lowercase hex digits of their IEEE-754 binary64 bits; events are ordered by
``observed_at`` and then by id (byte order).

- ``digest_legacy`` (``sha256:``), ``digest_v2`` (``sha256:v2:``) and
  ``digest_v3`` (``sha256:v3:``) are the Go engine's, byte for byte.
- ``digest_v4`` (``sha256:v4:``) is ours: v3 plus ``replaces`` and ``caused_by``.
- ``bundle_checksum_v1`` (``sha256:audit-v1:``) is the Go bundle checksum;
  ``bundle_checksum_v2`` (``sha256:audit-v2:``) is ours.

Pure: no clock, no I/O. Shares nothing with the storage path.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import struct
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..errors import AuditError, DigestMismatch
from ..instants import format_fixed
from ..records import Event
from ..values import format_number, value_key

LABEL_V2 = "recall-events-digest-v2"
LABEL_V3 = "recall-events-digest-v3"
LABEL_V4 = "recall-events-digest-v4"

PREFIX_LEGACY = "sha256:"
PREFIX_V2 = "sha256:v2:"
PREFIX_V3 = "sha256:v3:"
PREFIX_V4 = "sha256:v4:"
PREFIX_AUDIT_V1 = "sha256:audit-v1:"
PREFIX_AUDIT_V2 = "sha256:audit-v2:"

_HEX64 = re.compile(r"^[0-9a-f]{64}$")


def q(text: object) -> str:
    """Quote a name for a message the way Go's %q does for plain text: "like this"."""
    return json.dumps(text, ensure_ascii=False) if isinstance(text, str) else repr(text)


def utf8(text: str, what: str) -> bytes:
    """The UTF-8 bytes of a string; a lone surrogate (not encodable) is refused."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise AuditError(f"{what} is not valid UTF-8") from None


def field(data: bytes | str, what: str = "field") -> bytes:
    """One length-prefixed field: ``<byte length>:<bytes>``."""
    raw = utf8(data, what) if isinstance(data, str) else data
    return str(len(raw)).encode() + b":" + raw


def float_bits(f: float | int) -> str:
    """The 16 lowercase hex digits of a number's IEEE-754 binary64 bits (+0 and -0 differ)."""
    return struct.pack(">d", float(f)).hex()


def typed_value(value: object, what: str) -> tuple[str, str]:
    """(value type, value text) as the typed digests write them."""
    if value is None:
        return "null", ""
    if isinstance(value, bool):
        return "boolean", "true" if value else "false"
    if isinstance(value, (int, float)):
        try:
            f = float(value)
        except OverflowError:
            raise AuditError(f"{what} is not a finite number") from None
        if not math.isfinite(f):
            raise AuditError(f"{what} is not a finite number")
        return "number", float_bits(f)
    if isinstance(value, str):
        return "string", value
    raise AuditError(f"{what} is not a string, number, boolean or null")


def digest_order(events: Iterable[Event]) -> list[Event]:
    """Digest order: observed_at, then id (code-point order equals UTF-8 byte order)."""
    return sorted(events, key=lambda e: (e.observed_at, e.id))


def _unique(events: Sequence[Event]) -> None:
    seen: set[str] = set()
    for e in events:
        if e.id in seen:
            raise AuditError(f"duplicate event {q(e.id)}")
        seen.add(e.id)


def _tf(b: bool) -> str:
    return "true" if b else "false"


# --- per-event encodings ------------------------------------------------------


def _event_v2(e: Event) -> bytes:
    w = f"event {q(e.id)}"
    vt, vv = typed_value(e.value, f"{w} value")
    _, conf = typed_value(e.confidence, f"{w} confidence")
    return b"".join(
        (
            field(e.id, f"{w} id"),
            field(e.kind, f"{w} kind"),
            field(e.subject, f"{w} subject"),
            field(e.predicate, f"{w} predicate"),
            field(vt),
            field(vv, f"{w} value"),
            field(conf),
            field(e.source, f"{w} source"),
            field(_tf(e.retraction)),
            field(format_fixed(e.observed_at)),
        )
    )


def _event_v3(e: Event) -> bytes:
    w = f"event {q(e.id)}"
    return _event_v2(e) + field(e.evidence, f"{w} evidence") + field(e.evidence_id, f"{w} evidence_id")


def event_encoding_v4(e: Event) -> bytes:
    """The bytes one event contributes to a v4 stream (also what its fingerprint hashes)."""
    w = f"event {q(e.id)}"
    parts = [_event_v3(e), field(str(len(e.replaces)))]
    for r in e.replaces:
        vt, vv = typed_value(r.value, f"{w} replaces value")
        parts += [field(r.predicate, f"{w} replaces predicate"), field(vt), field(vv, f"{w} replaces value")]
    parts.append(field(e.caused_by, f"{w} caused_by"))
    return b"".join(parts)


def event_fingerprint(e: Event) -> str:
    """First 16 hex digits of SHA-256 over the event's v4 encoding (names a changed event)."""
    return hashlib.sha256(event_encoding_v4(e)).hexdigest()[:16]


# --- event digests ------------------------------------------------------------


def digest_legacy(events: Iterable[Event]) -> str:
    """The Go engine's first digest (``Digest``, export.go): ``sha256:<64 hex>``, no header."""
    evs = digest_order(events)
    _unique(evs)
    h = hashlib.sha256()
    for e in evs:
        w = f"event {q(e.id)}"
        conf = e.confidence
        if not isinstance(conf, (int, float)) or isinstance(conf, bool) or not math.isfinite(conf):
            raise AuditError(f"{w} confidence is not a finite number")
        for part in (
            field(e.id, f"{w} id"),
            field(e.kind, f"{w} kind"),
            field(e.subject, f"{w} subject"),
            field(e.predicate, f"{w} predicate"),
            field(value_key(e.value), f"{w} value"),
            field(format_number(conf)),
            field(e.source, f"{w} source"),
            field(_tf(e.retraction)),
            field(format_fixed(e.observed_at)),
        ):
            h.update(part)
    return PREFIX_LEGACY + h.hexdigest()


def _typed_digest(events: Iterable[Event], label: str, prefix: str, enc) -> str:
    evs = digest_order(events)
    _unique(evs)
    h = hashlib.sha256()
    h.update(field(label))
    h.update(field(str(len(evs))))
    for e in evs:
        h.update(enc(e))
    return prefix + h.hexdigest()


def digest_v2(events: Iterable[Event]) -> str:
    """``sha256:v2:``: label, count, then per event id ... observed_at with typed values."""
    return _typed_digest(events, LABEL_V2, PREFIX_V2, _event_v2)


def digest_v3(events: Iterable[Event]) -> str:
    """``sha256:v3:``: as v2 with its own label and evidence, evidence_id per event."""
    return _typed_digest(events, LABEL_V3, PREFIX_V3, _event_v3)


def digest_v4(events: Iterable[Event]) -> str:
    """``sha256:v4:`` (ours): as v3 with its own label plus replaces and caused_by per event."""
    return _typed_digest(events, LABEL_V4, PREFIX_V4, event_encoding_v4)


def verify_event_digest(events: Iterable[Event], expected: str) -> None:
    """Check an event digest of any known format; raise DigestMismatch if it differs."""
    evs = list(events)
    if expected.startswith(PREFIX_V2):
        got = digest_v2(evs)
    elif expected.startswith(PREFIX_V3):
        got = digest_v3(evs)
    elif expected.startswith(PREFIX_V4):
        got = digest_v4(evs)
    elif expected.startswith(PREFIX_LEGACY) and _HEX64.match(expected[len(PREFIX_LEGACY) :]):
        got = digest_legacy(evs)
    else:
        raise AuditError("recall: unsupported digest format")
    if got != expected:
        raise DigestMismatch(f"digest mismatch: the events digest to {got}, not {expected}")


# --- bundle checksums ---------------------------------------------------------


def _registry_entry_v1(name: str, d: Mapping[str, Any]) -> list[bytes]:
    # a text field given as null reads as empty (load._str_field), as a JSON null left a Go string
    w = f"registry entry {q(name)}"
    out = [
        field(name, w),
        field(d.get("cardinality") or "", f"{w} cardinality"),
        field(d.get("value_type") or "", f"{w} value_type"),
        field(d.get("description") or "", f"{w} description"),
    ]
    allowed = list(d.get("allowed") or [])
    aliases = sorted(d.get("aliases") or [])
    if allowed or aliases:
        out += [field("allowed"), field(str(len(allowed)))]
        out += [field(a, f"{w} allowed value") for a in allowed]
        out += [field("aliases"), field(str(len(aliases)))]
        out += [field(a, f"{w} alias") for a in aliases]
    return out


def _header(
    version: str,
    event_version: str,
    fold_version: str,
    scope_subject: str,
    scope_predicate: str,
    as_of: int,
    events_digest: str,
    registry_entries: int,
) -> list[bytes]:
    """The fields both bundle checksums start with, in this order."""
    return [
        field(version, "version"),
        field(event_version, "event_version"),
        field(fold_version, "fold_version"),
        field(scope_subject, "scope subject"),
        field(scope_predicate, "scope predicate"),
        field(format_fixed(as_of)),
        field(events_digest),
        field(str(registry_entries)),
    ]


def bundle_checksum_v1(
    *,
    version: str,
    event_version: str,
    fold_version: str,
    scope_subject: str,
    scope_predicate: str,
    as_of: int,
    events_digest: str,
    registry: Mapping[str, Mapping[str, Any]],
    registry_log_digest: str | None,
) -> str:
    """The Go engine's ``sha256:audit-v1:`` checksum (docs/audit.md, section 4), with its conditional parts.

    ``registry_log_digest`` is the DigestV3 of the registry log, or None when the log is empty.
    """
    parts = _header(
        version, event_version, fold_version, scope_subject, scope_predicate, as_of, events_digest, len(registry)
    )
    for name in sorted(registry):
        parts += _registry_entry_v1(name, registry[name])
    if registry_log_digest is not None:
        parts += [field("registry-log"), field(registry_log_digest)]
    return PREFIX_AUDIT_V1 + hashlib.sha256(b"".join(parts)).hexdigest()


def registry_entry_encoding_v2(name: str, d: Mapping[str, Any]) -> bytes:
    """The bytes one registry entry contributes to an audit-v2 checksum (every field, always)."""
    w = f"registry entry {q(name)}"
    allowed = list(d.get("allowed") or [])
    aliases = sorted(d.get("aliases") or [])
    excludes = sorted(d.get("excludes") or [])
    out = [
        field(name, w),
        field(d.get("cardinality") or "", f"{w} cardinality"),
        field(d.get("value_type") or "", f"{w} value_type"),
        field(d.get("description") or "", f"{w} description"),
        field("allowed"),
        field(str(len(allowed))),
        *(field(a, f"{w} allowed value") for a in allowed),
        field("aliases"),
        field(str(len(aliases))),
        *(field(a, f"{w} alias") for a in aliases),
        field("excludes"),
        field(str(len(excludes))),
        *(field(a, f"{w} excludes") for a in excludes),
        field("historical"),
        field(_tf(bool(d.get("historical", False)))),
    ]
    return b"".join(out)


def bundle_checksum_v2(
    *,
    version: str,
    event_version: str,
    fold_version: str,
    scope_subject: str,
    scope_predicate: str,
    as_of: int,
    events_digest: str,
    registry: Mapping[str, Mapping[str, Any]],
    registry_log_digest: str,
    recorded: Mapping[str, int] | None = None,
) -> str:
    """Our ``sha256:audit-v2:`` checksum: every field of the bundle except fingerprints and
    digest. ``recorded`` (the optional ``recorded_at``) adds its entries by id; a bundle
    without it checksums as before it existed."""
    parts = _header(
        version, event_version, fold_version, scope_subject, scope_predicate, as_of, events_digest, len(registry)
    )
    for name in sorted(registry):
        parts.append(registry_entry_encoding_v2(name, registry[name]))
    parts += [field("registry-log"), field(registry_log_digest)]
    if recorded is not None:
        parts += [field("recorded-at"), field(str(len(recorded)))]
        for eid in sorted(recorded):
            parts += [field(eid, "recorded_at id"), field(format_fixed(recorded[eid]))]
    return PREFIX_AUDIT_V2 + hashlib.sha256(b"".join(parts)).hexdigest()
