"""Governance commands: redefine, merge, split, define, promote (staged as plans), apply and revert.

Every staging command only says how to build its plan (``governance.Stager``); the
``staging`` decorator gives it the staging flags and ``options.run_plan`` previews it and
writes or applies it as they ask. The rules live in ``recall_admin.governance``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..options import Build, Match, Notes, Reason, staging, state
from ..render.plan import render_apply


def register(app: typer.Typer) -> None:
    """Add the governance commands to the root app."""

    @app.command(rich_help_panel="Governance")
    @staging
    def redefine(
        ctx: typer.Context,
        name: Annotated[str, typer.Argument(metavar="NAME", help="The predicate to redefine.")],
        cardinality: Annotated[
            str | None, typer.Option("--cardinality", metavar="single|multi", help="New cardinality.")
        ] = None,
        excludes: Annotated[
            list[str] | None, typer.Option("--excludes", metavar="P", help="Start excluding P. Repeatable.")
        ] = None,
        no_excludes: Annotated[
            list[str] | None, typer.Option("--no-excludes", metavar="P", help="Stop excluding P. Repeatable.")
        ] = None,
        historical: Annotated[
            bool | None,
            typer.Option("--historical/--not-historical", help="Things that happened (multi, never withdrawn)."),
        ] = None,
        allowed: Annotated[
            list[str] | None,
            typer.Option("--allowed", metavar="V", help="The enum's allowed values (the whole list). Repeatable."),
        ] = None,
        description: Annotated[str | None, typer.Option("--description", metavar="TEXT")] = None,
        retroactive: Annotated[
            bool,
            typer.Option(
                "--retroactive",
                help=(
                    "Cardinality governs the whole history, not only from now on. Excludes and historical "
                    "always cover the whole log (they are read at every read), with or without it."
                ),
            ),
        ] = False,
        reason: Reason = "",
    ) -> Build:
        """Change a predicate's rules (cardinality, excludes, historical, allowed values, description)."""
        return lambda st: st.redefine(
            name,
            cardinality=cardinality,
            add_excludes=excludes or [],
            remove_excludes=no_excludes or [],
            historical=historical,
            allowed=allowed or None,
            description=description,
            retroactive=retroactive,
            reason=reason,
        )

    @app.command(rich_help_panel="Governance")
    @staging
    def merge(
        ctx: typer.Context,
        name: Annotated[str, typer.Argument(metavar="NAME", help="The predicate that will read as INTO.")],
        into: Annotated[str, typer.Argument(metavar="INTO", help="The predicate both histories fold under.")],
        reason: Reason = "",
    ) -> Build:
        """Read NAME as INTO: both histories fold as one pair under INTO's rules."""
        return lambda st: st.merge(name, into, reason=reason)

    @app.command(rich_help_panel="Governance")
    @staging
    def split(
        ctx: typer.Context,
        name: Annotated[str, typer.Argument(metavar="NAME", help="A merged predicate to make its own again.")],
        reason: Reason = "",
    ) -> Build:
        """Undo a merge: NAME is its own predicate again and its events fold apart."""
        return lambda st: st.split(name, reason=reason)

    @app.command(rich_help_panel="Governance")
    @staging
    def define(
        ctx: typer.Context,
        name: Annotated[str, typer.Argument(metavar="NAME", help="The new predicate, in snake_case.")],
        cardinality: Annotated[str, typer.Option("--cardinality", metavar="single|multi")],
        value_type: Annotated[
            str, typer.Option("--type", metavar="T", help="string, number, boolean, enum, date or ref.")
        ],
        allowed: Annotated[
            list[str] | None, typer.Option("--allowed", metavar="V", help="An enum's allowed value. Repeatable.")
        ] = None,
        description: Annotated[str, typer.Option("--description", metavar="TEXT")] = "",
        excludes: Annotated[
            list[str] | None, typer.Option("--excludes", metavar="P", help="A predicate it withdraws values from.")
        ] = None,
        historical: Annotated[bool, typer.Option("--historical", help="Things that happened.")] = False,
        reason: Reason = "",
    ) -> Build:
        """Declare a new predicate."""
        return lambda st: st.define(
            name,
            cardinality=cardinality,
            value_type=value_type,
            allowed=allowed or [],
            description=description,
            excludes=excludes or [],
            historical=historical,
            reason=reason,
        )

    @app.command(rich_help_panel="Governance")
    @staging
    def promote(
        ctx: typer.Context,
        predicate: Annotated[str, typer.Argument(metavar="PREDICATE", help="The typed predicate the notes become.")],
        note: Notes = None,
        match: Match = None,
        subject: Annotated[
            str | None, typer.Option("--subject", metavar="S", help="Only this subject's notes.")
        ] = None,
        reason: Reason = "",
    ) -> Build:
        """File notes under a typed predicate, each at the note's own instant."""
        from ...inputs import parse_note_values

        notes = parse_note_values(note)
        return lambda st: st.promote(predicate, notes=notes, match=match, subject=subject, reason=reason)

    @app.command("apply", rich_help_panel="Governance")
    def apply_file(
        ctx: typer.Context,
        plan_file: Annotated[Path, typer.Argument(metavar="PLAN_FILE", help="A plan written with --plan-out.")],
        expect_id: Annotated[
            str | None,
            typer.Option(
                "--expect-id",
                metavar="PLAN_ID",
                help="Refuse the file unless it holds this plan (the id its preview showed).",
            ),
        ] = None,
    ) -> None:
        """Apply exactly the events of a saved plan; a stale or altered plan is refused."""
        from ... import governance
        from ...plans import expect_plan, read_plan

        st = state(ctx)
        plan = read_plan(plan_file)
        if expect_id is not None:
            expect_plan(plan, expect_id, f"plan file {str(plan_file)!r}")
        s = st.session(create=False)
        st.output.emit(governance.apply(s.memory, plan, s.operator), render_apply)

    @app.command(rich_help_panel="Governance")
    @staging
    def revert(
        ctx: typer.Context,
        plan_id: Annotated[str, typer.Argument(metavar="PLAN_ID", help="An applied plan (see `registry log`).")],
        reason: Reason = "",
    ) -> Build:
        """Preview (and apply) the plan that withdraws an applied one, as if it had never been applied."""
        from ...governance import revert as revert_plan

        return lambda st: revert_plan(st, plan_id.strip(), reason=reason)
