"""Our bundles (recall-audit-v2): export, verify, replay, tamper evidence, round trips."""

from __future__ import annotations

import copy
import hashlib
import json
import struct
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recall_engine.audit import (
    AUDIT_V2,
    MAX_EVENTS,
    build_bundle,
    encode_bundle,
    import_events,
    replay,
    verify,
)
from recall_engine.audit.digest import (
    bundle_checksum_v2,
    digest_v4,
    event_fingerprint,
    verify_event_digest,
)
from recall_engine.errors import AuditError, DigestMismatch
from recall_engine.fold import fold
from recall_engine.instants import format_fixed, parse_instant
from recall_engine.records import Event, Replace, make_event
from recall_engine.registry import Definition, Promotion, RegistryRecord
from recall_engine.text import NOTE
from recall_engine.timeline import Timeline

NS = 1_000_000_000
T0 = parse_instant("2026-09-01T00:00:00Z")


def t(minutes: float) -> int:
    return T0 + int(minutes * 60 * NS)


def declare(name, cardinality="single", value_type="string", at=0, **kw):
    return RegistryRecord("declare", name, Definition(name, cardinality, value_type, f"{name} words", **kw)).to_event(
        t(at)
    )


def registry_log():
    return [
        declare("prefers_editor", at=0),
        declare("likes", "multi", at=0.001),
        declare("dislikes", "multi", at=0.002, excludes=("likes",)),
        declare("budget", value_type="number", at=0.003),
        declare("did", "multi", at=0.004, historical=True),
        declare("editor_choice", at=0.005),
        RegistryRecord("merge", "editor_choice", into="prefers_editor", operator="ops", reason="same thing").to_event(
            t(1)
        ),
        RegistryRecord(
            "redefine", "likes", Definition("likes", "multi", "string", "likes words"), retroactive=True, operator="ops"
        ).to_event(t(2)),
    ]


def rich_events():
    """A log using every field: evidence, replaces, caused_by, operator, merged names, notes."""
    vim = make_event(
        "user", "prefers_editor", "Vim", t(10), kind="preference", evidence="I use Vim", evidence_id="m-note1"
    )
    helix = make_event(
        "user",
        "prefers_editor",
        "Helix",
        t(20),
        kind="preference",
        confidence=0.9,
        source="agent_inferred",
        evidence="switched to Helix",
        replaces=[Replace("likes", "vim keys")],
    )
    withdraw = make_event("user", "likes", "vim keys", t(20), retraction=True, source="operator", caused_by=helix.id)
    return [
        vim,
        make_event("user", "likes", "vim keys", t(5)),
        helix,
        withdraw,
        make_event("user", "likes", "mangoes", t(11)),
        make_event("user", "dislikes", "mangoes", t(30)),
        make_event("user", "editor_choice", "Zed", t(40)),
        make_event("user", "budget", 8000, t(12)),
        make_event("user", "did", "ran a marathon", t(13)),
        make_event("user", NOTE, "prefers quiet mornings", t(14), confidence=0.5),
        make_event("bob", "likes", "tea", t(15)),
        make_event("bob", "prefers_editor", "Emacs", t(90)),  # after as_of: kept, ignored by replay
    ]


AS_OF = t(60)


def live(events, reg_events, at, pairs=None):
    """The live answers: the pure fold of every pair over the whole log."""
    tl = Timeline(reg_events)
    if pairs is None:
        pairs = sorted({(e.subject, target(e, tl)) for e in events})
    out = []
    for s, p in pairs:
        out.extend(fold(events, s, p, tl, at))
    return out


def target(e, tl):
    c = tl.canonical(e.predicate)
    if c == NOTE and not e.retraction and tl.promotion(e.id):
        return tl.promotion(e.id)[0]
    return c


@pytest.fixture
def bundle():
    return build_bundle(rich_events(), registry_log(), as_of=AS_OF)


# --- export, verify, replay ------------------------------------------------------------


def test_bundle_fields(bundle):
    assert bundle["version"] == AUDIT_V2
    assert bundle["event_version"] == "recall-event-v3"
    assert bundle["fold_version"] == "recall-fold-v5"
    assert bundle["as_of"] == "2026-09-01T01:00:00.000000000Z"
    assert bundle["scope"] == {"subject": "", "predicate": ""}
    assert set(bundle["registry"]) == {"prefers_editor", "likes", "dislikes", "budget", "did", NOTE}
    assert bundle["registry"]["prefers_editor"]["aliases"] == ["editor_choice"]
    assert bundle["registry"]["dislikes"]["excludes"] == ["likes"]
    assert bundle["registry"]["did"]["historical"] is True
    assert len(bundle["registry_log"]) == 8
    assert len(bundle["events"]) == 12
    assert bundle["digest"].startswith("sha256:audit-v2:")
    # events in (observed_at, id) order, instants in the fixed nine-digit form
    evs = bundle["events"]
    assert [(e["observed_at"], e["id"]) for e in evs] == sorted((e["observed_at"], e["id"]) for e in evs)
    assert all(len(e["observed_at"]) == 30 for e in evs)
    assert set(bundle["fingerprints"]["events"]) == {e["id"] for e in evs}


def test_verify_and_replay_equal_the_live_answers(bundle):
    text = encode_bundle(bundle)
    r = verify(text)
    assert (r.valid, r.digest, r.events) == (True, bundle["digest"], 12)
    assert verify(text, digest=bundle["digest"]).valid
    beliefs = replay(text)
    assert beliefs == live(rich_events(), registry_log(), AS_OF)
    got = [(b.subject, b.predicate, b.value) for b in beliefs]
    assert got == [
        ("bob", "likes", "tea"),
        ("user", "budget", 8000),
        ("user", "did", "ran a marathon"),
        ("user", "dislikes", "mangoes"),
        ("user", "note", "prefers quiet mornings"),
        ("user", "prefers_editor", "Zed"),  # written under the merged name editor_choice
    ]  # likes: "vim keys" withdrawn by replaces + retraction, "mangoes" by dislikes' exclusion
    assert replay(text, notes_only=True) == [b for b in beliefs if b.predicate == NOTE]


def test_json_text_round_trip_is_stable(bundle):
    text = encode_bundle(bundle)
    again = json.loads(text)
    assert again == json.loads(json.dumps(bundle))
    assert verify(again).digest == bundle["digest"]


@pytest.mark.parametrize(
    "subject, predicate, pairs",
    [
        ("user", "", None),
        ("", "likes", [("bob", "likes"), ("user", "likes")]),
        ("user", "likes", [("user", "likes")]),
        ("", "prefers_editor", [("bob", "prefers_editor"), ("user", "prefers_editor")]),
        ("USER ", "editor_choice", [("user", "prefers_editor")]),
    ],
)
def test_scoped_bundles_hold_everything_their_pairs_need(subject, predicate, pairs):
    b = build_bundle(rich_events(), registry_log(), as_of=AS_OF, scope_subject=subject, scope_predicate=predicate)
    assert b["scope"]["subject"] == subject.strip().lower()
    events = rich_events()
    if pairs is None:
        pairs = sorted({(e.subject, target(e, Timeline(registry_log()))) for e in events if e.subject == "user"})
    assert replay(b) == live(events, registry_log(), AS_OF, pairs)
    if predicate == "likes":
        # the exclusion by dislikes and the replaces of prefers_editor are inside the bundle
        held = {e["predicate"] for e in b["events"]}
        assert {"likes", "dislikes", "prefers_editor"} <= held


def test_unknown_scope_predicate_is_refused():
    with pytest.raises(AuditError, match="predicate scope is not in the registry"):
        build_bundle(rich_events(), registry_log(), as_of=AS_OF, scope_predicate="favourite_colour")


def test_reserved_pairs_are_left_out():
    review = make_event("recall:review", "review_decision", '{"dismissed": true}', t(3))
    b = build_bundle([*rich_events(), review, *registry_log()], registry_log(), as_of=AS_OF)
    assert review.id not in {e["id"] for e in b["events"]}
    assert all(e["subject"] != "recall:registry" for e in b["events"])


def test_promoted_notes_replay_under_their_predicate():
    note = make_event("user", NOTE, "my editor is kakoune", t(30))
    log = [
        *registry_log(),
        RegistryRecord("promote", "prefers_editor", notes=(Promotion(note.id, "user", "Kakoune"),)).to_event(t(50)),
    ]
    events = [*rich_events(), note]
    b = build_bundle(events, log, as_of=AS_OF, scope_predicate="prefers_editor")
    assert note.id in {e["id"] for e in b["events"]}
    beliefs = replay(b)
    assert beliefs == live(events, log, AS_OF, [("bob", "prefers_editor"), ("user", "prefers_editor")])
    assert [x.value for x in beliefs if x.subject == "user"] == ["Zed"]
    # as of between the note and Zed, the promoted note is the answer
    b2 = build_bundle(events, log, as_of=t(35), scope_subject="user")
    assert [(x.predicate, x.value) for x in replay(b2) if x.predicate == "prefers_editor"] == [
        ("prefers_editor", "Kakoune")
    ]


def test_a_note_promoted_into_an_excluding_predicate_is_in_the_bundle():
    note = make_event("user", NOTE, "actually I cannot stand mangoes", t(40))
    log = [
        *registry_log(),
        RegistryRecord("promote", "dislikes", notes=(Promotion(note.id, "user", "mangoes"),)).to_event(t(50)),
    ]
    events = [make_event("user", "likes", "mangoes", t(11)), note]
    b = build_bundle(events, log, as_of=AS_OF, scope_predicate="likes")
    assert note.id in {e["id"] for e in b["events"]}
    expected = live(events, log, AS_OF, [("user", "likes")])
    assert replay(b) == expected
    assert expected == [] and live(events, log, t(30), [("user", "likes")]) != []


def test_more_than_ten_thousand_events_are_refused_not_truncated():
    reg = [declare("likes", "multi")]
    events = [make_event("user", "likes", f"v{i}", t(1) + i) for i in range(MAX_EVENTS + 1)]
    with pytest.raises(AuditError, match="more than 10000 events .* nothing was exported"):
        build_bundle(events, reg, as_of=t(2))
    b = build_bundle(events[:MAX_EVENTS], reg, as_of=t(2))
    assert verify(b).events == MAX_EVENTS
    b["events"].append(b["events"][0])
    with pytest.raises(AuditError, match="more than 10000 events"):
        verify(b)


def test_events_outside_the_registry_are_refused_at_export():
    with pytest.raises(AuditError, match='would not verify.*event "m-[0-9a-f]+" predicate is not in registry'):
        build_bundle([make_event("user", "unknown_thing", "x", t(1))], registry_log(), as_of=AS_OF)


def test_the_same_id_with_different_content_is_refused():
    e = make_event("user", "likes", "tea", t(1))
    with pytest.raises(AuditError, match="duplicate event"):
        build_bundle([e, replace(e, confidence=0.3)], registry_log(), as_of=AS_OF)
    assert (
        build_bundle([e, e], registry_log(), as_of=AS_OF)["events"]
        == build_bundle([e], registry_log(), as_of=AS_OF)["events"]
    )


def test_as_of_must_be_explicit():
    with pytest.raises(AuditError, match="as_of"):
        build_bundle(rich_events(), registry_log(), as_of=None)  # type: ignore[arg-type]
    with pytest.raises(AuditError, match="as_of"):
        build_bundle(rich_events(), registry_log(), as_of=parse_instant("0001-01-01T00:00:00Z"))


# --- import then export ----------------------------------------------------------------


def test_import_then_export_reproduces_the_digest(bundle):
    r = verify(encode_bundle(bundle))
    reg_events, events = import_events(r)
    assert {e.id for e in events} == {e["id"] for e in bundle["events"]}
    # a store that already holds the bundle receives the same ids again: nothing new
    reg2, ev2 = import_events(verify(bundle))
    assert [e.id for e in reg2] == [e.id for e in reg_events] and ev2 == events
    again = build_bundle(events, reg_events, as_of=r.as_of)
    assert again["digest"] == bundle["digest"]
    assert again == bundle


# --- tamper evidence: every field names what changed -------------------------------------

EVENT_CHANGES = [
    ("id", "m-000000000000000000000000"),
    ("kind", "fact"),
    ("subject", "someone"),
    ("predicate", "likes"),
    ("value", "Helix editor"),
    ("value", "helix"),  # case alone: same value key, still a change
    ("confidence", 0.91),
    ("source", "user_stated"),
    ("retraction", True),
    ("observed_at", "2026-09-01T00:20:00.000000001Z"),
    ("evidence", "switched to Kakoune"),
    ("evidence", None),
    ("evidence_id", "m-other"),
    ("replaces", [{"predicate": "likes", "value": "emacs keys"}]),
    ("replaces", [{"predicate": "likes", "value": "Vim keys"}]),
    ("replaces", None),
    ("caused_by", "m-somewhere-else"),
    ("caused_by", None),
]


def _helix_index(b):
    return next(i for i, e in enumerate(b["events"]) if e["value"] == "Helix")


@pytest.mark.parametrize("field, value", EVENT_CHANGES, ids=[f"{f}={v!r}" for f, v in EVENT_CHANGES])
def test_changing_any_field_of_any_event_fails_and_names_the_event(bundle, field, value):
    b = copy.deepcopy(bundle)
    i = _helix_index(b)
    if field == "caused_by":
        i = next(k for k, e in enumerate(b["events"]) if e.get("caused_by"))
    e = b["events"][i]
    original_id = e["id"]
    if value is None:
        assert field in e
        del e[field]
    else:
        assert e.get(field) != value
        e[field] = value
    with pytest.raises(AuditError) as err:
        verify(b)
    named = value if field == "id" else original_id
    assert f'"{named}"' in str(err.value)
    assert "event" in str(err.value)


def test_a_changed_event_is_a_digest_mismatch_naming_it(bundle):
    b = copy.deepcopy(bundle)
    e = b["events"][_helix_index(b)]
    e["confidence"] = 0.5
    with pytest.raises(
        DigestMismatch,
        match=f'digest mismatch: event "{e["id"]}" \\(user / prefers_editor at 2026-09-01T00:20:00Z\\) was changed',
    ):
        verify(b)


def test_a_dropped_or_added_event_is_named(bundle):
    b = copy.deepcopy(bundle)
    gone = b["events"].pop(0)
    with pytest.raises(DigestMismatch, match=f'event "{gone["id"]}" of the fingerprints is missing'):
        verify(b)
    b = copy.deepcopy(bundle)
    extra = make_event("user", "likes", "kiwis", t(7))
    from recall_engine.audit import event_json

    b["events"].append(event_json(extra))
    with pytest.raises(DigestMismatch, match=f'event "{extra.id}" is not in the bundle\'s fingerprints'):
        verify(b)


REGISTRY_CHANGES = [
    ("cardinality", "multi"),
    ("value_type", "enum"),
    ("value_type", ""),
    ("description", "a different description"),
    ("allowed", ["Vim"]),
    ("aliases", []),
    ("aliases", ["editor_choice", "other_name"]),
    ("excludes", ["likes"]),
    ("historical", True),
]


@pytest.mark.parametrize("field, value", REGISTRY_CHANGES, ids=[f"{f}={v!r}" for f, v in REGISTRY_CHANGES])
def test_changing_any_field_of_the_registry_fails_and_names_it(bundle, field, value):
    b = copy.deepcopy(bundle)
    b["registry"]["prefers_editor"][field] = value
    with pytest.raises(AuditError) as err:
        verify(b)
    msg = str(err.value)
    assert '"prefers_editor"' in msg, msg


def test_registry_entries_added_or_removed_are_named(bundle):
    b = copy.deepcopy(bundle)
    del b["registry"]["budget"]
    with pytest.raises(AuditError, match='registry entry "budget" is missing; the registry log defines it'):
        verify(b)
    b = copy.deepcopy(bundle)
    b["registry"]["colour"] = dict(b["registry"]["likes"])
    with pytest.raises(AuditError, match='registry entry "colour" is not a predicate of the registry log'):
        verify(b)
    b = copy.deepcopy(bundle)
    b["registry"]["likes"]["cardinality"] = "single"
    with pytest.raises(
        AuditError, match='registry entry "likes" has cardinality "single", but the registry log gives "multi"'
    ):
        verify(b)


REGISTRY_LOG_CHANGES = [
    ("kind", "preference"),
    ("confidence", 0.5),
    ("source", "tool_result"),
    ("observed_at", "2026-09-01T00:00:00.000000007Z"),
    ("id", "m-111111111111111111111111"),
    ("evidence", "because"),
]


@pytest.mark.parametrize("field, value", REGISTRY_LOG_CHANGES, ids=[f for f, _ in REGISTRY_LOG_CHANGES])
def test_changing_any_field_of_a_registry_event_names_it(bundle, field, value):
    b = copy.deepcopy(bundle)
    e = b["registry_log"][0]
    eid = e["id"]
    e[field] = value
    with pytest.raises(AuditError) as err:
        verify(b)
    assert f'"{value if field == "id" else eid}"' in str(err.value)


def _record_edit(edit):
    def apply(b):
        i = next(k for k, e in enumerate(b["registry_log"]) if '"op":"merge"' in e["value"])
        rec = json.loads(b["registry_log"][i]["value"])
        edit(rec)
        b["registry_log"][i]["value"] = json.dumps(rec, sort_keys=True, separators=(",", ":"))
        return b["registry_log"][i]["id"]

    return apply


@pytest.mark.parametrize(
    "edit, expect",
    [
        (_record_edit(lambda r: r.update(into="likes")), 'registry entry "likes" has aliases'),
        (_record_edit(lambda r: r.update(operator="mallory")), "registry event"),
        (_record_edit(lambda r: r.update(reason="")), "registry event"),
        (_record_edit(lambda r: r.update(op="split")), "registry event"),
        (_record_edit(lambda r: r.update(surprise=1)), "unknown field"),
    ],
)
def test_changing_a_registry_record_fails_and_names_what(bundle, edit, expect):
    b = copy.deepcopy(bundle)
    eid = edit(b)
    with pytest.raises(AuditError) as err:
        verify(b)
    msg = str(err.value)
    assert expect in msg, msg
    if expect == "registry event":
        assert f'"{eid}"' in msg


def test_header_changes_are_caught(bundle):
    b = copy.deepcopy(bundle)
    b["as_of"] = "2026-09-01T01:00:00.000000001Z"
    with pytest.raises(DigestMismatch, match="so its scope, as_of or digest field was changed"):
        verify(b)
    b = copy.deepcopy(bundle)
    b["scope"]["subject"] = "bob"
    with pytest.raises(AuditError, match="is outside scope"):
        verify(b)
    scoped = build_bundle(rich_events(), registry_log(), as_of=AS_OF, scope_subject="user")
    scoped["scope"]["subject"] = ""
    with pytest.raises(DigestMismatch, match="scope, as_of or digest"):
        verify(scoped)
    for field, value, message in [
        ("version", "recall-audit-v3", 'bundle version "recall-audit-v3" cannot be replayed by this build'),
        (
            "event_version",
            "recall-event-v2",
            'event version "recall-event-v2" cannot be replayed by this build, which writes "recall-event-v3"',
        ),
        (
            "fold_version",
            "recall-fold-v3",
            'fold version "recall-fold-v3" cannot be replayed by this build, which writes "recall-fold-v5" and reads "recall-fold-v4"',
        ),
        ("as_of", "", "as_of must be an explicit RFC3339 instant"),
        ("not_as_of", "x", 'unknown field "not_as_of"'),
    ]:
        b = copy.deepcopy(bundle)
        b[field] = value
        with pytest.raises(AuditError, match=message):
            verify(b)


def test_a_consistently_rewritten_bundle_is_caught_by_the_separate_digest(bundle):
    """Whoever rewrites an event and recomputes fingerprints and checksum beats verify alone, not --digest."""
    b = copy.deepcopy(bundle)
    i = _helix_index(b)
    b["events"][i]["confidence"] = 0.1
    events = [_decode(e) for e in b["events"]]
    log = [_decode(e) for e in b["registry_log"]]
    b["fingerprints"]["events"][b["events"][i]["id"]] = event_fingerprint(events[i])
    b["digest"] = bundle_checksum_v2(
        version=b["version"],
        event_version=b["event_version"],
        fold_version=b["fold_version"],
        scope_subject="",
        scope_predicate="",
        as_of=AS_OF,
        events_digest=digest_v4(events),
        registry=b["registry"],
        registry_log_digest=digest_v4(log),
    )
    assert verify(b).valid
    with pytest.raises(DigestMismatch, match="differs from the expected"):
        verify(b, digest=bundle["digest"])


def _decode(obj):
    from recall_engine.records import decode_event

    return decode_event(obj)


# --- the digest encodings, written again from docs/audit.md ----------------------------------


def _f(x) -> bytes:
    raw = x.encode() if isinstance(x, str) else x
    return str(len(raw)).encode() + b":" + raw


def _typed(v):
    if v is None:
        return "null", ""
    if isinstance(v, bool):
        return "boolean", "true" if v else "false"
    if isinstance(v, (int, float)):
        return "number", struct.pack(">d", float(v)).hex()
    return "string", v


def test_worked_example_of_docs_audit_md():
    """The example of docs/audit.md, computed by hand from its byte-by-byte description."""
    e = Event(
        id="m-1",
        kind="fact",
        subject="user",
        predicate="prefers_editor",
        value="Helix",
        confidence=1.0,
        source="operator",
        retraction=False,
        observed_at=parse_instant("2026-09-01T13:00:00Z"),
        replaces=(Replace("likes", "vim keys"),),
        caused_by="",
    )
    stream = (
        b"23:recall-events-digest-v4"
        b"1:1"
        b"3:m-1"
        b"4:fact"
        b"4:user"
        b"14:prefers_editor"
        b"6:string"
        b"5:Helix"
        b"16:3ff0000000000000"
        b"8:operator"
        b"5:false"
        b"30:2026-09-01T13:00:00.000000000Z"
        b"0:"
        b"0:"
        b"1:1"
        b"5:likes"
        b"6:string"
        b"8:vim keys"
        b"0:"
    )
    want = "sha256:v4:" + hashlib.sha256(stream).hexdigest()
    assert digest_v4([e]) == want
    assert want == "sha256:v4:5be59283e98d7d29859472968ceb79c24bb399ae3ef7719289f13ae521235273"
    assert event_fingerprint(e) == hashlib.sha256(stream[len(b"23:recall-events-digest-v41:1") :]).hexdigest()[:16]
    verify_event_digest([e], want)


def test_v4_digest_follows_the_documented_encoding(bundle):
    """An independent implementation of docs/audit.md gives the bundle's own checksum."""

    def events_digest(objs):
        evs = sorted(objs, key=lambda o: (parse_instant(o["observed_at"]), o["id"]))
        h = hashlib.sha256(_f("recall-events-digest-v4") + _f(str(len(evs))))
        for o in evs:
            vt, vv = _typed(o["value"])
            parts = [
                o["id"],
                o["kind"],
                o["subject"],
                o["predicate"],
                vt,
                vv,
                struct.pack(">d", float(o["confidence"])).hex(),
                o["source"],
                "true" if o["retraction"] else "false",
                format_fixed(parse_instant(o["observed_at"])),
                o.get("evidence", ""),
                o.get("evidence_id", ""),
                str(len(o.get("replaces", []))),
            ]
            for r in o.get("replaces", []):
                rt, rv = _typed(r["value"])
                parts += [r["predicate"], rt, rv]
            parts.append(o.get("caused_by", ""))
            h.update(b"".join(_f(p) for p in parts))
        return "sha256:v4:" + h.hexdigest()

    s = b""
    for k in ("version", "event_version", "fold_version"):
        s += _f(bundle[k])
    s += _f(bundle["scope"]["subject"]) + _f(bundle["scope"]["predicate"]) + _f(bundle["as_of"])
    s += _f(events_digest(bundle["events"])) + _f(str(len(bundle["registry"])))
    for name in sorted(bundle["registry"]):
        d = bundle["registry"][name]
        s += _f(name) + _f(d["cardinality"]) + _f(d["value_type"]) + _f(d["description"])
        s += _f("allowed") + _f(str(len(d["allowed"]))) + b"".join(_f(a) for a in d["allowed"])
        s += _f("aliases") + _f(str(len(d["aliases"]))) + b"".join(_f(a) for a in sorted(d["aliases"]))
        s += _f("excludes") + _f(str(len(d["excludes"]))) + b"".join(_f(a) for a in sorted(d["excludes"]))
        s += _f("historical") + _f("true" if d["historical"] else "false")
    s += _f("registry-log") + _f(events_digest(bundle["registry_log"]))
    assert bundle["digest"] == "sha256:audit-v2:" + hashlib.sha256(s).hexdigest()


# --- the property: round trip equals the live answers on random logs ------------------------

SUBJECTS = ("ann", "bob")
STRING_PREDICATES = ("editor", "likes", "dislikes", "city", "did", "fav", "color")
VALUES = ("vim", "Vim", "helix", "tea", "paris", "rome")


@st.composite
def random_log(draw):
    n_moments = 40
    when = st.integers(0, n_moments)
    reg = [
        declare("editor", at=0),
        declare("likes", "multi", at=0),
        declare("dislikes", "multi", at=0, excludes=("likes",)),
        declare("city", at=0),
        declare("did", "multi", at=0, historical=True),
        declare("fav", draw(st.sampled_from(("single", "multi"))), at=0),
        declare("score", value_type="number", at=0),
        RegistryRecord("define", "color", Definition("color", "single", "string", "color"), auto=True).to_event(
            t(draw(when))
        ),
    ]
    for _ in range(draw(st.integers(0, 5))):
        op = draw(st.sampled_from(("redefine", "merge", "split", "define_again", "excludes")))
        at = t(draw(when)) + draw(st.integers(0, 3))
        if op == "redefine":
            name = draw(st.sampled_from(("editor", "likes", "city", "fav", "color")))
            card = draw(st.sampled_from(("single", "multi")))
            rec = RegistryRecord(
                "redefine", name, Definition(name, card, "string", "changed"), retroactive=draw(st.booleans())
            )
        elif op == "merge":
            name, into = draw(st.sampled_from((("fav", "editor"), ("color", "city"), ("fav", "likes"))))
            rec = RegistryRecord("merge", name, into=into)
        elif op == "split":
            name = draw(st.sampled_from(("fav", "color")))
            rec = RegistryRecord("split", name, Definition(name, "single", "string", "split again"))
        elif op == "define_again":
            rec = RegistryRecord("define", "color", Definition("color", "multi", "string", "second define"), auto=True)
        else:
            name = draw(st.sampled_from(("city", "editor")))
            rec = RegistryRecord(
                "redefine",
                name,
                Definition(name, "single", "string", "x", excludes=("fav",)),
                retroactive=draw(st.booleans()),
            )
        reg.append(rec.to_event(at))
    events: dict[str, Event] = {}
    for _ in range(draw(st.integers(3, 25))):
        subject = draw(st.sampled_from(SUBJECTS))
        at = t(draw(when))
        if draw(st.integers(0, 9)) == 0:
            e = make_event(subject, "score", draw(st.sampled_from((1, 2.5, -0.0))), at)
        elif draw(st.integers(0, 7)) == 0:
            e = make_event(subject, NOTE, draw(st.sampled_from(("a note", "another note"))), at, confidence=0.5)
        else:
            pred = draw(st.sampled_from(STRING_PREDICATES))
            kind = draw(st.integers(0, 5))
            if kind == 0:
                e = make_event(subject, pred, None, at, retraction=True, source="operator")
            elif kind == 1:
                e = make_event(
                    subject,
                    pred,
                    draw(st.sampled_from(VALUES)),
                    at,
                    retraction=True,
                    caused_by=draw(st.sampled_from(["", *events])),
                )
            else:
                replaces = draw(
                    st.lists(
                        st.builds(Replace, st.sampled_from(STRING_PREDICATES), st.sampled_from(VALUES)), max_size=2
                    )
                )
                e = make_event(
                    subject,
                    pred,
                    draw(st.sampled_from(VALUES)),
                    at,
                    kind=draw(st.sampled_from(("fact", "preference"))),
                    confidence=draw(st.sampled_from((1.0, 0.75))),
                    source=draw(st.sampled_from(("user_stated", "agent_inferred", "tool_result", "operator"))),
                    evidence=draw(st.sampled_from(("", "said so"))),
                    replaces=replaces,
                )
        events.setdefault(e.id, e)
    notes = [e for e in events.values() if e.predicate == NOTE and not e.retraction]
    if notes and draw(st.booleans()):
        chosen = draw(st.lists(st.sampled_from(notes), min_size=1, max_size=2, unique_by=lambda e: e.id))
        into = draw(st.sampled_from(("likes", "city", "dislikes", NOTE)))
        promos = tuple(Promotion(e.id, e.subject, draw(st.sampled_from(VALUES))) for e in chosen)
        reg.append(RegistryRecord("promote", into, notes=promos).to_event(t(draw(when)) + 5))
    as_of = t(draw(st.one_of(st.just(n_moments + 1), when))) + draw(st.sampled_from((0, 1, -1)))
    scope = draw(
        st.sampled_from((("", ""), ("", ""), ("ann", ""), ("", "likes"), ("", "editor"), ("bob", "city"), ("", NOTE)))
    )
    return reg, list(events.values()), as_of, scope


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(random_log())
def test_round_trip_equals_the_live_answers(case):
    reg, events, as_of, (subject, predicate) = case
    tl = Timeline(reg)
    b = build_bundle(events, reg, as_of=as_of, scope_subject=subject, scope_predicate=predicate)
    text = encode_bundle(b)
    r = verify(text, digest=b["digest"])
    assert r.valid and r.digest == b["digest"]
    p = tl.canonical(predicate) if predicate else ""
    pairs = sorted({(e.subject, target(e, tl)) for e in events if (not subject or e.subject == subject)})
    if p:
        pairs = [x for x in pairs if x[1] == p]
    assert replay(text) == live(events, reg, as_of, pairs)
    assert replay(r, notes_only=True) == [x for x in live(events, reg, as_of, pairs) if x.predicate == NOTE]
    # import then export reproduces the digest
    reg2, ev2 = import_events(r)
    again = build_bundle(ev2, reg2, as_of=r.as_of, scope_subject=subject, scope_predicate=predicate)
    assert again["digest"] == b["digest"]
    # shuffled input, same bundle
    assert (
        build_bundle(
            list(reversed(events)), list(reversed(reg)), as_of=as_of, scope_subject=subject, scope_predicate=predicate
        )["digest"]
        == b["digest"]
    )


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_log(), st.data())
def test_any_change_to_a_random_bundle_fails_verification(case, data):
    reg, events, as_of, _ = case
    b = build_bundle(events, reg, as_of=as_of)
    where = data.draw(st.sampled_from(["events", "registry_log"] if b["events"] else ["registry_log"]))
    i = data.draw(st.integers(0, len(b[where]) - 1))
    e = b[where][i]
    field = data.draw(st.sampled_from(sorted(e)))
    old = e[field]
    new = data.draw(
        {
            str: st.sampled_from(
                ["x", "user", "likes", "2026-09-01T00:00:00.000000001Z", old + "!" if isinstance(old, str) else "x"]
            ),
            float: st.sampled_from([0.5, 0.25, 1.0]),
            bool: st.just(not old) if isinstance(old, bool) else st.just(True),
        }.get(type(old), st.just("changed"))
    )
    if new == old:
        return
    e[field] = new
    with pytest.raises(AuditError) as err:
        verify(b)
    msg = str(err.value)
    # the message names the event (its new id when the id itself changed), or the registry
    # entry that a changed registry record no longer agrees with
    assert f'"{e["id"]}"' in msg or "registry entry" in msg, msg


# --- the example bundle of docs/audit.md -------------------------------------------------------

EXAMPLE_DIGEST = "sha256:audit-v2:939497fb731b0dd88b4f33f61951b5617f50e9226398d50f596546be90d15d7b"


def test_the_documented_example_bundle_is_stable():
    from pathlib import Path

    data = (Path(__file__).parent / "fixtures" / "audit-v2-example.json").read_bytes()
    r = verify(data, digest=EXAMPLE_DIGEST)
    assert r.events == 1
    assert digest_v4(r.event_list) == "sha256:v4:c22d7b120771640c61dfca68a8441c8ce71e489881bdf90353dfc33567d6ca4f"
    assert digest_v4(r.registry_log) == "sha256:v4:f80d0b3928aad9e5cc1e79d64f9eb81b6c34a4110256711109e3e13d770aebca"
    reg = [
        RegistryRecord(
            "declare", "prefers_editor", Definition("prefers_editor", "single", "string", "editor")
        ).to_event(T0)
    ]
    ev = [
        make_event(
            "user", "prefers_editor", "Helix", t(13 * 60), source="operator", replaces=[Replace("likes", "vim keys")]
        )
    ]
    rebuilt = build_bundle(ev, reg, as_of=t(15 * 60))
    # the example is a recall-fold-v4 bundle: it still verifies and replays (with v4's rules);
    # exported today the same log is a v5 bundle, identical but for the fold version and digest
    old = json.loads(data)
    assert old["fold_version"] == "recall-fold-v4" and rebuilt["fold_version"] == "recall-fold-v5"
    assert {k: v for k, v in rebuilt.items() if k not in ("fold_version", "digest")} == {
        k: v for k, v in old.items() if k not in ("fold_version", "digest")
    }
    [b] = replay(data)
    assert (b.value, b.event_id) == ("Helix", ev[0].id)
    assert replay(rebuilt) == [b]


# --- fold versions: v5 (exclusions at the read, replaced across pairs); v4 kept (issues 18, 19) ---


def _as_v4(b: dict) -> dict:
    """The same bundle as a recall-fold-v4 export would have written it."""
    old = copy.deepcopy(b)
    old["fold_version"] = "recall-fold-v4"
    old["digest"] = bundle_checksum_v2(
        version=old["version"],
        event_version=old["event_version"],
        fold_version="recall-fold-v4",
        scope_subject=old["scope"]["subject"],
        scope_predicate=old["scope"]["predicate"],
        as_of=parse_instant(old["as_of"]),
        events_digest=digest_v4([_decode(e) for e in old["events"]]),
        registry=old["registry"],
        registry_log_digest=digest_v4([_decode(e) for e in old["registry_log"]]),
    )
    return old


def test_a_v4_bundle_replays_with_the_rules_it_was_written_under():
    log = [
        declare("enjoys", "multi", at=0),
        declare("hates", "multi", at=0),
        RegistryRecord(
            "redefine", "hates", Definition("hates", "multi", "string", "hates words", excludes=("enjoys",))
        ).to_event(t(60)),
    ]
    events = [make_event("user", "enjoys", "mangoes", t(1)), make_event("user", "hates", "mangoes", t(2))]
    v5 = build_bundle(events, log, as_of=t(120))
    v4 = _as_v4(v5)
    assert verify(v4).fold_version == "recall-fold-v4"
    now = {(b.predicate, b.value): [(p.predicate, p.value) for p in b.replaced] for b in replay(v5)}
    assert now == {("hates", "mangoes"): [("enjoys", "mangoes")]}  # the exclusion covers the old log
    then = {(b.predicate, b.value): [p.value for p in b.replaced] for b in replay(v4)}
    assert then == {("enjoys", "mangoes"): [], ("hates", "mangoes"): []}  # v4: from the redefine's instant on


def test_a_predicate_scoped_bundle_carries_what_replaced_needs():
    log = [
        declare("goal", "multi", at=0),
        declare("did", "multi", at=0, historical=True),
        declare("likes", "multi", at=0),
        declare("dislikes", "multi", at=0, excludes=("likes",)),
    ]
    did = make_event("user", "did", "run a marathon", t(2), replaces=(Replace("goal", "run a marathon"),))
    events = [
        make_event("user", "goal", "run a marathon", t(1)),
        did,
        make_event("user", "goal", "run a marathon", t(2), retraction=True, caused_by=did.id),
        make_event("user", "goal", "swim", t(3)),
        make_event("user", "likes", "tea", t(3)),
        make_event("bob", "goal", "run a marathon", t(1)),
    ]
    b = build_bundle(events, log, as_of=t(10), scope_predicate="did")
    kept = {e["id"] for e in b["events"]}
    assert kept == {e.id for e in events[:4]}  # the goal pair it corrected, not likes, not bob
    [belief] = replay(b)
    assert [(p.predicate, p.value) for p in belief.replaced] == [("goal", "run a marathon")]
