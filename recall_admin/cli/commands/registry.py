"""Registry commands: list, show, log, load, lint."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from ..options import Build, CommandGroup, Reason, staging, state
from ..render.registry import render_lint, render_registry_list, render_registry_log, render_registry_show


def register(app: typer.Typer) -> None:
    registry_app = typer.Typer(help="Read the predicate registry and its log.", no_args_is_help=True, cls=CommandGroup)
    app.add_typer(registry_app, name="registry", rich_help_panel="Registry")

    @registry_app.command("list")
    def registry_list(ctx: typer.Context) -> None:
        """Every readable predicate with its rules, origin and event count."""
        from ...views import registry_list_view

        state(ctx).output.emit(registry_list_view(state(ctx).session().memory), render_registry_list)

    @registry_app.command("show")
    def registry_show(
        ctx: typer.Context,
        name: Annotated[str, typer.Argument(metavar="NAME", help="A predicate or one of its names.")],
    ) -> None:
        """One predicate and the registry events that decide it."""
        from ...views import registry_show_view

        state(ctx).output.emit(registry_show_view(state(ctx).session().memory, name), render_registry_show)

    @registry_app.command("log")
    def registry_log(
        ctx: typer.Context,
        name: Annotated[str | None, typer.Option("--name", metavar="P", help="Only records bearing on P.")] = None,
        op: Annotated[str | None, typer.Option("--op", metavar="OP", help="Only records of this op.")] = None,
        operator: Annotated[
            str | None, typer.Option("--operator", metavar="WHO", help="Only records planned or applied by WHO.")
        ] = None,
        since: Annotated[str | None, typer.Option("--since", metavar="T", help="Only records from T on.")] = None,
        limit: Annotated[int | None, typer.Option("--limit", metavar="N", help="Only the last N records.")] = None,
    ) -> None:
        """The registry log, oldest first: who changed what, when, why, from which plan, applied by whom."""
        from ...inputs import instant
        from ...views import registry_log_view

        when = instant(since, "--since")
        data = registry_log_view(
            state(ctx).session().memory, name=name, op=op, operator=operator, since=when, limit=limit
        )
        state(ctx).output.emit(data, render_registry_log)

    @registry_app.command("load")
    @staging
    def registry_load(
        ctx: typer.Context,
        name_or_path: Annotated[
            str, typer.Argument(metavar="NAME_OR_PATH", help="A starter (coding, support, ...) or a registry file.")
        ],
        reason: Reason = "",
    ) -> Build:
        """Preview (and apply) declaring what a registry file changes in this collection's registry."""
        from recall_engine.registry_files import load_starter

        from ...registry_sync import load_plan

        rf = load_starter(name_or_path)

        def build(st: Any) -> Any:
            plan, notes = load_plan(st, rf, reason=reason)
            for n in notes:
                state(ctx).output.message(n, style="dim")
            return plan

        build.creates = True  # type: ignore[attr-defined]  # --apply may create the collection
        return build

    @registry_app.command("lint")
    def registry_lint(ctx: typer.Context) -> None:
        """Near-duplicate names, unknown or one-way exclusions, unused predicates, notes that want a predicate."""
        from ...lint import lint

        st = state(ctx)
        findings = lint(st.session(create=False).memory)
        st.output.emit({"findings": [f.to_json() for f in findings]}, render_lint)
