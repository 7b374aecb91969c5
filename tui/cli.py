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
        _refuse_without_a_terminal(bool(getattr(state, "json_mode", False)))
        from .app import main  # imported here: the CLI stays light without the console

        main(**{k: getattr(state, k) for k in SESSION_OPTIONS if hasattr(state, k)})


def _refuse_without_a_terminal(json_mode: bool) -> None:
    """The console draws on a terminal and reads its keys: with --json, or with stdin or
    stdout not a terminal, it would write escape sequences into a pipe and wait for keys
    that never come. Refused before anything is opened."""
    import sys

    from recall_engine.errors import InvalidInput

    if json_mode:
        raise InvalidInput("tui is the interactive console and writes no JSON; run it without --json")
    missing = [name for name, stream in (("input", sys.stdin), ("output", sys.stdout)) if not _is_terminal(stream)]
    if missing:
        raise InvalidInput(
            f"tui needs a terminal: standard {' and '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not one (run it in a terminal, without pipes or redirection)"
        )


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # closed, or no stream at all
        return False
