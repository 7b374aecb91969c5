"""Review-queue commands: conflicts, the vocabulary inbox, notes (docs/review-queues.md).

- ``conflicts list [--subject S]``, ``conflicts confirm ID --keep PREDICATE``,
  ``conflicts exclude ID [--by PREDICATE]``, ``conflicts dismiss ID [--reason TEXT]``;
- ``vocab list [--all]``, ``vocab suggest [--threshold X]``, ``vocab merge ID [--into NAME]``,
  ``vocab never ID | A B``, ``vocab split NAME``;
- ``notes list [--subject S] [--match REGEX]``, ``notes clusters``,
  ``notes promote PREDICATE (--cluster ID | --note ID=VALUE... | --match REGEX) [--define ...]``.

Every decision that changes answers is a plan (the ``staging`` flags); dismiss and
never-merge only append a ``review_decision`` and change no answer. The rules live in
``conflicts``, ``vocab`` and ``notes``; this module reads options and renders.
"""

from __future__ import annotations

from typing import Annotated

import typer

from ..options import Build, CommandGroup, Match, Notes, Reason, Subject, staging, state
from ..render.queues import (
    render_conflicts,
    render_dismissed,
    render_inbox,
    render_never,
    render_note_clusters,
    render_notes,
    render_suggest,
    render_undismissed,
)

Threshold = Annotated[
    float | None,
    typer.Option(
        "--threshold",
        metavar="X",
        help="Similarity from 0 to 1 (default: the engine's); ids found at one threshold are found again at it.",
    ),
]


def register(app: typer.Typer) -> None:
    """Add the ``conflicts``, ``vocab`` and ``notes`` sub-apps to the root app."""
    conflicts_app = typer.Typer(
        help="Review conflicts: one value held under two predicates.", no_args_is_help=True, cls=CommandGroup
    )
    vocab_app = typer.Typer(
        help="Review the open vocabulary: invented names and near-duplicates.", no_args_is_help=True, cls=CommandGroup
    )
    notes_app = typer.Typer(
        help="Review notes: list, cluster, promote into predicates.", no_args_is_help=True, cls=CommandGroup
    )
    app.add_typer(conflicts_app, name="conflicts", rich_help_panel="Review queues")
    app.add_typer(vocab_app, name="vocab", rich_help_panel="Review queues")
    app.add_typer(notes_app, name="notes", rich_help_panel="Review queues")

    # --- conflicts ---

    @conflicts_app.command("list")
    def conflicts_list(
        ctx: typer.Context,
        subject: Subject = None,
        all_: Annotated[bool, typer.Option("--all", help="Show dismissed conflicts too.")] = False,
    ) -> None:
        """Every subject holding one value under two or more predicates now, most recent first."""
        from ...conflicts import find_conflicts

        st = state(ctx)
        m = st.session(create=False).memory
        st.output.emit(find_conflicts(m, subject, include_dismissed=all_).to_json(), render_conflicts)

    @conflicts_app.command("confirm")
    @staging
    def conflicts_confirm(
        ctx: typer.Context,
        ident: Annotated[str, typer.Argument(metavar="ID", help="A conflict id (c-...) from `conflicts list`.")],
        keep: Annotated[str, typer.Option("--keep", metavar="PREDICATE", help="The predicate that is right.")],
        reason: Reason = "",
    ) -> Build:
        """Keep one predicate: an operator statement whose replaces withdraws the others."""
        from ...conflicts import confirm

        return lambda st: confirm(st, ident, keep, reason)

    @conflicts_app.command("exclude")
    @staging
    def conflicts_exclude(
        ctx: typer.Context,
        ident: Annotated[str, typer.Argument(metavar="ID", help="A conflict id (c-...) or a group id (g-...).")],
        by: Annotated[
            str | None,
            typer.Option(
                "--by", metavar="PREDICATE", help="Only this predicate excludes the other (default: both ways)."
            ),
        ] = None,
        reason: Reason = "",
    ) -> Build:
        """Add the exclusion between the predicates (a redefine; it covers every subject and the old log)."""
        from ...conflicts import exclude_plan, lookup

        return lambda st: exclude_plan(st, lookup(st.memory, ident)[0], by=by, reason=reason)

    @conflicts_app.command("dismiss")
    def conflicts_dismiss(
        ctx: typer.Context,
        ident: Annotated[str, typer.Argument(metavar="ID", help="A conflict id (c-...) or a group id (g-...).")],
        reason: Annotated[str, typer.Option("--reason", metavar="TEXT", help="Why it is not a conflict.")] = "",
    ) -> None:
        """Not a conflict: hide it until either belief changes (a review_decision event)."""
        from ...conflicts import dismiss, lookup

        st = state(ctx)
        s = st.session(create=False)
        found, _ = lookup(s.memory, ident)
        events = dismiss(s.memory, found, s.operator, reason)
        data = {"dismissed": ident.strip(), "conflicts": [c.id for c in found], "events": events}
        st.output.emit(data, render_dismissed)

    @conflicts_app.command("undismiss")
    def conflicts_undismiss(
        ctx: typer.Context,
        ident: Annotated[str, typer.Argument(metavar="ID", help="A dismissed conflict id (c-...).")],
        reason: Annotated[str, typer.Option("--reason", metavar="TEXT", help="Why it is shown again.")] = "",
    ) -> None:
        """Show a dismissed conflict again (a review_decision event)."""
        from ...conflicts import undismiss

        st = state(ctx)
        s = st.session(create=False)
        events = undismiss(s.memory, ident, s.operator, reason)
        st.output.emit({"undismissed": ident.strip(), "events": events}, render_undismissed)

    # --- vocab ---

    @vocab_app.command("list")
    def vocab_list(
        ctx: typer.Context,
        all_: Annotated[bool, typer.Option("--all", help="Include names an operator already reviewed.")] = False,
    ) -> None:
        """Names agents defined by first use, and names matched automatically into another predicate."""
        from ...vocab import inbox

        st = state(ctx)
        m = st.session(create=False).memory
        data = {"predicates": [e.to_json() for e in inbox(m, include_reviewed=all_)]}
        st.output.emit(data, render_inbox)

    @vocab_app.command("suggest")
    def vocab_suggest(ctx: typer.Context, threshold: Threshold = None) -> None:
        """Clusters of near-duplicate predicates, each with a suggested merge and direction."""
        from ...vocab import effective_threshold, suggest

        st = state(ctx)
        m = st.session(create=False).memory
        thr = effective_threshold(m, threshold)
        data = {"threshold": thr, "clusters": [c.to_json() for c in suggest(m, thr)]}
        st.output.emit(data, render_suggest)

    @vocab_app.command("merge")
    @staging
    def vocab_merge(
        ctx: typer.Context,
        ident: Annotated[str, typer.Argument(metavar="ID", help="A suggestion id (v-...) from `vocab suggest`.")],
        into: Annotated[
            str | None,
            typer.Option("--into", metavar="NAME", help="Merge into this name instead of the suggested one."),
        ] = None,
        reason: Reason = "",
        threshold: Threshold = None,
    ) -> Build:
        """Stage a suggestion's merge as a plan (preview, then --apply)."""
        from ...vocab import find_cluster, merge_plan

        return lambda st: merge_plan(st, find_cluster(st.memory, ident, threshold), into, reason)

    @vocab_app.command("never")
    def vocab_never(
        ctx: typer.Context,
        target: Annotated[str, typer.Argument(metavar="ID_OR_NAME", help="A suggestion id (v-...) or a predicate.")],
        other: Annotated[str | None, typer.Argument(metavar="OTHER", help="The other predicate of the pair.")] = None,
        reason: Annotated[str, typer.Option("--reason", metavar="TEXT", help="Why they differ.")] = "",
        threshold: Threshold = None,
    ) -> None:
        """Never suggest merging these names again (a review_decision event)."""
        from ...vocab import never, resolve_pairs

        st = state(ctx)
        s = st.session(create=False)
        pairs = resolve_pairs(s.memory, target, other, threshold)
        events = never(s.memory, pairs, s.operator, reason)
        st.output.emit({"never": [list(p) for p in pairs], "events": events}, render_never)

    @vocab_app.command("split")
    @staging
    def vocab_split(
        ctx: typer.Context,
        name: Annotated[str, typer.Argument(metavar="NAME", help="A name merged (automatically or not) into another.")],
        reason: Reason = "",
    ) -> Build:
        """Undo a wrong match: NAME is its own predicate again (a previewed split plan)."""
        return lambda st: st.split(name, reason=reason)

    # --- notes ---

    @notes_app.command("list")
    def notes_list(
        ctx: typer.Context,
        subject: Subject = None,
        match: Annotated[
            str | None,
            typer.Option("--match", metavar="REGEX", help="Only notes matching REGEX (case-insensitive)."),
        ] = None,
        limit: Annotated[int | None, typer.Option("--limit", metavar="N", help="At most N notes.")] = None,
    ) -> None:
        """Notes held now (not promoted), most recent first."""
        from ...notes import list_notes

        st = state(ctx)
        m = st.session(create=False).memory
        notes = list_notes(m, subject, match, limit=limit)
        st.output.emit({"notes": [b.to_json() for b in notes]}, render_notes)

    @notes_app.command("clusters")
    def notes_clusters(
        ctx: typer.Context,
        subject: Subject = None,
    ) -> None:
        """Notes that look like one kind of fact, each with a predicate and a value per note."""
        from ...notes import note_clusters

        st = state(ctx)
        m = st.session(create=False).memory
        st.output.emit({"clusters": [c.to_json() for c in note_clusters(m, subject)]}, render_note_clusters)

    @notes_app.command("promote")
    @staging
    def notes_promote(
        ctx: typer.Context,
        predicate: Annotated[str, typer.Argument(metavar="PREDICATE", help="The typed predicate the notes become.")],
        cluster: Annotated[
            str | None, typer.Option("--cluster", metavar="ID", help="A cluster (n-...) and its per-note values.")
        ] = None,
        note: Notes = None,
        match: Match = None,
        subject: Annotated[
            str | None, typer.Option("--subject", metavar="S", help="With --match: one subject.")
        ] = None,
        define: Annotated[bool, typer.Option("--define", help="Declare PREDICATE in the same plan.")] = False,
        cardinality: Annotated[str, typer.Option("--cardinality", metavar="single|multi")] = "single",
        value_type: Annotated[
            str, typer.Option("--type", metavar="T", help="With --define: the value type.")
        ] = "string",
        description: Annotated[str, typer.Option("--description", metavar="TEXT")] = "",
        reason: Reason = "",
    ) -> Build:
        """One promote plan for a chosen predicate (existing, or defined in the same plan)."""
        from recall_engine.registry import Definition

        from ...inputs import parse_note_values
        from ...notes import promote_plan

        notes = parse_note_values(note)
        # the service normalises the new name ("Shell Used" -> shell_used), for the TUI too
        d = Definition(predicate, cardinality, value_type, description) if define else None
        return lambda st: promote_plan(
            st, predicate, cluster=cluster, notes=notes, match=match, subject=subject, define=d, reason=reason
        )
