"""The JSON `serve` and `mcp` put on the wire (mcp_server.encode/decode): the same data
the json module gives, with what a terminal would act on escaped (display.json_safe)."""

from __future__ import annotations

import json

import pytest

from recall_admin.agents.mcp_server import decode, encode


@pytest.mark.parametrize(
    "doc, escaped",
    [
        ({"value": "plain"}, []),
        ({"value": "caf\u00e9 \u6f22"}, []),  # non-ASCII text stays as it is
        ({"value": "a\x85b"}, ["\\u0085"]),  # C1 control
        ({"value": "a\u2028b\u2029"}, ["\\u2028", "\\u2029"]),  # line separators
        ({"value": "a\x7fb"}, ["\\u007f"]),  # DEL
        ({"value": "a\x1b[31m"}, ["\\u001b"]),  # C0 controls: escaped by JSON itself
        ({"value": 2**70, "small": -(2**63)}, []),  # past 64 bits: the json module writes it
        ({"value": "\ud800"}, ["\\ud800"]),  # a lone surrogate: escaped, not an encoding error
        ({"value": "vi\u202em", "s": "\u2066x\u2069\u200f"}, ["\\u202e", "\\u2066", "\\u2069", "\\u200f"]),  # bidi
        ({"subject": "user\u200b\u2060\ufeff"}, ["\\u200b", "\\u2060", "\\ufeff"]),  # invisible
        ({"value": "\u0647\u200c\u0627 \U0001f468\u200d\U0001f469"}, ["\\u200c", "\\u200d"]),  # joiners: escaped, kept
    ],
)
def test_encode_gives_the_same_data_with_unsafe_characters_escaped(doc, escaped):
    raw = encode(doc)
    text = raw.decode("utf-8")
    assert json.loads(raw) == doc
    assert decode(raw) == doc
    for e in escaped:
        assert e in text
    for ch in "\x7f\x85\u2028\u2029\x1b\u202e\u2066\u2069\u200f\u200b\u2060\ufeff":
        assert ch not in text


@pytest.mark.parametrize(
    "raw", [b'{"a": 1}', b'{"n": 123456789012345678901234}', b"[NaN]", b"\xef\xbb\xbf{}", b'"\\ud800"']
)
def test_decode_reads_what_json_reads(raw):
    got, want = decode(raw), json.loads(raw)
    assert repr(got) == repr(want)  # repr: NaN is not equal to itself


@pytest.mark.parametrize("raw", [b"{bad", b"\xff\xfe\xfd", b""])
def test_decode_refuses_what_json_refuses_with_its_words(raw):
    with pytest.raises(ValueError) as ours:
        decode(raw)
    with pytest.raises(ValueError) as theirs:
        json.loads(raw)
    assert str(ours.value) == str(theirs.value)
