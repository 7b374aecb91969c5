"""`import` and `audit import` admit every event as `remember` would (issue 11): each attack
is refused with a clear message naming where it came from, nothing of the file is written,
and the collection still exports and verifies afterwards. SQLite and PostgreSQL."""

from __future__ import annotations

import dataclasses
import json

import pytest

from recall_engine.audit import build_bundle, encode_bundle
from recall_engine.instants import parse_instant
from recall_engine.records import REGISTRY_PREDICATE, REGISTRY_SUBJECT, make_event
from recall_engine.registry import Definition, RegistryRecord
from tests.cli.conftest import Cli, isolated_cli
from tests.cli.test_governance import position

DAY = parse_instant("2026-01-02")


@pytest.fixture
def cli(backend_url, tmp_path, monkeypatch) -> Cli:
    c = isolated_cli(backend_url, tmp_path, monkeypatch)
    c.ok("--operator", "ana", "init", "--registry", "personal-assistant")
    c.ok("remember", "carol", "likes", "tea", "--at", "2026-01-01")
    return c


def _forged_id():
    e = make_event("carol", "likes", "coffee", DAY)
    return dataclasses.replace(e, value="whisky")  # edited, its id kept


ATTACKS = {
    "number under a string predicate": (
        make_event("carol", "likes", 42, DAY),
        "invalid_input",
        "likes stores string values, got number 42",
    ),
    "unknown predicate": (
        make_event("carol", "shoe_size_xx", "9", DAY),
        "invalid_input",
        "predicate 'shoe_size_xx' is not in the registry",
    ),
    "dated 2100": (
        make_event("carol", "likes", "cake", parse_instant("2100-01-01")),
        "invalid_input",
        "observed_at 2100-01-01T00:00:00Z is in the future",
    ),
    "id not matching content": (
        _forged_id(),
        "invalid_event",
        "has an id that does not match its content",
    ),
    "malformed registry record": (
        make_event(REGISTRY_SUBJECT, REGISTRY_PREDICATE, '{"op":"explode"}', DAY),
        "invalid_event",
        "registry event 'm-",
    ),
    "reserved subject": (
        make_event("recall:admin", "likes", "tea", DAY),
        "invalid_input",
        "subject 'recall:admin' is reserved",
    ),
}


def _export_still_works(cli: Cli, tmp_path) -> None:
    out = tmp_path / "after.bundle"
    cli.ok("audit", "export", "--output", str(out))
    assert cli.ok("audit", "verify", str(out))["valid"] is True
    assert cli.ok("verify")["valid"] is True


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_import_refuses_each_attack_and_writes_nothing(cli, tmp_path, attack):
    bad, code, message = ATTACKS[attack]
    good = make_event("carol", "likes", "scones", DAY - 10)
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps(good.to_json()) + "\n" + json.dumps(bad.to_json()) + "\n")
    pos = position(cli)
    err = cli.fail("import", str(path))
    assert err["code"] == code and err["message"].startswith("line 2: ") and message in err["message"], err
    assert position(cli) == pos  # not even line 1
    _export_still_works(cli, tmp_path)


def _store_registry(cli: Cli):
    from recall_engine.storage import open_backend

    b = open_backend(cli.url)
    try:
        return b.store("memories", create=False).registry_events()
    finally:
        b.close()


def _number_likes():
    rec = RegistryRecord(op="declare", name="likes", definition=Definition("likes", "multi", "number"))
    return [rec.to_event(DAY - 100)], make_event("carol", "likes", 42, DAY), "likes stores string values, got number 42"


@pytest.mark.parametrize("attack", ["number under a string predicate", "dated 2100"])
def test_audit_import_refuses_each_attack_and_writes_nothing(cli, tmp_path, attack):
    if attack == "dated 2100":
        log, bad, message = _store_registry(cli), ATTACKS[attack][0], ATTACKS[attack][2]
    else:  # the bundle's own registry says likes holds numbers; this store's says strings
        log, bad, message = _number_likes()
    path = tmp_path / "in.bundle"
    # a bundle sealed by whoever made it: its digest holds, its content is the attack
    path.write_bytes(encode_bundle(build_bundle([bad], log, as_of=parse_instant("2100-01-02"))))
    pos = position(cli)
    err = cli.fail("audit", "import", str(path))
    assert err["code"] == "invalid_audit", err
    assert err["message"].startswith("the bundle cannot be imported into this store: bundle event 'm-"), err
    assert message in err["message"] and err["message"].endswith("; nothing was imported"), err
    assert position(cli) == pos
    _export_still_works(cli, tmp_path)


def test_a_file_changed_after_validation_writes_only_what_was_checked(store, tmp_path):
    """import reads the file once: a line swapped in after every line was checked is never
    read, so what is written is exactly what was admitted."""
    from recall_admin import transfer
    from recall_engine.memory import Memory
    from tests.memory.conftest import NOW

    Memory(store, now=lambda: NOW).append_records(
        [RegistryRecord(op="declare", name="likes", definition=Definition("likes", "multi"))]
    )
    path = tmp_path / "in.jsonl"
    good = make_event("carol", "likes", "tea", NOW - 10)
    path.write_text(json.dumps(good.to_json()) + "\n")
    swapped = json.dumps(make_event("carol", "likes", 42, NOW - 10).to_json()) + "\n"
    before = store.count()
    result = transfer.import_file(store, str(path), on_validated=lambda _n: path.write_text(swapped))
    assert (result.imported, store.count()) == (1, before + 1)
    assert [e.value for e in store.pair_events("carol", ["likes"])] == ["tea"]
