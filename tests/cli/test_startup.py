"""Start-up: the root builds only the command being run, and option values skip pydantic
(docs/benchmarks.md, "Start-up"); what a user sees stays the same."""

from __future__ import annotations

import pytest
from typer._click.exceptions import BadParameter
from typer._coercion import build_runtime_param
from typer.core import TyperGroup
from typer.main import get_command

from recall_admin.cli.coercion import PlainParam
from recall_admin.cli.root import COMMAND_MODULES, app, build_commands

# the commands as `--help` lists them (docs/cli-contract.md): none renamed, none dropped
EVERY_COMMAND = [
    *("init", "remember", "forget", "recall", "search", "history", "diff", "explain"),
    *("collections", "import", "export", "demo"),
    *("redefine", "merge", "split", "define", "promote", "apply", "revert"),
    *("verify", "mcp", "serve", "tui", "registry", "conflicts", "vocab", "notes", "audit", "key"),
]


@pytest.mark.parametrize("module", list(COMMAND_MODULES))
def test_each_module_adds_exactly_the_commands_it_is_listed_with(module):
    assert sorted(build_commands([module], plugins=False)) == sorted(COMMAND_MODULES[module])


def test_the_root_lists_every_command_in_its_usual_order():
    root = get_command(app)
    ctx = root.make_context("recall-admin", ["--json"], resilient_parsing=True)
    assert root.list_commands(ctx) == EVERY_COMMAND


def test_a_command_is_built_alone_when_it_is_asked_for():
    root = get_command(app)
    ctx = root.make_context("recall-admin", ["--json"], resilient_parsing=True)
    assert root.get_command(ctx, "recall").name == "recall"
    assert list(root.commands) == ["recall"]
    assert root.get_command(ctx, "no-such-command") is None
    assert list(root.commands) == EVERY_COMMAND  # a name it does not know: everything, for the suggestions


@pytest.mark.parametrize("width", ["60", "100"])
def test_the_help_lists_the_commands_as_their_full_build_would(capsys, monkeypatch, width):
    monkeypatch.setenv("COLUMNS", width)
    root = get_command(app)
    ctx = root.make_context("recall-admin", ["--json"], resilient_parsing=True)
    root.format_help(ctx, ctx.make_formatter())  # commands built for the listing: no options
    listed = capsys.readouterr().out
    assert not root.commands  # the listing is not kept: running a command builds it for real
    TyperGroup.format_help(root, ctx, ctx.make_formatter())  # every command fully built
    built = capsys.readouterr().out
    assert list(root.commands) == EVERY_COMMAND
    assert listed == built
    assert all(name in listed for name in EVERY_COMMAND)


def option(command: str, name: str):
    cmd = build_commands(["memory"], plugins=False)[command]
    param = next(p for p in cmd.params if p.name == name)
    return cmd, param


@pytest.mark.parametrize(
    ("command", "name", "given", "expected"),
    [
        ("search", "text", "vim", "vim"),
        ("search", "limit", 10, 10),  # the default
        ("search", "limit", "7", 7),  # text to a number: Typer's own conversion
        ("remember", "confidence", 1.0, 1.0),
        ("remember", "confidence", "0.5", 0.5),
        ("remember", "replaces", ("a=b", "c=d"), ["a=b", "c=d"]),
        ("remember", "at", None, None),
        ("init", "open_vocabulary", False, False),
    ],
)
def test_a_value_comes_out_as_typer_converts_it(command, name, given, expected):
    cmd, param = option(command, name)
    assert isinstance(param._runtime_param, PlainParam)
    ctx = cmd.make_context(command, [], resilient_parsing=True)
    ours = param._runtime_param.coerce(given, param=param, ctx=ctx)
    typers = build_runtime_param(param.type_descriptor).coerce(given, param=param, ctx=ctx)
    assert ours == typers == expected
    assert type(ours) is type(typers)


def test_a_bad_value_is_refused_with_typers_own_message():
    cmd, param = option("search", "limit")
    ctx = cmd.make_context("search", [], resilient_parsing=True)
    with pytest.raises(BadParameter) as theirs:
        build_runtime_param(param.type_descriptor).coerce("many", param=param, ctx=ctx)
    with pytest.raises(BadParameter) as ours:
        param._runtime_param.coerce("many", param=param, ctx=ctx)
    assert ours.value.format_message() == theirs.value.format_message()
    assert "valid integer" in ours.value.format_message()
