"""Governance commands of `recall-admin`: stage, preview, apply, revert.

``register(app)`` adds ``redefine``, ``merge``, ``split``, ``define``, ``promote``,
``apply`` and ``revert``; ``register_registry_load(registry_app)`` adds
``registry load``. Every staging command builds a plan with
``governance.Stager``, previews it with ``governance.preview`` and then, as the
flags ask, writes the plan file, applies it, and sets the exit code. The rules
live in ``governance``; this module only reads options and hands data to the
renderer (``render_plan``). ``run_plan`` is the one path, for any command that
stages a plan (conflict decisions too).

Flags of every staging command (docs/cli-contract.md, Governance):
no flag: preview only, nothing written; ``--as-of T``: also compare answers at
T; ``--plan-out FILE``: write the plan as JSON; ``--apply``: apply right after
planning; ``--detailed-exitcode``: exit 0 when no answer changes, 2 when one does.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, List, Optional

import typer
from rich.console import Console

from .output import Output

try:
    from typing import Annotated
except ImportError:  # pragma: no cover
    from typing_extensions import Annotated

EXIT_CHANGES = 2  # --detailed-exitcode: the plan changes answers (Terraform's convention)
PROGRESS_AFTER_SECONDS = 0.5  # previews quicker than this show no progress indicator

# --- options shared by every staging command ----------------------------------------------

AsOfOpt = Annotated[
    Optional[str],
    typer.Option("--as-of", metavar="T", help="Also compare the answers at this instant (RFC3339 or a day)."),
]
PlanOutOpt = Annotated[
    Optional[Path], typer.Option("--plan-out", metavar="FILE", help="Write the plan as JSON, for `apply FILE`.")
]
ApplyOpt = Annotated[bool, typer.Option("--apply", help="Apply the plan right after previewing it.")]
DetailedOpt = Annotated[
    bool,
    typer.Option("--detailed-exitcode", help="Exit 0 when the plan changes no answer, 2 when it does."),
]
ReasonOpt = Annotated[str, typer.Option("--reason", metavar="TEXT", help="Why: recorded on the registry events.")]


def _state(ctx: typer.Context) -> Any:
    """The invocation's ``cli.State`` (global options, output, session): the root
    context's obj. Read from the context rather than imported, since cli imports this
    module (and ``python -m recall_admin.cli`` would load cli twice)."""
    state = ctx.find_root().obj
    if state is None or not hasattr(state, "session"):
        raise RuntimeError("governance commands run under the recall-admin root command")
    return state


# --- rendering adapters (output.Renderer signature) ---------------------------------------


def render_preview(con: Console, data: dict[str, Any]) -> None:
    from .render_plan import render_applied, render_preview as preview_group

    con.print(preview_group(data))
    if "applied" in data:
        con.print(render_applied(data))


def render_apply(con: Console, data: dict[str, Any]) -> None:
    from .render_plan import render_applied

    con.print(render_applied(data))


@contextmanager
def preview_progress(output: Output, label: str = "Previewing") -> Iterator[Callable[[int], None]]:
    """A spinner on stderr with the events read so far, shown only once a preview has
    taken longer than ``PROGRESS_AFTER_SECONDS``. Stdout is untouched, so --json keeps
    exactly one document there."""
    start = time.monotonic()
    live: dict[str, Any] = {}

    def update(events_read: int) -> None:
        if "p" not in live:
            if time.monotonic() - start < PROGRESS_AFTER_SECONDS:
                return
            from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            p = Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                         console=output.err, transient=True)
            p.start()
            live["p"], live["task"] = p, p.add_task(label)
        live["p"].update(live["task"], description=f"{label}: {events_read} event(s) read")

    try:
        yield update
    finally:
        if "p" in live:
            live["p"].stop()


# --- the one path every staging command takes ---------------------------------------------


def run_plan(
    ctx: typer.Context,
    build: Callable[[Any], Any],
    *,
    as_of: Optional[str] = None,
    plan_out: Optional[Path] = None,
    apply: bool = False,
    detailed_exitcode: bool = False,
) -> int:
    """Stage (``build(stager) -> Plan``), preview, then write / apply as the flags ask.

    Returns the exit code: 2 under --detailed-exitcode when the plan changes an answer.
    The JSON ``data`` is ``Preview.to_json()``; with --apply it also holds ``applied``,
    ``events`` and ``position``, as ``apply PLAN_FILE`` returns them.
    """
    from . import governance
    from .inputs import instant
    from .plans import write_plan

    state = _state(ctx)
    when = instant(as_of, "--as-of")
    s = state.session(create=False)
    stager = governance.Stager(s.memory, s.collection, s.operator)
    plan = build(stager)
    with preview_progress(state.output) as progress:
        pv = governance.preview(s.memory, plan, as_of=when, progress=progress)
    data = pv.to_json()
    if plan_out is not None:
        write_plan(plan, plan_out)
        state.output.message(f"Wrote plan {plan.id} to {plan_out}; apply it with `recall-admin apply {plan_out}`.",
                             style="dim")
    if apply:
        data.update(governance.apply(s.memory, plan, s.operator))
    state.output.emit(data, render_preview)
    if not apply and plan_out is None:
        state.output.message("Preview only: nothing was written. Add --apply to apply it, or --plan-out FILE.",
                             style="dim")
    return EXIT_CHANGES if detailed_exitcode and pv.changes_answers else 0


def _split_pairs(items: List[str], flag: str) -> dict[str, str]:
    from recall_engine.errors import InvalidInput

    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise InvalidInput(f"{flag} takes EVENT_ID=VALUE (for example m-3b505d61520c=fish), got {item!r}")
        out[key.strip()] = value
    return out


# --- commands ------------------------------------------------------------------------------


def register(app: typer.Typer) -> None:
    """Add the governance commands to the root app."""

    @app.command(rich_help_panel="Governance")
    def redefine(
        ctx: typer.Context,
        name: Annotated[str, typer.Argument(metavar="NAME", help="The predicate to redefine.")],
        cardinality: Annotated[
            Optional[str], typer.Option("--cardinality", metavar="single|multi", help="New cardinality.")
        ] = None,
        excludes: Annotated[
            Optional[List[str]], typer.Option("--excludes", metavar="P", help="Start excluding P. Repeatable.")
        ] = None,
        no_excludes: Annotated[
            Optional[List[str]], typer.Option("--no-excludes", metavar="P", help="Stop excluding P. Repeatable.")
        ] = None,
        historical: Annotated[
            Optional[bool],
            typer.Option("--historical/--not-historical", help="Things that happened (multi, never withdrawn)."),
        ] = None,
        allowed: Annotated[
            Optional[List[str]],
            typer.Option("--allowed", metavar="V", help="The enum's allowed values (the whole list). Repeatable."),
        ] = None,
        description: Annotated[Optional[str], typer.Option("--description", metavar="TEXT")] = None,
        retroactive: Annotated[
            bool, typer.Option("--retroactive", help="Govern the whole history, not only from now on.")
        ] = False,
        as_of: AsOfOpt = None,
        plan_out: PlanOutOpt = None,
        apply: ApplyOpt = False,
        detailed_exitcode: DetailedOpt = False,
        reason: ReasonOpt = "",
    ) -> int:
        """Change a predicate's rules (cardinality, excludes, historical, allowed values, description)."""
        return run_plan(
            ctx,
            lambda st: st.redefine(
                name, cardinality=cardinality, add_excludes=excludes or [], remove_excludes=no_excludes or [],
                historical=historical, allowed=allowed or None, description=description, retroactive=retroactive,
                reason=reason,
            ),
            as_of=as_of, plan_out=plan_out, apply=apply, detailed_exitcode=detailed_exitcode,
        )

    @app.command(rich_help_panel="Governance")
    def merge(
        ctx: typer.Context,
        name: Annotated[str, typer.Argument(metavar="NAME", help="The predicate that will read as INTO.")],
        into: Annotated[str, typer.Argument(metavar="INTO", help="The predicate both histories fold under.")],
        as_of: AsOfOpt = None,
        plan_out: PlanOutOpt = None,
        apply: ApplyOpt = False,
        detailed_exitcode: DetailedOpt = False,
        reason: ReasonOpt = "",
    ) -> int:
        """Read NAME as INTO: both histories fold as one pair under INTO's rules."""
        return run_plan(ctx, lambda st: st.merge(name, into, reason=reason),
                        as_of=as_of, plan_out=plan_out, apply=apply, detailed_exitcode=detailed_exitcode)

    @app.command(rich_help_panel="Governance")
    def split(
        ctx: typer.Context,
        name: Annotated[str, typer.Argument(metavar="NAME", help="A merged predicate to make its own again.")],
        as_of: AsOfOpt = None,
        plan_out: PlanOutOpt = None,
        apply: ApplyOpt = False,
        detailed_exitcode: DetailedOpt = False,
        reason: ReasonOpt = "",
    ) -> int:
        """Undo a merge: NAME is its own predicate again and its events fold apart."""
        return run_plan(ctx, lambda st: st.split(name, reason=reason),
                        as_of=as_of, plan_out=plan_out, apply=apply, detailed_exitcode=detailed_exitcode)

    @app.command(rich_help_panel="Governance")
    def define(
        ctx: typer.Context,
        name: Annotated[str, typer.Argument(metavar="NAME", help="The new predicate, in snake_case.")],
        cardinality: Annotated[str, typer.Option("--cardinality", metavar="single|multi")],
        value_type: Annotated[
            str, typer.Option("--type", metavar="T", help="string, number, boolean, enum, date or ref.")
        ],
        allowed: Annotated[
            Optional[List[str]], typer.Option("--allowed", metavar="V", help="An enum's allowed value. Repeatable.")
        ] = None,
        description: Annotated[str, typer.Option("--description", metavar="TEXT")] = "",
        excludes: Annotated[
            Optional[List[str]], typer.Option("--excludes", metavar="P", help="A predicate it withdraws values from.")
        ] = None,
        historical: Annotated[bool, typer.Option("--historical", help="Things that happened.")] = False,
        as_of: AsOfOpt = None,
        plan_out: PlanOutOpt = None,
        apply: ApplyOpt = False,
        detailed_exitcode: DetailedOpt = False,
        reason: ReasonOpt = "",
    ) -> int:
        """Declare a new predicate."""
        return run_plan(
            ctx,
            lambda st: st.define(
                name, cardinality=cardinality, value_type=value_type, allowed=allowed or [],
                description=description, excludes=excludes or [], historical=historical, reason=reason,
            ),
            as_of=as_of, plan_out=plan_out, apply=apply, detailed_exitcode=detailed_exitcode,
        )

    @app.command(rich_help_panel="Governance")
    def promote(
        ctx: typer.Context,
        predicate: Annotated[str, typer.Argument(metavar="PREDICATE", help="The typed predicate the notes become.")],
        note: Annotated[
            Optional[List[str]],
            typer.Option("--note", metavar="EVENT_ID=VALUE", help="A note event and its typed value. Repeatable."),
        ] = None,
        match: Annotated[
            Optional[str],
            typer.Option("--match", metavar="REGEX",
                         help="Notes matching REGEX; the group named 'value' (or the first group) is the value."),
        ] = None,
        subject: Annotated[Optional[str], typer.Option("--subject", metavar="S", help="Only this subject's notes.")] = None,
        as_of: AsOfOpt = None,
        plan_out: PlanOutOpt = None,
        apply: ApplyOpt = False,
        detailed_exitcode: DetailedOpt = False,
        reason: ReasonOpt = "",
    ) -> int:
        """File notes under a typed predicate, each at the note's own instant."""
        notes = _split_pairs(note, "--note") if note else None
        return run_plan(
            ctx, lambda st: st.promote(predicate, notes=notes, match=match, subject=subject, reason=reason),
            as_of=as_of, plan_out=plan_out, apply=apply, detailed_exitcode=detailed_exitcode,
        )

    @app.command("apply", rich_help_panel="Governance")
    def apply_file(
        ctx: typer.Context,
        plan_file: Annotated[Path, typer.Argument(metavar="PLAN_FILE", help="A plan written with --plan-out.")],
    ) -> None:
        """Apply exactly the events of a saved plan; a stale or altered plan is refused."""
        from . import governance
        from .plans import read_plan

        state = _state(ctx)
        plan = read_plan(plan_file)
        s = state.session(create=False)
        state.output.emit(governance.apply(s.memory, plan, s.operator), render_apply)

    @app.command(rich_help_panel="Governance")
    def revert(
        ctx: typer.Context,
        plan_id: Annotated[str, typer.Argument(metavar="PLAN_ID", help="An applied plan (see `registry log`).")],
        as_of: AsOfOpt = None,
        plan_out: PlanOutOpt = None,
        apply: ApplyOpt = False,
        detailed_exitcode: DetailedOpt = False,
        reason: ReasonOpt = "",
    ) -> int:
        """Preview (and apply) the plan that withdraws an applied one, as if it had never been applied."""
        from .governance import revert as revert_plan

        return run_plan(ctx, lambda st: revert_plan(st, plan_id.strip(), reason=reason),
                        as_of=as_of, plan_out=plan_out, apply=apply, detailed_exitcode=detailed_exitcode)


def register_registry_load(registry_app: typer.Typer) -> None:
    """Add ``registry load`` to the ``registry`` sub-app."""

    @registry_app.command("load")
    def registry_load(
        ctx: typer.Context,
        name_or_path: Annotated[
            str, typer.Argument(metavar="NAME_OR_PATH", help="A starter (coding, support, ...) or a registry file.")
        ],
        as_of: AsOfOpt = None,
        plan_out: PlanOutOpt = None,
        apply: ApplyOpt = False,
        detailed_exitcode: DetailedOpt = False,
        reason: ReasonOpt = "",
    ) -> int:
        """Preview (and apply) declaring what a registry file changes in this collection's registry."""
        from recall_engine.registry_files import load_starter

        from .registry_sync import combine, plan_declarations

        rf = load_starter(name_or_path)

        def build(st: Any) -> Any:
            definitions, notes = combine([rf])
            for n in notes:
                _state(ctx).output.message(n, style="dim")
            records = plan_declarations(st.memory.timeline(), definitions, st.operator)
            return st.registry_records(records, f"load registry {rf.name}", reason=reason, definitions=definitions)

        return run_plan(ctx, build, as_of=as_of, plan_out=plan_out, apply=apply, detailed_exitcode=detailed_exitcode)
