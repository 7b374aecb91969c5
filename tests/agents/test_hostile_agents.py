"""What agents send that is hostile or careless: bodies nested past the parser's depth,
numbers of thousands of digits, a stdio message past the size limit. Each is refused in
words the agent's author can act on, and the server goes on answering."""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
from pathlib import Path

import pytest

from recall_admin.agents import mcp_server
from recall_admin.agents.keys import CREATED, KEY_SUBJECT, SYSTEM_COLLECTION, KeyRing
from recall_admin.agents.mcp_server import decode
from recall_engine import clock
from recall_engine.records import make_event
from recall_engine.storage import open_backend
from tests.cli.conftest import isolated_cli

from .helpers import child_env, cli_ok, new_key, recall_admin_command

DEEP = b'{"subject": ' + b"[" * 5000 + b"]" * 5000 + b"}"
JUST_TOO_DEEP = b'{"subject": ' + b"[" * 1000 + b"]" * 1000 + b"}"  # orjson takes it; the check after did not
HUGE_NUMBER = b'{"subject": "user", "predicate": "prefers_editor", "value": 1' + b"0" * 5000 + b"}"


@pytest.mark.parametrize("raw", [DEEP, JUST_TOO_DEEP], ids=["5000 levels", "1000 levels"])
def test_decode_refuses_deep_nesting_as_bad_json(raw):
    with pytest.raises(ValueError, match="^it is nested too deeply$"):
        decode(raw)


def test_decode_words_a_number_past_4300_digits_for_people():
    with pytest.raises(ValueError) as err:
        decode(HUGE_NUMBER)
    assert str(err.value) == "a number in it has 5001 digits, more than a number can hold"


def test_serve_answers_hostile_bodies_with_the_envelope_and_keeps_serving(tmp_path: Path, serve_factory):
    store = f"sqlite:///{tmp_path / 'recall.db'}"
    key = new_key(store, "team:a", "--registry", "coding")
    srv = serve_factory(store)
    prefix = "the body must be a JSON object of the tool's arguments: "
    for raw, problem in (
        (DEEP, "it is nested too deeply"),
        (JUST_TOO_DEEP, "it is nested too deeply"),
        (HUGE_NUMBER, "a number in it has 5001 digits, more than a number can hold"),
    ):
        status, doc = srv.request("POST", "/v1/remember", raw=raw, key=key)
        assert (status, doc) == (400, {"ok": False, "error": {"code": "usage_error", "message": prefix + problem}})
    srv.ok(key, "remember", subject="user", predicate="prefers_editor", value="vim")
    assert [b["value"] for b in srv.ok(key, "recall", subject="user")["beliefs"]] == ["vim"]
    srv.stop()
    assert "Traceback" not in srv.log.read_text()


class _Out:
    def __init__(self) -> None:
        self.lines: list[str] = []

    async def write(self, text: str) -> None:
        self.lines.append(text)


REFUSED = {
    "jsonrpc": "2.0",
    "id": None,
    "error": {"code": -32600, "message": "a message over 64 MiB was refused unread; send smaller ones"},
}
FIRST, LAST = b'{"id": 1}\n', b'{"id": 2}\n'
# past the limit while the line is still arriving, once its end is in the buffer, and at the end of input
OVERSIZED = (b"x" * 200 + b"\n", b"y" * 40 + b"\n", b"z" * 1000)


def _expected(oversized: bytes) -> list[str]:
    return [FIRST.decode(), LAST.decode()] if oversized.endswith(b"\n") else [FIRST.decode()]


@pytest.mark.parametrize("oversized", OVERSIZED, ids=["arriving", "buffered", "unended"])
def test_a_stdio_message_past_the_limit_is_answered_with_an_error_and_the_session_goes_on(capsys, oversized):
    async def read(data: bytes) -> tuple[list[str], list[str]]:
        reader = asyncio.StreamReader(limit=32)
        reader.feed_data(data)
        reader.feed_eof()
        out = _Out()
        lines = [line async for line in mcp_server._PipeLines(reader, out)]  # type: ignore[arg-type]
        return lines, out.lines

    lines, answers = asyncio.run(read(FIRST + oversized + LAST))
    assert lines == _expected(oversized)
    assert [json.loads(a) for a in answers] == [REFUSED]
    assert "recall MCP server: a message over 64 MiB was refused unread" in capsys.readouterr().err


@pytest.mark.parametrize("oversized", OVERSIZED, ids=["arriving", "buffered", "unended"])
def test_a_standard_input_that_is_a_file_is_read_a_bounded_line_at_a_time(oversized):
    async def read(data: bytes) -> tuple[list[str], list[str]]:
        out = _Out()
        lines = [line async for line in mcp_server._FileLines(io.BytesIO(data), out, limit=32)]  # type: ignore[arg-type]
        return lines, out.lines

    lines, answers = asyncio.run(read(FIRST + oversized + LAST))
    assert lines == _expected(oversized)
    assert [json.loads(a) for a in answers] == [REFUSED]


def _mcp_reading(script: Path, store: str) -> subprocess.CompletedProcess[bytes]:
    """``recall-admin mcp`` with ``script`` as its standard input (a regular file, not a pipe), ended well."""
    with open(script, "rb") as stdin:
        done = subprocess.run(
            [recall_admin_command(), "--store", store, "mcp"],
            stdin=stdin,
            capture_output=True,
            env=child_env(),
            timeout=120,
        )
    assert done.returncode == 0, done.stderr
    return done


def test_mcp_answers_a_script_given_as_a_file(tmp_path: Path):
    store = f"sqlite:///{tmp_path / 'recall.db'}"
    cli_ok(store, "init", "--registry", "coding")
    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    script = tmp_path / "script.jsonl"
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "recall", "arguments": {"subject": "u"}},
        },
    ]
    script.write_text("".join(json.dumps(m) + "\n" for m in messages))
    done = _mcp_reading(script, store)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a["id"] for a in answers] == [1, 2]
    assert answers[1]["result"]["structuredContent"]["ok"] is True


@pytest.mark.parametrize("expires", ["36501d", "99999999999h", "9" * 400 + "h"], ids=["36501d", "huge", "400 digits"])
def test_an_expiry_past_100_years_is_refused_and_writes_no_key(tmp_path: Path, monkeypatch, expires):
    cli = isolated_cli(f"sqlite:///{tmp_path / 'recall.db'}", tmp_path, monkeypatch)
    err = cli.fail("key", "create", "--namespace", "team:a", "--expires", expires)
    assert err == {
        "code": "invalid_input",
        "message": f"--expires is at most 36500d (100 years); for a key that never expires give never; got {expires!r}",
    }
    assert cli.ok("key", "create", "--namespace", "team:a", "--expires", "36500d")["expires"].startswith("21")
    assert len(cli.ok("key", "list")["keys"]) == 1


def test_a_key_record_dated_past_the_instants_a_store_holds_grants_nothing_and_breaks_no_listing(tmp_path: Path):
    url = f"sqlite:///{tmp_path / 'recall.db'}"
    with open_backend(url) as backend:
        ring = KeyRing(backend)
        good, _ = ring.create("team:a", expires_in=None)
        store = backend.store(SYSTEM_COLLECTION, create=True)
        rec = {"id": "0123456789ab", "namespace": "team:a", "hash": "sha256:00", "expires": 2**70, "read_only": False}
        store.append([make_event(KEY_SUBJECT, CREATED, json.dumps(rec), clock.now_ns(), source="operator")])
    assert [k["id"] for k in cli_ok(url, "key", "list")["keys"]] == [good.split("_")[1]]


NOT_JSON = b"this is not json\n"
PARSE_ERROR = {
    "jsonrpc": "2.0",
    "id": None,
    "error": {"code": -32700, "message": "Parse error: the line is not JSON (expected ident at line 1 column 2)"},
}


@pytest.mark.parametrize("stdin", ["pipe", "file"])
def test_a_stdio_line_that_is_not_json_is_answered_with_a_parse_error_and_the_session_goes_on(stdin):
    async def read(data: bytes) -> tuple[list[str], list[str]]:
        out = _Out()
        if stdin == "pipe":
            reader = asyncio.StreamReader()
            reader.feed_data(data)
            reader.feed_eof()
            source: mcp_server._Lines = mcp_server._PipeLines(reader, out)  # type: ignore[arg-type]
        else:
            source = mcp_server._FileLines(io.BytesIO(data), out)  # type: ignore[arg-type]
        return [line async for line in source], out.lines

    lines, answers = asyncio.run(read(FIRST + NOT_JSON + b"\n  \n" + LAST))
    assert lines == [FIRST.decode(), LAST.decode()]  # a blank line is no message: no answer
    assert [json.loads(a) for a in answers] == [PARSE_ERROR]


def test_mcp_answers_a_line_that_is_not_json_and_then_the_next_call(tmp_path: Path):
    store = f"sqlite:///{tmp_path / 'recall.db'}"
    cli_ok(store, "init", "--registry", "coding")
    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    call = {"name": "recall", "arguments": {"subject": "u"}}
    script = (
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
        + "\n"
        + json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
        + '\n{"jsonrpc": "2.0", "id": 7, "method": \n'
        + json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call})
        + "\n"
    )
    (tmp_path / "script.jsonl").write_text(script)
    done = _mcp_reading(tmp_path / "script.jsonl", store)
    # the parse error is written as the line is read, so it may come before the answer to 1
    answers = {a["id"]: a for a in map(json.loads, done.stdout.splitlines())}
    assert sorted(answers, key=str) == [1, 2, None]
    assert answers[None]["error"]["code"] == -32700
    assert answers[None]["error"]["message"].startswith("Parse error: the line is not JSON (EOF while parsing")
    assert answers[2]["result"]["structuredContent"]["ok"] is True


def test_a_key_given_twice_in_a_v1_body_keeps_its_last_value_as_in_an_import(tmp_path: Path, serve_factory):
    # the documented rule (records.md, "Strict decoding"), the same as a JSONL import's
    store = f"sqlite:///{tmp_path / 'recall.db'}"
    key = new_key(store, "team:a", "--registry", "coding")
    srv = serve_factory(store)
    raw = b'{"subject": "user", "predicate": "prefers_editor", "value": "vim", "value": "emacs"}'
    status, doc = srv.request("POST", "/v1/remember", raw=raw, key=key)
    assert status == 200 and doc["ok"], doc
    assert [b["value"] for b in srv.ok(key, "recall", subject="user")["beliefs"]] == ["emacs"]
    srv.stop()
    line = tmp_path / "in.jsonl"
    line.write_text(raw.decode().replace('"user"', '"other"') + "\n")
    cli_ok(store, "--collection", "team.a", "import", "--statements", str(line))
    assert [b["value"] for b in cli_ok(store, "--collection", "team.a", "recall", "other")["beliefs"]] == ["emacs"]
