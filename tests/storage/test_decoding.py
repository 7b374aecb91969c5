"""Stored bodies parse as ``json.loads`` parses them: same values, same errors."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
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
    obj = dict(base, value=value, retraction=retraction)
    for name, v in changes:
        if v == "<drop>":
            obj.pop(name, None)
        else:
            obj[name] = v
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


@given(
    st.lists(
        st.tuples(FIELDS, FIELD_VALUES | st.sampled_from([2**64 + 1, -(2**70), 10**30, 1e19, "2" * 25])), max_size=3
    )
)
def test_a_stored_body_decodes_as_the_reference_parse_and_decode(changes):
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
def test_an_integer_past_64_bits_in_a_value_stays_exact(value):
    from recall_engine.records import make_event
    from recall_engine.storage.decoding import stored_event

    obj = make_event("user", "salary", 1, 5).to_json() | {"value": value}
    decoded = stored_event(json.dumps(obj), 5, None).value
    assert decoded == value and type(decoded) is int
