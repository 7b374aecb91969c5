"""Instants a careless user types: a day far past the 64-bit nanoseconds a store holds
(9999-12-31, 0001-01-01) is a valid instant, and every read answers it."""

from __future__ import annotations

import pytest

from tests.cli.conftest import Cli, isolated_cli


@pytest.fixture
def cli(tmp_path, monkeypatch) -> Cli:
    cli = isolated_cli(f"sqlite:///{tmp_path / 'recall.db'}", tmp_path, monkeypatch)
    cli.ok("init", "--registry", "coding")
    cli.ok("remember", "carol", "prefers_editor", "vim", "--at", "2026-01-01")
    return cli


@pytest.mark.parametrize("text", ["vim", "vim last week"])
def test_search_as_of_the_far_future_and_past(cli, text):
    assert [b["value"] for b in cli.ok("search", text, "--as-of", "9999-12-31")["beliefs"]] == ["vim"]
    assert cli.ok("search", text, "--as-of", "0001-01-01")["beliefs"] == []
