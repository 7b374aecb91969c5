"""Audit bundles against a store: export a scope, import a verified bundle.

Verification and replay are pure (recall_engine.audit) and never touch a
store; this module only reads what an export needs and appends what an import
brings, in one transaction.
"""

from __future__ import annotations

from typing import Any

from recall_engine.admission import Admission
from recall_engine.audit import build_bundle, import_events, verify
from recall_engine.errors import AuditError, InvalidInput
from recall_engine.memory import Memory, check_import_room
from recall_engine.storage.base import MAX_PAIR_EVENTS
from recall_engine.text import normalize_subject

MAX_EXPORT = 10_000


def export_bundle(
    memory: Memory,
    *,
    subject: str | None = None,
    predicate: str | None = None,
    as_of: int | None = None,
    recorded: bool = False,
) -> dict[str, Any]:
    """A bundle of the complete histories in scope at an explicit instant; refused past 10,000 events."""
    store = memory.store
    at = memory.now() if as_of is None else as_of
    scope_subject = normalize_subject(subject) if subject else ""
    scope_predicate = memory.resolve(predicate) if predicate else ""
    if scope_subject:
        events = store.subject_events(scope_subject, limit=MAX_EXPORT)
    else:
        events = []
        for e in store.all_events():
            if e.subject.startswith("recall:"):
                continue
            events.append(e)
            if len(events) > MAX_EXPORT and not scope_predicate:
                raise AuditError(
                    f"the export holds more than {MAX_EXPORT} events (the limit); narrow it with --subject "
                    "or --predicate rather than truncating it"
                )
    return build_bundle(
        events,
        store.registry_events(),
        as_of=at,
        scope_subject=scope_subject,
        scope_predicate=scope_predicate,
        recorded=recorded,
    )


def import_bundle(memory: Memory, data: bytes | str) -> dict[str, Any]:
    """Verify a bundle, then append its registry log and events in one transaction."""
    result = verify(data)
    registry, events = import_events(result)
    store = memory.store
    before = store.count()
    batch = [*registry, *events]
    if len(batch) > MAX_PAIR_EVENTS + MAX_EXPORT:
        raise AuditError(f"the bundle holds more events than an import takes ({len(batch)})")
    try:  # checked as remember checks a statement, against this store's registry
        Admission(store.registry_events(), now=memory.now()).admit_all((f"bundle event {e.id!r}", e) for e in batch)
    except InvalidInput as e:
        raise AuditError(f"the bundle cannot be imported into this store: {e.message}; nothing was imported") from None
    if batch:
        check_import_room(store, lambda: batch)  # no pair past the cap; nothing written if one would be
        store.append(batch)
    imported = store.count() - before
    return {"imported": imported, "skipped": len(batch) - imported, "digest": result.digest}


MAX_BUNDLE_BYTES = 64 << 20


def read_bundle(path: str) -> bytes:
    """A bundle from a file or standard input (-), at most 64 MiB; every failure an AuditError."""
    import sys

    try:
        if path == "-":
            data = sys.stdin.buffer.read(MAX_BUNDLE_BYTES + 1)
        else:
            with open(path, "rb") as f:
                data = f.read(MAX_BUNDLE_BYTES + 1)
    except FileNotFoundError:
        raise AuditError(f"bundle file {path!r} does not exist") from None
    except IsADirectoryError:
        raise AuditError(f"{path!r} is a folder, not a bundle file") from None
    except OSError as exc:
        raise AuditError(f"cannot read {path!r}: {exc.strerror}") from None
    if len(data) > MAX_BUNDLE_BYTES:
        raise AuditError("audit input exceeds 64 MiB")
    return data
