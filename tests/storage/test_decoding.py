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
