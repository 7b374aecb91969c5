"""What agents send that is hostile or careless: bodies nested past the parser's depth,
numbers of thousands of digits, a stdio message past the size limit. Each is refused in
words the agent's author can act on, and the server goes on answering."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from recall_admin.agents import mcp_server
from recall_admin.agents.keys import CREATED, KEY_SUBJECT, SYSTEM_COLLECTION, KeyRing
from recall_admin.agents.mcp_server import decode
from recall_engine import clock
from recall_engine.records import make_event
from recall_engine.storage import open_backend
from tests.cli.conftest import isolated_cli

from .helpers import cli_ok, new_key

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


def test_a_stdio_message_past_the_limit_is_answered_with_an_error_and_the_session_goes_on(capsys):
    async def read(data: bytes, limit: int) -> tuple[list[str], list[str]]:
        reader = asyncio.StreamReader(limit=limit)
        reader.feed_data(data)
        reader.feed_eof()
        out = _Out()
        lines = [line async for line in mcp_server._PipeLines(reader, out)]  # type: ignore[arg-type]
        return lines, out.lines

    first, last = b'{"id": 1}\n', b'{"id": 2}\n'
    # past the limit both while the line is still arriving and once its end is in the buffer
    for oversized in (b"x" * 200 + b"\n", b"y" * 40 + b"\n", b"z" * 1000):
        lines, answers = asyncio.run(read(first + oversized + last, limit=32))
        expected = [first.decode(), last.decode()] if oversized.endswith(b"\n") else [first.decode()]
        assert lines == expected
        assert [json.loads(a) for a in answers] == [
            {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": -32600, "message": "a message over 64 MiB was refused unread; send smaller ones"},
            }
        ]
    assert "recall MCP server: a message over 64 MiB was refused unread" in capsys.readouterr().err


@pytest.mark.parametrize("expires", ["36501d", "99999999999h", "9" * 400 + "h"], ids=["36501d", "huge", "400 digits"])
def test_an_expiry_past_100_years_is_refused_and_writes_no_key(tmp_path: Path, monkeypatch, expires):
    cli = isolated_cli(f"sqlite:///{tmp_path / 'recall.db'}", tmp_path, monkeypatch)
    err = cli.fail("key", "create", "--namespace", "team:a", "--expires", expires)
    assert err == {
        "code": "invalid_input",
        "message": f"--expires is at most 36500d (100 years); for a key that never expires give never; got {expires!r}",
    }
    cli.ok("key", "create", "--namespace", "team:a", "--expires", "36500d")
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
