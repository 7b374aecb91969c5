"""One entry point: `recall-admin [GLOBAL OPTIONS] tui` passes every global option to the console, and
`python -m recall_tui [GLOBAL OPTIONS]` goes through the same command."""

from __future__ import annotations

import runpy
import sys
from typing import Any

from typer.testing import CliRunner


def test_cli_tui_command_passes_every_global_option(monkeypatch: Any, store_url: str) -> None:
    import recall_tui.app
    import recall_tui.cli
    from recall_admin.cli import app

    seen: dict[str, Any] = {}
    monkeypatch.setattr(recall_tui.app, "main", lambda **kw: seen.update(kw))
    monkeypatch.setattr(recall_tui.cli, "_is_terminal", lambda stream: True)  # CliRunner's streams are not
    result = CliRunner().invoke(
        app,
        [
            "--store",
            store_url,
            "--collection",
            "memories",
            "--operator",
            "ops",
            "--read-only",
            "--match-threshold",
            "0.75",
            "tui",
        ],
    )
    assert result.exit_code == 0, result.output
    assert seen == {
        "store_url": store_url,
        "collection": "memories",
        "operator": "ops",
        "read_only": True,
        "match_threshold": 0.75,
    }


def test_the_global_options_reach_the_session_the_console_opens(store_url: str) -> None:
    """What the CLI hands over is what the opened store uses: the engine's match threshold, read-only,
    the collection and the operator (the console opens the session itself, in a worker)."""
    from recall_tui.app import RecallApp

    from .conftest import ready, run

    async def scenario() -> None:
        app = RecallApp(store_url, operator="ops", read_only=True, match_threshold=0.5, tune_gc=False)
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            assert app.session is not None and app.session.memory.match_threshold == 0.5
            assert app.read_only and app.session.read_only and app.operator == "ops"
            assert "read-only" in str(app.main.query_one("#plan-badge").render())

    run(scenario())


def test_module_entry_goes_through_the_cli(monkeypatch: Any) -> None:
    import recall_tui.app
    import recall_tui.cli

    made: dict[str, Any] = {}
    monkeypatch.setattr(recall_tui.app, "main", lambda **kw: made.update(kw))
    monkeypatch.setattr(recall_tui.cli, "_is_terminal", lambda stream: True)  # pytest's streams are not
    monkeypatch.setenv("RECALL_COLLECTION", "support")
    monkeypatch.setattr(sys, "argv", ["python -m recall_tui", "--store", "sqlite:///x.db", "--operator", "ops"])
    try:
        runpy.run_module("recall_tui", run_name="__main__")
    except SystemExit as exc:  # click ends the process on its own
        assert exc.code in (0, None)
    assert made == {
        "store_url": "sqlite:///x.db",
        "collection": "support",
        "operator": "ops",
        "read_only": False,
        "match_threshold": None,
    }
