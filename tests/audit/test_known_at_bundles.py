"""Bundles that carry recorded instants (docs/audit.md, "Recorded instants"): a replay
known at an instant answers what the exporting store answered known at that instant."""

from __future__ import annotations

import json

import pytest

from recall_admin.audit_io import export_bundle, import_bundle
from recall_engine.audit import encode_bundle, replay, verify
from recall_engine.errors import AuditError, DigestMismatch
from recall_engine.memory import Memory
from tests.memory.test_known_at import NOW, SEP1, SEP10, SEP12, Wall, editor_story, mem, wall  # noqa: F401


def answer(beliefs) -> list:
    return sorted((b.subject, b.predicate, b.value) for b in beliefs)


@pytest.fixture
def bundle(mem: Memory, wall: Wall) -> dict:  # noqa: F811
    editor_story(mem, wall)
    return export_bundle(mem, subject="user", as_of=SEP1, recorded=True)


def test_a_recorded_bundle_names_every_event_and_verifies(bundle: dict, mem: Memory):  # noqa: F811
    ids = {e["id"] for e in (*bundle["events"], *bundle["registry_log"])}
    assert set(bundle["recorded_at"]) == ids
    stored = {e.id: e.recorded_at for e in mem.store.all_events()}
    r = verify(encode_bundle(bundle))
    assert {e.id: e.recorded_at for e in (*r.event_list, *r.registry_log)} == {i: stored[i] for i in ids}


@pytest.mark.parametrize("known", [SEP1, SEP10, SEP12, NOW])
def test_a_replay_known_at_an_instant_answers_as_the_store_did(bundle: dict, mem: Memory, known: int):  # noqa: F811
    got = replay(encode_bundle(bundle), known_at=known)
    assert answer(got) == answer(mem.profile("user", SEP1, known_at=known))
    assert answer(replay(bundle, known_at=SEP1)) == [("user", "prefers_editor", "vim")]
    assert answer(replay(bundle)) == answer(mem.profile("user", SEP1))


def test_recorded_instants_are_inside_the_checksum(bundle: dict):
    eid = sorted(bundle["recorded_at"])[0]
    tampered = json.loads(json.dumps(bundle))
    tampered["recorded_at"][eid] = "2020-01-01T00:00:00.000000000Z"
    with pytest.raises(DigestMismatch, match="digest mismatch: the bundle's digest is"):
        verify(tampered)


def test_recorded_instants_name_every_event_or_none(bundle: dict):
    missing = json.loads(json.dumps(bundle))
    eid = sorted(missing["recorded_at"])[0]
    del missing["recorded_at"][eid]
    with pytest.raises(AuditError) as e:
        verify(missing)
    assert str(e.value) == f'event "{eid}" has no recorded_at; a bundle records every event\'s or none'
    extra = json.loads(json.dumps(bundle))
    extra["recorded_at"]["m-000000000000000000000000"] = "2026-01-01T00:00:00.000000000Z"
    with pytest.raises(AuditError) as e:
        verify(extra)
    assert str(e.value) == 'recorded_at names "m-000000000000000000000000", which is not an event of the bundle'
    bad = json.loads(json.dumps(bundle))
    bad["recorded_at"][eid] = "last week"
    with pytest.raises(AuditError) as e:
        verify(bad)
    assert str(e.value) == f'decode audit: recorded_at of event "{eid}" must be an RFC3339 instant'


def test_a_bundle_without_recorded_instants_is_unchanged_and_cannot_replay_known_at(mem: Memory, wall: Wall):  # noqa: F811
    editor_story(mem, wall)
    plain = export_bundle(mem, subject="user", as_of=SEP1)
    assert "recorded_at" not in plain
    with_them = export_bundle(mem, subject="user", as_of=SEP1, recorded=True)
    assert plain["digest"] != with_them["digest"]
    assert {k: v for k, v in with_them.items() if k not in ("recorded_at", "digest")} == {
        k: v for k, v in plain.items() if k != "digest"
    }
    with pytest.raises(AuditError) as e:
        replay(plain, known_at=SEP1)
    assert str(e.value) == (
        "the bundle carries no recorded instants, so it cannot be replayed as known at an instant "
        "(export it with its recorded instants: audit export --recorded)"
    )


def test_a_recorded_bundle_imports_and_the_importing_store_records_its_own_instants(
    bundle: dict,
    backend,
    wall: Wall,  # noqa: F811
):
    target = Memory(backend.store("elsewhere"), now=wall)
    wall.t = NOW + 10
    assert import_bundle(target, encode_bundle(bundle))["imported"] == len(bundle["events"]) + len(
        bundle["registry_log"]
    )
    assert {e.recorded_at for e in target.store.all_events()} == {NOW + 10}
    assert answer(target.profile("user", SEP1)) == answer(replay(bundle))
