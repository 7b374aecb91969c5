"""`verify`: check a live store's log (docs/audit.md, "Verifying a live store")."""

from __future__ import annotations

from typing import Annotated

import typer

from ..options import state
from ..render.data import render_verification, summary


def register(app: typer.Typer) -> None:
    @app.command(rich_help_panel="Audit")
    def verify(
        ctx: typer.Context,
        digest: Annotated[
            str | None,
            typer.Option("--digest", metavar="D", help="A log digest printed by an earlier verify, kept elsewhere."),
        ] = None,
    ) -> None:
        """Check the collection's log: ids match content, counts match, and the log digest (against a kept one)."""
        from recall_engine.integrity import verify_log

        st = state(ctx)
        st.read_only = True  # verify never writes, and must open a store whose guards were dropped
        result = verify_log(st.session(create=False).store, digest or "")
        st.output.emit(result.to_json(), render_verification)
        if not result.ok:
            st.output.message(summary(result.to_json()), "red")
            raise typer.Exit(1)  # the report is the answer; the exit says it does not verify
