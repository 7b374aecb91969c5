"""`recall-admin tui` passes the global options to the console; `python -m tui` parses the same ones."""

from __future__ import annotations

from typing import Any

from typer.testing import CliRunner


def test_cli_tui_command_opens_the_console_on_the_same_store(monkeypatch: Any, store_url: str) -> None:
    import tui.app
    from recall_admin.cli import app

    seen: dict[str, Any] = {}
    monkeypatch.setattr(tui.app, "main", lambda **kw: seen.update(kw))
    result = CliRunner().invoke(app, ["--store", store_url, "--collection", "memories", "--operator", "ops",
                                      "--read-only", "tui"])
    assert result.exit_code == 0, result.output
    assert seen == {"store_url": store_url, "collection": "memories", "operator": "ops", "read_only": True}


def test_module_entry_reads_the_same_options(monkeypatch: Any) -> None:
    import tui.app

    made: dict[str, Any] = {}

    class Fake:
        def __init__(self, **kw: Any) -> None:
            made.update(kw)

        def run(self) -> None:
            made["ran"] = True

    monkeypatch.setattr(tui.app, "RecallApp", Fake)
    monkeypatch.setenv("RECALL_COLLECTION", "support")
    tui.app.main(["--store", "sqlite:///x.db", "--operator", "ops"])
    assert made == {"store_url": "sqlite:///x.db", "collection": "support", "operator": "ops", "read_only": False,
                    "ran": True}
