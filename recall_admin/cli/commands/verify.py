"""`verify`: check a live store's log (docs/audit.md, "Verifying a live store")."""

from __future__ import annotations

from typing import Annotated

import typer

from ..options import state
from ..render.data import render_verification, render_verifications, summary


def register(app: typer.Typer) -> None:
    @app.command(rich_help_panel="Audit")
    def verify(
        ctx: typer.Context,
        digest: Annotated[
            str | None,
            typer.Option("--digest", metavar="D", help="A log digest printed by an earlier verify, kept elsewhere."),
        ] = None,
        every: Annotated[
            bool, typer.Option("--all", help="Every collection of the store, each reported; exit 1 if any fails.")
        ] = False,
    ) -> None:
        """Check the collection's log: ids match content, counts match, and the log digest (against a kept one)."""
        from recall_engine.errors import InvalidInput
        from recall_engine.integrity import verify_collections, verify_log

        st = state(ctx)
        st.read_only = True  # verify never writes, and must open a store whose guards were dropped
        if every:
            if digest:
                raise InvalidInput("--digest covers one collection's log: give it with --collection, not --all")
            from ...session import open_existing

            backend = open_existing(st.store_url)
            try:
                found = verify_collections(backend)
            finally:
                backend.close()
            data = {"valid": all(v.ok for v in found), "collections": [v.to_json() for v in found]}
            st.output.emit(data, render_verifications)
            for v in found:
                if not v.ok:
                    st.output.message(summary(v.to_json()), "red")
            if not data["valid"]:
                raise typer.Exit(1)
            return
        result = verify_log(st.session(create=False).store, digest or "")
        st.output.emit(result.to_json(), render_verification)
        if not result.ok:
            st.output.message(summary(result.to_json()), "red")
            raise typer.Exit(1)  # the report is the answer; the exit says it does not verify
