"""The Go engine's bundle format, ``recall-audit-v1`` (read only; docs/formats.md).

Events ``recall-event-v1``/``v2``, folds ``recall-fold-v2``/``v3``, checksum
``sha256:audit-v1:``. The bundle registry plays the part of the Go client's
configured registry; the registry log holds the Go engine's flat records.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from ..errors import AuditError, RegistryError
from ..records import REGISTRY_PREDICATE, Event
from ..registry import NOTE_DEFINITION, Definition, RegistryRecord, decode_record
from ..text import NOTE, PREDICATE_RE, simple_lower
from ..timeline import LoggedRecord, Timeline
from ..values import VALUE_TYPES, storage_class_of
from .bundle_format import Checked, Envelope, class_error, requote
from .digest import bundle_checksum_v1, digest_order, digest_v2, digest_v3, q

if TYPE_CHECKING:
    from .verify import VerifyResult

AUDIT_V1 = "recall-audit-v1"
GO_EVENT_VERSIONS = ("recall-event-v2", "recall-event-v1")
GO_FOLD_VERSIONS = ("recall-fold-v3", "recall-fold-v2")
GO_SOURCES = ("user_stated", "agent_inferred", "tool_result")
ENVELOPE_FIELDS = (
    "version",
    "event_version",
    "fold_version",
    "scope",
    "as_of",
    "registry",
    "registry_log",
    "events",
    "digest",
)
GO_DEF_FIELDS = ("cardinality", "value_type", "description", "allowed", "aliases")
GO_EVENT_FIELDS = frozenset(
    (
        "id",
        "kind",
        "subject",
        "predicate",
        "value",
        "confidence",
        "source",
        "retraction",
        "observed_at",
        "evidence",
        "evidence_id",
    )
)
_NEG_INF = -(2**63)
_POS_INF = 2**63


class GoV1:
    """``recall-audit-v1``: verified and replayed exactly as the Go engine does."""

    version: str = AUDIT_V1
    envelope_fields: tuple[str, ...] = ENVELOPE_FIELDS
    definition_fields: tuple[str, ...] = GO_DEF_FIELDS
    event_fields: frozenset[str] = GO_EVENT_FIELDS
    sources: tuple[str, ...] = GO_SOURCES

    def check_versions(self, env: Envelope) -> None:
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

    def check_registry(self, defs: Mapping[str, Definition]) -> None:
        _check_go_registry(defs)

    def check_events(self, env: Envelope, events: Sequence[Event], log: Sequence[Event]) -> None:
        if env.event_version == "recall-event-v1":
            for e in events:
                if e.evidence or e.evidence_id:
                    raise AuditError(f"event {q(e.id)} carries evidence, which recall-event-v1 bundles cannot record")

    def digests(self, env: Envelope, events: Sequence[Event], log: Sequence[Event]) -> tuple[str, str | None]:
        events_digest = digest_v2(events) if env.event_version == "recall-event-v1" else digest_v3(events)
        return events_digest, (digest_v3(log) if log else None)

    def check(
        self, env: Envelope, defs: Mapping[str, Definition], events: Sequence[Event], log: Sequence[Event]
    ) -> Checked:
        _check_scope(env, defs, events)  # 4
        go_log = _go_log(log)  # 5
        if env.fold_version == "recall-fold-v2" and _needs_fold_v3(go_log):
            raise AuditError(
                'fold version "recall-fold-v2" cannot replay this registry log, which needs "recall-fold-v3"'
            )
        return Checked(timeline=go_timeline(defs, go_log), registry=defs)

    def checksum(self, env: Envelope, events_digest: str, log_digest: str | None) -> str:
        assert env.as_of is not None
        return bundle_checksum_v1(
            version=env.version,
            event_version=env.event_version,
            fold_version=env.fold_version,
            scope_subject=env.scope_subject,
            scope_predicate=env.scope_predicate,
            as_of=env.as_of,
            events_digest=events_digest,
            registry=env.registry,
            registry_log_digest=log_digest,
        )

    def replay_events(self, events: Sequence[Event]) -> tuple[list[Event], dict[str, Event]]:
        # Go groups by normalized subject; a belief keeps its event's own spelling.
        original: dict[str, Event] = {}
        norm = []
        for e in events:
            s = simple_lower(e.subject.strip())
            if s != e.subject:
                original[e.id] = e
                e = replace(e, subject=s)
            norm.append(e)
        return norm, original

    def import_events(self, result: VerifyResult, declare_at: int | None) -> tuple[list[Event], list[Event]]:
        """The Go registry log (its flat records read as declare/define/redefine/merge) plus,
        for each registry entry the log does not define, a ``declare`` record (with the
        entry's aliases) at ``declare_at``, by default 1 ns before the bundle's earliest
        instant, so the configured definition governs the whole imported history as it
        did in Go. Those records are deterministic: a second import appends nothing.
        """
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
            rec = RegistryRecord(
                op="declare", name=name, definition=d, reason=f"imported from audit bundle {result.digest}"
            )
            declares.append(rec.to_event(at))
        return [*declares, *result.registry_log], list(result.event_list)


def _check_go_registry(defs: Mapping[str, Definition]) -> None:
    """The Go engine's registry rules (docs/formats.md), with its messages."""
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


def _check_scope(env: Envelope, defs: Mapping[str, Definition], events: Sequence[Event]) -> None:
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
            raise class_error(e, owner, d)


def _go_log(log: Sequence[Event]) -> list[tuple[Event, RegistryRecord]]:
    """Decode a Go registry log (docs/formats.md): flat records only, oldest first."""
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
            raise AuditError(requote(str(err), e.id)) from None
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
    """The Go engine's schema (docs/formats.md; no mismatch checks) as a Timeline.

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
                records.append(
                    LoggedRecord(e.observed_at, e.id, RegistryRecord(op, owner, d, retroactive=rec.retroactive))
                )
        else:
            d = replace(cfg[owner], name=owner, aliases=())
            records.append(LoggedRecord(_NEG_INF, f"configured:{owner}", RegistryRecord("declare", owner, d)))
    for a in sorted(alias):
        target = canonical(a)
        if target != a and a not in readable:
            records.append(LoggedRecord(_POS_INF, f"alias:{a}", RegistryRecord("merge", a, into=target)))
    return Timeline(records=records, fold_version=GO_FOLD_VERSIONS[0])  # Go's rules, Go's replaced
