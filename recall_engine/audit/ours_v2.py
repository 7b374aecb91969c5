"""This engine's bundle format, ``recall-audit-v2`` (written and read; docs/audit.md).

Events ``recall-event-v3`` (with ``replaces`` and ``caused_by``), ``recall-fold-v4``,
the registry log of op records, every field inside the ``sha256:audit-v2:``
checksum, and per-event fingerprints so that a changed event is named.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import AuditError, DigestMismatch, RegistryError
from ..fold import scope_ids
from ..instants import format_rfc3339
from ..records import EVENT_VERSION, FOLD_VERSION, RESERVED_PAIRS, SOURCES, Event
from ..registry import Definition, check_definition
from ..timeline import Timeline
from ..values import storage_class_of
from .bundle_format import Checked, Envelope, class_error, requote
from .digest import bundle_checksum_v2, digest_v4, event_fingerprint, q
from .go_v1 import ENVELOPE_FIELDS as GO_ENVELOPE_FIELDS
from .go_v1 import GO_DEF_FIELDS, GO_EVENT_FIELDS

if TYPE_CHECKING:
    from .verify import VerifyResult

AUDIT_V2 = "recall-audit-v2"
OUR_FOLD_VERSIONS = (FOLD_VERSION, "recall-fold-v4")  # v4: excludes as of each event, replaced in-pair only
DEF_FIELDS = GO_DEF_FIELDS + ("excludes", "historical")
_HINT = (
    "; every event and registry event matches its fingerprint and the registry matches the "
    "registry log, so its scope, as_of or digest field was changed"
)


class OursV2:
    """``recall-audit-v2``: every field checksummed, every event fingerprinted."""

    version: str = AUDIT_V2
    envelope_fields: tuple[str, ...] = GO_ENVELOPE_FIELDS + ("fingerprints", "recorded_at")
    definition_fields: tuple[str, ...] = DEF_FIELDS
    event_fields: frozenset[str] = GO_EVENT_FIELDS | {"replaces", "caused_by"}
    sources: tuple[str, ...] = SOURCES

    def check_versions(self, env: Envelope) -> None:
        if env.event_version != EVENT_VERSION:
            raise AuditError(
                f"event version {q(env.event_version)} cannot be replayed by this build, which writes {q(EVENT_VERSION)}"
            )
        if env.fold_version not in OUR_FOLD_VERSIONS:
            raise AuditError(
                f"fold version {q(env.fold_version)} cannot be replayed by this build, which writes {q(FOLD_VERSION)} "
                f"and reads {q(OUR_FOLD_VERSIONS[1])} with the rules it was written under"
            )

    def check_registry(self, defs: Mapping[str, Definition]) -> None:
        for d in defs.values():
            try:
                check_definition(d)
            except RegistryError as e:
                raise AuditError(requote(str(e))) from None

    def check_events(self, env: Envelope, events: Sequence[Event], log: Sequence[Event]) -> None:
        return None  # recall-event-v3 records everything a bundle event may carry

    def digests(self, env: Envelope, events: Sequence[Event], log: Sequence[Event]) -> tuple[str, str | None]:
        return digest_v4(events), digest_v4(log)

    def check(
        self, env: Envelope, defs: Mapping[str, Definition], events: Sequence[Event], log: Sequence[Event]
    ) -> Checked:
        timeline = our_timeline(log, env.fold_version)  # 4
        _check_registry_matches_log(env.registry, timeline)
        _check_scope(env, timeline, events)  # 5
        _check_fingerprints(env.fingerprints["events"], events, "event")
        _check_fingerprints(env.fingerprints["registry_log"], log, "registry event")
        _check_recorded(env.recorded, events, log)
        return Checked(timeline=timeline, registry=dict(timeline.predicates()), hint=_HINT)

    def checksum(self, env: Envelope, events_digest: str, log_digest: str | None) -> str:
        assert env.as_of is not None and log_digest is not None
        return bundle_checksum_v2(
            version=env.version,
            event_version=env.event_version,
            fold_version=env.fold_version,
            scope_subject=env.scope_subject,
            scope_predicate=env.scope_predicate,
            as_of=env.as_of,
            events_digest=events_digest,
            registry=env.registry,
            registry_log_digest=log_digest,
            recorded=env.recorded,
        )

    def replay_events(self, events: Sequence[Event]) -> tuple[list[Event], dict[str, Event]]:
        return list(events), {}  # subjects are stored normalized

    def import_events(self, result: VerifyResult, declare_at: int | None) -> tuple[list[Event], list[Event]]:
        """Exactly the bundle's registry log and events: importing twice adds nothing
        (same ids) and exporting again reproduces the digest."""
        return list(result.registry_log), list(result.event_list)


def our_timeline(log: Sequence[Event], fold_version: str = FOLD_VERSION) -> Timeline:
    try:
        return Timeline(log, fold_version=fold_version)
    except RegistryError as err:
        raise AuditError(requote(str(err))) from None


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
        for k in DEF_FIELDS:
            g: Any = got.get(k)  # the bundle's JSON, any shape
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


def _check_scope(env: Envelope, timeline: Timeline, events: Sequence[Event]) -> None:
    wanted = scope_ids(events, env.scope_predicate, timeline) if env.scope_predicate else set()
    for e in events:
        if (e.subject, e.predicate) in RESERVED_PAIRS:
            raise AuditError(f"event {q(e.id)} belongs to the reserved pair {e.subject} / {e.predicate}")
        if (env.scope_subject and e.subject != env.scope_subject) or (env.scope_predicate and e.id not in wanted):
            raise AuditError(f"event {q(e.id)} is outside scope")
        owner = timeline.canonical(e.predicate)
        d = timeline.definition(owner)
        if d is None:
            raise AuditError(f"event {q(e.id)} predicate is not in registry")
        if e.value is not None and storage_class_of(e.value) != d.storage_class:
            raise class_error(e, owner, d)


def _check_recorded(recorded: Mapping[str, int] | None, events: Sequence[Event], log: Sequence[Event]) -> None:
    """``recorded_at``, when present, names every event and registry event, and nothing else."""
    if recorded is None:
        return
    ids = {e.id for e in (*events, *log)}
    for eid in recorded:
        if eid not in ids:
            raise AuditError(f"recorded_at names {q(eid)}, which is not an event of the bundle")
    for e in (*events, *log):
        if e.id not in recorded:
            raise AuditError(f"event {q(e.id)} has no recorded_at; a bundle records every event's or none")


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
