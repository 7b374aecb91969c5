"""Memory commands: init, remember, forget, recall, search, history, diff, explain."""

from __future__ import annotations

import functools
from typing import Annotated

import typer

from ..options import AsOf, KnownAt, state
from ..output import renderer

render_beliefs = renderer("memory", "render_beliefs", plain="render_beliefs")
render_diff = renderer("memory", "render_diff")
render_explain = renderer("memory", "render_explain")
render_forget = renderer("memory", "render_forget")
render_history = renderer("memory", "render_history")
render_init = renderer("memory", "render_init")
render_remember = renderer("memory", "render_remember")


def register(app: typer.Typer) -> None:
    @app.command(rich_help_panel="Memory")
    def init(
        ctx: typer.Context,
        registry: Annotated[
            list[str] | None,
            typer.Option(
                "--registry",
                metavar="NAME_OR_PATH",
                help="A starter (coding, support, sales, personal-assistant, voice) or a registry file. Repeatable.",
            ),
        ] = None,
        open_vocabulary: Annotated[
            bool, typer.Option("--open", help="Open the vocabulary: writes may define new predicates.")
        ] = False,
    ) -> None:
        """Create the store and collection if needed and declare the registries' predicates."""
        from recall_engine.registry_files import load_starter

        from ...registry_sync import sync_registry

        st = state(ctx)
        files = [load_starter(r) for r in registry or []]
        s = st.session(create=True)
        result = sync_registry(s.memory, files, s.operator, open_vocabulary=open_vocabulary)
        for note in result.notes:
            st.output.message(note, style="dim")
        data = {
            "store": s.display_url,
            "collection": s.collection,
            "declared": result.declared,
            "opened": result.opened,
            "open_vocabulary": s.memory.timeline().open_vocabulary,
            "registries": [f.name for f in files],
        }
        state(ctx).output.emit(data, render_init)

    @app.command(rich_help_panel="Memory")
    def remember(
        ctx: typer.Context,
        subject: Annotated[str, typer.Argument(metavar="SUBJECT", help="Who or what the statement is about.")],
        predicate: Annotated[
            str, typer.Argument(metavar="PREDICATE", help="A registered predicate (see `registry list`).")
        ],
        value: Annotated[
            str,
            typer.Argument(
                metavar="VALUE", help="Read as the predicate's type: 8000 for a number, true for a boolean."
            ),
        ],
        at: Annotated[str | None, typer.Option("--at", metavar="T", help="When it was stated (default now).")] = None,
        kind: Annotated[str, typer.Option("--kind", help="fact or preference.")] = "fact",
        source: Annotated[
            str, typer.Option("--source", help="user_stated, agent_inferred, tool_result or operator.")
        ] = "user_stated",
        confidence: Annotated[float, typer.Option("--confidence", help="Between 0 and 1.")] = 1.0,
        evidence: Annotated[str, typer.Option("--evidence", metavar="TEXT", help="The words it came from.")] = "",
        evidence_id: Annotated[
            str, typer.Option("--evidence-id", metavar="ID", help="Where those words are kept.")
        ] = "",
        replaces: Annotated[
            list[str] | None,
            typer.Option(
                "--replaces", metavar="PREDICATE=VALUE", help="An earlier belief this statement withdraws. Repeatable."
            ),
        ] = None,
        cardinality: Annotated[
            str | None, typer.Option("--cardinality", help="single or multi, for a predicate this write defines.")
        ] = None,
        description: Annotated[
            str, typer.Option("--description", metavar="TEXT", help="For a predicate this write defines.")
        ] = "",
    ) -> None:
        """Remember one statement."""
        from recall_engine.errors import InvalidInput
        from recall_engine.text import LIMITS, text_problem, utf8_size

        from ...inputs import instant, parse_replaces, typed_value
        from ...views import remember_view

        if description is not None and text_problem(description, "description"):
            # the engine would name the registry event it built for the new predicate
            raise InvalidInput(
                f"--description must be UTF-8 of at most {LIMITS['description']} bytes, got {utf8_size(description)}"
            )
        m = state(ctx).session(create=True).memory
        tl = m.timeline()
        when = instant(at, "--at")
        typed = typed_value(m, predicate, value, tl)
        reps = parse_replaces(m, replaces or [], tl)
        result = m.remember(
            subject,
            predicate,
            typed,
            at=when,
            kind=kind,
            source=source,
            confidence=confidence,
            evidence=evidence,
            evidence_id=evidence_id,
            replaces=reps,
            cardinality=cardinality,
            description=description,
        )
        data = remember_view(result)
        if (cardinality or description) and not any(c["op"] == "define" for c in data["registry_changes"]):
            state(ctx).output.message(
                f"--cardinality and --description were not used: this write defined no predicate ({predicate!r} "
                "is registered, or was read as a registered name); `redefine` changes a predicate's rules",
                style="yellow",
            )
        state(ctx).output.emit(data, render_remember)

    @app.command(rich_help_panel="Memory")
    def forget(
        ctx: typer.Context,
        subject: Annotated[str, typer.Argument(metavar="SUBJECT")],
        predicate: Annotated[str, typer.Argument(metavar="PREDICATE")],
        value: Annotated[str | None, typer.Argument(metavar="VALUE", help="The value to withdraw (or --all).")] = None,
        all_values: Annotated[bool, typer.Option("--all", help="Withdraw every value of the pair.")] = False,
    ) -> None:
        """Withdraw a value (or every value) of a pair; forgetting what is not believed writes nothing."""
        from recall_engine.errors import InvalidInput

        from ...inputs import typed_value

        if (value is None) == (not all_values):
            raise InvalidInput("forget needs exactly one of a VALUE or --all")
        m = state(ctx).session().memory
        typed = typed_value(m, predicate, value) if value is not None else None
        gone = m.forget(subject, predicate, typed, all_values=all_values)
        state(ctx).output.emit({"withdrawn": [b.to_json() for b in gone]}, render_forget)

    @app.command(rich_help_panel="Memory")
    def recall(
        ctx: typer.Context,
        subject: Annotated[str, typer.Argument(metavar="SUBJECT")],
        predicate: Annotated[
            str | None, typer.Argument(metavar="PREDICATE", help="Omit for every pair of the subject.")
        ] = None,
        as_of: AsOf = None,
        known_at: KnownAt = None,
    ) -> None:
        """What is believed about a subject (one pair, or all of them) at an instant."""
        from ...inputs import instant
        from ...views import recall_view

        when, known = instant(as_of, "--as-of"), instant(known_at, "--known-at")
        m = state(ctx).session().memory
        state(ctx).output.emit(recall_view(m, subject, predicate, when, known), render_beliefs)

    @app.command(rich_help_panel="Memory")
    def search(
        ctx: typer.Context,
        text: Annotated[
            str, typer.Argument(metavar="TEXT", help="Words, optionally with a time phrase such as 'two weeks ago'.")
        ],
        as_of: AsOf = None,
        limit: Annotated[int, typer.Option("--limit", metavar="N", help="At most this many beliefs.")] = 10,
        known_at: KnownAt = None,
    ) -> None:
        """Search beliefs by meaning and keywords; each hit answers with what its pair holds."""
        from ...inputs import instant
        from ...views import search_view

        when, known = instant(as_of, "--as-of"), instant(known_at, "--known-at")
        m = state(ctx).session().memory
        state(ctx).output.emit(search_view(m, text, when, limit, known), render_beliefs)

    @app.command(rich_help_panel="Memory")
    def history(
        ctx: typer.Context,
        subject: Annotated[str, typer.Argument(metavar="SUBJECT")],
        predicate: Annotated[str, typer.Argument(metavar="PREDICATE")],
        known_at: Annotated[
            str | None,
            typer.Option("--known-at", metavar="T", help="Only the steps the store had recorded by T."),
        ] = None,
        recorded: Annotated[
            bool, typer.Option("--recorded", help="Show when each step was recorded beside when it was said.")
        ] = False,
    ) -> None:
        """Every event of a pair, oldest first, with what was believed before and after it."""
        from ...inputs import instant
        from ...views import history_view

        known = instant(known_at, "--known-at")
        m = state(ctx).session().memory
        view = history_view(m, subject, predicate, known)
        state(ctx).output.emit(view, functools.partial(render_history, recorded=recorded))

    @app.command(rich_help_panel="Memory")
    def diff(
        ctx: typer.Context,
        from_: Annotated[str | None, typer.Option("--from", metavar="T", help="The earlier instant.")] = None,
        to: Annotated[str | None, typer.Option("--to", metavar="T", help="The later instant (default now).")] = None,
        subject: Annotated[str | None, typer.Option("--subject", metavar="S", help="Only this subject.")] = None,
        as_of: Annotated[
            str | None,
            typer.Option("--as-of", metavar="T", help="One valid instant for both sides (instead of --from/--to)."),
        ] = None,
        known_at: Annotated[
            str | None,
            typer.Option("--known-at", metavar="T", help="Both sides as known at T (recorded by T)."),
        ] = None,
        known_from: Annotated[
            str | None,
            typer.Option("--known-from", metavar="T", help="The earlier side as known at T."),
        ] = None,
        known_to: Annotated[
            str | None,
            typer.Option("--known-to", metavar="T", help="The later side as known at T (default: the whole log)."),
        ] = None,
    ) -> None:
        """What began and stopped being believed between two instants, or between two
        known-at instants for one valid instant (--as-of T --known-from T1 --known-to T2)."""
        from recall_engine.errors import InvalidInput

        from ...inputs import instant
        from ...views import diff_view

        if as_of is not None and (from_ is not None or to is not None):
            raise InvalidInput("diff takes --as-of (one valid instant) or --from/--to, not both")
        if as_of is None and from_ is None:
            raise InvalidInput("diff needs --from T (the earlier instant), or --as-of T with --known-from/--known-to")
        if known_at is not None and (known_from is not None or known_to is not None):
            raise InvalidInput("diff takes --known-at (both sides) or --known-from/--known-to, not both")
        valid = instant(as_of, "--as-of")
        start = valid if valid is not None else instant(from_, "--from")
        end = valid if valid is not None else instant(to, "--to")
        k_from = instant(known_at if known_at is not None else known_from, "--known-from")
        k_to = instant(known_to, "--known-to")
        if valid is not None and k_from is None and k_to is None:
            raise InvalidInput("diff --as-of compares two known-at instants: give --known-from T1 (and --known-to T2)")
        if k_from is not None and k_to is None and known_at is None:
            k_to = state(ctx).session().memory.now()  # --known-from alone: against what a read now answers
        assert start is not None, "--from or --as-of was required above"
        m = state(ctx).session().memory
        view = diff_view(m, start, end, subject, known_from=k_from, known_to=k_to)
        state(ctx).output.emit(view, render_diff)

    @app.command(rich_help_panel="Memory")
    def explain(
        ctx: typer.Context,
        subject: Annotated[str, typer.Argument(metavar="SUBJECT")],
        predicate: Annotated[str, typer.Argument(metavar="PREDICATE")],
        as_of: AsOf = None,
        known_at: KnownAt = None,
    ) -> None:
        """Why a pair answers what it does: its events, the reason for each value, the registry rules.
        With --known-at T: the answer given then, the rule that decided it then, and what changed since."""
        from ...inputs import instant
        from ...views import explain_view

        when, known = instant(as_of, "--as-of"), instant(known_at, "--known-at")
        m = state(ctx).session().memory
        state(ctx).output.emit(explain_view(m, subject, predicate, when, known), render_explain)
