"""Files from outside (bundles, plans, JSONL) that are hostile or careless: a number no
float holds, a file with no newline in it (/dev/zero), a byte order mark. Each gets a
clear refusal through the real CLI, and nothing is read without a bound."""

from __future__ import annotations

import io
import json
import tracemalloc

import pytest

from recall_admin import plans, transfer
from recall_engine.errors import RecallError
from recall_engine.memory import Memory
from recall_engine.registry_files import load_registry_text
from recall_engine.storage import open_backend
from tests.cli.conftest import Cli, isolated_cli

HUGE = "1" + "0" * 5000  # past Python's 4300-digit limit for reading an integer


@pytest.fixture
def cli(tmp_path, monkeypatch) -> Cli:
    return isolated_cli(f"sqlite:///{tmp_path / 'recall.db'}", tmp_path, monkeypatch)


@pytest.mark.parametrize("command", [("audit", "verify"), ("audit", "replay"), ("audit", "import")])
def test_a_bundle_with_a_number_of_5000_digits_is_refused_as_out_of_range(cli, tmp_path, command):
    path = tmp_path / "bundle.json"
    path.write_text('{"version": "recall-audit-v2", "as_of": ' + HUGE + "}")
    err = cli.fail(*command, str(path))
    assert err == {
        "code": "invalid_audit",
        "message": "decode audit: number 10000000000000000000... (5001 characters) is out of range",
    }


def test_a_plan_or_a_line_with_a_number_of_5000_digits_is_refused_in_plain_words(cli, tmp_path):
    path = tmp_path / "big.json"
    path.write_text('{"x": ' + HUGE + "}\n")
    assert cli.fail("apply", str(path)) == {
        "code": "invalid_plan",
        "message": f"plan file {str(path)!r} is not valid JSON: a number in it has 5001 digits, "
        "more than a number can hold",
    }
    assert cli.fail("import", str(path)) == {
        "code": "invalid_event",
        "message": "line 1: not valid JSON (a number in it has 5001 digits, more than a number can hold)",
    }


def test_a_plan_or_a_line_with_a_byte_order_mark_says_so(cli, tmp_path):
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf{}\n")
    bom = "it starts with a byte order mark (BOM); save it as UTF-8 without a BOM"
    assert cli.fail("apply", str(path)) == {
        "code": "invalid_plan",
        "message": f"plan file {str(path)!r} is not valid JSON: {bom}",
    }
    assert cli.fail("import", str(path))["message"] == f"line 1: not valid JSON ({bom})"
    path.write_bytes(b"\xff{}")
    assert cli.fail("apply", str(path))["message"] == (
        f"plan file {str(path)!r} is not valid JSON: it is not UTF-8 text (byte 0xff at offset 0)"
    )


def test_a_plan_file_past_the_limit_is_refused_without_reading_it_whole(cli, tmp_path, monkeypatch):
    monkeypatch.setattr(plans, "MAX_PLAN_BYTES", 1 << 20)  # the limit is 64 MiB: /dev/zero, for one
    path = tmp_path / "zeros.json"
    path.write_bytes(b"\0" * ((1 << 20) + 1))
    assert cli.fail("apply", str(path)) == {
        "code": "invalid_plan",
        "message": f"plan file {str(path)!r} is larger than 1 MiB; it is not a plan",
    }


class _Endless(io.RawIOBase):
    """Standard input with no newline ever (``import - < /dev/zero``): reading it whole never ends."""

    def readable(self) -> bool:
        return True

    def readline(self, size: int | None = -1) -> bytes:
        assert size is not None and size > 0, "a line read without a bound"
        return b"\0" * size

    def __iter__(self):
        raise AssertionError("standard input iterated line by line, without a bound")


@pytest.mark.parametrize("statements", [False, True])
def test_standard_input_without_newlines_is_refused_at_the_line_limit(tmp_path, monkeypatch, statements):
    monkeypatch.setattr(transfer, "_stdin", _Endless)
    with open_backend(f"sqlite:///{tmp_path / 'recall.db'}") as backend:
        store = backend.store("memories", create=True)
        with pytest.raises(RecallError) as err:
            if statements:
                transfer.import_statements(Memory(store), "-")
            else:
                transfer.import_file(store, "-")
        assert err.value.message == f"line 1: longer than {transfer.MAX_LINE_BYTES} bytes"
        assert err.value.code == ("invalid_input" if statements else "invalid_event")
        assert store.count() == 0


@pytest.mark.parametrize("stdin", [False, True])
def test_bytes_that_are_not_utf8_are_refused_naming_their_line_and_column(cli, tmp_path, stdin):
    cli.ok("init", "--registry", "coding")
    exported = tmp_path / "all.jsonl"
    cli.ok("export", "-o", str(exported))
    lines = exported.read_bytes().splitlines(keepends=True) * 3  # past a text file's first decoded chunk
    bad = len(lines) - 1
    lines[bad] = lines[bad][:10] + b"\xff" + lines[bad][11:]
    data = b"".join(lines)
    path = tmp_path / "late.jsonl"
    path.write_bytes(data)
    err = cli.fail("import", "-", input=data) if stdin else cli.fail("import", str(path))
    assert err == {"code": "invalid_event", "message": f"line {bad + 1}: not UTF-8 text (byte 0xff at column 11)"}
    statements = [json.dumps({"subject": f"s{i}", "predicate": "note", "value": "x" * 100}) for i in range(200)]
    data = ("\n".join(statements) + "\n").encode().replace(b'"s150"', b'"\xff150"')
    path.write_bytes(data)
    args = ("import", "--statements", "-" if stdin else str(path))
    err = cli.fail(*args, input=data) if stdin else cli.fail(*args)
    assert err == {"code": "invalid_input", "message": "line 151: not UTF-8 text (byte 0xff at column 14)"}
    assert cli.ok("recall", "s1")["beliefs"] == []  # nothing of the file was written


def test_a_file_without_newlines_is_refused_without_being_read_whole(tmp_path):
    path = tmp_path / "zeros.jsonl"  # as /dev/zero, which never ends
    path.write_bytes(b"\0" * (8 * transfer.MAX_LINE_BYTES))
    tracemalloc.start()
    try:
        with pytest.raises(transfer.InvalidEvent, match="line 1: longer than"):
            transfer.validate_file(str(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * transfer.MAX_LINE_BYTES, peak  # one line's worth, not the file


@pytest.mark.parametrize(
    "edit, problem",
    [
        (lambda d: d.pop("based_on"), "it has no 'based_on'"),
        (lambda d: d.update(at="x"), "'at' must be an integer, got text"),
        (lambda d: d.update(at=True), "'at' must be an integer, got true"),
        (lambda d: d.update(at=1.5), "'at' must be an integer, got a number with a fraction"),
        (lambda d: d.update(scope=5), "'scope' must be a list, got an integer"),
        (lambda d: d.update(scope=[1]), "'scope' must be a list of predicate names"),
        (lambda d: d.update(details=[1]), "'details' must be an object, got a list"),
        (lambda d: d.update(based_on=[]), "'based_on' must be an object, got a list"),
        (lambda d: d["based_on"].update(position="abc"), "'based_on.position' must be an integer, got text"),
        (lambda d: d.update(ops=[1]), "op 1 does not hold a record"),
        (lambda d: d.update(statements=None), "'statements' must be a list, got null"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_a_hand_edited_plan_of_the_wrong_shape_names_the_field(cli, tmp_path, edit, problem):
    cli.ok("init")
    path = tmp_path / "p.json"
    cli.ok("define", "shoe_size", "--type", "number", "--cardinality", "single", "--plan-out", str(path))
    raw = json.loads(path.read_text())
    edit(raw)
    path.write_text(json.dumps(raw))
    assert cli.fail("apply", str(path)) == {
        "code": "invalid_plan",
        "message": f"plan file {str(path)!r} is not a valid plan file: {problem}",
    }
    assert "shoe_size" not in [p["name"] for p in cli.ok("registry", "list")["predicates"]]


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("evidence", 5, "evidence must be text, got int"),
        ("evidence", ["she said"], "evidence must be text, got list"),
        ("evidence_id", {"a": 1}, "evidence_id must be text, got dict"),
        ("replaces", 5, "replaces must be a list of [predicate, value] pairs"),
    ],
)
def test_statements_of_the_wrong_shape_are_refused_with_their_line(cli, tmp_path, field, value, message):
    cli.ok("init", "--registry", "coding")
    path = tmp_path / "statements.jsonl"
    good = {"subject": "carol", "predicate": "prefers_editor", "value": "vim"}
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "value": "zed", field: value}) + "\n")
    assert cli.fail("import", "--statements", str(path)) == {"code": "invalid_input", "message": f"line 2: {message}"}
    assert cli.ok("recall", "carol")["beliefs"] == []  # one batch: nothing of the file was written


def test_replaces_null_in_a_statement_is_no_replaces(cli, tmp_path):
    cli.ok("init", "--registry", "coding")
    path = tmp_path / "statements.jsonl"
    path.write_text(json.dumps({"subject": "carol", "predicate": "prefers_editor", "value": "vim", "replaces": None}))
    assert cli.ok("import", "--statements", str(path)) == {"imported": 1, "skipped": 0}


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"evidence": 5}, "evidence must be text, got int"),
        ({"evidence_id": b"x"}, "evidence_id must be text, got bytes"),
        ({"replaces": "ab"}, "replaces must be a list of (predicate, value) pairs, got 'ab'"),
        ({"replaces": [("note",)]}, "replaces must be a list of (predicate, value) pairs, got [('note',)]"),
        ({"replaces": [None]}, "replaces must be a list of (predicate, value) pairs, got [None]"),
    ],
)
def test_the_python_api_refuses_a_statement_of_the_wrong_shape_in_words(tmp_path, kwargs, message):
    with open_backend(f"sqlite:///{tmp_path / 'recall.db'}") as backend:
        memory = Memory(backend.store("memories", create=True))
        with pytest.raises(RecallError) as err:
            memory.remember("carol", "note", "x", **kwargs)
        assert (err.value.code, err.value.message) == ("invalid_input", message)
        assert memory.remember("carol", "note", "x", replaces=None).events  # None is no replaces


def test_a_large_registry_file_without_aliases_is_not_taken_for_an_alias_attack():
    # 6,000 predicates of 18 YAML nodes each: past the 100,000 nodes aliases may repeat, with no alias
    items = "[a, b, c, d, e, f, g, h, i, j]"
    preds = "".join(f"  p{i}: {{cardinality: single, value_type: enum, allowed: {items}}}\n" for i in range(6000))
    loaded = load_registry_text(f"registry: big\npredicates:\n{preds}", path="big.yaml")
    assert len(loaded.definitions) == 6001  # and note
