"""Offline replay: the beliefs a verified bundle holds at its as_of (docs/audit.md)."""

from __future__ import annotations

from dataclasses import replace

from ..errors import AuditError, DigestMismatch
from ..fold import fold
from ..records import Belief
from ..text import NOTE
from .digest import q
from .load import FORMATS
from .ours_v2 import our_timeline
from .scope import target
from .verify import VerifyResult, verify


def replay(
    bundle: dict | str | bytes | bytearray | VerifyResult,
    *,
    notes_only: bool = False,
    digest: str | None = None,
    known_at: int | None = None,
) -> list[Belief]:
    """The beliefs at the bundle's as_of: verify, group by (subject, canonical predicate), fold each.

    Pairs are sorted by subject then predicate (byte order); beliefs keep fold order
    within a pair. ``notes_only`` keeps only ``note`` beliefs. No ``elsewhere`` is
    attached: a replay is the fold of each pair, as in the Go engine. ``known_at``
    folds only the events and registry events the exporting store had recorded by then
    (a bundle exported with its recorded instants), as a read known at that instant did.
    """
    v = bundle if isinstance(bundle, VerifyResult) else verify(bundle, digest=digest)
    if isinstance(bundle, VerifyResult) and digest is not None and digest != v.digest:
        raise DigestMismatch(
            f"digest mismatch: the bundle's digest {q(v.digest)} differs from the expected {q(digest)}"
        )
    tl = v.timeline
    assert tl is not None
    event_list = v.event_list
    if known_at is not None:
        if any(e.recorded_at is None for e in (*v.event_list, *v.registry_log)):
            raise AuditError(
                "the bundle carries no recorded instants, so it cannot be replayed as known at an instant "
                "(export it with its recorded instants: audit export --recorded)"
            )
        event_list = tuple(e for e in v.event_list if e.recorded_at <= known_at)  # type: ignore[operator]
        tl = our_timeline([e for e in v.registry_log if e.recorded_at <= known_at], v.fold_version)  # type: ignore[operator]
    events, original = FORMATS[v.version].replay_events(event_list)
    pairs = sorted({(e.subject, target(e, tl)) for e in events})
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
