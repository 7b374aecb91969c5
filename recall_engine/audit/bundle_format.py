"""What every bundle format provides, and the helpers both formats share (docs/audit.md).

A bundle format is one ``version`` string with its own field lists, registry
rules, digests, scope rules, checksum, replay grouping and import rule. ``verify``
runs the same fixed order of checks for every format and asks the format at each
step, so a format is read in one module and nowhere else.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import AuditError, InvalidEvent
from ..instants import parse_instant
from ..records import Event, decode_event
from ..registry import Definition
from ..timeline import Timeline
from ..values import STORAGE_CLASS, describe
from .digest import q

if TYPE_CHECKING:
    from .verify import VerifyResult

# Go's zero time.Time: what a missing or zeroed instant reads as.
GO_ZERO = parse_instant("0001-01-01T00:00:00Z")
RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$")
MAX_EVENTS = 10_000  # per bundle (events), and per registry log


@dataclass
class Envelope:
    """A bundle's top-level fields, type-checked but not yet validated."""

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
    # ours: when the exporting store recorded each event and registry event (ids to
    # nanoseconds), or None when the bundle was exported without them (docs/audit.md)
    recorded: dict[str, int] | None = None


@dataclass(frozen=True)
class Checked:
    """What a format's checks of steps 4 and 5 yield: the schema to fold with."""

    timeline: Timeline
    registry: Mapping[str, Definition]
    hint: str = ""  # appended to a checksum mismatch message


class BundleFormat(Protocol):
    """One bundle version: how it is decoded, digested, checked, replayed and imported."""

    version: str
    envelope_fields: tuple[str, ...]
    definition_fields: tuple[str, ...]
    event_fields: frozenset[str]
    sources: tuple[str, ...]

    def check_versions(self, env: Envelope) -> None:
        """Step 1: refuse event and fold versions this build cannot replay."""

    def check_registry(self, defs: Mapping[str, Definition]) -> None:
        """Step 1: the bundle registry's rules, with this format's messages."""

    def check_events(self, env: Envelope, events: Sequence[Event], log: Sequence[Event]) -> None:
        """Step 3: what this format's event version cannot record."""

    def digests(self, env: Envelope, events: Sequence[Event], log: Sequence[Event]) -> tuple[str, str | None]:
        """Step 3: the digests of the events and of the registry log."""

    def check(
        self, env: Envelope, defs: Mapping[str, Definition], events: Sequence[Event], log: Sequence[Event]
    ) -> Checked:
        """Steps 4 and 5: registry log, scope, membership, value class (and fingerprints)."""

    def checksum(self, env: Envelope, events_digest: str, log_digest: str | None) -> str:
        """Step 6: the checksum the bundle's ``digest`` must equal."""

    def replay_events(self, events: Sequence[Event]) -> tuple[list[Event], dict[str, Event]]:
        """The events as replay groups them, and the original of each event it respelled."""

    def import_events(self, result: VerifyResult, declare_at: int | None) -> tuple[list[Event], list[Event]]:
        """(registry events, events) a store appends to import the bundle."""


_PY_QUOTED = re.compile(r"'([^'\\\"]*)'")


def requote(msg: str, eid: object = None) -> str:
    """Messages of the pure core quote names Python's way ('x'); bundle messages quote them "x"."""
    if isinstance(eid, str):
        msg = msg.replace(repr(eid), q(eid), 1)
    return _PY_QUOTED.sub(lambda m: q(m.group(1)), msg)


def decode_bundle_event(obj: Any, fmt: BundleFormat, where: str = "event") -> Event:
    """Strictly decode one bundle event (docs/records.md); the message names the event and field."""
    if not isinstance(obj, dict):
        raise AuditError(f"decode audit: each {where} must be a JSON object")
    eid = obj.get("id")
    extra = [k for k in obj if k not in fmt.event_fields]
    if extra:
        raise AuditError(f"decode audit: {where} {q(eid)} has unknown field {q(extra[0])}")
    at = obj.get("observed_at")
    if isinstance(eid, str) and eid.strip() and (not isinstance(at, str) or not RFC3339.match(at)):
        raise AuditError(f"event {q(eid)} has invalid observed_at")
    try:
        e = decode_event(obj, allowed_sources=fmt.sources)
    except InvalidEvent as err:
        raise AuditError(requote(str(err), eid)) from None
    except (TypeError, ValueError, OverflowError):
        raise AuditError(f"{where} {q(eid)} is not a valid event") from None
    if e.observed_at == GO_ZERO:
        raise AuditError(f"event {q(e.id)} has invalid observed_at")
    return e


def class_error(e: Event, owner: str, d: Definition) -> AuditError:
    return AuditError(
        f"event {q(e.id)} has invalid value: {q(owner)} stores {STORAGE_CLASS.get(d.value_type, 'string')} "
        f"values, got {describe(e.value)}"
    )
