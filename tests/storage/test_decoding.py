"""Stored bodies parse as ``json.loads`` parses them: same values, same errors."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recall_engine.storage.decoding import loads

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@given(json_values)
def test_any_json_text_parses_to_the_same_value(value):
    text = json.dumps(value, ensure_ascii=False)
    assert loads(text) == json.loads(text)


@pytest.mark.parametrize(
    "text",
    ['{"value": 123456789012345678901234567890}', '{"value": "\\ud800"}', '{"a": 1, "a": 2}', '{"value": 1e400}'],
)
def test_what_orjson_refuses_the_standard_parser_decides(text):
    assert loads(text) == json.loads(text)


def test_nan_parses_as_the_standard_parser_does():
    assert math.isnan(loads('{"v": NaN}')["v"])


@pytest.mark.parametrize("text", ["{not json", '{"a": 1,}', "", '{"a": "unterminated'])
def test_malformed_text_fails_with_the_standard_message(text):
    with pytest.raises(json.JSONDecodeError) as ours:
        loads(text)
    with pytest.raises(json.JSONDecodeError) as theirs:
        json.loads(text)
    assert (ours.value.msg, ours.value.pos) == (theirs.value.msg, theirs.value.pos)


# --- the plain-statement path of decode_event: the same events, the same errors -------------

FIELD_VALUES = st.sampled_from(
    [
        None,
        True,
        False,
        0,
        1,
        0.5,
        1.5,
        -0.0,
        2**70,
        1e300,
        "",
        " ",
        "vim",
        "x" * 1100,
        "a\x00b",
        "\ud800",
        "fact",
        "preference",
        "user_stated",
        "operator",
        "nobody",
        "m-1",
        [],
        {},
        [{"predicate": "p", "value": "v"}],
    ]
)
FIELDS = st.sampled_from(
    ["id", "kind", "subject", "predicate", "value", "confidence", "source", "retraction", "observed_at"]
    + ["evidence", "evidence_id", "caused_by", "replaces", "other"]
)


def outcome(obj, **kw):
    from recall_engine.errors import InvalidEvent
    from recall_engine.records import decode_event

    try:
        e = decode_event(obj, observed_at=1_700_000_000 * 10**9, recorded_at=7, **kw)
    except InvalidEvent as err:
        return ("refused", err.message)
    return ("decoded", e, type(e.confidence), e.recorded_at)


def _altered(base: dict, changes, **fields) -> dict:
    """``base`` with ``fields`` set, then each (name, value) of ``changes`` ("<drop>": the field removed)."""
    obj = dict(base, **fields)
    for name, v in changes:
        if v == "<drop>":
            obj.pop(name, None)
        else:
            obj[name] = v
    return obj


@given(
    st.sampled_from(["vim", 3, 2.5, True, None]),
    st.booleans(),
    st.booleans(),
    st.lists(st.tuples(FIELDS, FIELD_VALUES | st.just("<drop>")), max_size=3),
)
def test_a_plain_statement_decodes_as_the_full_path_decodes_it(value, retraction, evidence, changes):
    from recall_engine.records import SOURCES, _decode_plain, make_event

    base = make_event("user", "prefers_editor", "vim", 1_700_000_000 * 10**9).to_json()
    if evidence:
        base |= {"evidence": "I use vim", "evidence_id": "chat-1"}
    assert outcome(dict(base))[0] == "decoded"  # the head is now known: the plain path is taken
    assert _decode_plain(dict(base), 1_700_000_000 * 10**9, 7) is not None
    obj = _altered(base, changes, value=value, retraction=retraction)
    full_only = tuple(list(SOURCES))  # an equal tuple, not SOURCES itself: the full path alone
    assert outcome(obj) == outcome(obj, allowed_sources=full_only)


def test_an_event_built_from_its_slots_is_the_event_its_init_builds():
    from dataclasses import FrozenInstanceError, fields

    from recall_engine.records import Event, _built, _Unfrozen

    names = tuple(f.name for f in fields(Event))
    assert _Unfrozen.__slots__ == names  # the same layout, so the class change is allowed
    args = ("m-1", "fact", "user", "prefers_editor", "vim", 0.5, "operator", False, 5, "said so", "chat-1", "", 9)
    built = _built(*args)
    made = Event(*args[:11], (), args[11], args[12])
    assert type(built) is Event
    assert [getattr(built, n) for n in names] == [getattr(made, n) for n in names]  # every slot set
    assert built == made and hash(built) == hash(made) and repr(built) == repr(made)
    with pytest.raises(FrozenInstanceError):
        built.value = "emacs"


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])  # the path is set once for all inputs
@given(
    st.lists(
        st.tuples(FIELDS, FIELD_VALUES | st.sampled_from([2**64 + 1, -(2**70), 10**30, 1e19, "2" * 25])), max_size=3
    )
)
def test_a_stored_body_decodes_as_the_reference_parse_and_decode(decoder_path, changes):
    from recall_engine.errors import InvalidEvent
    from recall_engine.records import decode_event, make_event
    from recall_engine.storage.decoding import stored_event

    obj = make_event("user", "prefers_editor", "vim", 1_700_000_000 * 10**9).to_json()
    for name, v in changes:
        obj[name] = v
    body = json.dumps(obj, ensure_ascii=False)

    def result(decode):
        try:
            e = decode()
        except (InvalidEvent, ValueError, TypeError) as err:
            return ("refused", type(err), str(err))
        return ("decoded", e, e.value, type(e.value))

    reference = result(lambda: decode_event(loads(body), observed_at=5, recorded_at=7))
    assert result(lambda: stored_event(body, 5, 7)) == reference


@pytest.mark.parametrize("value", [2**64 + 1, -(2**70), 10**30, 123456789012345678901234567890])
def test_an_integer_past_64_bits_in_a_value_stays_exact(decoder_path, value):
    from recall_engine.records import make_event
    from recall_engine.storage.decoding import stored_event

    obj = make_event("user", "salary", 1, 5).to_json() | {"value": value}
    decoded = stored_event(json.dumps(obj), 5, None).value
    assert decoded == value and type(decoded) is int


# --- msgspec's typed path (recall_engine.storage.typed): what it takes, it builds as the reference


@pytest.fixture(params=["orjson", "msgspec"])
def decoder_path(request, monkeypatch):
    """``stored_event`` as a fresh process has it (orjson first) and past its switch (msgspec first)."""
    from recall_engine.storage import decoding

    if request.param == "msgspec":
        from recall_engine.storage.typed import statement

        monkeypatch.setattr(decoding, "_statement", statement)
    else:
        monkeypatch.setattr(decoding, "_statement", None)
    return request.param


def test_the_typed_fields_name_the_kinds_and_sources_decode_event_takes():
    from typing import get_args, get_type_hints

    from recall_engine.records import KINDS, SOURCES
    from recall_engine.storage.typed import _Statement

    hints = get_type_hints(_Statement)
    assert get_args(hints["kind"]) == KINDS and get_args(hints["source"]) == SOURCES


TYPED_VALUES = FIELD_VALUES | st.sampled_from(
    [2**63, 2**64, 2**64 + 1, -(2**63) - 1, 10**30, 10**400, 1e19, 1, 0, "", "é", "\u2028", 1.0, "x" * 1025, "y" * 1536]
)


@given(
    st.sampled_from(["vim", 3, 2.5, True, None, "b\u00e9b\u00e9"]),
    st.booleans(),
    st.sampled_from(["prefers_editor", "note", "p" * 40]),
    st.lists(st.tuples(FIELDS, TYPED_VALUES | st.just("<drop>")), max_size=3),
    st.sampled_from([5, 0, -1, 2**62, 2**70]),
)
def test_the_typed_path_builds_what_the_reference_builds_or_steps_aside(value, retraction, predicate, changes, at):
    from recall_engine.errors import InvalidEvent
    from recall_engine.records import decode_event, make_event
    from recall_engine.storage.typed import statement

    base = make_event("user", predicate, "vim", 1_700_000_000 * 10**9, evidence="said so").to_json()
    decode_event(dict(base), observed_at=5)  # the head is now known
    obj = _altered(base, changes, value=value, retraction=retraction)
    body = json.dumps(obj, ensure_ascii=False)
    try:
        reference = decode_event(loads(body), observed_at=at, recorded_at=7)
    except (InvalidEvent, ValueError, TypeError):
        reference = None
    try:
        got = statement(body, at, 7)
    except Exception:  # stored_event takes the reference path on any error
        got = None
    if got is not None:
        assert reference is not None
        assert (got, got.value, type(got.value), got.confidence, type(got.confidence), got.recorded_at) == (
            reference,
            reference.value,
            type(reference.value),
            reference.confidence,
            type(reference.confidence),
            reference.recorded_at,
        )
        assert type(got) is type(reference) and repr(got) == repr(reference) and hash(got) == hash(reference)


@pytest.mark.parametrize(
    "text",
    [
        '{"value": NaN}',
        '{"value": "\\ud800"}',
        '{"value": 1e400}',
        '{"value": 123456789012345678901234567890}',
        '{"value": 1, "value": "vim"}',
        '{"value": "vim", "other": 1}',
        '{"value": "vim", "replaces": []}',
        '{"value": "vim", "evidence": null}',
        '{"value": "vim", "confidence": 1}',
        '{"value": "vim", "observed_at": [1, {"a": NaN}]}',
    ],
)
def test_bodies_msgspec_and_the_standard_parser_read_apart_decode_as_the_reference(decoder_path, text):
    from recall_engine.errors import InvalidEvent
    from recall_engine.records import decode_event, make_event
    from recall_engine.storage.decoding import stored_event

    base = make_event("user", "prefers_editor", "vim", 5).to_json()
    decode_event(dict(base), observed_at=5)
    body = json.dumps(base)[:-1] + ", " + text[1:]  # later keys win, as in both parsers

    def result(decode):
        try:
            e = decode()
        except (InvalidEvent, ValueError, TypeError) as err:
            return ("refused", type(err), str(err))
        return ("decoded", e, e.value, type(e.value), e.confidence, type(e.confidence))

    reference = result(lambda: decode_event(loads(body), observed_at=5, recorded_at=7))
    assert result(lambda: stored_event(body, 5, 7)) == reference


def test_a_process_loads_msgspec_once_it_has_read_enough_rows(monkeypatch):
    from recall_engine.storage import decoding
    from recall_engine.storage.typed import statement

    monkeypatch.setattr(decoding, "_statement", None)
    monkeypatch.setattr(decoding, "_decoded", 0)
    decoding._count(decoding.SWITCH_ROWS - 1)
    assert decoding._statement is None
    decoding._count(1)
    assert decoding._statement is statement


def test_the_typed_path_takes_an_ordinary_statement():
    from recall_engine.records import decode_event, make_event
    from recall_engine.storage.typed import statement

    for e in (
        make_event("user", "prefers_editor", "vim", 5, evidence="said so", evidence_id="chat-1"),
        make_event("user", "prefers_editor", "vim", 5, retraction=True),
        make_event("user", "prefers_editor", None, 5, retraction=True),
        make_event("user", "prefers_editor", 2**63 - 1, 5, confidence=0.5, source="operator"),
    ):
        body = json.dumps(e.to_json())
        decode_event(json.loads(body), observed_at=5)  # the head is now known
        got = statement(body, 5, 9)
        assert got == e and got.recorded_at == 9 and repr(got) == repr(e)
        # keys in any order (PostgreSQL's jsonb gives its own) and without spaces
        for text in (json.dumps(dict(reversed(e.to_json().items()))), json.dumps(e.to_json(), separators=(",", ":"))):
            assert repr(statement(text, 5, 9)) == repr(e)


def test_new_heads_still_take_the_typed_path_once_the_memo_of_heads_has_filled(monkeypatch):
    # a process that has met more heads than the memo keeps (a server, the console, a big
    # import) must not decode every head it meets later through the slow path
    from recall_engine import records
    from recall_engine.records import decode_event, make_event
    from recall_engine.storage.typed import statement

    monkeypatch.setattr(records, "_GOOD_HEADS", {})
    monkeypatch.setattr(records, "_MAX_GOOD_HEADS", 3)
    monkeypatch.setattr("recall_engine.storage.typed._GOOD_HEADS", records._GOOD_HEADS)
    for n in range(5):
        e = make_event(f"user-{n}", "prefers_editor", "vim", 5)
        body = json.dumps(e.to_json())
        assert statement(body, 5, None) is None  # a head not seen yet steps aside
        decode_event(json.loads(body), observed_at=5)
        assert statement(body, 5, None) == e  # and takes the typed path once the full path has checked it
    assert len(records._GOOD_HEADS) <= 3
