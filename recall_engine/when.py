"""Time phrases in search text (docs/formats.md, "Time phrases").

"What did I plant two weeks ago" names when as well as what. ``query_window``
reads the phrase and returns the span of observed instants it points at,
relative to the instant the question is asked, so a search can look there
first. The windows are deliberately loose: people say "two weeks ago" about
anything from ten to eighteen days back.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, datetime

from .instants import DAY_NS, NS, add_months, day_start, weekday
from .text import simple_lower


@dataclass(frozen=True, slots=True)
class Window:
    """Observed instants [start, end] (inclusive, ns UTC) and the text without the phrase."""

    start: int
    end: int
    remainder: str


_NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "couple": 2,
    "a couple": 2,
    "a couple of": 2,
    "couple of": 2,
    "few": 3,
    "a few": 3,
    "several": 3,
}
_MONTHS = {
    name: i + 1
    for i, name in enumerate(
        (
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        )
    )
}
_WEEKDAYS = {  # Sunday = 0, as Go numbers them
    name: i for i, name in enumerate(("sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"))
}
_SATURDAY = 6

# Go's RE2 semantics, spelt out: \s is [\t\n\f\r ] (no \v), \d is [0-9], \b is ASCII.
_S = r"[\t\n\f\r ]+"
_N = (
    r"([0-9]{1,2}|a couple of|a couple|couple of|a few|several|few|couple|an|a|"
    r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
)
_WEEKDAY = "(" + "|".join(_WEEKDAYS) + ")"
_MONTH = "(" + "|".join(_MONTHS) + ")"


def _re(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.ASCII)


# Priority order: the first pattern that matches anywhere decides.
_AGO = _re(rf"\b{_N}{_S}(day|week|month)s?{_S}ago\b")
_WEEKEND = _re(rf"\b(?:last|this past|the past|past|previous){_S}weekend\b")
_ON_WEEKDAY = _re(rf"\b(?:last|this past|on|the past|past|previous){_S}{_WEEKDAY}\b")
_PAST = _re(rf"\b(?:in{_S})?(?:the{_S})?(?:past|last|previous){_S}(?:{_N}{_S})?(day|week|month)s?\b")
_IN_MONTH = _re(rf"\b(?:in|during|of|back in|since){_S}{_MONTH}\b")
_YESTERDAY = _re(r"\byesterday\b")
_THIS = _re(rf"\bthis{_S}(week|month)\b")
_TODAY = _re(r"\b(?:today|this morning|earlier today)\b")

# Go's unicode.IsSpace (what strings.Fields splits on): Python's str.isspace
# without the four information separators U+001C..U+001F.
_GO_SPACE = re.compile("[\t\n\v\f\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+")


def _count(word: str | None) -> int:
    if not word:
        return 1
    return int(word) if word.isdigit() else _NUMBER_WORDS[word]


def _month_start(year: int, month: int) -> int:
    return calendar.timegm((year, month, 1, 0, 0, 0, 0, 0, 0)) * NS


def _days(n: int) -> int:
    return n * DAY_NS


def query_window(text: str, as_of: int) -> Window | None:
    """The time hint in ``text`` read relative to ``as_of``, or None when it names no time.

    The window never reaches past ``as_of``: a question cannot be about what has
    not been said yet.
    """
    lower = simple_lower(text)
    day = day_start(as_of)
    start: int
    end: int
    if m := _AGO.search(lower):
        n, unit = _count(m.group(1)), m.group(2)
        if unit == "day":
            slack = max(1, n // 4)
            start, end = day - _days(n + slack), day - _days(n - slack) + _days(1)
        elif unit == "week":
            center = day - _days(7 * n)
            start, end = center - _days(4 + n), center + _days(4 + n)
        else:
            center = add_months(day, -n)
            start, end = center - _days(10 + 3 * n), center + _days(10 + 3 * n)
    elif m := _WEEKEND.search(lower):
        # The most recent Saturday that is over, with its Sunday, and a day of
        # slack each side; on a weekend, "last weekend" is the one before.
        back = (weekday(day) - _SATURDAY + 7) % 7
        if back in (0, 1):
            back += 7
        sat = day - _days(back)
        start, end = sat - _days(1), sat + _days(3)
    elif m := _ON_WEEKDAY.search(lower):
        back = (weekday(day) - _WEEKDAYS[m.group(1)] + 7) % 7 or 7
        d = day - _days(back)
        start, end = d - _days(1), d + _days(2)
    elif m := _PAST.search(lower):
        n, unit = _count(m.group(1)), m.group(2)
        if unit == "day":
            start = day - _days(n + 1)
        elif unit == "week":
            start = day - _days(7 * n + 3)
        else:
            start = add_months(day, -n) - _days(5)  # Go day.AddDate(0, -n, -5)
        end = as_of
    elif m := _IN_MONTH.search(lower):
        month = _MONTHS[m.group(1)]
        now = datetime.fromtimestamp(as_of // NS, tz=UTC)
        year = now.year - 1 if month > now.month else now.year  # "in December" asked in March
        first = _month_start(year, month)
        start, end = first - _days(2), add_months(first, 1) + _days(2)
    elif m := _YESTERDAY.search(lower):
        start, end = day - _days(2), day
    elif m := _THIS.search(lower):
        if m.group(1) == "week":
            start = day - _days(weekday(day) + 1)
        else:
            now = datetime.fromtimestamp(as_of // NS, tz=UTC)
            start = _month_start(now.year, now.month) - _days(1)
        end = as_of
    elif m := _TODAY.search(lower):
        start, end = day, as_of
    else:
        return None
    end = min(end, as_of)
    if start >= end:
        return None
    # Lower-casing that changed the byte length would shift Go's byte offsets;
    # the lowered text is then as good for search. Simple lower-casing keeps the
    # character count, so character offsets are valid in either text.
    src = text
    if len(lower.encode("utf-8", "surrogatepass")) != len(text.encode("utf-8", "surrogatepass")):
        src = lower
    rest = src[: m.start()] + " " + src[m.end() :]
    return Window(start, end, " ".join(w for w in _GO_SPACE.split(rest) if w))
