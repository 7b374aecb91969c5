"""Standalone verification of a bundle, in a fixed order (docs/audit.md, "Verifier checks").

No database and no embedder: the bundle is read, each step asks the bundle's
format (``BundleFormat``) what it requires, and the first failure is named.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from dataclasses import field as dc_field
from typing import Any

from ..errors import AuditError, DigestMismatch
from ..records import Event
from ..registry import Definition
from ..text import simple_lower
from ..timeline import Timeline
from .bundle_format import MAX_EVENTS, BundleFormat, Envelope, decode_bundle_event
from .digest import digest_order, q
from .go_v1 import AUDIT_V1
from .load import FORMATS, envelope, load_bundle
from .ours_v2 import AUDIT_V2


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


def _format(env: Envelope) -> BundleFormat:
    fmt = FORMATS.get(env.version)
    if fmt is None:
        raise AuditError(
            f"bundle version {q(env.version)} cannot be replayed by this build, which writes {q(AUDIT_V2)} "
            f"and reads {q(AUDIT_V2)} and {q(AUDIT_V1)}"
        )
    return fmt


def _registry_definitions(env: Envelope, fmt: BundleFormat) -> dict[str, Definition]:
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
    fmt.check_registry(defs)
    return defs


def _check_header(env: Envelope) -> tuple[BundleFormat, dict[str, Definition]]:
    fmt = _format(env)
    fmt.check_versions(env)
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
    defs = _registry_definitions(env, fmt)
    if env.scope_predicate and env.scope_predicate not in defs:
        raise AuditError("predicate scope is not in the registry")
    return fmt, defs


def verify(bundle: dict | str | bytes | bytearray, *, digest: str | None = None) -> VerifyResult:
    """Check a bundle standalone (no database, no embedder); raise AuditError naming what failed.

    Order (docs/audit.md "Verifier checks"): decode; header; counts; events (strict
    decoding, duplicate ids, UTF-8, event digest); registry log; scope, registry
    membership and value class; fingerprints (ours); checksum; then ``digest``, a
    digest obtained separately, must equal the bundle's exactly.
    """
    env = envelope(load_bundle(bundle))
    fmt, defs = _check_header(env)  # 1
    if len(env.events) > MAX_EVENTS:  # 2
        raise AuditError(f"more than {MAX_EVENTS} events")
    if len(env.registry_log) > MAX_EVENTS:
        raise AuditError(f"registry log has more than {MAX_EVENTS} events")
    events = [decode_bundle_event(o, fmt) for o in env.events]  # 3
    log = [decode_bundle_event(o, fmt, where="registry event") for o in env.registry_log]
    fmt.check_events(env, events, log)
    events_digest, log_digest = fmt.digests(env, events, log)
    checked = fmt.check(env, defs, events, log)  # 4, 5
    want = fmt.checksum(env, events_digest, log_digest)  # 6
    if env.digest != want:
        raise DigestMismatch(
            f"digest mismatch: the bundle's digest is {q(env.digest)}, but its content digests to {q(want)}{checked.hint}"
        )
    if digest is not None and digest != env.digest:
        raise DigestMismatch(
            f"digest mismatch: the bundle's digest {q(env.digest)} differs from the expected {q(digest)}"
        )
    assert env.as_of is not None
    if env.recorded is not None:  # the exporting store's recorded instants, checksummed above
        events = [replace(e, recorded_at=env.recorded[e.id]) for e in events]
        log = [replace(e, recorded_at=env.recorded[e.id]) for e in log]
    return VerifyResult(
        valid=True,
        digest=env.digest,
        events=len(events),
        version=env.version,
        event_version=env.event_version,
        fold_version=env.fold_version,
        as_of=env.as_of,
        scope_subject=env.scope_subject,
        scope_predicate=env.scope_predicate,
        event_list=tuple(digest_order(events)),
        registry_log=tuple(digest_order(log)),
        registry=checked.registry,
        timeline=checked.timeline,
    )
