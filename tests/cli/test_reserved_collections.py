"""The engine's own collections (recall.keys holds the API key records) are reached only
through the `key` commands: every other command refuses them and touches nothing."""

from __future__ import annotations

import pytest

from .conftest import Cli

REFUSED = {
    "code": "invalid_input",
    "message": "collection 'recall.keys' is reserved: names starting with 'recall.' belong to the engine "
    "(recall.keys holds the API keys; manage them with `recall-admin key`)",
}


@pytest.mark.parametrize(
    "args",
    [
        ("remember", "user", "note", "forged"),
        ("recall", "recall:keys"),
        ("history", "recall:keys", "created"),
        ("search", "key"),
        ("export",),
        ("import", "-"),
        ("collections",),
        ("registry", "list"),
        ("mcp",),
    ],
    ids=lambda a: a[0],
)
def test_an_ordinary_command_refuses_the_key_collection(cli: Cli, args):
    key = cli.ok("key", "create", "--namespace", "team:a")["key"]
    assert cli.fail("--collection", "recall.keys", *args, input="") == REFUSED
    listed = cli.ok("key", "list")["keys"]
    assert [k["id"] for k in listed] == [key.split("_")[1]]


def test_recall_collection_from_the_environment_is_refused_too(cli: Cli):
    assert cli.fail("recall", "user", env={"RECALL_COLLECTION": "recall.keys"}) == REFUSED


def test_any_name_under_recall_dot_is_reserved_whatever_its_case(cli: Cli):
    err = cli.fail("--collection", "Recall.Other", "remember", "user", "note", "x")
    assert err["message"].startswith("collection 'Recall.Other' is reserved: names starting with 'recall.'")


def test_the_key_commands_still_reach_their_collection(cli: Cli):
    cli.ok("key", "create", "--namespace", "team:a")
    assert len(cli.ok("--collection", "recall.keys", "key", "list")["keys"]) == 1
