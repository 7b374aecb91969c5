"""A number too small for a float64 (1e-400) would be stored as 0, changing what the
writer said: it is refused as a number too large is, on every input, and nothing is written."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from recall_admin.agents import mcp_server
from tests.agents.helpers import new_key, serve_factory_impl
from tests.cli.conftest import TYPED_REGISTRY, Cli, isolated_cli

LONG_TINY = "0." + "0" * 400 + "1"
TOO_SMALL = "is too small for a number to hold; it would be stored as 0"


@pytest.fixture
def cli(tmp_path, monkeypatch) -> Cli:
    cli = isolated_cli(f"sqlite:///{tmp_path / 'recall.db'}", tmp_path, monkeypatch)
    (tmp_path / "typed.yaml").write_text(TYPED_REGISTRY)
    cli.ok("init", "--registry", str(tmp_path / "typed.yaml"))
    return cli


@pytest.fixture
def serve_factory(tmp_path: Path) -> Iterator[Any]:
    yield from serve_factory_impl(tmp_path)


def _budgets(cli: Cli) -> list[object]:
    return [b["value"] for b in cli.ok("recall", "user")["beliefs"] if b["predicate"] == "budget"]


@pytest.mark.parametrize(
    "typed", ["1e-400", "2.5E-999", LONG_TINY, "1e400"], ids=["1e-400", "2.5E-999", "401 decimals", "1e400"]
)
def test_remember_refuses_a_typed_number_out_of_range(cli: Cli, typed):
    err = cli.fail("remember", "user", "budget", typed)
    assert err == {"code": "invalid_input", "message": f"budget expects a number value, got string {typed!r}"}
    assert _budgets(cli) == []


@pytest.mark.parametrize("typed, stored", [("0e-400", 0), ("1e-300", 1e-300), ("0.000", 0)])
def test_a_zero_or_a_small_number_that_fits_is_stored(cli: Cli, typed, stored):
    cli.ok("remember", "user", "budget", typed)
    assert _budgets(cli) == [stored]


@pytest.mark.parametrize("flag", ["--statements", None])
def test_import_refuses_a_line_with_a_number_that_underflows(cli: Cli, tmp_path: Path, flag):
    line = '{"subject": "user", "predicate": "budget", "value": 1e-400}'
    if flag is None:
        line = (
            '{"id": "m-000000000000000000000001", "kind": "fact", "subject": "user", "predicate": "budget", '
            '"value": 1e-400, "confidence": 1.0, "source": "user_stated", "observed_at": "2026-01-01T00:00:00Z"}'
        )
    path = tmp_path / "in.jsonl"
    path.write_text(line + "\n")
    err = cli.fail("import", *([flag] if flag else []), str(path))
    assert err["message"] == f"line 1: not valid JSON (a number in it, 1e-400, {TOO_SMALL})"
    assert _budgets(cli) == []


def test_http_refuses_a_body_with_a_number_that_underflows(tmp_path: Path, serve_factory):
    store = f"sqlite:///{tmp_path / 'recall.db'}"
    (tmp_path / "typed.yaml").write_text(TYPED_REGISTRY)
    key = new_key(store, "team:a", "--registry", str(tmp_path / "typed.yaml"))
    srv = serve_factory(store)
    raw = b'{"subject": "user", "predicate": "budget", "value": 1e-400}'
    status, doc = srv.request("POST", "/v1/remember", raw=raw, key=key)
    message = f"the body must be a JSON object of the tool's arguments: a number in it, 1e-400, {TOO_SMALL}"
    assert (status, doc) == (400, {"ok": False, "error": {"code": "usage_error", "message": message}})
    assert srv.ok(key, "recall", subject="user")["beliefs"] == []
    srv.stop()


class _Out:
    def __init__(self) -> None:
        self.lines: list[str] = []

    async def write(self, text: str) -> None:
        self.lines.append(text)


def test_mcp_refuses_a_call_with_a_number_that_underflows():
    call = b'{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "remember", '
    call += b'"arguments": {"subject": "user", "predicate": "budget", "value": 1e-400}}}\n'
    ok = b'{"jsonrpc": "2.0", "id": 10, "method": "tools/list"}\n'

    async def read() -> tuple[list[str], list[str]]:
        out = _Out()
        source = mcp_server._FileLines(io.BytesIO(call + ok), out)  # type: ignore[arg-type]
        return [line async for line in source], out.lines

    lines, answers = asyncio.run(read())
    assert lines == [ok.decode()]  # the refused call never reaches a tool
    assert [json.loads(a) for a in answers] == [
        {
            "jsonrpc": "2.0",
            "id": 9,
            "error": {"code": -32602, "message": f"Invalid params: a number in it, 1e-400, {TOO_SMALL}"},
        }
    ]
