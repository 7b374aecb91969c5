"""Import: the events a store appends to hold a verified bundle (docs/audit.md)."""

from __future__ import annotations

from ..records import Event
from .load import FORMATS
from .verify import VerifyResult


def import_events(result: VerifyResult, *, declare_at: int | None = None) -> tuple[list[Event], list[Event]]:
    """(registry events, events) to append to a store to import a verified bundle.

    Our bundles: exactly their registry log and events. Go bundles: their registry
    log plus a deterministic ``declare`` per configured entry the log does not
    define (``GoV1.import_events``), so a second import appends nothing.
    """
    return FORMATS[result.version].import_events(result, declare_at)
