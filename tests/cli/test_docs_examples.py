"""The examples a new user copies from README.md run as shown, on a store of their own."""

from __future__ import annotations

import shlex
from pathlib import Path

from .conftest import Cli

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_example() -> list[list[str]]:
    """The `recall-admin` lines of the README's "What it looks like" block, as arguments."""
    block = README.read_text(encoding="utf-8").split("## What it looks like", 1)[1].split("```console", 1)[1]
    lines = block.split("```", 1)[0].splitlines()
    commands = []
    for line in lines:
        if line.startswith("$ recall-admin "):
            args = shlex.split(line[2:], comments=True)[1:]
            if args != ["tui"]:  # the console needs a terminal
                commands.append(args)
    return commands


def test_the_readme_example_runs_as_shown(cli: Cli):
    # it began with `remember user prefers_editor ...` on a store whose registry did not
    # hold prefers_editor: the first line a new user ran was refused
    commands = readme_example()
    assert commands[0][:2] == ["init", "--registry"]
    answers = [cli.ok(*args) for args in commands]
    by_line = {" ".join(args): data for args, data in zip(commands, answers, strict=True)}
    as_of = by_line["recall user prefers_editor --as-of 2026-09-25"]
    assert [(b["value"], [r["value"] for r in b["replaced"]]) for b in as_of["beliefs"]] == [("emacs", ["vim"])]
    steps = by_line["history user prefers_editor"]["steps"]
    assert [(s["before"], s["after"]) for s in steps] == [([], ["vim"]), (["vim"], ["emacs"]), (["emacs"], ["zed"])]
    assert "applied" not in by_line["redefine prefers_editor --cardinality multi"]
    assert by_line["redefine prefers_editor --cardinality multi --apply"]["applied"]
