"""Run `recall-admin` in-process on a real SQLite store in a temporary folder.

Every invocation passes ``--store sqlite:///...`` explicitly, and the user data
folder is pointed at the temporary folder too, so no test can touch real data.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from recall_admin.cli import app

TYPED_REGISTRY = """\
registry: typed
description: Predicates of every value type, for the CLI tests.
predicates:
  budget:
    cardinality: single
    value_type: number
    description: The budget in euros, e.g. 8000.
  remote:
    cardinality: single
    value_type: boolean
    description: Whether the person works remotely.
  plan_tier:
    cardinality: single
    value_type: enum
    allowed: [free, pro, team]
    description: The subscription tier.
"""


class Cli:
    def __init__(self, url: str, runner: CliRunner) -> None:
        self.url = url
        self.runner = runner

    def run(
        self,
        *args: str,
        json_mode: bool = True,
        store: str | None = None,
        env: dict | None = None,
        input: str | None = None,
    ):
        argv = ["--store", store or self.url]
        if json_mode:
            argv.append("--json")
        argv.extend(args)
        return self.runner.invoke(app, argv, env=env, input=input)

    def ok(self, *args: str, **kw: Any) -> Any:
        r = self.run(*args, **kw)
        assert r.exit_code == 0, (r.exit_code, r.stdout, r.stderr)
        doc = json.loads(r.stdout)
        assert doc["ok"] is True
        return doc["data"]

    def fail(self, *args: str, exit_code: int = 1, **kw: Any) -> dict[str, str]:
        r = self.run(*args, **kw)
        assert r.exit_code == exit_code, (r.exit_code, r.stdout, r.stderr)
        doc = json.loads(r.stdout)  # exactly one JSON document, even on failure
        assert doc["ok"] is False
        assert set(doc["error"]) == {"code", "message"}
        assert "Traceback" not in r.stdout + r.stderr
        return doc["error"]


def isolated_cli(url: str, tmp_path, monkeypatch) -> Cli:
    """A ``Cli`` over ``url`` whose user data folder is in ``tmp_path`` and whose
    environment names no store, collection or operator of the machine's."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    for name in ("RECALL_STORE", "RECALL_COLLECTION", "RECALL_OPERATOR"):
        monkeypatch.delenv(name, raising=False)
    return Cli(url, CliRunner())


@pytest.fixture
def cli(tmp_path, monkeypatch) -> Cli:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return isolated_cli(f"sqlite:///{tmp_path / 'recall.db'}", tmp_path, monkeypatch)


@pytest.fixture
def typed_registry(tmp_path) -> str:
    path = tmp_path / "typed.yaml"
    path.write_text(TYPED_REGISTRY, encoding="utf-8")
    return str(path)


@pytest.fixture
def coding(cli: Cli) -> Cli:
    """A store initialised with the coding and personal-assistant starters."""
    cli.ok("--operator", "ana", "init", "--registry", "coding", "--registry", "personal-assistant")
    return cli


@pytest.fixture
def editors(coding: Cli) -> Cli:
    """The issue's flow: vim, then emacs, then zed."""
    for value, day in (("vim", "2026-09-01"), ("emacs", "2026-09-20"), ("zed", "2026-10-05")):
        coding.ok("remember", "user", "prefers_editor", value, "--at", day)
    return coding
