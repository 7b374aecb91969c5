"""Time-phrase hints (docs/memory.md, "Search")."""

from __future__ import annotations

import pytest

from recall_engine.instants import parse_instant
from recall_engine.when import Window, query_window

# A Tuesday afternoon.
ASKED = parse_instant("2023-05-30T15:00:00Z")


def at(day: str) -> int:
    return parse_instant(day)


def covers(w: Window, day: str) -> bool:
    """Whether the window holds the whole of one day's noon (a statement made that day)."""
    noon = parse_instant(day + "T12:00:00Z")
    return w.start <= noon <= w.end


# --- the cases the Go tests name --------------------------------------------


def test_two_weeks_ago_covers_the_middle_of_the_month():
    w = query_window("What did I plant two weeks ago?", ASKED)
    assert w is not None
    for day in ("2023-05-12", "2023-05-16", "2023-05-20"):
        assert covers(w, day), day
    assert not covers(w, "2023-05-01")
    assert not covers(w, "2023-05-29")


def test_last_saturday_is_the_27th():
    w = query_window("what did we cook last Saturday", ASKED)
    assert w is not None
    assert covers(w, "2023-05-27")
    assert not covers(w, "2023-05-20")
    assert not covers(w, "2023-05-30")


def test_in_december_means_last_december():
    w = query_window("What gift did I buy in December?", ASKED)
    assert w == Window(at("2022-11-29"), at("2023-01-03"), "What gift did I buy ?")
    assert covers(w, "2022-12-25")
    assert not covers(w, "2023-12-25")


def test_a_month_name_alone_is_no_time():
    assert query_window("Did I say anything about May?", ASKED) is None


# --- every pattern ------------------------------------------------------------

NOW = "now"  # the window ends at the question's instant

CASES = [
    # 1. N (day|week|month)s? ago
    ("3 days ago", "2023-05-26", "2023-05-29"),  # slack 1: [day-4, day-2+1]
    ("8 days ago", "2023-05-20", "2023-05-25"),  # slack 2: [day-10, day-6+1]
    ("12 days ago", "2023-05-15", "2023-05-22"),  # slack 3
    ("a couple of days ago", "2023-05-27", "2023-05-30"),
    ("a couple days ago", "2023-05-27", "2023-05-30"),
    ("couple of days ago", "2023-05-27", "2023-05-30"),
    ("couple days ago", "2023-05-27", "2023-05-30"),
    ("a day ago", "2023-05-28", NOW),  # [day-2, day+1] capped
    ("one day ago", "2023-05-28", NOW),
    ("two weeks ago", "2023-05-10", "2023-05-22"),  # center May 16, +-6
    ("a week ago", "2023-05-18", "2023-05-28"),  # center May 23, +-5
    ("a few weeks ago", "2023-05-02", "2023-05-16"),  # center May 9, +-7
    ("several weeks ago", "2023-05-02", "2023-05-16"),
    ("few weeks ago", "2023-05-02", "2023-05-16"),
    ("twelve weeks ago", "2023-02-19", "2023-03-23"),  # center Mar 7, +-16
    ("a month ago", "2023-04-17", "2023-05-13"),  # center Apr 30, +-13
    ("an month ago", "2023-04-17", "2023-05-13"),
    ("two months ago", "2023-03-14", "2023-04-15"),  # center Mar 30, +-16
    ("3 months ago", "2023-02-11", "2023-03-21"),  # center Feb 30 = Mar 2 (AddDate), +-19
    # 2. last weekend
    ("last weekend", "2023-05-26", "2023-05-30"),  # Saturday May 27, [Fri, Tue 00:00]
    ("this past weekend", "2023-05-26", "2023-05-30"),
    ("the past weekend", "2023-05-26", "2023-05-30"),
    ("past weekend", "2023-05-26", "2023-05-30"),
    ("previous weekend", "2023-05-26", "2023-05-30"),
    # 3. last <weekday>
    ("last saturday", "2023-05-26", "2023-05-29"),
    ("this past friday", "2023-05-25", "2023-05-28"),
    ("on sunday", "2023-05-27", "2023-05-30"),
    ("the past thursday", "2023-05-24", "2023-05-27"),
    ("past wednesday", "2023-05-23", "2023-05-26"),
    ("previous monday", "2023-05-28", NOW),  # yesterday's Monday, capped
    ("last tuesday", "2023-05-22", "2023-05-25"),  # today's weekday means a week back
    # 4. past N days/weeks/months (to = as-of)
    ("past 3 days", "2023-05-26", NOW),
    ("the last day", "2023-05-28", NOW),
    ("in the past few days", "2023-05-26", NOW),
    ("last week", "2023-05-20", NOW),
    ("in the previous 2 weeks", "2023-05-13", NOW),
    ("the last month", "2023-04-25", NOW),
    ("past few months", "2023-02-25", NOW),  # Feb 30 = Mar 2, minus 5 days
    ("the past 12 months", "2022-05-25", NOW),
    ("last months", "2023-04-25", NOW),
    # 5. in <month>
    ("in december", "2022-11-29", "2023-01-03"),
    ("during march", "2023-02-27", "2023-04-03"),
    ("back in march", "2023-02-27", "2023-04-03"),
    ("of january", "2022-12-30", "2023-02-03"),
    ("since february", "2023-01-30", "2023-03-03"),
    ("in may", "2023-04-29", NOW),  # this May, capped
    ("in june", "2022-05-30", "2022-07-03"),  # a later month is last year's
    # 6. yesterday
    ("yesterday", "2023-05-28", "2023-05-30"),
    # 7. this week / this month (to = as-of)
    ("this week", "2023-05-27", NOW),  # Tuesday: day - (2 + 1)
    ("this month", "2023-04-30", NOW),
    # 8. today
    ("today", "2023-05-30", NOW),
    ("this morning", "2023-05-30", NOW),
    ("earlier today", "2023-05-30", NOW),
]


@pytest.mark.parametrize("phrase,start,end", CASES, ids=[c[0] for c in CASES])
def test_each_pattern_gives_its_window(phrase, start, end):
    w = query_window(f"what about {phrase} then", ASKED)
    assert w is not None
    assert (w.start, w.end) == (at(start), ASKED if end is NOW else at(end))
    assert w.remainder == "what about then"


NO_HINT = [
    "did I say anything about may?",
    "what is my favourite editor",
    "123 days ago",  # two digits at most, at a word boundary
    "2 weeks agony",  # ASCII word boundaries
    "todays list",
    "yesterdays",
    "last weekends",
    "the lastweek",
    "in mayday",
    "an hour ago",
    "two\vweeks ago",  # Go's \s has no vertical tab
    "mi último weekend",  # 'último' is not 'last'
]


@pytest.mark.parametrize("text", NO_HINT)
def test_no_time_named(text):
    assert query_window(text, ASKED) is None


# --- priority, capping, empty windows ------------------------------------------


@pytest.mark.parametrize(
    "text,start,end",
    [
        # "ago" beats "last week" even later in the text
        ("last week or two days ago", "2023-05-27", "2023-05-30"),
        # weekend beats weekday and past
        ("last weekend, not last friday", "2023-05-26", "2023-05-30"),
        # weekday beats past
        ("in the past month, on monday", "2023-05-28", NOW),
        # past beats this week: "this past week" is the past week
        ("this past week", "2023-05-20", NOW),
        # month name beats yesterday
        ("yesterday or in april", "2023-03-30", "2023-05-03"),
        # yesterday beats this week, this week beats today
        ("this week, yesterday", "2023-05-28", "2023-05-30"),
        ("today or this month", "2023-04-30", NOW),
    ],
)
def test_the_first_pattern_in_priority_decides(text, start, end):
    w = query_window(text, ASKED)
    assert w is not None
    assert (w.start, w.end) == (at(start), ASKED if end is NOW else at(end))


def test_weekend_asked_on_a_weekend_is_the_one_before():
    for asked in ("2023-05-27T10:00:00Z", "2023-05-28T10:00:00Z"):  # Saturday, Sunday
        w = query_window("last weekend", parse_instant(asked))
        assert w is not None
        assert (w.start, w.end) == (at("2023-05-19"), at("2023-05-23")), asked


def test_months_ago_uses_go_adddate_normalisation():
    # Mar 31 minus one month is "Feb 31", which Go normalises to Mar 3.
    w = query_window("a month ago", parse_instant("2023-03-31T12:00:00Z"))
    assert w is not None
    assert (w.start, w.end) == (at("2023-02-18"), at("2023-03-16"))


def test_a_window_that_ends_before_it_starts_is_no_hint():
    midnight = at("2023-05-30")
    assert query_window("what did I do today", midnight) is None
    assert query_window("this week", at("2023-05-28")) is not None  # Sunday: from Saturday


def test_nothing_reaches_past_the_question():
    w = query_window("in the past 2 days", ASKED + 1)
    assert w is not None and w.end == ASKED + 1


# --- the remainder ---------------------------------------------------------------


@pytest.mark.parametrize(
    "text,rest",
    [
        ("What did I plant two weeks ago?", "What did I plant ?"),
        ("  What   did I\tdo YESTERDAY  at\nwork ", "What did I do at work"),
        ("Two Weeks  AGO I planted tomatoes", "I planted tomatoes"),
        ("What did we do back in March", "What did we do"),
        ("What did I say earlier today", "What did I say"),
        ("what happened in the last week", "what happened"),
        ("yesterday", ""),
        ("Café two weeks ago", "Café"),  # same byte length lowered: original text
        ("İstanbul trip last weekend", "istanbul trip"),  # lowering shortened it: lowered text
        ("a\x1cb yesterday", "a\x1cb"),  # Go's Fields does not split on U+001C
        ("a\u3000b\xa0yesterday", "a b"),
        ("Ólast weekend", "Ó"),  # ASCII \b: a non-ASCII letter is no word character
    ],
)
def test_remainder_drops_the_phrase_and_collapses_whitespace(text, rest):
    w = query_window(text, ASKED)
    assert w is not None
    assert w.remainder == rest


def test_window_is_frozen():
    w = query_window("yesterday", ASKED)
    with pytest.raises(AttributeError):
        w.start = 0  # type: ignore[misc]
