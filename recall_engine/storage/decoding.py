"""Strict decoding of stored rows, shared by every backend, with a memo of recent results.

Decoding is a pure function of a row and rows never change (the log is
append-only), so recent results are remembered by log position. A hit must
match the row's id, instant and body exactly, so a row altered behind the
engine's back is decoded again, and refused.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Iterable

import orjson

from ..errors import InvalidEvent
from ..records import Event, _decode_plain, decode_event

# Rows a process decodes before it loads msgspec for the ones after (recall_engine.storage.typed).
# Its import costs about as many instructions as 1,500 rows decoded through orjson cost more
# than through it, so a short command reading a few events never pays for it, and a
# process that reads more pays at most about twice what it would have (the rent-or-buy
# rule; docs/benchmarks.md, "Eighth round, first reads").
SWITCH_ROWS = 1_500
_decoded = 0  # rows decoded through orjson so far, in this process
_statement: Callable[[str, int, int | None], Event | None] | None = None


def use_typed() -> None:
    """Decode ordinary statements with msgspec from now on (``SWITCH_ROWS`` explains when)."""
    global _statement
    if _statement is None:
        from .typed import statement

        _statement = statement


def loads(body: str) -> object:
    """``json.loads``, faster: the standard parser decides whatever orjson refuses
    (NaN, lone surrogates, malformed text and its message), and any number orjson may
    have rounded (it reads an integer past 64 bits as a float)."""
    try:
        obj = orjson.loads(body)
    except orjson.JSONDecodeError:
        return json.loads(body)
    return json.loads(body) if _rounded(obj) else obj


def _rounded(o: object) -> bool:
    """Holds a float as large as a 64-bit integer (it may have been one). A plain loop:
    this runs on every event read from disk."""
    values: Iterable[object]
    if type(o) is float:
        return not -9.2e18 < o < 9.2e18
    if type(o) is dict:
        values = o.values()
    elif type(o) is list:
        values = o
    else:
        return False
    for v in values:
        if type(v) is float:
            if not -9.2e18 < v < 9.2e18:
                return True
        elif (type(v) is dict or type(v) is list) and _rounded(v):
            return True
    return False


def stored_event(body: str, observed_at: int, recorded_at: int | None) -> Event:
    """``decode_event(loads(body), ...)``, parsing once. orjson's object differs from the
    standard parser's only where an integer past 64 bits became a float; in an event that
    decodes, only the value (or a replaced value) can hold a number that large (every
    other field is text, a flag, a confidence of at most 1, or ignored: the instant is the
    row's), so only those are checked. Anything else takes the reference path, whose
    object and error are exactly ``loads``'s.

    Once msgspec is loaded (``use_typed``) an ordinary statement is decoded by it first,
    straight into typed fields; it accepts only what this accepts and builds the same event."""
    fast = _statement
    if fast is not None:
        try:
            ev = fast(body, observed_at, recorded_at)
        except Exception:  # whatever it was (an instant that is not a number), the reference decides
            ev = None
        if ev is not None:
            return ev
    return _parsed_event(body, observed_at, recorded_at)


def _parsed_event(body: str, observed_at: int, recorded_at: int | None) -> Event:
    """``stored_event`` without msgspec's typed path."""
    try:
        obj = orjson.loads(body)
        # decode_event's own first step for an ordinary statement, called directly
        ev = (_decode_plain(obj, observed_at, recorded_at) if type(obj) is dict else None) or decode_event(
            obj, observed_at=observed_at, recorded_at=recorded_at
        )
    except (orjson.JSONDecodeError, InvalidEvent, ValueError, TypeError):
        ev = None
    if (
        ev is None
        or (type(ev.value) is not str and _rounded(ev.value))
        or (ev.replaces and any(_rounded(r.value) for r in ev.replaces))
    ):
        ev = decode_event(loads(body), observed_at=observed_at, recorded_at=recorded_at)
    return ev


def _count(rows: int) -> None:
    global _decoded
    _decoded += rows  # a race may lose a count: the switch comes a little later, nothing else
    if _decoded >= SWITCH_ROWS:
        use_typed()


class RowDecoder:
    def __init__(self, collection: str, memo_max: int) -> None:
        self.collection = collection
        self.memo_max = memo_max
        self._memo: dict[int, tuple[str, Event]] = {}
        self._lock = threading.Lock()

    def decode(self, rows: Iterable[tuple], memo: bool = True) -> list[Event]:
        """Decode (position, id, observed_at, body, recorded_at) rows; one bad row fails the whole read."""
        cache = self._memo if memo and self.memo_max else None
        get = cache.get if cache is not None else (lambda _p: None)
        out: list[Event] = []
        append = out.append
        fast = _statement
        eid = pos = None
        try:
            for pos, eid, at, body, rec in rows:
                hit = get(pos)
                if (
                    hit is not None
                    and hit[0] == body
                    and (ev := hit[1]).id == eid
                    and ev.observed_at == at
                    and ev.recorded_at == rec
                ):
                    append(ev)
                    continue
                got: Event | None = None
                if fast is not None:  # stored_event, its typed path called here: once a row
                    try:
                        got = fast(body, at, rec)
                    except Exception:
                        got = None
                ev = _parsed_event(body, at, rec) if got is None else got
                if ev.id != eid:
                    raise InvalidEvent(f"its body holds the id {ev.id!r}")
                if cache is not None:
                    # the event holds the row's id, instant and recorded instant: with the body, the whole row
                    cache[pos] = (body, ev)
                append(ev)
        except (InvalidEvent, ValueError, TypeError) as e:
            raise self.corrupt(eid, e, pos) from None
        if cache is not None and len(cache) > self.memo_max:
            self._trim()
        if _statement is None:
            _count(len(out))
        return out

    def _trim(self) -> None:
        # oldest entries first (dicts keep insertion order), a quarter at a time
        with self._lock:
            excess = len(self._memo) - self.memo_max * 3 // 4
            if excess > 0:
                for key in list(itertools.islice(self._memo, excess)):
                    self._memo.pop(key, None)

    def corrupt(self, eid: object, e: Exception, position: int | None = None) -> InvalidEvent:
        if isinstance(e, InvalidEvent):
            why = e.message
        elif isinstance(e, json.JSONDecodeError):
            why = f"its JSON is malformed ({e.msg} at character {e.pos})"
        else:
            why = str(e)
        err = InvalidEvent(
            f"stored event {eid!r} in collection {self.collection!r} does not decode: {why}; the read is refused"
        )
        err.event_id, err.position = eid, position  # for recall_engine.integrity.bad_events
        return err
