"""Review-queue commands of `recall-admin`: conflicts, the vocabulary inbox, notes.

``register(app)`` adds three sub-apps:

- ``conflicts list [--subject S]``, ``conflicts confirm ID --keep PREDICATE``,
  ``conflicts exclude ID [--by PREDICATE]``, ``conflicts dismiss ID [--reason TEXT]``;
- ``vocab list [--all]``, ``vocab suggest [--threshold X]``, ``vocab merge ID [--into NAME]``,
  ``vocab never ID | A B``, ``vocab split NAME``;
- ``notes list [--subject S] [--match REGEX]``, ``notes clusters``,
  ``notes promote PREDICATE (--cluster ID | --note ID=VALUE... | --match REGEX) [--define ...]``.

Every decision that changes answers is a plan and goes through
``cli_governance.run_plan`` (no flag: preview; ``--as-of``, ``--plan-out``, ``--apply``,
``--detailed-exitcode``). Dismiss and never-merge decisions only append a
``review_decision`` and change no answer. The rules live in ``conflicts``, ``vocab``
and ``notes``; this module reads options and renders.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, List, Optional

import typer
from rich.console import Console
from rich.text import Text

from . import output as out

try:
    from typing import Annotated
except ImportError:  # pragma: no cover
    from typing_extensions import Annotated

AsOfOpt = Annotated[
    Optional[str],
    typer.Option("--as-of", metavar="T", help="Also compare the answers at this instant (RFC3339 or a day)."),
]
PlanOutOpt = Annotated[
    Optional[Path], typer.Option("--plan-out", metavar="FILE", help="Write the plan as JSON, for `apply FILE`.")
]
ApplyOpt = Annotated[bool, typer.Option("--apply", help="Apply the plan right after previewing it.")]
DetailedOpt = Annotated[
    bool, typer.Option("--detailed-exitcode", help="Exit 0 when the plan changes no answer, 2 when it does.")
]
ReasonOpt = Annotated[str, typer.Option("--reason", metavar="TEXT", help="Why: recorded with the decision.")]


def _state(ctx: typer.Context) -> Any:
    from .cli import _state as state_of  # cli imports this module; import late

    return state_of(ctx)


def _run_plan(ctx: typer.Context, build: Any, **flags: Any) -> int:
    from .cli_governance import run_plan

    return run_plan(ctx, build, **flags)


# --- renderers -------------------------------------------------------------------------


def render_conflicts(con: Console, data: dict[str, Any]) -> None:
    conflicts = data["conflicts"]
    if not conflicts:
        extra = f" ({data['dismissed']} dismissed)" if data.get("dismissed") else ""
        con.print(Text(f"No conflicts: no subject holds one value under two predicates{extra}.", style="dim"))
        return
    if data.get("groups"):
        t = out.table("group", "predicates", "subjects", "latest", "settle with", title="Groups (one decision each)")
        for g in data["groups"]:
            t.add_row(out.txt(g["id"]), out.txt(", ".join(g["predicates"])), out.txt(g["count"]),
                      out.txt(g["latest"]), out.txt(g["settle"]["exclude"], "dim"))
        con.print(t)
    t = out.table("id", "subject", "value", "held under", "latest", title="Conflicts (most recent first)")
    for c in conflicts:
        held = Text()
        for i, h in enumerate(c["held"]):
            if i:
                held.append("; ")
            held.append(h["predicate"], style="magenta")
            held.append(f" since {h['observed_at'][:10]} ({h['source']})", style="dim")
        if c.get("dismissed"):
            held.append(" [dismissed]", style="yellow")
        t.add_row(out.txt(c["id"]), out.txt(c["subject"]), out.val(c["value"]), held, out.txt(c["latest"]))
    con.print(t)
    shown = sum(1 for c in conflicts if c.get("dismissed"))
    if data.get("dismissed"):
        con.print(Text(f"{data['dismissed']} dismissed conflict(s) " + ("marked [dismissed]." if shown else "hidden."),
                       style="dim"))
    con.print(Text("Decide with: conflicts confirm ID --keep PREDICATE | conflicts exclude ID | "
                   "conflicts dismiss ID --reason TEXT", style="dim"))


def render_dismissed(con: Console, data: dict[str, Any]) -> None:
    n = len(data.get("conflicts", []))
    con.print(Text(f"Dismissed {data['dismissed']} ({n} conflict(s)); it stays away until either belief changes.",
                   style="bold green"))


def render_inbox(con: Console, data: dict[str, Any]) -> None:
    items = data["predicates"]
    if not items:
        con.print(Text("The vocabulary inbox is empty: no name defined or matched by agents awaits review.",
                       style="dim"))
        return
    t = out.table("name", "origin", "into / shape", "score", "at", "events", "first write", "status")
    for p in items:
        shape = p.get("into") or f"{p.get('cardinality', '?')} {p.get('value_type', '')}".strip()
        cb = p.get("caused_by")
        first = f"{cb['subject']}: {cb['value']} ({cb['observed_at'][:10]})" if cb else "—"
        score = f"{p['score']:.2f}" if p.get("score") is not None else "—"
        t.add_row(out.txt(p["name"]), out.txt(p["origin"]), out.txt(shape), out.txt(score), out.txt(p["at"]),
                  out.txt(p["events"]), out.txt(first), out.txt(p["status"]))
    con.print(t)


def render_suggest(con: Console, data: dict[str, Any]) -> None:
    clusters = data["clusters"]
    if not clusters:
        con.print(Text(f"No near-duplicate predicates at threshold {data['threshold']}.", style="dim"))
        return
    t = out.table("id", "names", "score", "suggestion", "why", "stage with")
    for c in clusters:
        s = c["suggestion"]
        t.add_row(out.txt(c["id"]), out.txt(", ".join(c["names"])), out.txt(f"{c['score']:.2f}"),
                  out.txt(f"merge {', '.join(s['merge'])} into {s['into']}"), out.txt(s["reason"]),
                  out.txt(s["stage"], "dim"))
    con.print(t)
    con.print(Text("Not the same thing? vocab never ID keeps a pair from coming back.", style="dim"))


def render_never(con: Console, data: dict[str, Any]) -> None:
    pairs = ", ".join(" / ".join(p) for p in data["never"])
    con.print(Text(f"Never merge: {pairs}" + ("" if data["events"] else " (already recorded)"), style="bold green"))


def render_notes(con: Console, data: dict[str, Any]) -> None:
    notes = data["notes"]
    if not notes:
        con.print(Text("No notes.", style="dim"))
        return
    t = out.table("event", "subject", "note", "at", "source")
    for n in notes:
        t.add_row(out.txt(n["event_id"]), out.txt(n["subject"]), out.val(n["value"]), out.txt(n["observed_at"]),
                  out.txt(n["source"]))
    con.print(t)


def render_note_clusters(con: Console, data: dict[str, Any]) -> None:
    clusters = data["clusters"]
    if not clusters:
        con.print(Text("No notes look alike yet.", style="dim"))
        return
    for c in clusters:
        s = c["suggestion"]
        head = Text.assemble((c["id"], "bold"), f"  {c['size']} note(s) about ", (", ".join(c["about"]), "cyan"),
                             "  → ", (s["predicate"], "magenta"), ("" if s["existing"] else " (new)", "yellow"))
        con.print(head)
        t = out.table("event", "subject", "note", "value")
        for n in c["notes"]:
            v = Text(f"→ {n['value']}", style="green") if n["ok"] else Text(f"stays a note: {n['error']}", style="yellow")
            t.add_row(out.txt(n["event_id"]), out.txt(n["subject"]), out.val(n["note"]), v)
        con.print(t)
        if s["regex"]:
            con.print(Text(f"  regex: {s['regex']}", style="dim"))
        con.print(Text(f"  stage: {s['command']}", style="dim"))


# --- commands -----------------------------------------------------------------------------


def register(app: typer.Typer) -> None:
    """Add the ``conflicts``, ``vocab`` and ``notes`` sub-apps to the root app."""
    conflicts_app = typer.Typer(help="Review conflicts: one value held under two predicates.", no_args_is_help=True)
    vocab_app = typer.Typer(help="Review the open vocabulary: invented names and near-duplicates.",
                            no_args_is_help=True)
    notes_app = typer.Typer(help="Review notes: list, cluster, promote into predicates.", no_args_is_help=True)
    app.add_typer(conflicts_app, name="conflicts", rich_help_panel="Review queues")
    app.add_typer(vocab_app, name="vocab", rich_help_panel="Review queues")
    app.add_typer(notes_app, name="notes", rich_help_panel="Review queues")

    # --- conflicts ---

    @conflicts_app.command("list")
    def conflicts_list(
        ctx: typer.Context,
        subject: Annotated[Optional[str], typer.Option("--subject", metavar="S", help="Only this subject.")] = None,
        all_: Annotated[bool, typer.Option("--all", help="Show dismissed conflicts too.")] = False,
    ) -> None:
        """Every subject holding one value under two or more predicates now, most recent first."""
        from .conflicts import find_conflicts

        state = _state(ctx)
        m = state.session(create=False).memory
        state.output.emit(find_conflicts(m, subject, include_dismissed=all_).to_json(), render_conflicts)

    @conflicts_app.command("confirm")
    def conflicts_confirm(
        ctx: typer.Context,
        ident: Annotated[str, typer.Argument(metavar="ID", help="A conflict id (c-...) from `conflicts list`.")],
        keep: Annotated[str, typer.Option("--keep", metavar="PREDICATE", help="The predicate that is right.")],
        as_of: AsOfOpt = None,
        plan_out: PlanOutOpt = None,
        apply: ApplyOpt = False,
        detailed_exitcode: DetailedOpt = False,
        reason: ReasonOpt = "",
    ) -> int:
        """Keep one predicate: an operator statement whose replaces withdraws the others."""
        from recall_engine.errors import PlanError

        from .conflicts import confirm_plan, lookup

        def build(st: Any) -> Any:
            found, group = lookup(st.memory, ident)
            if group is not None and len(found) > 1:
                raise PlanError(f"{ident} is a group of {len(found)} conflicts: confirm takes one conflict id (c-...)")
            return confirm_plan(st, found[0], keep, reason=reason)

        return _run_plan(ctx, build, as_of=as_of, plan_out=plan_out, apply=apply, detailed_exitcode=detailed_exitcode)

    @conflicts_app.command("exclude")
    def conflicts_exclude(
        ctx: typer.Context,
        ident: Annotated[str, typer.Argument(metavar="ID", help="A conflict id (c-...) or a group id (g-...).")],
        by: Annotated[
            Optional[str],
            typer.Option("--by", metavar="PREDICATE", help="Only this predicate excludes the other (default: both ways)."),
        ] = None,
        as_of: AsOfOpt = None,
        plan_out: PlanOutOpt = None,
        apply: ApplyOpt = False,
        detailed_exitcode: DetailedOpt = False,
        reason: ReasonOpt = "",
    ) -> int:
        """Add the exclusion between the predicates (a retroactive redefine, every subject)."""
        from .conflicts import exclude_plan, lookup

        def build(st: Any) -> Any:
            found, _ = lookup(st.memory, ident)
            return exclude_plan(st, found, by=by, reason=reason)

        return _run_plan(ctx, build, as_of=as_of, plan_out=plan_out, apply=apply, detailed_exitcode=detailed_exitcode)

    @conflicts_app.command("dismiss")
    def conflicts_dismiss(
        ctx: typer.Context,
        ident: Annotated[str, typer.Argument(metavar="ID", help="A conflict id (c-...) or a group id (g-...).")],
        reason: Annotated[str, typer.Option("--reason", metavar="TEXT", help="Why it is not a conflict.")] = "",
    ) -> None:
        """Not a conflict: hide it until either belief changes (a review_decision event)."""
        from .conflicts import dismiss, lookup

        state = _state(ctx)
        s = state.session(create=False)
        found, _ = lookup(s.memory, ident)
        events = dismiss(s.memory, found, s.operator, reason)
        data = {"dismissed": ident.strip(), "conflicts": [c.id for c in found], "events": events}
        state.output.emit(data, render_dismissed)

    @conflicts_app.command("undismiss")
    def conflicts_undismiss(
        ctx: typer.Context,
        ident: Annotated[str, typer.Argument(metavar="ID", help="A dismissed conflict id (c-...).")],
        reason: Annotated[str, typer.Option("--reason", metavar="TEXT", help="Why it is shown again.")] = "",
    ) -> None:
        """Show a dismissed conflict again (a review_decision event)."""
        from .conflicts import undismiss

        state = _state(ctx)
        s = state.session(create=False)
        events = undismiss(s.memory, ident, s.operator, reason)
        state.output.emit({"undismissed": ident.strip(), "events": events},
                          lambda con, d: con.print(f"Conflict {d['undismissed']} is shown again."))

    # --- vocab ---

    @vocab_app.command("list")
    def vocab_list(
        ctx: typer.Context,
        all_: Annotated[bool, typer.Option("--all", help="Include names an operator already reviewed.")] = False,
    ) -> None:
        """Names agents defined by first use, and names matched automatically into another predicate."""
        from .vocab import inbox

        state = _state(ctx)
        m = state.session(create=False).memory
        data = {"predicates": [e.to_json() for e in inbox(m, include_reviewed=all_)]}
        state.output.emit(data, render_inbox)

    @vocab_app.command("suggest")
    def vocab_suggest(
        ctx: typer.Context,
        threshold: Annotated[
            Optional[float], typer.Option("--threshold", metavar="X", help="Similarity from 0 to 1 (default: the engine's).")
        ] = None,
    ) -> None:
        """Clusters of near-duplicate predicates, each with a suggested merge and direction."""
        from .vocab import suggest

        state = _state(ctx)
        m = state.session(create=False).memory
        thr = m.match_threshold if threshold is None else threshold
        data = {"threshold": thr, "clusters": [c.to_json() for c in suggest(m, thr)]}
        state.output.emit(data, render_suggest)

    @vocab_app.command("merge")
    def vocab_merge(
        ctx: typer.Context,
        ident: Annotated[str, typer.Argument(metavar="ID", help="A suggestion id (v-...) from `vocab suggest`.")],
        into: Annotated[
            Optional[str], typer.Option("--into", metavar="NAME", help="Merge into this name instead of the suggested one.")
        ] = None,
        as_of: AsOfOpt = None,
        plan_out: PlanOutOpt = None,
        apply: ApplyOpt = False,
        detailed_exitcode: DetailedOpt = False,
        reason: ReasonOpt = "",
    ) -> int:
        """Stage a suggestion's merge as a plan (preview, then --apply)."""
        from .vocab import find_cluster, merge_plan

        return _run_plan(ctx, lambda st: merge_plan(st, find_cluster(st.memory, ident), into, reason),
                         as_of=as_of, plan_out=plan_out, apply=apply, detailed_exitcode=detailed_exitcode)

    @vocab_app.command("never")
    def vocab_never(
        ctx: typer.Context,
        target: Annotated[str, typer.Argument(metavar="ID_OR_NAME", help="A suggestion id (v-...) or a predicate.")],
        other: Annotated[Optional[str], typer.Argument(metavar="[OTHER]", help="The other predicate of the pair.")] = None,
        reason: Annotated[str, typer.Option("--reason", metavar="TEXT", help="Why they differ.")] = "",
    ) -> None:
        """Never suggest merging these names again (a review_decision event)."""
        from .vocab import never, resolve_pairs

        state = _state(ctx)
        s = state.session(create=False)
        pairs = resolve_pairs(s.memory, target, other)
        events = never(s.memory, pairs, s.operator, reason)
        state.output.emit({"never": [list(p) for p in pairs], "events": events}, render_never)

    @vocab_app.command("split")
    def vocab_split(
        ctx: typer.Context,
        name: Annotated[str, typer.Argument(metavar="NAME", help="A name merged (automatically or not) into another.")],
        as_of: AsOfOpt = None,
        plan_out: PlanOutOpt = None,
        apply: ApplyOpt = False,
        detailed_exitcode: DetailedOpt = False,
        reason: ReasonOpt = "",
    ) -> int:
        """Undo a wrong match: NAME is its own predicate again (a previewed split plan)."""
        return _run_plan(ctx, lambda st: st.split(name, reason=reason),
                         as_of=as_of, plan_out=plan_out, apply=apply, detailed_exitcode=detailed_exitcode)

    # --- notes ---

    @notes_app.command("list")
    def notes_list(
        ctx: typer.Context,
        subject: Annotated[Optional[str], typer.Option("--subject", metavar="S", help="Only this subject.")] = None,
        match: Annotated[
            Optional[str], typer.Option("--match", metavar="REGEX", help="Only notes matching REGEX (case-insensitive).")
        ] = None,
        limit: Annotated[Optional[int], typer.Option("--limit", metavar="N", help="At most N notes.")] = None,
    ) -> None:
        """Notes held now (not promoted), most recent first."""
        from .notes import list_notes

        state = _state(ctx)
        m = state.session(create=False).memory
        notes = list_notes(m, subject, match, limit=limit)
        state.output.emit({"notes": [b.to_json() for b in notes]}, render_notes)

    @notes_app.command("clusters")
    def notes_clusters(
        ctx: typer.Context,
        subject: Annotated[Optional[str], typer.Option("--subject", metavar="S", help="Only this subject.")] = None,
    ) -> None:
        """Notes that look like one kind of fact, each with a predicate and a value per note."""
        from .notes import note_clusters

        state = _state(ctx)
        m = state.session(create=False).memory
        state.output.emit({"clusters": [c.to_json() for c in note_clusters(m, subject)]}, render_note_clusters)

    @notes_app.command("promote")
    def notes_promote(
        ctx: typer.Context,
        predicate: Annotated[str, typer.Argument(metavar="PREDICATE", help="The typed predicate the notes become.")],
        cluster: Annotated[
            Optional[str], typer.Option("--cluster", metavar="ID", help="A cluster (n-...) and its per-note values.")
        ] = None,
        note: Annotated[
            Optional[List[str]],
            typer.Option("--note", metavar="EVENT_ID=VALUE", help="A note event and its typed value. Repeatable."),
        ] = None,
        match: Annotated[
            Optional[str],
            typer.Option("--match", metavar="REGEX", help="Notes matching REGEX; group 'value' (or the first) is the value."),
        ] = None,
        subject: Annotated[Optional[str], typer.Option("--subject", metavar="S", help="With --match: one subject.")] = None,
        define: Annotated[bool, typer.Option("--define", help="Declare PREDICATE in the same plan.")] = False,
        cardinality: Annotated[str, typer.Option("--cardinality", metavar="single|multi")] = "single",
        value_type: Annotated[str, typer.Option("--type", metavar="T", help="With --define: the value type.")] = "string",
        description: Annotated[str, typer.Option("--description", metavar="TEXT")] = "",
        as_of: AsOfOpt = None,
        plan_out: PlanOutOpt = None,
        apply: ApplyOpt = False,
        detailed_exitcode: DetailedOpt = False,
        reason: ReasonOpt = "",
    ) -> int:
        """One promote plan for a chosen predicate (existing, or defined in the same plan)."""
        from recall_engine.errors import InvalidInput
        from recall_engine.registry import Definition

        from .notes import promote_plan

        notes: dict[str, str] | None = None
        if note:
            notes = {}
            for item in note:
                k, sep, v = item.partition("=")
                if not sep or not k.strip() or not v.strip():
                    raise InvalidInput(f"--note takes EVENT_ID=VALUE (for example m-3b505d61520c=fish), got {item!r}")
                notes[k.strip()] = v

        def build(st: Any) -> Any:
            d = None
            if define:
                d = Definition(st.memory._name(predicate, st.memory.timeline()), cardinality, value_type, description)
            return promote_plan(st, predicate, cluster=cluster, notes=notes, match=match, subject=subject,
                                define=d, reason=reason)

        return _run_plan(ctx, build, as_of=as_of, plan_out=plan_out, apply=apply, detailed_exitcode=detailed_exitcode)
