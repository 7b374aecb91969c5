"""Events: ids, value identity, instants, strict decoding (docs/records.md)."""

from __future__ import annotations

import copy
import hashlib
import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recall_engine.errors import InvalidEvent, InvalidInput, RecallError
from recall_engine.instants import NS, format_fixed, format_rfc3339, parse_instant
from recall_engine.records import (
    Belief,
    Event,
    PriorValue,
    Replace,
    belief_from_event,
    decode_event,
    event_id,
    make_event,
    sort_key,
)
from recall_engine.registry import RegistryRecord
from recall_engine.text import is_predicate_name, simple_lower
from recall_engine.values import format_number, value_key

AT = parse_instant("2026-09-01T13:00:00Z")


def _by_hand(*parts: str) -> str:
    return "m-" + hashlib.sha256("\x00".join(parts).encode("utf-8")).digest()[:12].hex()


# --- ids ----------------------------------------------------------------------------


def test_id_is_the_reference_formula() -> None:
    expected = _by_hand("user", "favorite_editor", "s:zed", "assert", "2026-09-01T13:00:00.000000000Z")
    assert event_id("user", "favorite_editor", "zed", False, AT) == expected
    assert make_event("user", "favorite_editor", "zed", AT).id == expected
    assert len(expected) == 2 + 24 and expected.startswith("m-")


def test_id_uses_the_fixed_nine_digit_instant() -> None:
    at = parse_instant("2026-09-01T13:00:00.000000001Z")
    assert format_fixed(at) == "2026-09-01T13:00:00.000000001Z"
    assert event_id("user", "budget", 8000, True, at) == _by_hand(
        "user", "budget", "n:8000", "retract", "2026-09-01T13:00:00.000000001Z"
    )
    # a blanket retraction hashes the empty value key
    assert event_id("user", "budget", None, True, at) == _by_hand(
        "user", "budget", "", "retract", "2026-09-01T13:00:00.000000001Z"
    )


def test_id_ignores_case_kind_source_confidence_evidence() -> None:
    a = make_event("user", "editor", "Zed", AT)
    b = make_event(
        "user",
        "editor",
        "zed",
        AT,
        kind="preference",
        source="agent_inferred",
        confidence=0.3,
        evidence="zed it is",
        evidence_id="m-x",
        replaces=(Replace("shell", "zsh"),),
    )
    assert a.id == b.id
    assert make_event("user", "editor", "zed", AT + 1).id != a.id
    assert make_event("user", "editor", "zed", AT, retraction=True).id != a.id
    assert make_event("user", "editor", 1, AT).id != make_event("user", "editor", "1", AT).id


def test_registry_record_id_hashes_the_lower_cased_json() -> None:
    rec = RegistryRecord("merge", "editor_favorite", into="favorite_editor", reason="Same Thing")
    e = rec.to_event(AT)
    assert e.value == rec.encode() and "Same Thing" in e.value
    assert e.id == _by_hand(
        "recall:registry", "registry_change", "s:" + e.value.lower(), "assert", "2026-09-01T13:00:00.000000000Z"
    )


# --- value identity ------------------------------------------------------------------


@pytest.mark.parametrize(
    "value,key",
    [
        (None, ""),
        ("Vim", "s:vim"),
        ("VIM", "s:vim"),
        ("İstanbul", "s:istanbul"),  # simple mapping: one character stays one character
        ("ÉCOLE", "s:école"),
        (True, "b:true"),
        (False, "b:false"),
        (8000, "n:8000"),
        (8000.0, "n:8000"),
        (-0.0, "n:-0"),
        (0, "n:0"),
        (0.1, "n:0.1"),
        (-2.5, "n:-2.5"),
        (1e21, "n:1000000000000000000000"),
        (1e-7, "n:0.0000001"),
        (123456789.125, "n:123456789.125"),
        (2**53, "n:9007199254740992"),
    ],
)
def test_value_key(value, key) -> None:
    assert value_key(value) == key


def test_value_key_keeps_booleans_apart_from_numbers() -> None:
    assert value_key(True) != value_key(1) and value_key(False) != value_key(0)


def test_value_key_refuses_other_types() -> None:
    with pytest.raises(InvalidInput, match="value must be a string, number, or boolean"):
        value_key([1])


def test_simple_lower_is_per_character() -> None:
    assert simple_lower("İ") == "i" and len(simple_lower("İİ")) == 2
    assert simple_lower("ABC") == "abc"


@pytest.mark.parametrize("f", [1.0, 0.5, 1e22, 1.7976931348623157e308, 5e-324, 123.456, 1 / 3])
def test_format_number_round_trips_without_exponent(f) -> None:
    s = format_number(f)
    assert "e" not in s and float(s) == f


# --- instants ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,iso",
    [
        ("2026-09-01", "2026-09-01T00:00:00.000000000Z"),
        ("2026-09-01T13:00:00Z", "2026-09-01T13:00:00.000000000Z"),
        ("2026-09-01t13:00:00z", "2026-09-01T13:00:00.000000000Z"),
        ("2026-09-01T15:00:00+02:00", "2026-09-01T13:00:00.000000000Z"),
        ("2026-09-01T07:30:00-05:30", "2026-09-01T13:00:00.000000000Z"),
        ("2026-09-01T00:30:00+01:00", "2026-08-31T23:30:00.000000000Z"),
        ("2026-09-01T13:00:00.5Z", "2026-09-01T13:00:00.500000000Z"),
        ("2026-09-01T13:00:00.123456789Z", "2026-09-01T13:00:00.123456789Z"),
        ("2026-09-01T13:00:00.000000001+00:00", "2026-09-01T13:00:00.000000001Z"),
        ("2024-02-29T23:59:59.999999999Z", "2024-02-29T23:59:59.999999999Z"),
        ("  2026-09-01  ", "2026-09-01T00:00:00.000000000Z"),
    ],
)
def test_parse_instant(text, iso) -> None:
    ns = parse_instant(text)
    assert format_fixed(ns) == iso
    assert parse_instant(format_fixed(ns)) == ns == parse_instant(format_rfc3339(ns))


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "yesterday",
        "2026-13-01",
        "2026-02-30",
        "2025-02-29",
        "2026-9-1",
        "2026-09-01T25:00:00Z",
        "2026-09-01T13:60:00Z",
        "2026-09-01T13:00:00",
        "2026-09-01T13:00:00.Z",
        "2026-09-01T13:00:00.1234567890Z",
        "2026-09-01T13:00:00+24:00",
        "2026-09-01T13:00:00+02:60",
        "2026-09-01T13:00:00+0200",
        "2026-09-01T13:00Z",
        "٢٠٢٦-٠٩-٠١",
        "2026-09-01T13:00:00Z\nx",
        "0000-01-01",
    ],
)
def test_parse_instant_refuses_with_a_message(text) -> None:
    with pytest.raises(InvalidInput) as err:
        parse_instant(text, what="as_of")
    assert str(err.value) == f"as_of must be an RFC3339 time or a day such as 2026-09-01, got {text!r}"


def test_parse_instant_refuses_non_text() -> None:
    with pytest.raises(InvalidInput, match="instant must be an RFC3339 time"):
        parse_instant(None)  # type: ignore[arg-type]


def test_formats() -> None:
    ns = parse_instant("2026-09-01T13:00:00.120Z")
    assert format_fixed(ns) == "2026-09-01T13:00:00.120000000Z"
    assert format_rfc3339(ns) == "2026-09-01T13:00:00.12Z"
    assert format_rfc3339(AT) == "2026-09-01T13:00:00Z"
    assert format_fixed(0) == "1970-01-01T00:00:00.000000000Z"
    assert format_fixed(-1) == "1969-12-31T23:59:59.999999999Z"
    assert sorted([format_fixed(AT + 1), format_fixed(AT), format_fixed(AT + NS)]) == [
        format_fixed(AT),
        format_fixed(AT + 1),
        format_fixed(AT + NS),
    ]


def test_instants_in_one_second_and_the_next_format_alike_in_any_order() -> None:
    # the text of the last second formatted is kept: it must never leak into another second
    cases = [
        (AT + 5, "2026-09-01T13:00:00.000000005Z", "2026-09-01T13:00:00.000000005Z"),
        (AT + NS - 1, "2026-09-01T13:00:00.999999999Z", "2026-09-01T13:00:00.999999999Z"),
        (AT + NS, "2026-09-01T13:00:01.000000000Z", "2026-09-01T13:00:01Z"),
        (AT, "2026-09-01T13:00:00.000000000Z", "2026-09-01T13:00:00Z"),
        (-1, "1969-12-31T23:59:59.999999999Z", "1969-12-31T23:59:59.999999999Z"),
        (AT + 1, "2026-09-01T13:00:00.000000001Z", "2026-09-01T13:00:00.000000001Z"),
        (0, "1970-01-01T00:00:00.000000000Z", "1970-01-01T00:00:00Z"),
    ]
    for ns, fixed, rfc in cases + cases[::-1]:
        assert (format_fixed(ns), format_rfc3339(ns)) == (fixed, rfc)


# --- decoding -------------------------------------------------------------------------


def _valid() -> dict:
    return make_event(
        "user",
        "favorite_editor",
        "zed",
        AT,
        evidence="I use zed now",
        evidence_id="m-note",
        replaces=(Replace("editor", "vim"),),
        caused_by="m-cause",
    ).to_json()


def test_decode_round_trips_to_json() -> None:
    e = make_event("user", "editor", "zed", AT + 7, replaces=(Replace("shell", 3),), evidence="x")
    assert decode_event(e.to_json()) == e
    assert decode_event(json.loads(json.dumps(e.to_json()))) == e
    r = make_event("user", "editor", None, AT, retraction=True)
    assert decode_event(r.to_json()) == r and decode_event(r.to_json()).blanket


def test_decode_reads_go_form() -> None:
    go = {
        "id": "a",
        "kind": "fact",
        "subject": "user",
        "predicate": "editor",
        "value": 8000,
        "confidence": 1,
        "source": "tool_result",
        "observed_at": "2026-09-01T13:00:00.000000001Z",
    }
    e = decode_event(go)
    assert (e.retraction, e.confidence, e.observed_at, e.replaces, e.caused_by) == (False, 1.0, AT + 1, (), "")
    assert isinstance(e.confidence, float)


def test_decode_takes_the_instant_from_a_column() -> None:
    obj = _valid()
    del obj["observed_at"]
    assert decode_event(obj, observed_at=AT + 5).observed_at == AT + 5


def test_decode_may_restrict_sources() -> None:
    obj = _valid() | {"source": "operator"}
    assert decode_event(obj).source == "operator"
    with pytest.raises(InvalidEvent, match="has invalid source"):
        decode_event(obj, allowed_sources=("user_stated", "agent_inferred", "tool_result"))


MISSING = object()
BAD = [
    ("id", MISSING),
    ("id", ""),
    ("id", "   "),
    ("id", 5),
    ("id", None),
    ("kind", MISSING),
    ("kind", "opinion"),
    ("kind", "Fact"),
    ("kind", ["fact"]),
    ("subject", MISSING),
    ("subject", ""),
    ("subject", "  "),
    ("subject", 3),
    ("predicate", MISSING),
    ("predicate", ""),
    ("predicate", "Editor"),
    ("predicate", "1editor"),
    ("predicate", "favorite-editor"),
    ("predicate", "editor\n"),
    ("predicate", "édito"),
    ("predicate", 7),
    ("value", None),
    ("value", ""),
    ("value", "   "),
    ("value", [1]),
    ("value", {"a": 1}),
    ("value", math.nan),
    ("value", math.inf),
    ("value", 10**400),
    ("confidence", MISSING),
    ("confidence", "1"),
    ("confidence", 1.5),
    ("confidence", -0.1),
    ("confidence", True),
    ("confidence", math.nan),
    ("confidence", None),
    ("confidence", 10**400),
    ("source", MISSING),
    ("source", "human"),
    ("source", None),
    ("retraction", "true"),
    ("retraction", 1),
    ("retraction", None),
    ("observed_at", MISSING),
    ("observed_at", "yesterday"),
    ("observed_at", 1788220800),
    ("observed_at", ""),
    ("observed_at", "2026-09-01T13:00:00"),
    ("observed_at", None),
    ("evidence", ""),
    ("evidence", "  "),
    ("evidence", 5),
    ("evidence", "x" * 2049),
    ("evidence", "é" * 1025),
    ("evidence_id", ""),
    ("evidence_id", 5),
    ("evidence_id", " "),
    ("caused_by", ""),
    ("caused_by", 5),
    ("replaces", "editor"),
    ("replaces", {"predicate": "editor", "value": "vim"}),
    ("replaces", ["editor"]),
    ("replaces", [{"predicate": "editor"}]),
    ("replaces", [{"predicate": "editor", "value": "vim", "x": 1}]),
    ("replaces", [{"predicate": "Editor", "value": "vim"}]),
    ("replaces", [{"predicate": "editor", "value": None}]),
    ("replaces", [{"predicate": "editor", "value": ""}]),
    ("replaces", [{"predicate": "editor", "value": [1]}]),
    ("replaces", [{"predicate": "editor", "value": 10**400}]),
]


@pytest.mark.parametrize("field,bad", BAD, ids=[f"{f}={b!r}"[:40] for f, b in BAD])
def test_decode_refuses_each_invalid_field(field, bad) -> None:
    obj = _valid()
    if bad is MISSING:
        del obj[field]
    else:
        obj[field] = bad
    eid = obj.get("id")
    with pytest.raises(InvalidEvent) as err:
        decode_event(obj)
    assert str(err.value).startswith(f"event {eid!r} has invalid {field}"), str(err.value)
    assert err.value.code == "invalid_event"


def test_decode_refuses_evidence_on_a_retraction() -> None:
    obj = _valid() | {"retraction": True}
    with pytest.raises(InvalidEvent, match=r"has invalid evidence \(on a retraction\)"):
        decode_event(obj)


def test_decode_refuses_an_unknown_field() -> None:
    with pytest.raises(InvalidEvent) as err:
        decode_event(_valid() | {"recorded_at": "2026-09-01"})
    assert str(err.value) == f"event {_valid()['id']!r} has invalid field 'recorded_at' (unknown)"


@pytest.mark.parametrize("obj", [None, [], "event", 5, True])
def test_decode_refuses_a_non_object(obj) -> None:
    with pytest.raises(InvalidEvent, match="event must be a JSON object"):
        decode_event(obj)


def test_decode_accepts_evidence_of_exactly_2048_bytes() -> None:
    assert len(decode_event(_valid() | {"evidence": "é" * 1024}).evidence.encode()) == 2048


def test_sort_key_orders_assertions_before_retractions_then_id() -> None:
    a = make_event("user", "editor", "vim", AT, retraction=True)
    b = make_event("user", "editor", "zed", AT)
    c = make_event("user", "editor", "emacs", AT - 1, retraction=True)
    assert sorted([a, b, c], key=sort_key) == [c, b, a]


# --- fuzzing: nothing but RecallError escapes decode_event -------------------------------

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=10**300, max_value=10**320)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
FIELDS = [
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
    "replaces",
    "caused_by",
]
STRINGS = st.sampled_from(
    [
        "",
        " ",
        "fact",
        "preference",
        "user_stated",
        "operator",
        "editor",
        "Editor",
        "2026-09-01",
        "2026-09-01T13:00:00Z",
        "2026-02-30T00:00:00Z",
        "\ud800",
        "m-1",
        "9999-12-31T23:59:59.999999999Z",
        "0001-01-01T00:00:00Z",
        "x\n",
    ]
)
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _decodes_or_refuses(obj) -> None:
    try:
        e = decode_event(obj)
    except RecallError:
        return
    assert isinstance(e, Event)
    # whatever decodes is usable: identity, JSON form, and a second decoding
    assert e.key
    assert decode_event(json.loads(json.dumps(e.to_json()))) == e


@FUZZ
@given(st.dictionaries(st.sampled_from(FIELDS + ["extra"]), JSON | STRINGS, max_size=14))
def test_fuzz_decode_random_objects(obj) -> None:
    _decodes_or_refuses(obj)


@FUZZ
@given(JSON)
def test_fuzz_decode_any_json(obj) -> None:
    _decodes_or_refuses(obj)


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(FIELDS + ["extra"]), st.booleans(), JSON | STRINGS), min_size=1, max_size=4))
def test_fuzz_decode_mutated_valid_events(mutations) -> None:
    obj = copy.deepcopy(_valid())
    for field, delete, value in mutations:
        if delete:
            obj.pop(field, None)
        else:
            obj[field] = value
    _decodes_or_refuses(obj)


def test_predicate_names() -> None:
    assert is_predicate_name("favorite_editor") and is_predicate_name("a" * 64)
    assert not is_predicate_name("a" * 65) and not is_predicate_name("editor\n") and not is_predicate_name("_x")


# --- start-up: the engine's own SHA-256 and calendar arithmetic (docs/benchmarks.md) -----


@given(st.binary(max_size=300))
def test_the_engines_sha256_is_hashlibs(data: bytes) -> None:
    from recall_engine.records import sha256

    assert sha256(data).digest() == hashlib.sha256(data).digest()
    h = sha256()
    h.update(data)
    h.update(b"more")
    assert h.hexdigest() == hashlib.sha256(data + b"more").hexdigest()


@given(
    st.integers(1, 9999),
    st.integers(1, 12),
    st.integers(1, 31),
    st.integers(0, 23),
    st.integers(0, 59),
    st.integers(0, 59),
)
def test_instants_do_calendar_timegm_arithmetic(y: int, mo: int, d: int, h: int, mi: int, s: int) -> None:
    import calendar

    from recall_engine.instants import _timegm

    assert _timegm(y, mo, d, h, mi, s) == calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0))


@given(
    st.text(min_size=1, max_size=8),
    st.one_of(st.none(), st.text(max_size=8), st.integers(), st.booleans()),
    st.booleans(),
    st.lists(st.tuples(st.text(min_size=1, max_size=5), st.text(min_size=1, max_size=5)), max_size=2),
    st.text(max_size=5),
)
def test_make_event_builds_the_constructors_event(subject, value, retraction, replaces, evidence) -> None:
    """``make_event`` builds its event as a decoded one is built (records._built): the same
    event, frozen, hashed and compared as ``Event(...)`` builds it."""
    reps = tuple(Replace(p, v) for p, v in replaces)
    e = make_event(subject, "editor", value, AT, retraction=retraction, replaces=reps, evidence=evidence, caused_by="c")
    by_hand = Event(
        event_id(subject, "editor", value, retraction, AT),
        "fact",
        subject,
        "editor",
        value,
        1.0,
        "user_stated",
        retraction,
        AT,
        evidence,
        "",
        reps,
        "c",
    )
    assert type(e) is Event and e == by_hand and hash(e) == hash(by_hand) and repr(e) == repr(by_hand)
    assert e.recorded_at is None and e.replaces == reps
    with pytest.raises(AttributeError):
        e.value = "other"  # type: ignore[misc]


@given(st.booleans(), st.booleans(), st.booleans(), st.text(max_size=5))
def test_belief_from_event_builds_the_constructors_belief(promoted, renamed, with_prior, evidence) -> None:
    """``belief_from_event`` builds as decoding builds an event (records._UnfrozenBelief):
    the same belief, frozen, hashed and compared as ``Belief(...)`` builds it."""
    e = make_event("ann", "editor_name" if renamed else "editor", "Zed", AT, evidence=evidence, evidence_id="ev-1")
    prior = (PriorValue("vim", AT - 1, "m-1", "user_stated", "editor"),) if with_prior else ()
    b = belief_from_event(e, "editor", promoted=promoted, replaced=prior)
    by_hand = Belief(
        "ann",
        "editor",
        "Zed",
        AT,
        e.id,
        "user_stated",
        1.0,
        "fact",
        "Zed" if promoted else evidence,
        e.id if promoted else "ev-1",
        "editor_name" if renamed else "",
        prior,
        (),
        e.id if promoted else "",
    )
    assert type(b) is Belief and b == by_hand and hash(b) == hash(by_hand) and repr(b) == repr(by_hand)
    assert b.to_json() == by_hand.to_json()
    with pytest.raises(AttributeError):
        b.value = "other"  # type: ignore[misc]
