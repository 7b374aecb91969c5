"""The `recall-admin tui` command, added to the CLI through the `recall_admin.commands` entry point."""

from __future__ import annotations

from typing import Any

import typer

# the CLI's global options that open the session, passed on as they are
SESSION_OPTIONS = ("store_url", "collection", "operator", "read_only", "match_threshold")


def register(app: typer.Typer) -> None:
    @app.command(rich_help_panel="Console")
    def tui(ctx: typer.Context) -> None:
        """Open the terminal console (Textual) with the same global options (store, collection, operator,
        --read-only, --match-threshold)."""
        state: Any = ctx.find_root().obj
        from .app import main  # imported here: the CLI stays light without the console

        main(**{k: getattr(state, k) for k in SESSION_OPTIONS if hasattr(state, k)})
