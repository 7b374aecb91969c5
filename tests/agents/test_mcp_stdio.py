"""The MCP SDK's own client drives `recall-admin mcp` as a subprocess over stdio."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from typer.testing import CliRunner

from recall_admin.cli import app

from .helpers import child_env, cli_ok, recall_admin_command

TOOLS = {"remember", "recall", "forget", "history", "diff", "explain", "predicates", "search"}

BUDGET = """\
registry: money
description: One number predicate.
predicates:
  budget:
    cardinality: single
    value_type: number
    description: The budget in euros, e.g. 8000.
"""


@pytest.fixture
def store(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'recall.db'}"
    (tmp_path / "money.yaml").write_text(BUDGET)
    cli_ok(url, "init", "--registry", "coding", "--registry", str(tmp_path / "money.yaml"))
    return url


@asynccontextmanager
async def session(store: str, *flags: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=recall_admin_command(),
        args=["--store", store, "mcp", *flags],
        env=child_env(),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        yield s


async def call(s: ClientSession, tool: str, **args: Any) -> tuple[bool, dict[str, Any]]:
    r = await s.call_tool(tool, args)
    doc = r.structured_content
    assert doc == json.loads(r.content[0].text)  # the same envelope as structure and as text
    assert doc["ok"] is (not r.is_error)
    return bool(r.is_error), doc


async def ok(s: ClientSession, tool: str, **args: Any) -> Any:
    failed, doc = await call(s, tool, **args)
    assert not failed, doc
    return doc["data"]


async def error(s: ClientSession, tool: str, **args: Any) -> dict[str, str]:
    failed, doc = await call(s, tool, **args)
    assert failed, doc
    return doc["error"]


def cli_error(store: str, *args: str) -> dict[str, str]:
    r = CliRunner().invoke(app, ["--store", store, "--json", *args])
    assert r.exit_code == 1, (r.exit_code, r.stdout)
    return json.loads(r.stdout)["error"]


def test_lists_the_tools_with_their_schemas(store):
    async def main() -> None:
        async with session(store) as s:
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert set(tools) == TOOLS
            assert set(tools["diff"].input_schema["required"]) == {"from"}
            assert tools["remember"].input_schema["required"] == ["subject", "predicate", "value"]
            assert tools["recall"].annotations.read_only_hint is True
            assert tools["remember"].annotations.read_only_hint is False
            # each description says what it does to memory and what the answer lists
            assert "Appends an event" in tools["remember"].description
            assert "already_known" in tools["remember"].description
            assert "Reads only" in tools["recall"].description and "elsewhere" in tools["recall"].description
            assert "read-only" in tools["remember"].description  # this server was started without --write

    anyio.run(main)


def test_every_tool_answers_as_the_cli_json_does(store):
    async def main() -> None:
        async with session(store, "--write") as s:
            first = await ok(
                s, "remember", subject="user", predicate="prefers_editor", value="vim", at="2026-01-01T10:00:00Z"
            )
            assert first["already_known"] is False and first["stored"]["value"] == "vim"
            second = await ok(
                s,
                "remember",
                subject="user",
                predicate="prefers_editor",
                value="zed",
                at="2026-02-01",
                evidence="I moved to zed",
                source="agent_inferred",
            )
            assert [r["value"] for r in second["stored"]["replaced"]] == ["vim"]
            assert [b["value"] for b in second["displaced"]] == ["vim"]
            again = await ok(s, "remember", subject="user", predicate="prefers_editor", value="ZED")
            assert again["already_known"] is True
            rep = await ok(
                s,
                "remember",
                subject="user",
                predicate="uses_technology",
                value="rust",
                replaces=[{"predicate": "uses_technology", "value": "go"}],
            )
            assert rep["unreplaced"] == [{"predicate": "uses_technology", "value": "go", "reason": "never believed"}]
            await ok(s, "remember", subject="user", predicate="prefers_language", value="rust")
            lang = await ok(s, "recall", subject="user", predicate="prefers_language")
            assert [(e["predicate"], e["value"]) for e in lang["beliefs"][0]["elsewhere"]] == [
                ("uses_technology", "rust")
            ]
            budget = await ok(s, "remember", subject="user", predicate="budget", value="8000")
            assert budget["stored"]["value"] == 8000  # text typed by the predicate, as on the command line

            recalled = await ok(s, "recall", subject="user", predicate="prefers_editor")
            assert recalled == cli_ok(store, "recall", "user", "prefers_editor", "--as-of", recalled["as_of"])
            assert await ok(s, "recall", subject="user", predicate="prefers_editor", as_of="2026-01-15") == cli_ok(
                store, "recall", "user", "prefers_editor", "--as-of", "2026-01-15"
            )
            profile = await ok(s, "recall", subject="user")
            assert {b["predicate"] for b in profile["beliefs"]} == {
                "prefers_editor",
                "uses_technology",
                "prefers_language",
                "budget",
            }

            hist = await ok(s, "history", subject="user", predicate="prefers_editor")
            assert hist == cli_ok(store, "history", "user", "prefers_editor")
            assert [st["value"] for st in hist["steps"]] == ["vim", "zed"]

            d = await ok(s, "diff", **{"from": "2026-01-15", "to": "2026-02-15", "subject": "user"})
            assert d == cli_ok(store, "diff", "--from", "2026-01-15", "--to", "2026-02-15", "--subject", "user")
            assert [(c["predicate"], c["began"], c["stopped"]) for c in d["changes"]] == [
                ("prefers_editor", ["zed"], ["vim"])
            ]

            x = await ok(s, "explain", subject="user", predicate="prefers_editor", as_of="2026-03-01")
            assert x == cli_ok(store, "explain", "user", "prefers_editor", "--as-of", "2026-03-01")
            assert len(x["events"]) == 2
            assert all(
                set(e["written_by"]) == {"agent", "operator"} and e["written_by"]["agent"] == "mcp-stdio"
                for e in x["events"]
            )

            preds = await ok(s, "predicates")
            assert preds == cli_ok(store, "registry", "list")

            found = await ok(s, "search", question="zed editor", as_of="2026-03-01")
            assert "zed" in [b["value"] for b in found["beliefs"]]

            gone = await ok(s, "forget", subject="user", predicate="uses_technology", value="rust")
            assert [b["value"] for b in gone["withdrawn"]] == ["rust"]
            assert (await ok(s, "forget", subject="user", predicate="uses_technology", value="rust"))["withdrawn"] == []
            everything = await ok(s, "forget", subject="user", predicate="prefers_editor", all=True)
            assert [b["value"] for b in everything["withdrawn"]] == ["zed"]

    anyio.run(main)


def test_errors_are_tool_errors_with_the_cli_codes(store):
    async def main() -> None:
        async with session(store, "--write") as s:
            e = await error(s, "remember", subject="user", predicate="favourite_colour", value="blue")
            assert (
                e["code"]
                == "unknown_predicate"
                == cli_error(store, "remember", "user", "favourite_colour", "blue")["code"]
            )
            assert "is not in the registry" in e["message"]
            e = await error(s, "remember", subject="user", predicate="budget", value="lots")
            cli = cli_error(store, "remember", "user", "budget", "lots")
            assert (e["code"], e["message"]) == (cli["code"], cli["message"]) == ("invalid_input", cli["message"])
            e = await error(s, "remember", subject="user", predicate="budget")
            assert e == {"code": "usage_error", "message": "remember: missing argument 'value'"}
            e = await error(s, "recall", subject="user", collection="other")
            assert e["code"] == "usage_error" and "unknown argument 'collection'" in e["message"]
            e = await error(s, "recall", subject="user", as_of="yesterday-ish")
            assert e["code"] == cli_error(store, "recall", "user", "--as-of", "yesterday-ish")["code"]
            e = await error(s, "forget", subject="user", predicate="budget")
            assert e["code"] == "invalid_input" and "exactly one of a value or all" in e["message"]
            e = await error(s, "remember", subject="recall:keys", predicate="budget", value=1)
            assert e["code"] == "invalid_input" and "reserved" in e["message"]
            e = await error(s, "nonesuch")
            assert e["code"] == "usage_error" and "no tool named 'nonesuch'" in e["message"]
        assert cli_ok(store, "recall", "user")["beliefs"] == []  # nothing was written by any of them

    anyio.run(main)


def test_without_write_the_server_refuses_writes(store):
    cli_ok(store, "remember", "user", "prefers_editor", "vim")

    async def main() -> None:
        async with session(store) as s:
            e = await error(s, "remember", subject="user", predicate="prefers_editor", value="zed")
            assert e["code"] == "read_only"
            assert "recall-admin mcp --write" in e["message"]
            assert (await error(s, "forget", subject="user", predicate="prefers_editor", all=True))[
                "code"
            ] == "read_only"
            assert [b["value"] for b in (await ok(s, "recall", subject="user"))["beliefs"]] == ["vim"]

    anyio.run(main)
    assert [b["value"] for b in cli_ok(store, "recall", "user")["beliefs"]] == ["vim"]


def test_invented_names_go_through_matching_and_reach_the_vocabulary(tmp_path):
    store = f"sqlite:///{tmp_path / 'open.db'}"
    cli_ok(store, "init", "--registry", "coding", "--open")

    async def main() -> None:
        async with session(store, "--write") as s:
            new = await ok(s, "remember", subject="user", predicate="favourite colour", value="blue")
            assert new["registry_changes"] == [{"op": "define", "name": "favourite_colour"}]
            near = await ok(s, "remember", subject="user", predicate="prefers editor", value="helix")
            assert near["registry_changes"] == []  # an existing name, spelt with a space
            assert near["stored"]["predicate"] == "prefers_editor"

    anyio.run(main)
    names = {p["name"] for p in cli_ok(store, "vocab", "list")["predicates"]}
    assert "favourite_colour" in names
