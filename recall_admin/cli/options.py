"""What every command shares, written once: the invocation's state (global options and the
session they open), the option types, and the staging flags with the one path every
staging command takes (docs/architecture.md, "A plan").

Staging flags (docs/cli.md, Governance): no flag: preview only, nothing written;
``--as-of T``: also compare answers at T; ``--plan-out FILE``: write the plan as JSON;
``--apply``: apply right after planning; ``--detailed-exitcode``: exit 0 when no answer
changes, 2 when one does.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

from ..defaults import DEFAULT_COLLECTION
from .output import Output

if TYPE_CHECKING:
    from ..session import Session

EXIT_CHANGES = 2  # --detailed-exitcode: the plan changes answers (Terraform's convention)


# --- the state of one invocation ----------------------------------------------------------


@dataclass
class State:
    """The global options of one invocation, and the session they open (lazily)."""

    store_url: str | None = None
    collection: str = DEFAULT_COLLECTION
    operator: str | None = None
    read_only: bool = False
    match_threshold: float | None = None
    output: Output = field(default_factory=Output)
    _session: Session | None = None

    @property
    def json_mode(self) -> bool:
        return self.output.json_mode

    def session(self, *, create: bool = False) -> Session:
        """The invocation's session. Only the commands that create a store say ``create``
        (init, demo, remember, registry load --apply, the imports): every other command
        on a missing store file or collection is ``not_found`` and writes nothing."""
        if self._session is None:
            from ..session import Session

            self._session = Session.open(
                self.store_url,
                self.collection,
                self.operator,
                self.read_only,
                create=create,
                match_threshold=self.match_threshold,
            )
        return self._session

    def close(self) -> None:
        if self._session is not None:
            s, self._session = self._session, None
            s.close()


class CommandGroup(TyperGroup):
    """A command of subcommands (`registry`, `conflicts`, ...). Given none, a person gets
    its help; under --json the usage error envelope, raised before Click draws that help
    (it draws it on stdout while building its own error, ahead of the envelope)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if not args and not ctx.resilient_parsing and state(ctx).json_mode:
            ctx.fail(f"Missing command: one of {', '.join(self.list_commands(ctx))}.")
        return super().parse_args(ctx, args)


def state(ctx: typer.Context) -> State:
    """The invocation's State: the root context's obj, set by ``RecallGroup.main``."""
    root = ctx.find_root()
    if root.obj is None:  # invoked without RecallGroup.main (should not happen)
        root.obj = State()
    return root.obj


# --- option types -------------------------------------------------------------------------

AsOf = Annotated[
    str | None, typer.Option("--as-of", metavar="T", help="RFC3339 time or a day (midnight UTC); default now.")
]
KnownAt = Annotated[
    str | None,
    typer.Option(
        "--known-at",
        metavar="T",
        help="Answer as a read at T did: only what the store had recorded by T (RFC3339 or a day); "
        "--as-of defaults to T.",
    ),
]
CompareAsOf = Annotated[
    str | None,
    typer.Option("--as-of", metavar="T", help="Also compare the answers at this instant (RFC3339 or a day)."),
]
PlanOut = Annotated[
    Path | None, typer.Option("--plan-out", metavar="FILE", help="Write the plan as JSON, for `apply FILE`.")
]
Apply = Annotated[bool, typer.Option("--apply", help="Apply the plan right after previewing it.")]
Detailed = Annotated[
    bool, typer.Option("--detailed-exitcode", help="Exit 0 when the plan changes no answer, 2 when it does.")
]
Reason = Annotated[str, typer.Option("--reason", metavar="TEXT", help="Why: recorded with the change.")]
Subject = Annotated[str | None, typer.Option("--subject", metavar="S", help="Only this subject.")]
Notes = Annotated[
    list[str] | None,
    typer.Option("--note", metavar="EVENT_ID=VALUE", help="A note event and its typed value. Repeatable."),
]
Match = Annotated[
    str | None,
    typer.Option(
        "--match",
        metavar="REGEX",
        help="Notes matching REGEX; the group named 'value' (or the first group) is the value.",
    ),
]


# --- staging: the one path every command that stages a plan takes ---------------------------

Build = Callable[[Any], Any]  # a Stager -> a Plan

_STAGING = [
    inspect.Parameter("as_of", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=CompareAsOf),
    inspect.Parameter("plan_out", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=PlanOut),
    inspect.Parameter("apply", inspect.Parameter.KEYWORD_ONLY, default=False, annotation=Apply),
    inspect.Parameter("detailed_exitcode", inspect.Parameter.KEYWORD_ONLY, default=False, annotation=Detailed),
]


def staging(command: Callable[..., Build]) -> Callable[..., int]:
    """Give a command the staging flags: it returns how to build its plan, and the flags
    decide what happens to it (``run_plan``)."""
    sig = inspect.signature(command, eval_str=True)
    params = [*sig.parameters.values(), *_STAGING]

    @functools.wraps(command)
    def staged(**kw: Any) -> int:
        flags = {p.name: kw.pop(p.name) for p in _STAGING}
        return run_plan(kw["ctx"], command(**kw), **flags)

    # typeshed does not declare a function's __signature__, which inspect (and so Typer) reads
    staged.__signature__ = sig.replace(parameters=params, return_annotation=int)  # type: ignore[attr-defined]
    staged.__annotations__ = {p.name: p.annotation for p in params} | {"return": int}
    return staged


def run_plan(
    ctx: typer.Context,
    build: Build,
    *,
    as_of: str | None = None,
    plan_out: Path | None = None,
    apply: bool = False,
    detailed_exitcode: bool = False,
) -> int:
    """Stage (``build(stager) -> Plan``), preview, then write / apply as the flags ask.

    Returns the exit code: 2 under --detailed-exitcode when the plan changes an answer.
    The JSON ``data`` is ``Preview.to_json()``; with --apply it also holds ``applied``,
    ``events`` and ``position``, as ``apply PLAN_FILE`` returns them.
    """
    from recall_engine.errors import InvalidInput

    from .. import governance
    from ..inputs import instant
    from ..plans import write_plan
    from .progress import PREVIEW_AFTER_SECONDS, Progress
    from .render.plan import render_preview

    st = state(ctx)
    when = instant(as_of, "--as-of")
    if plan_out is not None and str(plan_out) == "-":  # a file named "-" was written
        raise InvalidInput("--plan-out takes a file name, not - (stdout holds the preview); `apply FILE` reads it back")
    s = st.session(create=apply and getattr(build, "creates", False))
    stager = governance.Stager(s.memory, s.collection, s.operator)
    plan = build(stager)
    with Progress(st.output, "Previewing", after_seconds=PREVIEW_AFTER_SECONDS) as progress:
        pv = governance.preview(s.memory, plan, as_of=when, progress=progress.update)
    data = pv.to_json()
    if plan_out is not None:
        write_plan(plan, plan_out)
        st.output.message(
            f"Wrote plan {plan.id} to {plan_out}; apply it with `recall-admin apply {plan_out}`.", style="dim"
        )
    if apply:
        data.update(governance.apply(s.memory, plan, s.operator))
    st.output.emit(data, render_preview)
    if not apply and plan_out is None:
        st.output.message(
            "Preview only: nothing was written. Add --apply to apply it, or --plan-out FILE.", style="dim"
        )
    return EXIT_CHANGES if detailed_exitcode and pv.changes_answers else 0
