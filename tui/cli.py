"""The `recall-admin tui` command, added to the CLI through the `recall_admin.commands` entry point."""

from __future__ import annotations

from typing import Any

import typer


def register(app: typer.Typer) -> None:
    @app.command(rich_help_panel="Console")
    def tui(ctx: typer.Context) -> None:
        """Open the terminal console (Textual) on the same store, collection and operator."""
        state: Any = ctx.find_root().obj
        from .app import main  # imported here: the CLI stays light without the console

        main(store_url=state.store_url, collection=state.collection, operator=state.operator,
             read_only=state.read_only)
