"""Bundles of the Go engine (recall-audit-v1): digests, verify and replay, exactly.

Test vectors are the Go engine's (testdata/audit-v1.json and
testdata/audit-digests.json, rebuilt here) and cases from the Go tests of its fold
and registry log (docs/formats.md), rebuilt as bundles.
"""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path

import pytest

from recall_engine.audit import AUDIT_V1, MAX_EVENTS, import_events, replay, verify
from recall_engine.audit.digest import (
    bundle_checksum_v1,
    digest_legacy,
    digest_v2,
    digest_v3,
    verify_event_digest,
)
from recall_engine.errors import AuditError, DigestMismatch
from recall_engine.instants import format_fixed, format_rfc3339, parse_instant
from recall_engine.records import Event, decode_event, event_id
from recall_engine.timeline import Timeline

FIXTURE = Path(__file__).parent / "fixtures" / "audit-v1.json"
GOLDEN = "sha256:audit-v1:46433777e1bda4c3b4d3096c44c5a9e151362e0fcc7f048aa37ce26e1bdd4d99"
V3 = "sha256:v3:9fd5feb20e9453a162c161639a397131f2482cccec0205b6574e982e713467ab"


def at(text: str) -> int:
    return parse_instant(text)


def go_event(eid, value, hour, *, retraction=False, predicate="prefers_editor", subject="user", **extra):
    e = {
        "id": eid,
        "kind": "preference",
        "subject": subject,
        "predicate": predicate,
        "value": value,
        "confidence": 1,
        "source": "user_stated",
        "retraction": retraction,
        "observed_at": hour if "T" in str(hour) else f"2026-09-01T{hour:02d}:00:00.000000000Z",
    }
    e.update(extra)
    return e


def golden_bundle() -> dict:
    """testdata/audit-v1.json (docs/audit.md, section 4.8), built in code."""
    return {
        "version": "recall-audit-v1",
        "event_version": "recall-event-v1",
        "fold_version": "recall-fold-v2",
        "scope": {"subject": "", "predicate": ""},
        "as_of": "2026-09-01T15:00:00Z",
        "registry": {"prefers_editor": {"cardinality": "single", "value_type": "string", "description": "editor"}},
        "events": [
            go_event("a", "Vim", 12),
            go_event("b", "Neovim", 13),
            go_event("c", "Vim", 14, retraction=True),
        ],
        "digest": GOLDEN,
    }


def events_of(bundle: dict) -> list[Event]:
    return [decode_event(e) for e in bundle["events"]]


def sign(bundle: dict) -> dict:
    """Recompute the checksum of a Go bundle built in a test (the encoding is pinned by the vectors)."""
    evs = events_of(bundle)
    log = [decode_event(e) for e in bundle.get("registry_log") or []]
    ev_digest = digest_v2(evs) if bundle["event_version"] == "recall-event-v1" else digest_v3(evs)
    bundle["digest"] = bundle_checksum_v1(
        version=bundle["version"],
        event_version=bundle["event_version"],
        fold_version=bundle["fold_version"],
        scope_subject=bundle["scope"]["subject"],
        scope_predicate=bundle["scope"]["predicate"],
        as_of=parse_instant(bundle["as_of"]),
        events_digest=ev_digest,
        registry=bundle["registry"],
        registry_log_digest=digest_v3(log) if log else None,
    )
    return bundle


# --- the golden vectors -----------------------------------------------------------


def test_fixture_file_is_the_bundle_of_reference_7_5():
    assert json.loads(FIXTURE.read_text()) == golden_bundle()


def test_event_digests_match_the_go_vectors():
    evs = events_of(golden_bundle())
    legacy = digest_legacy(evs)
    assert legacy.startswith("sha256:062b60da") and legacy.endswith("f6a3") and len(legacy) == 7 + 64
    v2 = digest_v2(evs)
    assert v2.startswith("sha256:v2:83422038") and v2.endswith("09d1") and len(v2) == 10 + 64
    assert digest_v3(evs) == V3
    for d in (legacy, v2, V3):
        verify_event_digest(evs, d)  # both entries of audit-digests.json, and v3
        verify_event_digest(list(reversed(evs)), d)  # order of the input does not matter


def test_event_digests_detect_a_change():
    evs = events_of(golden_bundle())
    changed = [evs[0], replace(evs[1], value="neovim"), evs[2]]
    verify_event_digest(changed, digest_legacy(evs))  # legacy digests the case-insensitive value key
    with pytest.raises(DigestMismatch):
        verify_event_digest(changed, digest_v2(evs))
    with pytest.raises(DigestMismatch):
        verify_event_digest(changed, V3)
    with pytest.raises(AuditError, match="unsupported digest format"):
        verify_event_digest(evs, "md5:abc")


def test_checksum_rebuilt_in_code_matches_the_golden_digest():
    b = golden_bundle()
    b["digest"] = ""
    assert sign(b)["digest"] == GOLDEN


@pytest.mark.parametrize("form", ["bytes", "str", "dict"])
def test_golden_bundle_verifies(form):
    data = FIXTURE.read_bytes()
    arg = {"bytes": data, "str": data.decode(), "dict": json.loads(data)}[form]
    r = verify(arg)
    assert (r.valid, r.digest, r.events) == (True, GOLDEN, 3)
    assert r.to_json() == {"valid": True, "digest": GOLDEN, "events": 3}
    assert verify(arg, digest=GOLDEN).valid


def test_golden_bundle_replays_to_exactly_one_belief():
    beliefs = replay(FIXTURE.read_bytes())
    assert len(beliefs) == 1
    b = beliefs[0]
    assert (b.subject, b.predicate, b.value, b.kind, b.confidence, b.source, b.event_id) == (
        "user",
        "prefers_editor",
        "Neovim",
        "preference",
        1.0,
        "user_stated",
        "b",
    )
    assert format_rfc3339(b.observed_at) == "2026-09-01T13:00:00Z"
    assert [(p.value, p.source, format_rfc3339(p.observed_at), p.event_id) for p in b.replaced] == [
        ("Vim", "user_stated", "2026-09-01T12:00:00Z", "a")
    ]
    assert replay(FIXTURE.read_bytes(), notes_only=True) == []


def test_go_event_json_forms_read_the_same():
    """Reference A3: Go writes trimmed instants and omits a false retraction; digests agree."""
    b = golden_bundle()
    for e in b["events"]:
        e["observed_at"] = format_rfc3339(at(e["observed_at"]))
        if not e["retraction"]:
            del e["retraction"]
    assert verify(b).digest == GOLDEN


# --- what the Go CLI and tests reject ------------------------------------------------


def golden_text() -> str:
    return FIXTURE.read_text()


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(lambda t: t.replace('"Neovim"', '"neovim"'), id="value case"),
        pytest.param(lambda t: t.replace("recall-fold-v2", "recall-fold-v3"), id="fold v2 to v3"),
    ],
)
def test_cli_rejects_changed_text_with_a_digest_mismatch(edit):
    with pytest.raises(DigestMismatch, match="digest mismatch"):
        verify(edit(golden_text()))


@pytest.mark.parametrize(
    "data, message",
    [
        (lambda t: t.replace('"as_of"', '"not_as_of"'), 'unknown field "not_as_of"'),
        (lambda t: t + "{}", "exactly one JSON bundle"),
        (lambda t: t[:-5], "decode audit"),
        (lambda t: t.encode()[:40] + b"\xff" + t.encode()[40:], "audit input must be UTF-8"),
        (lambda t: t.replace('"scope"', '"version": "recall-audit-v1", "scope"'), 'duplicate key "version"'),
        (lambda t: t.replace('"confidence": 1', '"confidence": NaN', 1), "NaN is not JSON"),
        (lambda t: b" " * (64 * 1024 * 1024 + 1), "exceeds 64 MiB"),
        (lambda t: "[]", "a bundle is a JSON object"),
    ],
)
def test_cli_rejects_malformed_input(data, message):
    with pytest.raises(AuditError, match=message):
        verify(data(golden_text()))


def test_a_digest_obtained_separately_must_match_exactly():
    with pytest.raises(DigestMismatch, match="differs from the expected"):
        verify(golden_text(), digest=GOLDEN[:-1] + "0")
    with pytest.raises(DigestMismatch):
        replay(golden_text(), digest="sha256:audit-v1:" + "0" * 64)


def tamper(path, value):
    def edit(b):
        obj = b
        for k in path[:-1]:
            obj = obj[k]
        if value is DELETE:
            del obj[path[-1]]
        else:
            obj[path[-1]] = value
        return b

    return edit


DELETE = object()


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(tamper(("events", 1, "value"), "neovim"), id="string case"),
        pytest.param(lambda b: {**b, "events": b["events"][:2]}, id="dropped retraction"),
        pytest.param(tamper(("as_of",), "2026-09-01T15:00:00.000000001Z"), id="as_of +1ns"),
        pytest.param(tamper(("scope", "subject"), "user"), id="scope subject"),
        pytest.param(tamper(("scope", "predicate"), "prefers_editor"), id="scope predicate"),
        pytest.param(tamper(("registry", "prefers_editor", "cardinality"), "multi"), id="cardinality"),
        pytest.param(tamper(("registry", "prefers_editor", "description"), "Editor"), id="description"),
        pytest.param(tamper(("registry", "prefers_editor", "value_type"), ""), id="value_type string to empty"),
        pytest.param(tamper(("registry", "prefers_editor", "aliases"), ["editor"]), id="alias added"),
        pytest.param(tamper(("events", 0, "confidence"), 0.9), id="confidence"),
        pytest.param(tamper(("events", 0, "kind"), "fact"), id="kind"),
        pytest.param(tamper(("events", 0, "source"), "tool_result"), id="source"),
        pytest.param(tamper(("events", 0, "id"), "a2"), id="id"),
        pytest.param(tamper(("digest",), "sha256:audit-v1:" + "0" * 64), id="digest"),
    ],
)
def test_every_input_change_is_a_digest_mismatch(edit):
    b = edit(golden_bundle())
    with pytest.raises(DigestMismatch, match="digest mismatch: the bundle's digest .* but its content digests to"):
        verify(b)


def many_events(n):
    return [go_event(f"e{i:05d}", "Vim", f"2026-09-01T12:00:00.{i:09d}Z") for i in range(n)]


@pytest.mark.parametrize(
    "edit, message",
    [
        (tamper(("version",), "recall-audit-v9"), 'bundle version "recall-audit-v9" cannot be replayed by this build'),
        (
            tamper(("event_version",), "recall-event-v9"),
            'event version "recall-event-v9" cannot be replayed by this build',
        ),
        (tamper(("event_version",), "recall-event-v3"), 'event version "recall-event-v3" cannot be replayed'),
        (tamper(("fold_version",), "recall-fold-v1"), 'fold version "recall-fold-v1" cannot be replayed'),
        (tamper(("fold_version",), "recall-fold-v4"), 'fold version "recall-fold-v4" cannot be replayed'),
        (tamper(("as_of",), "0001-01-01T00:00:00Z"), "as_of must be an explicit RFC3339 instant"),
        (tamper(("as_of",), DELETE), "as_of must be an explicit RFC3339 instant"),
        (tamper(("as_of",), "10000-01-01T00:00:00Z"), "as_of must be an explicit RFC3339 instant"),
        (tamper(("as_of",), "2026-09-01"), "as_of must be an explicit RFC3339 instant"),
        (tamper(("scope", "subject"), "User"), "subject scope must be normalized UTF-8"),
        (tamper(("scope", "subject"), " user"), "subject scope must be normalized UTF-8"),
        (tamper(("scope", "subject"), "\ud800"), "subject scope must be normalized UTF-8"),
        (tamper(("scope", "predicate"), "likes"), "predicate scope is not in the registry"),
        (tamper(("scope", "subject"), "bob"), 'event "a" is outside scope'),
        (tamper(("registry",), {}), "registry must not be empty"),
        (tamper(("registry", "prefers_editor", "cardinality"), "many"), 'has cardinality "many", want single or multi'),
        (tamper(("registry", "prefers_editor", "value_type"), "text"), 'has value_type "text"'),
        (tamper(("registry", "prefers_editor", "allowed"), ["Vim"]), "lists allowed values but has value_type"),
        (tamper(("registry", "Prefers"), {"cardinality": "single"}), '"Prefers" is not snake_case'),
        (tamper(("registry", "note"), {"cardinality": "single"}), '"note" is reserved'),
        (tamper(("registry", "prefers_editor", "description"), "bad \ud800"), "description that is not valid UTF-8"),
        (
            tamper(("registry", "prefers_editor", "excludes"), ["x"]),
            'registry entry "prefers_editor": unknown field "excludes"',
        ),
        (tamper(("events", 0, "predicate"), "likes"), 'event "a" predicate is not in registry'),
        (tamper(("events", 0, "value"), 3), 'event "a" has invalid value'),
        (tamper(("events", 0, "value"), " "), 'event "a" has invalid value'),
        (tamper(("events", 0, "value"), None), 'event "a" has invalid value'),
        (tamper(("events", 0, "confidence"), 1.5), 'event "a" has invalid confidence'),
        (tamper(("events", 0, "source"), "operator"), 'event "a" has invalid source'),
        (tamper(("events", 0, "retraction"), "no"), 'event "a" has invalid retraction'),
        (tamper(("events", 1, "id"), "a"), 'duplicate event "a"'),
        (tamper(("events", 0, "observed_at"), "0001-01-01T00:00:00Z"), 'event "a" has invalid observed_at'),
        (tamper(("events", 0, "observed_at"), "2026-09-01"), 'event "a" has invalid observed_at'),
        (
            tamper(("events", 0, "subject"), "us\ud800er"),
            ('event "a" subject is not valid UTF-8', 'event "a" has invalid subject'),
        ),
        (
            tamper(("events", 0, "replaces"), [{"predicate": "x", "value": "y"}]),
            'event "a" has unknown field "replaces"',
        ),
        (tamper(("events", 0, "caused_by"), "b"), 'event "a" has unknown field "caused_by"'),
        (
            tamper(("events", 0, "evidence"), "said so"),
            'event "a" carries evidence, which recall-event-v1 bundles cannot record',
        ),
        (tamper(("events",), many_events(MAX_EVENTS + 1)), "more than 10000 events"),
        (tamper(("fingerprints",), {}), 'unknown field "fingerprints"'),
    ],
)
def test_invalid_and_unknown_inputs_are_refused_with_the_reason(edit, message):
    b = edit(golden_bundle())
    with pytest.raises(AuditError) as err:
        verify(b)
    assert not isinstance(err.value, DigestMismatch)
    assert any(m in str(err.value) for m in ((message,) if isinstance(message, str) else message)), str(err.value)


def test_ten_thousand_events_verify():
    b = golden_bundle()
    b["events"] = many_events(MAX_EVENTS)
    r = verify(sign(b))
    assert r.events == MAX_EVENTS


# --- Go bundles with more than the golden one ------------------------------------------


def go_bundle(
    events,
    registry,
    log=(),
    *,
    event_version="recall-event-v2",
    fold_version="recall-fold-v3",
    as_of="2026-09-02T00:00:00Z",
    subject="",
    predicate="",
):
    b = {
        "version": AUDIT_V1,
        "event_version": event_version,
        "fold_version": fold_version,
        "scope": {"subject": subject, "predicate": predicate},
        "as_of": as_of,
        "registry": registry,
        "events": list(events),
        "digest": "",
    }
    if log:
        b["registry_log"] = list(log)
    return sign(b)


def go_record(
    name,
    at_text,
    *,
    auto=False,
    retroactive=False,
    alias_of="",
    cardinality="",
    value_type="",
    description="",
    allowed=(),
    aliases=(),
):
    """A Go registry log event (docs/formats.md, "Registry log records"): the record's JSON, keys in Go's order, no spaces."""
    rec = {"name": name}
    if auto:
        rec["auto"] = True
    if retroactive:
        rec["retroactive"] = True
    if alias_of:
        rec["alias_of"] = alias_of
    rec.update(cardinality=cardinality, value_type=value_type, description=description)
    if allowed:
        rec["allowed"] = list(allowed)
    if aliases:
        rec["aliases"] = list(aliases)
    text = json.dumps(rec, separators=(",", ":"), ensure_ascii=False)
    t = parse_instant(at_text)
    return {
        "id": event_id("recall:registry", "registry_change", text, False, t),
        "kind": "fact",
        "subject": "recall:registry",
        "predicate": "registry_change",
        "value": text,
        "confidence": 1,
        "source": "tool_result",
        "observed_at": format_fixed(t),
    }


def ev(eid, predicate, value, when, *, subject="user", retraction=False):
    return go_event(eid, value, f"2026-09-01T{when}Z", predicate=predicate, subject=subject, retraction=retraction)


def values(beliefs):
    return [(b.subject, b.predicate, b.value) for b in beliefs]


def with_as_of(bundle, when):
    b = copy.deepcopy(bundle)
    b["as_of"] = f"2026-09-01T{when}Z"
    return sign(b)


def test_cardinality_change_keeps_past_answers():
    """TestCardinalityChangeKeepsPastAnswers: vim, emacs single; then multi; helix."""
    reg = {"prefers_editor": {"cardinality": "multi", "value_type": "string", "description": "editor"}}
    log = [
        go_record(
            "prefers_editor", "2026-09-01T00:00:00Z", cardinality="single", value_type="string", description="editor"
        ),
        go_record(
            "prefers_editor", "2026-09-01T03:00:00Z", cardinality="multi", value_type="string", description="editor"
        ),
    ]
    events = [
        ev("a", "prefers_editor", "vim", "01:00:00"),
        ev("b", "prefers_editor", "emacs", "02:00:00"),
        ev("c", "prefers_editor", "helix", "04:00:00"),
    ]
    b = go_bundle(events, reg, log, fold_version="recall-fold-v2")
    assert [x.value for x in replay(b)] == ["emacs", "helix"]
    assert [x.value for x in replay(with_as_of(b, "02:30:00"))] == ["emacs"]


def test_redefine_restores_hidden_values_and_needs_fold_v3():
    """TestRedefineRestoresHiddenValues: a retroactive multi definition re-derives the whole history."""
    reg = {"allergy": {"cardinality": "multi", "value_type": "string", "description": ""}}
    log = [
        go_record("allergy", "2026-09-01T00:00:00Z", auto=True, cardinality="single", value_type="string"),
        go_record("allergy", "2026-09-01T05:00:00Z", retroactive=True, cardinality="multi", value_type="string"),
    ]
    events = [ev("a", "allergy", "peanuts", "01:00:00"), ev("b", "allergy", "shellfish", "02:00:00")]
    b = go_bundle(events, reg, log)
    assert [x.value for x in replay(b)] == ["peanuts", "shellfish"]
    assert [x.value for x in replay(with_as_of(b, "03:00:00"))] == ["peanuts", "shellfish"]
    v2 = go_bundle(events, reg, log, fold_version="recall-fold-v2")
    with pytest.raises(
        AuditError, match='fold version "recall-fold-v2" cannot replay this registry log, which needs "recall-fold-v3"'
    ):
        verify(v2)


def test_without_the_redefine_the_auto_single_definition_governs():
    reg = {"allergy": {"cardinality": "single", "value_type": "string", "description": ""}}
    log = [go_record("allergy", "2026-09-01T00:00:00Z", auto=True, cardinality="single", value_type="string")]
    events = [ev("a", "allergy", "peanuts", "01:00:00"), ev("b", "allergy", "shellfish", "02:00:00")]
    assert [x.value for x in replay(go_bundle(events, reg, log, fold_version="recall-fold-v2"))] == ["shellfish"]


def test_concurrent_automatic_definitions_first_wins():
    """TestConcurrentAutoDefinitionsFirstWins: a later automatic definition of a defined name is ignored."""
    reg = {"city": {"cardinality": "single", "value_type": "string", "description": ""}}
    log = [
        go_record("city", "2026-09-01T00:00:00Z", auto=True, cardinality="single", value_type="string"),
        go_record("city", "2026-09-01T00:00:01Z", auto=True, cardinality="multi", value_type="string"),
    ]
    events = [ev("a", "city", "paris", "01:00:00"), ev("b", "city", "rome", "02:00:00")]
    assert [x.value for x in replay(go_bundle(events, reg, log))] == ["rome"]
    with pytest.raises(AuditError, match='needs "recall-fold-v3"'):
        verify(go_bundle(events, reg, log, fold_version="recall-fold-v2"))


MERGE_REG = {
    "favorite_editor": {
        "cardinality": "single",
        "value_type": "string",
        "description": "",
        "aliases": ["editor_favorite"],
    },
}
MERGE_LOG = [
    go_record("favorite_editor", "2026-09-01T00:00:00Z", auto=True, cardinality="single", value_type="string"),
    go_record("editor_favorite", "2026-09-01T00:30:00Z", auto=True, alias_of="favorite_editor"),
]
MERGE_EVENTS = [ev("a", "favorite_editor", "helix", "01:00:00"), ev("b", "editor_favorite", "zed", "02:00:00")]


def test_merged_name_folds_with_its_owner():
    """TestMatchedNameFoldsWithItsOwner: editor_favorite reads as favorite_editor."""
    b = go_bundle(MERGE_EVENTS, MERGE_REG, MERGE_LOG)
    beliefs = replay(b)
    assert values(beliefs) == [("user", "favorite_editor", "zed")]
    assert beliefs[0].stored_as == "editor_favorite"
    assert beliefs[0].replaced[0].event_id == "a"
    scoped = go_bundle(MERGE_EVENTS, MERGE_REG, MERGE_LOG, predicate="favorite_editor")
    assert values(replay(scoped)) == [("user", "favorite_editor", "zed")]


def test_split_undoes_the_merge():
    reg = {
        "favorite_editor": {"cardinality": "single", "value_type": "string", "description": ""},
        "editor_favorite": {"cardinality": "single", "value_type": "string", "description": ""},
    }
    log = [*MERGE_LOG, go_record("editor_favorite", "2026-09-01T03:00:00Z", cardinality="single", value_type="string")]
    beliefs = replay(go_bundle(MERGE_EVENTS, reg, log))
    assert values(beliefs) == [("user", "editor_favorite", "zed"), ("user", "favorite_editor", "helix")]


def test_merge_needs_fold_v3():
    with pytest.raises(AuditError, match='needs "recall-fold-v3"'):
        verify(go_bundle(MERGE_EVENTS, MERGE_REG, MERGE_LOG, fold_version="recall-fold-v2"))


def test_three_names_merged_answer_with_the_newest_value():
    """TestManualMergeAndConcurrentMerges: three single-valued names merged into lives_in."""
    reg = {
        "lives_in": {
            "cardinality": "single",
            "value_type": "string",
            "description": "",
            "aliases": ["home_city", "resides_in"],
        }
    }
    log = [
        go_record("lives_in", "2026-09-01T00:00:00Z", auto=True, cardinality="single", value_type="string"),
        go_record("home_city", "2026-09-01T00:00:01Z", alias_of="lives_in"),
        go_record("resides_in", "2026-09-01T00:00:02Z", alias_of="lives_in"),
    ]
    events = [
        ev("a", "lives_in", "paris", "01:00:00"),
        ev("b", "resides_in", "rome", "03:00:00"),
        ev("c", "home_city", "oslo", "02:00:00"),
    ]
    assert values(replay(go_bundle(events, reg, log))) == [("user", "lives_in", "rome")]


def test_rename_keeps_one_history_across_both_names():
    """A definition listing an old name in aliases (SyncRegistry rename)."""
    reg = {
        "prefers_editor": {"cardinality": "single", "value_type": "string", "description": "", "aliases": ["editor"]}
    }
    log = [
        go_record("editor", "2026-09-01T00:00:00Z", cardinality="single", value_type="string"),
        go_record(
            "prefers_editor", "2026-09-01T01:30:00Z", cardinality="single", value_type="string", aliases=["editor"]
        ),
    ]
    events = [ev("a", "editor", "vim", "01:00:00"), ev("b", "prefers_editor", "helix", "02:00:00")]
    beliefs = replay(go_bundle(events, reg, log, fold_version="recall-fold-v2"))
    assert values(beliefs) == [("user", "prefers_editor", "helix")]
    assert beliefs[0].replaced[0].value == "vim"


def test_merged_names_own_definitions_join_the_owner_history():
    """Reference A7: Go groups a merged name's own definitions under its owner's cardAt."""
    reg = {"lives_in": {"cardinality": "single", "value_type": "string", "description": "", "aliases": ["home"]}}
    log = [
        go_record("lives_in", "2026-09-01T00:00:00Z", cardinality="single", value_type="string"),
        go_record("home", "2026-09-01T00:30:00Z", auto=True, cardinality="multi", value_type="string"),
        go_record("home", "2026-09-01T00:40:00Z", alias_of="lives_in"),
    ]
    events = [ev("a", "lives_in", "paris", "01:00:00"), ev("b", "lives_in", "rome", "02:00:00")]
    # home's multi definition (00:30) counts for lives_in from its instant on: both values held.
    assert [x.value for x in replay(go_bundle(events, reg, log))] == ["paris", "rome"]
    # Before it, lives_in is single.
    early = [ev("a", "lives_in", "paris", "00:10:00"), ev("b", "lives_in", "rome", "00:20:00")]
    assert [x.value for x in replay(go_bundle(early, reg, log, as_of="2026-09-01T00:25:00Z"))] == ["rome"]


def test_log_definitions_govern_instead_of_the_configured_one():
    """Reference 2.4: with recorded definitions, the first one also governs older events."""
    reg = {"city": {"cardinality": "multi", "value_type": "string", "description": ""}}
    log = [go_record("city", "2026-09-01T05:00:00Z", cardinality="single", value_type="string")]
    events = [ev("a", "city", "paris", "01:00:00"), ev("b", "city", "rome", "02:00:00")]
    assert [x.value for x in replay(go_bundle(events, reg, log, fold_version="recall-fold-v2"))] == ["rome"]
    assert [x.value for x in replay(go_bundle(events, reg))] == ["paris", "rome"]


def test_configured_aliases_resolve_in_scope_and_replay():
    reg = {
        "prefers_editor": {"cardinality": "single", "value_type": "string", "description": "", "aliases": ["editor"]}
    }
    events = [ev("a", "editor", "vim", "01:00:00"), ev("b", "prefers_editor", "helix", "02:00:00")]
    b = go_bundle(events, reg, predicate="prefers_editor")
    assert values(replay(b)) == [("user", "prefers_editor", "helix")]


def test_pairs_sorted_by_subject_then_predicate_and_notes_only():
    """TestNotesFlagPrintsOnlyNotes: one typed belief and one note; --notes prints only the note."""
    reg = {
        "prefers_editor": {"cardinality": "single", "value_type": "string", "description": ""},
        "note": {"cardinality": "multi", "value_type": "string", "description": "notes"},
    }
    events = [
        ev("a", "prefers_editor", "vim", "01:00:00"),
        ev("n", "note", "likes quiet mornings", "01:30:00"),
        ev("z", "prefers_editor", "zed", "01:00:00", subject="ann"),
    ]
    b = go_bundle(events, reg)
    assert values(replay(b)) == [
        ("ann", "prefers_editor", "zed"),
        ("user", "note", "likes quiet mornings"),
        ("user", "prefers_editor", "vim"),
    ]
    assert values(replay(b, notes_only=True)) == [("user", "note", "likes quiet mornings")]


def test_note_needs_no_registry_entry():
    reg = {"prefers_editor": {"cardinality": "single", "value_type": "string", "description": ""}}
    b = go_bundle([ev("n", "note", "hello", "01:00:00"), ev("m", "note", "world", "02:00:00")], reg)
    assert [x.value for x in replay(b)] == ["hello", "world"]


def test_subjects_group_normalized_and_keep_their_spelling():
    reg = {"prefers_editor": {"cardinality": "single", "value_type": "string", "description": ""}}
    events = [
        ev("a", "prefers_editor", "vim", "01:00:00", subject="User"),
        ev("b", "prefers_editor", "zed", "02:00:00"),
    ]
    assert values(replay(go_bundle(events, reg))) == [("user", "prefers_editor", "zed")]
    events = [
        ev("a", "prefers_editor", "vim", "01:00:00"),
        ev("b", "prefers_editor", "zed", "02:00:00", subject="User"),
    ]
    assert values(replay(go_bundle(events, reg))) == [("User", "prefers_editor", "zed")]


def test_event_v2_bundles_digest_evidence():
    reg = {"prefers_editor": {"cardinality": "single", "value_type": "string", "description": ""}}
    e = ev("a", "prefers_editor", "vim", "01:00:00")
    e["evidence"] = "I use vim"
    b = go_bundle([e], reg)
    assert replay(b)[0].evidence == "I use vim"
    b["events"][0]["evidence"] = "I use Vim"
    with pytest.raises(DigestMismatch):
        verify(b)


def test_enum_and_number_storage_classes():
    reg = {
        "stage": {"cardinality": "single", "value_type": "enum", "description": "", "allowed": ["Won", "Lost"]},
        "budget": {"cardinality": "single", "value_type": "number", "description": ""},
    }
    events = [ev("a", "stage", "Won", "01:00:00"), ev("b", "budget", 8000, "01:00:00")]
    assert values(replay(go_bundle(events, reg))) == [("user", "budget", 8000), ("user", "stage", "Won")]
    bad = [ev("b", "budget", "8000", "01:00:00")]
    with pytest.raises(AuditError, match='event "b" has invalid value: "budget" stores number values'):
        verify(go_bundle(bad, reg))


def test_bad_registry_log_is_refused():
    reg = {"city": {"cardinality": "single", "value_type": "string", "description": ""}}
    bad = go_record("city", "2026-09-01T00:00:00Z", cardinality="many", value_type="string")
    with pytest.raises(AuditError, match="registry event"):
        verify(go_bundle([ev("a", "city", "paris", "01:00:00")], reg, [bad]))
    into_note = go_record("city", "2026-09-01T00:00:00Z", alias_of="note")
    with pytest.raises(AuditError, match='cannot merge "city" into "note"'):
        verify(go_bundle([ev("a", "city", "paris", "01:00:00")], reg, [into_note]))


def test_registry_log_is_in_the_checksum():
    reg = {"city": {"cardinality": "single", "value_type": "string", "description": ""}}
    log = [go_record("city", "2026-09-01T00:00:00Z", cardinality="single", value_type="string")]
    b = go_bundle([ev("a", "city", "paris", "01:00:00")], reg, log, fold_version="recall-fold-v2")
    verify(b)
    b["registry_log"][0]["confidence"] = 0.5
    with pytest.raises(DigestMismatch):
        verify(b)


def test_go_bundle_import_is_deterministic():
    b = go_bundle(MERGE_EVENTS, MERGE_REG, MERGE_LOG)
    r = verify(b)
    reg1, ev1 = import_events(r)
    reg2, ev2 = import_events(verify(copy.deepcopy(b)))
    assert [e.id for e in reg1] == [e.id for e in reg2] and ev1 == ev2
    # the store would hold the Go log plus nothing else for favorite_editor (the log defines it)
    assert {e.id for e in reg1} == {e["id"] for e in MERGE_LOG}
    # imported as-is, our own timeline reads the merge too
    tl = Timeline(reg1)
    assert tl.canonical("editor_favorite") == "favorite_editor"
