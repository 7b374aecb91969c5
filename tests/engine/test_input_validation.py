"""Bad input gets a clear error on both backends (issue 11, engine side): instants out of
range, loose value parsing, NUL characters, size limits, YAML alias expansion, imported
events checked as remember checks them, and bad stored records that stay contained.

Each test reproduces an attack that got through before, and asserts the message."""

from __future__ import annotations

import json
import random

import pytest

from recall_admin import transfer
from recall_engine import instants
from recall_engine.admission import Admission
from recall_engine.errors import InvalidEvent, InvalidInput, RegistryFileError
from recall_engine.instants import check_instant, parse_instant
from recall_engine.integrity import bad_events
from recall_engine.memory import Memory
from recall_engine.records import REGISTRY_PREDICATE, REGISTRY_SUBJECT, decode_event, make_event
from recall_engine.registry import Definition, RegistryRecord
from recall_engine.registry_files import load_registry_text
from recall_engine.text import LIMITS
from recall_engine.values import normalize_value, parse_cli_value
from tests.memory.conftest import NOW, declare

T = parse_instant


@pytest.fixture
def memory(store) -> Memory:
    clock = iter(range(NOW, NOW + 10**12, 1000))
    m = Memory(store, now=lambda: next(clock))
    declare(m)
    return m


def _cjk(n: int, seed: int = 7) -> str:
    """n random CJK characters (3 UTF-8 bytes each, no case): text no index can compress."""
    rng = random.Random(seed)
    return "".join(chr(rng.randrange(0x4E00, 0x9FFF)) for _ in range(n))


# --- instants ------------------------------------------------------------------


@pytest.mark.parametrize(
    "at, message",
    [
        ("1900-01-01", "observed_at 1900-01-01T00:00:00Z is before 1970-01-01T00:00:00Z"),
        ("0001-01-01", "observed_at 0001-01-01T00:00:00Z is before 1970-01-01T00:00:00Z"),
    ],
)
def test_a_statement_before_1970_is_invalid_input_on_both_backends(memory, at, message):
    before = memory.store.count()
    with pytest.raises(InvalidInput) as err:
        memory.remember("carol", "prefers_editor", "vim", at=T(at))
    assert err.value.code == "invalid_input"
    assert str(err.value) == message
    assert memory.store.count() == before


def test_an_instant_past_int64_is_invalid_input_not_an_overflow():
    with pytest.raises(InvalidInput) as err:
        check_instant(2**63 + 5)
    assert str(err.value).startswith("observed_at 2262-04-11T23:47:16.854775813Z is after 2200-01-01T00:00:00Z")
    with pytest.raises(InvalidInput) as err:
        check_instant(10**30)  # past year 9999: shown as a number, never an OverflowError
    assert str(err.value).startswith(f"observed_at {10**30} ns is after 2200-01-01T00:00:00Z")


def test_a_registry_record_far_in_the_future_is_refused():
    rec = RegistryRecord(op="declare", name="likes", definition=Definition("likes", "multi"))
    with pytest.raises(InvalidInput) as err:
        rec.to_event(T("2300-01-01"))
    assert str(err.value) == (
        "registry record instant 2300-01-01T00:00:00Z is after 2200-01-01T00:00:00Z "
        "(the latest instant; see RECALL_LATEST_INSTANT)"
    )


def test_a_stored_or_imported_event_out_of_range_does_not_decode():
    e = make_event("carol", "likes", "tea", T("2100-01-01")).to_json()
    e["observed_at"] = "2250-01-01T00:00:00Z"
    with pytest.raises(InvalidEvent) as err:
        decode_event(e)
    assert "has invalid observed_at (after 2200-01-01T00:00:00Z" in str(err.value)


def test_the_latest_instant_is_configurable():
    try:
        assert instants.set_latest("2100-01-01") == T("2100-01-01")
        with pytest.raises(InvalidInput) as err:
            check_instant(T("2150-01-01"))
        assert "is after 2100-01-01T00:00:00Z" in str(err.value)
        with pytest.raises(InvalidInput) as err:
            instants.set_latest("2300-01-01")
        assert str(err.value) == "RECALL_LATEST_INSTANT must lie after 1970 and before 2262-04-11, got '2300-01-01'"
    finally:
        instants.set_latest(None)
    assert check_instant(T("2150-01-01")) == T("2150-01-01")


# --- one strict value parser -----------------------------------------------------


@pytest.mark.parametrize("text", ["1,2,3", "1_000", "inf", "nan", "0x10", "١٢", "1e999", "12abc", ""])
def test_loose_numbers_are_type_errors(text):
    parsed = parse_cli_value("number", text)
    assert parsed == text  # left as text, so the type check names it
    with pytest.raises(InvalidInput) as err:
        normalize_value("deal_value", "number", (), parsed)
    assert str(err.value) == f"deal_value expects a number value, got string {text!r}"


@pytest.mark.parametrize("text, value", [("8000", 8000.0), (" -1.5 ", -1.5), ("2e3", 2000.0), (".5", 0.5)])
def test_plain_decimals_are_numbers(text, value):
    assert parse_cli_value("number", text) == value


def test_replacing_a_value_of_the_wrong_type_is_a_type_error_not_never_believed(memory):
    memory.remember("acme", "deal_value", 100)
    before = memory.store.count()
    with pytest.raises(InvalidInput) as err:
        memory.remember("acme", "deal_value", 200, replaces=[("deal_value", "abc")])
    assert str(err.value) == "replaces deal_value: deal_value expects a number value, got string 'abc'"
    assert memory.store.count() == before


@pytest.mark.parametrize(
    "target, message",
    [
        (("likes", ""), "replaces likes: likes: value must not be empty"),
        (("likes", "   "), "replaces likes: likes: value must not be empty"),
        (("likes", None), "replaces likes: likes expects a string value, got nothing"),
        (("likes", "x" * 2000), "replaces likes: value must be UTF-8 of at most 1024 bytes, got 2000"),
        (("deal_value", float("nan")), "replaces deal_value: deal_value expects a finite number value"),
        (
            ("Bad Name!", "mango"),
            "replaces: predicate must be snake_case (e.g. prefers_editor) of at most 64 bytes, got 'Bad Name!'",
        ),
        (("", "mango"), "replaces: predicate must be snake_case (e.g. prefers_editor) of at most 64 bytes, got ''"),
    ],
)
def test_a_replaces_no_event_could_hold_is_refused_before_anything_is_written(memory, target, message):
    # the Python API and the agents' tools pass replaces as given: each is checked as
    # the statement is, not found out by the store as a bad event
    memory.remember("user", "likes", "mango")
    memory.remember("acme", "deal_value", 100)
    before = memory.store.count()
    with pytest.raises(InvalidInput) as err:
        memory.remember("user", "likes", "kiwi", replaces=[target])
    assert str(err.value) == message
    assert memory.store.count() == before


def test_a_value_its_enum_no_longer_allows_can_still_be_named_in_replaces(memory):
    # stored text of the predicate's kind, just not among its values: not believed, not an error
    result = memory.remember("acme", "deal_stage", "won", replaces=[("deal_stage", "prospect")])
    assert [(u.predicate, u.reason) for u in result.unreplaced] == [("deal_stage", "never believed")]


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"value": "vi\x00m"}, "value must not contain a NUL character (\\x00)"),
        ({"subject": "car\x00ol"}, "subject must not contain a NUL character (\\x00)"),
        ({"evidence": "said\x00so"}, "evidence must not contain a NUL character (\\x00)"),
    ],
)
def test_nul_is_refused_the_same_way_on_both_backends(memory, kw, message):
    args = {"subject": "carol", "value": "vim", **kw}
    with pytest.raises(InvalidInput) as err:
        memory.remember(args.pop("subject"), "prefers_editor", args.pop("value"), **args)
    assert str(err.value) == message
    assert memory.store.subject_events("carol") == []


# --- size limits -------------------------------------------------------------------


def test_the_largest_subject_and_value_are_stored_and_read_back_on_both_backends(memory):
    # incompressible text at the limits: PostgreSQL's btree entry must still take it
    subject = _cjk(LIMITS["subject"] // 3, seed=1)
    value = _cjk(LIMITS["value"] // 3, seed=2)
    r = memory.remember(subject, "prefers_editor", value)
    assert r.stored.value == value
    assert [e.value for e in memory.store.subject_events(subject)] == [value]


@pytest.mark.parametrize(
    "field, call",
    [
        ("value", lambda m: m.remember("carol", "prefers_editor", "x" * 1025)),
        ("subject", lambda m: m.remember("c" * 257, "prefers_editor", "vim")),
        ("evidence", lambda m: m.remember("carol", "prefers_editor", "vim", evidence="é" * 1025)),
        ("evidence_id", lambda m: m.remember("carol", "prefers_editor", "vim", evidence_id="e" * 257)),
    ],
)
def test_a_field_past_its_limit_is_refused_before_writing(memory, field, call):
    before = memory.store.count()
    with pytest.raises(InvalidInput) as err:
        call(memory)
    size = {"value": 1025, "subject": 257, "evidence": 2050, "evidence_id": 257}[field]
    assert str(err.value) == f"{field} must be UTF-8 of at most {LIMITS[field]} bytes, got {size}"
    assert memory.store.count() == before


def test_a_registry_description_past_its_limit_is_refused(memory):
    from recall_engine.errors import RegistryError
    from recall_engine.registry import check_definition

    with pytest.raises(RegistryError) as err:
        check_definition(Definition("likes", "multi", description="d" * 1025))
    assert str(err.value) == "predicate registry: 'likes' has a description longer than 1024 bytes"


# --- YAML alias amplification --------------------------------------------------------


def test_aliases_expanding_a_registry_file_past_the_bound_are_refused():
    big = "x" * 100_000
    preds = "".join(f"  p{i}:\n    cardinality: single\n    description: *d\n" for i in range(30))
    text = f"registry: laughs\ndescription: &d {big}\npredicates:\n{preds}"
    assert len(text) < 110_000
    with pytest.raises(RegistryFileError) as err:
        load_registry_text(text, path="laughs.yaml")
    assert str(err.value) == (
        "laughs.yaml: YAML aliases expand the file past 100000 nodes or 2097152 bytes of text; "
        "write the fields out instead of repeating them through aliases"
    )


def test_aliases_multiplying_nodes_are_refused_and_a_recursive_alias_too():
    items = ", ".join(f"v{i}" for i in range(2000))
    preds = "".join(f"  p{i}:\n    cardinality: single\n    value_type: enum\n    allowed: *a\n" for i in range(60))
    text = (
        f"registry: laughs\ndescription: x\npredicates:\n  p_first:\n    cardinality: single\n"
        f"    value_type: enum\n    allowed: &a [{items}]\n{preds}"
    )
    with pytest.raises(RegistryFileError) as err:
        load_registry_text(text, path="nodes.yaml")
    assert "YAML aliases expand the file past 100000 nodes" in str(err.value)
    with pytest.raises(RegistryFileError) as err:
        load_registry_text("registry: r\npredicates: &a {p: [*a]}\n", path="loop.yaml")
    assert "YAML aliases expand the file past" in str(err.value)


def test_an_ordinary_alias_still_loads():
    text = "registry: r\npredicates:\n  a: &def\n    cardinality: multi\n  b: *def\n"
    assert set(load_registry_text(text).definitions) == {"a", "b", "note"}


# --- imports checked as remember checks -----------------------------------------------


def _write(tmp_path, events) -> str:
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(e if isinstance(e, dict) else e.to_json()) + "\n" for e in events))
    return str(path)


@pytest.mark.parametrize(
    "bad, message",
    [
        (make_event("carol", "shell_used", "zsh", NOW - 10), "line 2: predicate 'shell_used' is not in the registry"),
        (
            make_event("acme", "deal_value", "lots", NOW - 10),
            "line 2: deal_value stores number values, got string 'lots'",
        ),
        (make_event("recall:admin", "likes", "tea", NOW - 10), "line 2: subject 'recall:admin' is reserved"),
        (make_event("carol", "extraction", "x", NOW - 10), "line 2: predicate 'extraction' is reserved"),
        (
            make_event("carol", "likes", "tea", T("2100-01-01")),
            "line 2: observed_at 2100-01-01T00:00:00Z is in the future",
        ),
        (make_event(REGISTRY_SUBJECT, REGISTRY_PREDICATE, '{"op":"explode"}', NOW - 10), "line 2: registry event 'm-"),
    ],
)
def test_import_refuses_the_whole_file_naming_the_line(memory, tmp_path, bad, message):
    good = make_event("carol", "likes", "tea", NOW - 20)
    path = _write(tmp_path, [good, bad])
    before = memory.store.count()
    with pytest.raises((InvalidInput, InvalidEvent)) as err:  # invalid_input, or invalid_event if it does not decode
        transfer.import_file(memory.store, path)
    assert str(err.value).startswith(message)
    assert memory.store.count() == before  # nothing of it, not even line 1


def test_import_refuses_an_id_that_does_not_match_its_content(memory, tmp_path):
    e = make_event("carol", "likes", "tea", NOW - 20).to_json()
    e["value"] = "coffee"  # edited, id kept
    with pytest.raises(InvalidEvent) as err:
        transfer.import_file(memory.store, _write(tmp_path, [e]))
    assert str(err.value).startswith(f"line 1: event {e['id']!r} has an id that does not match its content")


def test_import_admits_registry_records_that_come_before_their_statements(store, tmp_path):
    m = Memory(store, now=lambda: NOW)
    rec = RegistryRecord(op="declare", name="shell_used", definition=Definition("shell_used", "single"))
    path = _write(tmp_path, [rec.to_event(NOW - 30), make_event("carol", "shell_used", "zsh", NOW - 20)])
    assert transfer.import_file(store, path).imported == 2
    assert m.profile("carol")[0].value == "zsh"


def test_export_never_writes_a_line_import_would_refuse(memory, tmp_path):
    # an event that got in before these checks (appended below the engine's checks)
    memory.store.append([make_event("carol", "shell_used", "zsh", NOW - 20)])
    target = tmp_path / "out.jsonl"
    with pytest.raises(InvalidEvent) as err:
        transfer.export_file(memory.store, str(target))
    assert "predicate 'shell_used' is not in the registry" in str(err.value)
    assert "import would refuse it" in str(err.value)
    assert not target.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".recall-export")]  # no partial file


def test_admission_reads_statements_against_the_records_admitted_before_them():
    declare_likes = RegistryRecord(op="declare", name="likes", definition=Definition("likes", "multi")).to_event(NOW)
    a = Admission()
    with pytest.raises(InvalidInput) as err:
        a.admit(make_event("carol", "likes", "tea", NOW + 1), "line 1")
    assert str(err.value).startswith("line 1: predicate 'likes' is not in the registry")
    a.admit(declare_likes, "line 2")
    a.admit(make_event("carol", "likes", "tea", NOW + 1), "line 3")
    assert a.timeline().knows("likes")


# --- bad stored records stay contained ------------------------------------------------------


def test_a_bad_registry_record_does_not_make_the_collection_unreadable(memory):
    memory.remember("carol", "prefers_editor", "vim")
    bad = make_event(REGISTRY_SUBJECT, REGISTRY_PREDICATE, "not a record", NOW + 10**9)
    memory.store.append([bad])  # as a resealed plan once could
    assert [b.value for b in memory.profile("carol")] == ["vim"]
    memory.remember("dave", "prefers_editor", "zed")
    found = bad_events(memory.store)
    assert [(b.event_id, b.subject) for b in found] == [(bad.id, REGISTRY_SUBJECT)]
    assert found[0].reason.endswith("does not hold valid JSON")


def test_a_statement_that_no_longer_decodes_is_listed_and_other_subjects_read(memory, monkeypatch):
    # a row written before the limits existed: lift them for the write only
    with monkeypatch.context() as mp:
        mp.setattr("recall_engine.records.text_problem", lambda text, field: None)
        memory.store.append([make_event("carol", "prefers_editor", "x" * 2000, NOW - 5)])
    memory.remember("dave", "prefers_editor", "zed")
    assert [b.value for b in memory.profile("dave")] == ["zed"]
    with pytest.raises(InvalidEvent):
        memory.profile("carol")  # only that subject's reads are refused
    [found] = bad_events(memory.store)
    assert found.subject == "carol"
    assert found.position is not None and found.position >= 1
    assert "has invalid value (longer than 1024 bytes)" in found.reason
    assert found.to_json()["position"] == found.position


def test_the_longest_note_is_stored_on_both_backends_and_one_byte_more_is_refused(memory):
    # 'Ⱥ' (2 bytes) lower-cases to 'ⱥ' (3 bytes): the worst case for the value key
    note = "".join(random.Random(3).choice("ȺȾ" * 10 + _cjk(20)) for _ in range(600))
    note = note.encode()[: LIMITS["note"]].decode("utf-8", "ignore")
    r = memory.remember("carol", "note", note)
    assert r.stored.value == note
    with pytest.raises(InvalidInput) as err:
        memory.remember("carol", "note", "n" * (LIMITS["note"] + 1))
    assert str(err.value) == f"note must be UTF-8 of at most {LIMITS['note']} bytes, got {LIMITS['note'] + 1}"


def test_a_nul_in_a_registry_description_or_allowed_value_is_refused():
    from recall_engine.errors import RegistryError
    from recall_engine.registry import check_definition

    with pytest.raises(RegistryError) as err:
        check_definition(Definition("stage", "single", "enum", allowed=("won", "lo\x00st")))
    assert str(err.value) == "predicate registry: 'stage' has an allowed value holding a NUL character"


def test_an_open_vocabulary_infers_a_number_only_from_a_plain_decimal():
    from recall_admin.inputs import infer_value

    assert infer_value("8000") == 8000.0
    for text in ("١٢", "1,2,3", "1_000", "inf"):
        assert infer_value(text) == text  # stays text: the strict reader says it is no number


@pytest.mark.parametrize(
    "env, expected",
    [
        ("2100-01-01", "observed_at 2150-01-01T00:00:00Z is after 2100-01-01T00:00:00Z"),
        ("soon", "RECALL_LATEST_INSTANT must be an RFC3339 time or a day such as 2026-09-01, got 'soon'"),
    ],
)
def test_the_environment_sets_the_latest_instant_for_the_whole_engine(env, expected):
    import os
    import subprocess
    import sys

    code = (
        "import recall_engine.memory\n"
        "from recall_engine.instants import check_instant, parse_instant\n"
        "from recall_engine.errors import InvalidInput\n"
        "try:\n    check_instant(parse_instant('2150-01-01'))\n"
        "except InvalidInput as e:\n    print(e.message)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "RECALL_LATEST_INSTANT": env},
    )
    assert out.stdout.strip().startswith(expected)


def test_admission_reads_a_predicate_again_after_every_registry_record():
    """Admission keeps what a predicate's statements passed (an import admits thousands of
    a few predicates), and reads it again after a registry record: a redefinition that
    changes the value type refuses the next statement, a reserved subject is still refused."""
    declare = RegistryRecord(op="declare", name="likes", definition=Definition("likes", "multi")).to_event(NOW)
    redefine = RegistryRecord(op="redefine", name="likes", definition=Definition("likes", "multi", "number")).to_event(
        NOW + 2
    )
    a = Admission()
    a.admit(declare, "line 1")
    a.admit(make_event("carol", "likes", "tea", NOW + 1), "line 2")
    a.admit(make_event("carol", "likes", None, NOW + 1, retraction=True), "line 3")
    with pytest.raises(InvalidInput) as err:
        a.admit(make_event("carol", "likes", 7, NOW + 1), "line 4")
    assert str(err.value) == "line 4: likes stores string values, got number 7"
    with pytest.raises(InvalidInput) as err:
        a.admit(make_event("recall:someone", "likes", "tea", NOW + 1), "line 5")
    assert str(err.value) == "line 5: subject 'recall:someone' is reserved for the engine's own records"
    a.admit(redefine, "line 6")
    with pytest.raises(InvalidInput) as err:
        a.admit(make_event("carol", "likes", "tea", NOW + 3), "line 7")
    assert str(err.value) == "line 7: likes stores number values, got string 'tea'"
    a.admit(make_event("carol", "likes", 7, NOW + 3), "line 8")
