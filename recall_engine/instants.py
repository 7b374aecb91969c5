"""Instants are integer nanoseconds since the Unix epoch, UTC.

Python's ``datetime`` stops at microseconds, and ids, ordering and digests need
nanoseconds (the Go engine nudges instants by 1 ns), so instants never pass
through ``datetime`` on their way in or out except for calendar arithmetic.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

from .errors import InvalidInput

NS = 1_000_000_000
DAY_NS = 86_400 * NS
MINUTE_NS = 60 * NS

_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?"
    r"([Zz]|[+-]\d{2}:\d{2})\Z",
    re.ASCII,  # \d would otherwise take any Unicode digit ("٢٠٢٦")
)
_DAY = re.compile(r"^(\d{4})-(\d{2})-(\d{2})\Z", re.ASCII)


_EPOCH_DAY = date(1970, 1, 1).toordinal()


def _timegm(y: int, mo: int, d: int, h: int, mi: int, s: int) -> int:
    """``calendar.timegm`` of these fields, by its own arithmetic (d may run past the month),
    without importing ``calendar`` and ``locale`` on every command's way."""
    return (((date(y, mo, 1).toordinal() - _EPOCH_DAY + d - 1) * 24 + h) * 60 + mi) * 60 + s


def _epoch_seconds(y: int, mo: int, d: int, h: int = 0, mi: int = 0, s: int = 0) -> int:
    # datetime validates the calendar (month 13, Feb 30...) for us.
    datetime(y, mo, d, h, mi, s)
    return _timegm(y, mo, d, h, mi, s)


def parse_instant(text: str, *, what: str = "instant") -> int:
    """Parse RFC3339 (any fraction, any offset) or a day (its midnight UTC)."""
    raw = text.strip() if isinstance(text, str) else text
    if not isinstance(raw, str) or not raw:
        raise InvalidInput(f"{what} must be an RFC3339 time or a day such as 2026-09-01, got {text!r}")
    m = _DAY.match(raw)
    try:
        if m:
            y, mo, d = (int(g) for g in m.groups())
            return _epoch_seconds(y, mo, d) * NS
        m = _RFC3339.match(raw)
        if not m:
            raise ValueError
        y, mo, d, h, mi, s = (int(g) for g in m.groups()[:6])
        frac = m.group(7) or ""
        ns = int(frac.ljust(9, "0")) if frac else 0
        total = _epoch_seconds(y, mo, d, h, mi, s) * NS + ns
        off = m.group(8)
        if off not in ("Z", "z"):
            sign = 1 if off[0] == "+" else -1
            oh, om = int(off[1:3]), int(off[4:6])
            if oh > 23 or om > 59:
                raise ValueError
            total -= sign * (oh * 3600 + om * 60) * NS
        return total
    except ValueError:
        raise InvalidInput(f"{what} must be an RFC3339 time or a day such as 2026-09-01, got {text!r}") from None


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _split(ns: int) -> tuple[datetime, int]:
    # arithmetic, not fromtimestamp: it holds for every year from 1 to 9999 on every platform
    secs, frac = divmod(ns, NS)
    return _EPOCH + timedelta(seconds=secs), frac


def _seconds_text(dt: datetime) -> str:
    # not strftime: it drops the zero padding of years before 1000
    return f"{dt.year:04d}-{dt.month:02d}-{dt.day:02d}T{dt.hour:02d}:{dt.minute:02d}:{dt.second:02d}"


_LAST_SECOND: tuple[int, str] = (0, "1970-01-01T00:00:00")  # writes made together share their second


def _second_and_fraction(ns: int) -> tuple[str, int]:
    """``_seconds_text`` of the instant's second (kept for the last second asked for), and the nanoseconds past it."""
    global _LAST_SECOND
    secs, frac = divmod(ns, NS)
    last = _LAST_SECOND  # one tuple, read and replaced whole: safe across threads
    if last[0] == secs:
        return last[1], frac
    text = _seconds_text(_EPOCH + timedelta(seconds=secs))
    _LAST_SECOND = (secs, text)
    return text, frac


def format_fixed(ns: int) -> str:
    """The storage form: UTC with exactly nine fractional digits (sorts lexically)."""
    base, frac = _second_and_fraction(ns)
    return base + f".{frac:09d}Z"


def format_rfc3339(ns: int) -> str:
    """RFC3339 UTC with trailing fractional zeros trimmed, as Go's JSON encoder writes it."""
    base, frac = _second_and_fraction(ns)
    if frac:
        base += "." + f"{frac:09d}".rstrip("0")
    return base + "Z"


def format_day(ns: int) -> str:
    return _seconds_text(_split(ns)[0])[:10]


def day_start(ns: int) -> int:
    return ns - ns % DAY_NS


def weekday(ns: int) -> int:
    """Sunday = 0 ... Saturday = 6, as Go numbers weekdays."""
    return (_split(ns)[0].weekday() + 1) % 7


def add_months(ns: int, months: int) -> int:
    """Calendar month arithmetic with Go's AddDate normalisation (Jan 31 + 1 month = Mar 3)."""
    dt, frac = _split(ns)
    total = dt.year * 12 + (dt.month - 1) + months
    y, m0 = divmod(total, 12)
    first = _timegm(y, m0 + 1, 1, dt.hour, dt.minute, dt.second)
    return (first + (dt.day - 1) * 86_400) * NS + frac


# --- the range of instants a record may carry (docs/records.md, "Instants") ----

EARLIEST = 0  # 1970-01-01T00:00:00Z: no statement about memory is older than the epoch
STORED_INSTANTS = range(-(2**63), 2**63)  # both backends keep instants as signed 64-bit nanoseconds (1677 to 2262)
_INT64_MAX = STORED_INSTANTS[-1]
DEFAULT_LATEST = "2200-01-01T00:00:00Z"
LATEST_ENV = "RECALL_LATEST_INSTANT"


def _latest_from(text: str | None) -> int:
    at = parse_instant(text or DEFAULT_LATEST, what=LATEST_ENV)
    if not EARLIEST < at <= _INT64_MAX:
        raise InvalidInput(f"{LATEST_ENV} must lie after 1970 and before 2262-04-11, got {text!r}")
    return at


LATEST: int = _latest_from(None)
_LATEST_ERROR = ""  # a bad RECALL_LATEST_INSTANT, reported by the first check


def set_latest(text: str | None) -> int:
    """Move the upper bound (an RFC3339 instant or a day; None: the default). Returns it.

    ``clock`` applies ``RECALL_LATEST_INSTANT`` at startup (this module reads no environment).
    """
    global LATEST, _LATEST_ERROR
    LATEST, _LATEST_ERROR = _latest_from(text), ""
    return LATEST


def latest_from_environment(text: str | None) -> None:
    """Apply the environment's bound; a bad one is kept as the error every check reports."""
    global _LATEST_ERROR
    try:
        set_latest(text)
    except InvalidInput as e:
        _LATEST_ERROR = e.message


def instant_problem(ns: int) -> str | None:
    """Why an instant cannot be recorded ("before 1970", "after ..."), or None."""
    if ns < EARLIEST:
        return "before 1970-01-01T00:00:00Z"
    if ns > LATEST:
        return f"after {format_rfc3339(LATEST)} (the latest instant; see {LATEST_ENV})"
    return None


def check_instant(ns: int, what: str = "observed_at") -> int:
    """``ns`` if a record may carry it; InvalidInput (never OverflowError) otherwise."""
    if _LATEST_ERROR:
        raise InvalidInput(_LATEST_ERROR)
    if isinstance(ns, bool) or not isinstance(ns, int):
        raise InvalidInput(f"{what} must be integer nanoseconds, got {type(ns).__name__}")
    problem = instant_problem(ns)
    if problem is not None:
        shown = format_rfc3339(ns) if -62135596800 * NS <= ns < 253402300800 * NS else f"{ns} ns"
        raise InvalidInput(f"{what} {shown} is {problem}")
    return ns
