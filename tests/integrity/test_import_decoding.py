"""`import` decodes each line once, an ordinary line through a quick path (orjson and the
decoder's fast path): every line must come out exactly as ``decode_line`` alone gives it,
the same event or the same refusal, word for word (docs/records.md, "Admission")."""

from __future__ import annotations

import json

import orjson
import pytest

from recall_admin import transfer
from recall_engine.errors import RecallError
from recall_engine.instants import parse_instant
from recall_engine.records import REGISTRY_PREDICATE, REGISTRY_SUBJECT, Replace, make_event
from tests.memory.conftest import NOW


def _line(e, **changes) -> str:
    obj = e.to_json() if hasattr(e, "to_json") else dict(e)
    obj.update(changes)
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n"


TEA = make_event("carol", "likes", "tea", NOW - 10)
BIG = 2**70

LINES = {
    "ordinary": _line(TEA),
    "ordinary again (the decoder's cached head)": _line(make_event("carol", "likes", "scones", NOW - 9)),
    "evidence": _line(make_event("carol", "likes", "tea", NOW - 8, evidence="she said so")),
    "replaces": _line(make_event("carol", "likes", "milk", NOW - 7, replaces=[Replace("likes", "tea")])),
    "a number": _line(make_event("carol", "age", 42, NOW - 6)),
    "an integer past 64 bits (orjson reads a float)": _line(make_event("carol", "age", BIG, NOW - 5)),
    "an integer past 64 bits, id kept from elsewhere": _line(TEA, id="hand-1", value=BIG),
    "a replaced integer past 64 bits": _line(
        make_event("carol", "age", 3, NOW - 4, replaces=[Replace("age", BIG)]), id="hand-2"
    ),
    "a float as big as 2**63": _line(make_event("carol", "age", 2.0**63, NOW - 4)),
    "an integer confidence": _line(TEA, confidence=1),
    "a retraction": _line(make_event("carol", "likes", "tea", NOW - 3, retraction=True)),
    "a blanket retraction": _line(make_event("carol", "likes", None, NOW - 3, retraction=True)),
    "a day instead of an instant": _line(TEA, observed_at="2026-01-02", id="hand-3"),
    "an offset instant": _line(TEA, observed_at="2026-01-02T03:04:05.5+02:00", id="hand-4"),
    "a lower-case t and z": _line(TEA, observed_at="2026-01-02t03:04:05z", id="hand-5"),
    "a space around the instant": _line(TEA, observed_at=" 2026-01-02T03:04:05Z ", id="hand-6"),
    "February 30": _line(TEA, observed_at="2026-02-30T00:00:00Z"),
    "a leap day, one nanosecond past a second": _line(
        make_event("carol", "likes", "tea", parse_instant("2024-02-29T23:59:59.000000001Z"))
    ),
    "a year before 1000": _line(make_event("carol", "likes", "tea", parse_instant("0999-12-31T23:59:59.5Z"))),
    "hour 24": _line(TEA, observed_at="2026-01-02T24:00:00Z", id="hand-7"),
    "minute 60": _line(TEA, observed_at="2026-01-02T23:60:00Z", id="hand-8"),
    "a leap second": _line(TEA, observed_at="2016-12-31T23:59:60Z", id="hand-9"),
    "ten fraction digits": _line(TEA, observed_at="2026-01-02T03:04:05.1234567891Z"),
    "an instant that is a number": _line(TEA, observed_at=12),
    "no instant": json.dumps({k: v for k, v in TEA.to_json().items() if k != "observed_at"}) + "\n",
    "an edited value, id kept": _line(TEA, value="coffee"),
    "an unknown field": _line(TEA, colour="red"),
    "a bad kind": _line(TEA, kind="rumour"),
    "a confidence of 2": _line(TEA, confidence=2.0),
    "a list for a subject": _line(TEA, subject=["carol"]),
    "NaN": _line(TEA).replace('"value":"tea"', '"value":NaN'),
    "a lone surrogate": _line(TEA).replace('"value":"tea"', '"value":"\\ud800"'),
    "a registry record": _line(make_event(REGISTRY_SUBJECT, REGISTRY_PREDICATE, '{"op":"explode"}', NOW - 2)),
    "not JSON": '{"id": "m-1",\n',
    "a byte order mark": "\ufeff" + _line(TEA),
    "an array": "[1, 2]\n",
    "nested too deeply for orjson": "[" * 2000 + "]" * 2000 + "\n",
    "blank": "   \n",
    "duplicate keys": _line(TEA)[:-2] + ',"value":"coffee"}\n',
    "keys in another order": json.dumps(dict(reversed(TEA.to_json().items())), separators=(",", ":")) + "\n",
    "an instant with trailing zeros": _line(
        make_event("carol", "likes", "tea", parse_instant("2026-01-02T03:04:05.5Z")),
        observed_at="2026-01-02T03:04:05.500Z",
    ),
    "a zero fraction": _line(TEA, observed_at="2026-01-02T03:04:05.000Z", id="hand-10"),
    "null evidence": _line(TEA, evidence=None),
    "all three optional texts": _line(
        make_event("carol", "likes", "tea", NOW - 1, evidence="said", evidence_id="chat-1", caused_by="m-1")
    ),
}


def _outcome(decode, text: str):
    try:
        return ("event", decode(text))
    except RecallError as e:
        return ("refused", type(e).__name__, e.message)


@pytest.mark.parametrize("name", list(LINES))
def test_each_line_decodes_as_decode_line_alone_decodes_it(name):
    text = LINES[name]
    alone = _outcome(lambda t: transfer.decode_line(t, 7), text)
    quick = _outcome(lambda t: (lambda got: got[0] if got else None)(list(transfer._decode_all([""] * 6 + [t]))), text)
    assert quick == alone
    if alone[0] == "event" and alone[1] is not None:  # the same event, field for field and type for type
        assert [type(getattr(quick[1], f)) for f in ("value", "confidence")] == [
            type(getattr(alone[1], f)) for f in ("value", "confidence")
        ]
        assert [type(r.value) for r in quick[1].replaces] == [type(r.value) for r in alone[1].replaces]


def test_the_lines_cover_both_outcomes():
    outcomes = {_outcome(lambda t: transfer.decode_line(t, 1), t)[0] for t in LINES.values()}
    assert outcomes == {"event", "refused"}


@pytest.mark.parametrize(
    "name, quick",
    [
        ("ordinary", True),
        ("evidence", True),
        ("a leap day, one nanosecond past a second", True),
        ("replaces", True),
        ("an integer past 64 bits (orjson reads a float)", False),
        ("a replaced integer past 64 bits", False),
        ("an edited value, id kept", False),
        ("a registry record", False),
        ("NaN", False),
    ],
)
def test_the_quick_path_takes_ordinary_lines_and_leaves_the_rest(name, quick):
    assert (transfer._quick_event(LINES[name], {}) is not None) is quick


@pytest.mark.parametrize("name", list(LINES))
def test_a_body_kept_from_the_line_is_the_one_the_store_would_write(name):
    """The quick path hands the store the line's object, serialised, only when it is the
    event's JSON form exactly; else None, and the store renders ``to_json`` itself."""
    quick = transfer._quick_event(LINES[name], {})
    if quick is None or quick[1] is None:
        return
    event, body = quick
    assert body == orjson.dumps(event.to_json()).decode()


@pytest.mark.parametrize(
    "name, kept",
    [
        ("ordinary", True),
        ("evidence", True),
        ("all three optional texts", True),
        ("a leap day, one nanosecond past a second", True),
        ("a retraction", True),
        ("a blanket retraction", True),
        ("a number", True),
        ("keys in another order", False),
        ("an instant with trailing zeros", False),
        ("a zero fraction", False),
        ("an integer confidence", False),
        ("null evidence", False),
        ("replaces", False),
    ],
)
def test_which_lines_keep_their_body(name, kept):
    quick = transfer._quick_event(LINES[name], {})
    assert quick is not None
    assert (quick[1] is not None) is kept


def _stored(backend, store) -> list[tuple]:
    if hasattr(backend, "conn"):  # SQLite
        sql, conn = "SELECT id, body, value_key FROM events WHERE collection_id = ? ORDER BY id", backend.conn()
        return conn.execute(sql, (store.cid,)).fetchall()
    with backend.connection("reading rows back") as conn:
        sql = "SELECT id, body::text, value_key FROM recall.events WHERE collection_id = %s ORDER BY id"
        return conn.execute(sql, (store.cid,)).fetchall()


@pytest.mark.parametrize("atomic", [True, False])
def test_an_import_stores_each_event_as_the_store_renders_it(backend, tmp_path, atomic):
    """Imported with bodies kept from the lines or not, the stored rows are the ones a
    plain append writes (the events of every line that decodes), on both backends."""
    events = []
    for text in LINES.values():
        try:
            e = transfer.decode_line(text, 1)
        except RecallError:
            continue
        if e is not None and e.subject != REGISTRY_SUBJECT and e.id not in {x.id for x in events}:
            events.append(e)
    path = tmp_path / "lines.jsonl"
    kept_out = ("keys in another order", "an instant with trailing zeros")
    path.write_text(
        "".join(transfer.event_line(e) for e in events) + "".join(t for n, t in LINES.items() if n in kept_out)
    )
    bodies: list = []
    decoded = list(transfer._decode_all(transfer._lines(str(path)), None, bodies))
    assert any(b is not None for b in bodies) and any(b is None for b in bodies)
    imported, appended = backend.store("imported"), backend.store("appended")
    imported.append_many(decoded, batch_size=3, atomic=atomic, bodies=bodies)
    appended.append(decoded)
    rows = _stored(backend, imported)
    assert rows == _stored(backend, appended) and len(rows) == len(events)
