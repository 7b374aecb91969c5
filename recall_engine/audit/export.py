"""Export: a ``recall-audit-v2`` bundle of the histories in a scope (docs/audit.md).

A bundle is verified before it is returned, so an export never writes a bundle
that does not verify.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import AuditError
from ..fold import scope_ids
from ..instants import format_fixed, format_rfc3339
from ..records import EVENT_VERSION, FOLD_VERSION, RESERVED_PAIRS, Event
from ..text import simple_lower
from .bundle_format import GO_ZERO, MAX_EVENTS
from .digest import bundle_checksum_v2, digest_order, digest_v4, event_fingerprint, q
from .ours_v2 import AUDIT_V2, our_timeline, registry_view
from .verify import verify


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
    recorded: bool = False,
) -> dict[str, Any]:
    """A ``recall-audit-v2`` bundle of the histories in scope at an explicit instant.

    ``events`` may be any superset of the scope (a whole collection, or a subject's
    events plus those that bear on the scope); the bundle keeps every event of the
    scope's pairs under every name that resolves to them, promoted notes, and the
    events of the same subjects that bear on them through excludes or ``replaces``,
    including events after ``as_of``. Reserved pairs are left out. ``recorded`` adds
    ``recorded_at``, when the store recorded each event and registry event (events read
    from a store carry it), so a replay can answer as known at an instant. More than 10,000
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
    timeline = our_timeline(log)
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
    instants: dict[str, int] | None = None
    if recorded:
        instants = {}
        for e in (*kept, *log):
            if e.recorded_at is None:
                raise AuditError(f"event {q(e.id)} carries no recorded instant (it was not read from a store)")
            instants[e.id] = e.recorded_at
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
        recorded=instants,
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
    if instants is not None:
        bundle["recorded_at"] = {eid: format_fixed(instants[eid]) for eid in sorted(instants)}
    try:
        verify(bundle)
    except AuditError as err:
        raise AuditError(f"the export would not verify, so nothing was exported: {err}") from None
    return bundle


def encode_bundle(bundle: Mapping[str, Any]) -> bytes:
    """The bundle as UTF-8 JSON text, indented with two spaces, ending with a newline."""
    return (json.dumps(bundle, ensure_ascii=False, indent=2, allow_nan=False) + "\n").encode("utf-8")
