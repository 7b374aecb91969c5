"""Review queues: conflicts, the vocabulary inbox, notes. Each decision stages a plan into the tray
(dismissing a conflict and "never merge" are review decisions: confirmed, then written)."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Label, Static, TabbedContent, TabPane

from recall_admin import conflicts as conflicts_svc
from recall_admin import notes as notes_svc
from recall_admin import vocab as vocab_svc
from recall_engine.registry import CARDINALITIES, Definition
from recall_engine.values import VALUE_TYPES

from .. import format as fmt
from ..actions import bindings
from ..messages import Selection, StagePlan, StoreChanged
from ..screens.confirm import ConfirmScreen
from ..screens.form import Field, FormScreen
from ..services import ServiceCalls
from ..staging import Recipe
from ..widgets.table import ConsoleTable
from ..widgets.view_tabs import ViewTabs
from .tabs import step_tab

NOTES_SHOWN = 500
DISMISSED = "✕"  # marks a dismissed conflict when they are listed


STAGING = {
    "keep",
    "exclude",
    "dismiss",
    "undismiss",
    "merge",
    "split",
    "never",
    "promote",
    "promote_note",
    "promote_match",
}


class Queue(ServiceCalls, Vertical):
    """A review queue: its staging and writing actions are off (shown dimmed) on a read-only store."""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in STAGING and self.app.read_only:
            return None
        return True


def _table(id: str, *columns: str) -> DataTable[Any]:
    t: DataTable[Any] = ConsoleTable(id=id, cursor_type="row")
    for c in columns:
        t.add_column(c)
    return t


def _row(table: DataTable[Any], items: list[Any]) -> Any | None:
    if not items or not (0 <= table.cursor_row < len(items)):
        return None
    return items[table.cursor_row]


class ConflictsView(Queue):
    """One subject holding one value under two or more typed predicates now."""

    BINDINGS = bindings("conflicts")

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.items: list[conflicts_svc.Conflict] = []
        self.listing: conflicts_svc.Listing | None = None
        self.show_dismissed = False  # list dismissed conflicts too (the CLI's `conflicts list --all`)

    def compose(self) -> ComposeResult:
        yield Label("Conflicts: reading…", id="conflicts-title", classes="view-title")
        yield _table("conflicts-table", "subject", "value", "predicates", "latest (UTC day)", "group")
        with VerticalScroll(classes="detail-box"):
            yield Static("", id="conflict-detail")

    def refresh_data(self, sel: Selection | None = None) -> None:
        self.call_service(
            conflicts_svc.find_conflicts,
            self.app.memory,
            include_dismissed=self.show_dismissed,
            then=self._show,
            group="conflicts",
        )

    def _show(self, listing: conflicts_svc.Listing) -> None:
        self.listing, self.items = listing, listing.conflicts
        table = self.query_one("#conflicts-table", DataTable)
        table.clear()
        for c in self.items:
            subject = Text(DISMISSED + " ", style="bold red") + Text(fmt.text(c.subject)) if c.dismissed else c.subject
            table.add_row(
                *fmt.cells(
                    subject, fmt.clip(fmt.values([c.value]), 30), " ≠ ".join(c.predicates), fmt.day(c.latest), c.group
                )
            )
        open_ = sum(1 for c in self.items if not c.dismissed)
        hidden = (
            f"{listing.dismissed} dismissed, listed with {DISMISSED} (t hides them)"
            if self.show_dismissed
            else f"{listing.dismissed} dismissed (t lists them)"
        )
        self.query_one("#conflicts-title", Label).update(
            f"Conflicts — {open_} open in {len({c.group for c in self.items if not c.dismissed})} group(s), {hidden}"
        )
        self._detail()

    def _detail(self) -> None:
        c = self.current
        box = self.query_one("#conflict-detail", Static)
        if c is None:
            box.update(Text("No open conflict.", style="dim"))
            return
        parts: list[Any] = [
            Text(
                f"{fmt.text(c.subject)} holds {fmt.values([c.value])} under {len(c.held)} predicates ({c.id})",
                style="bold",
            )
        ]
        if c.dismissed:
            parts.append(Text(f"{DISMISSED} dismissed: hidden until either belief changes; u shows it again", "red"))
        for b in c.held:
            t = Text(f"  {fmt.text(b.predicate)}", style="magenta")
            t.append(
                f"  since {fmt.instant(b.observed_at)} · {fmt.text(b.source)} · confidence {b.confidence:g}",
                style="dim",
            )
            if b.evidence:
                t.append(f"\n     evidence: {fmt.clip(b.evidence, 100)}")
            parts.append(t)
        group = next((g for g in (self.listing.groups if self.listing else []) if g.id == c.group), None)
        if group is not None:
            parts.append(
                Text(
                    f"group {group.id}: {group.count} subject(s) with {' ≠ '.join(group.predicates)}; "
                    "one exclusion settles all of them",
                    style="dim",
                )
            )
        box.update(Group(*parts))

    @property
    def current(self) -> conflicts_svc.Conflict | None:
        return _row(self.query_one("#conflicts-table", DataTable), self.items)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self._detail()

    def action_keep(self) -> None:
        c = self.current
        if c is None:
            return
        fields = [
            Field(
                "keep",
                f"{fmt.text(c.subject)}: keep which predicate's {fmt.values([c.value])}?",
                "select",
                c.predicates[0],
                tuple((p, p) for p in c.predicates),
            ),
            Field("reason", "reason", placeholder="why, recorded with the statement"),
        ]

        def done(v: dict[str, Any] | None) -> None:
            if not v or not v.get("keep"):
                return
            cid, keep, reason = c.id, v["keep"], v.get("reason", "")

            def build(st: Any) -> Any:
                return conflicts_svc.confirm(st, cid, keep, reason)

            self.post_message(StagePlan(Recipe(f"confirm {c.subject}: keep {keep}", build, "conflicts")))

        self.app.ask(
            FormScreen("Confirm a conflict", fields, note="The kept value is re-stated; the others are withdrawn."),
            done,
        )

    def action_exclude(self) -> None:
        c = self.current
        if c is None:
            return
        gid = c.group
        both = "(both ways)"
        fields = [
            Field(
                "by",
                "which predicate excludes the other",
                "select",
                both,
                ((both, both), *((f"only {p}", p) for p in c.predicates)),
            ),
            Field("reason", "reason", placeholder="why, for the registry log"),
        ]

        def done(v: dict[str, Any] | None) -> None:
            if v is None:
                return
            by = None if v.get("by") in (None, both) else v["by"]
            reason = v.get("reason", "")

            def build(st: Any) -> Any:
                found, _ = conflicts_svc.lookup(st.memory, gid)
                return conflicts_svc.exclude_plan(st, found, by=by, reason=reason)

            self.post_message(
                StagePlan(Recipe(f"exclude {' / '.join(c.predicates)} (group {gid})", build, "conflicts"))
            )

        self.app.ask(
            FormScreen(
                f"Exclude: settle group {gid}",
                fields,
                note=f"One redefine adds the exclusion between {' and '.join(c.predicates)}; it settles every "
                "subject in the group and the old log.",
            ),
            done,
        )

    def action_dismiss(self) -> None:
        c = self.current
        if c is None:
            return
        if c.dismissed:
            self.app.notify(f"{c.id} is already dismissed; u shows it again.", severity="warning", markup=False)
            return

        def done(v: dict[str, Any] | None) -> None:
            if v is None:
                return
            app = self.app
            self.call_service(
                conflicts_svc.dismiss,
                app.memory,
                [c],
                app.operator,
                v.get("reason", ""),
                then=lambda ids: self._dismissed(c, ids),
                group="dismiss",
            )

        note = (
            f"{fmt.text(c.subject)}: {fmt.values([c.value])} under {', '.join(c.predicates)}. A review decision "
            "is written now; the conflict stays hidden until either belief changes."
        )
        self.app.ask(
            FormScreen(
                "Dismiss this conflict?",
                [Field("reason", "reason", placeholder="why it is fine")],
                submit="Dismiss",
                note=note,
            ),
            done,
        )

    def _dismissed(self, c: conflicts_svc.Conflict, ids: list[str]) -> None:
        self.app.notify(f"Dismissed {c.id} ({fmt.text(c.subject)}); review decision {', '.join(ids)}", markup=False)
        self.post_message(StoreChanged("dismiss"))

    def action_show_dismissed(self) -> None:
        """List the dismissed conflicts too (marked), or hide them again."""
        self.show_dismissed = not self.show_dismissed
        self.refresh_data()

    def action_undismiss(self) -> None:
        c = self.current
        if c is None or not c.dismissed:
            self.app.notify(
                "Highlight a dismissed conflict (t lists them, marked " + DISMISSED + "), then press u.",
                severity="warning",
                markup=False,
            )
            return

        def done(v: dict[str, Any] | None) -> None:
            if v is None:
                return
            app = self.app
            self.call_service(
                conflicts_svc.undismiss,
                app.memory,
                c.id,
                app.operator,
                v.get("reason", ""),
                then=lambda ids: self._undismissed(c, ids),
                group="dismiss",
            )

        self.app.ask(
            FormScreen(
                "Show this conflict again?",
                [Field("reason", "reason", placeholder="why it needs a look")],
                submit="Undismiss",
                note=f"{fmt.text(c.subject)}: {fmt.values([c.value])} under {', '.join(c.predicates)}. "
                "A review decision is written now; the conflict is listed as open again.",
            ),
            done,
        )

    def _undismissed(self, c: conflicts_svc.Conflict, ids: list[str]) -> None:
        self.app.notify(
            f"{c.id} ({fmt.text(c.subject)}) is shown again; review decision {', '.join(ids)}", markup=False
        )
        self.post_message(StoreChanged("undismiss"))


class VocabView(Queue):
    """Names agents invented or matched automatically, and near-duplicate clusters."""

    BINDINGS = bindings("vocab")

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.entries: list[vocab_svc.InboxEntry] = []
        self.clusters: list[vocab_svc.Cluster] = []

    def compose(self) -> ComposeResult:
        yield Label("Vocabulary inbox: reading…", id="vocab-title", classes="view-title")
        yield _table("inbox-table", "name", "origin", "into", "score", "status", "events", "first written by")
        yield Label("Near-duplicate suggestions", classes="view-title")
        yield _table("suggest-table", "names", "score", "merge into", "why")
        with VerticalScroll(classes="detail-box"):
            yield Static("", id="suggest-detail")

    def refresh_data(self, sel: Selection | None = None) -> None:
        def load(memory: Any) -> tuple[list[vocab_svc.InboxEntry], list[vocab_svc.Cluster]]:
            return vocab_svc.inbox(memory), vocab_svc.suggest(memory)

        self.call_service(load, self.app.memory, then=self._show, group="vocab")

    def _show(self, data: tuple[list[vocab_svc.InboxEntry], list[vocab_svc.Cluster]]) -> None:
        self.entries, self.clusters = data
        inbox = self.query_one("#inbox-table", DataTable)
        inbox.clear()
        for e in self.entries:
            fw = e.first_write
            by = f"{fw.subject}: {fmt.clip(fmt.values([fw.value]), 24)} ({fw.source})" if fw else "—"  # cells: visible
            inbox.add_row(
                *fmt.cells(
                    e.name,
                    e.origin,
                    e.into or "—",
                    f"{e.score:.2f}" if e.score is not None else "—",
                    e.status,
                    f"{e.events:,}",
                    by,
                )
            )
        sug = self.query_one("#suggest-table", DataTable)
        sug.clear()
        for c in self.clusters:
            sug.add_row(
                *fmt.cells(
                    ", ".join(c.names),
                    f"{c.score:.2f}",
                    c.into,
                    fmt.clip(c.reason + (" · cardinality differs" if c.cardinality_differs else ""), 60),
                )
            )
        self.query_one("#vocab-title", Label).update(
            f"Vocabulary inbox — {len(self.entries)} open name(s) defined or matched by agents"
        )
        self._suggestion()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        if event.data_table.id == "suggest-table":
            self._suggestion()

    def _suggestion(self) -> None:
        """The highlighted suggestion in full: its table row cuts the reason short."""
        c = _row(self.query_one("#suggest-table", DataTable), self.clusters)
        box = self.query_one("#suggest-detail", Static)
        if c is None:
            box.update(Text("No near-duplicate suggestion.", style="dim"))
            return
        t = Text()
        t.append(fmt.text(", ".join(c.names)), style="bold")
        t.append(f"  merge into {fmt.text(c.into)}\n")
        t.append(fmt.text(c.reason))
        if c.cardinality_differs:
            t.append("\ntheir cardinalities differ: the merged history folds under the target's rules", style="yellow")
        for a, b, score in c.pairs:
            t.append(f"\n  {fmt.text(a)} ~ {fmt.text(b)}  {score:.2f}", style="dim")
        t.append("\nm merge · v never merge", style="dim")
        box.update(t)

    def action_merge(self) -> None:
        c = _row(self.query_one("#suggest-table", DataTable), self.clusters)
        if c is None:
            self.app.notify("No near-duplicate suggestion to merge.", severity="warning")
            return
        fields = [
            Field("into", f"merge {', '.join(c.names)} into", "select", c.into, tuple((n, n) for n in c.names)),
            Field("reason", "reason"),
        ]

        def done(v: dict[str, Any] | None) -> None:
            if not v or not v.get("into"):
                return
            cid, into, reason = c.id, v["into"], v.get("reason", "")

            def build(st: Any) -> Any:
                return vocab_svc.merge_plan(st, vocab_svc.find_cluster(st.memory, cid), into, reason=reason)

            others = [n for n in c.names if n != into]
            self.post_message(StagePlan(Recipe(f"merge {', '.join(others)} into {into}", build, "vocab")))

        self.app.ask(FormScreen("Merge near-duplicates", fields, note=c.reason), done)

    def action_split(self) -> None:
        e = _row(self.query_one("#inbox-table", DataTable), self.entries)
        if e is None or e.origin != "matched":
            self.app.notify(
                "Highlight a name matched automatically (origin: matched) to split it. A name merged by a plan"
                " splits from the Registry (5): highlight the predicate it was merged into, then s.",
                severity="warning",
            )
            return
        name = e.name
        self.post_message(StagePlan(Recipe(f"split {name}", lambda st: st.split(name), "vocab")))

    def action_never(self) -> None:
        c = _row(self.query_one("#suggest-table", DataTable), self.clusters)
        if c is None:
            return
        pairs = [(a, b) for a, b, _ in c.pairs]

        def done(yes: bool | None) -> None:
            if not yes:
                return
            app = self.app
            self.call_service(
                vocab_svc.never, app.memory, pairs, app.operator, then=lambda ids: self._recorded(c), group="never"
            )

        body = Text(f"{', '.join(c.names)} will not be suggested for a merge again (a review decision).")
        self.app.ask(ConfirmScreen("Never merge these names?", body, yes="Never merge"), done)

    def _recorded(self, c: vocab_svc.Cluster) -> None:
        self.app.notify(f"Recorded: never merge {', '.join(c.names)}", markup=False)
        self.post_message(StoreChanged("never"))


class NotesView(Queue):
    """Notes held now, and clusters of notes that look like one kind of fact."""

    BINDINGS = bindings("notes")

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.notes: list[Any] = []
        self.clusters: list[notes_svc.NoteCluster] = []

    def compose(self) -> ComposeResult:
        yield Label("Note clusters: reading…", id="notes-title", classes="view-title")
        yield _table("clusters-table", "cluster", "notes", "about", "promote into", "values found")
        with VerticalScroll(classes="detail-box"):
            yield Static("", id="cluster-detail")
        yield Label("Notes held now, most recent first", classes="view-title")
        yield _table("notes-table", "subject", "note", "day (UTC)", "source", "event")

    def refresh_data(self, sel: Selection | None = None) -> None:
        def load(memory: Any) -> tuple[list[Any], list[notes_svc.NoteCluster]]:
            return notes_svc.list_notes(memory, limit=NOTES_SHOWN), notes_svc.note_clusters(memory)

        self.call_service(load, self.app.memory, then=self._show, group="notes")

    def _show(self, data: tuple[list[Any], list[notes_svc.NoteCluster]]) -> None:
        self.notes, self.clusters = data
        ct = self.query_one("#clusters-table", DataTable)
        ct.clear()
        for c in self.clusters:
            target = c.predicate or f"{c.new_name} (new)"
            parsed = sum(1 for n in c.notes if n.value is not None)
            ct.add_row(*fmt.cells(c.id, str(len(c.notes)), ", ".join(c.about[:4]), target, f"{parsed}/{len(c.notes)}"))
        nt = self.query_one("#notes-table", DataTable)
        nt.clear()
        for b in self.notes:
            nt.add_row(*fmt.cells(b.subject, fmt.clip(str(b.value), 60), fmt.day(b.observed_at), b.source, b.event_id))
        self.query_one("#notes-title", Label).update(
            f"Note clusters — {len(self.clusters)} cluster(s) over {len(self.notes)} note(s)"
        )
        self._detail()

    @property
    def current(self) -> notes_svc.NoteCluster | None:
        return _row(self.query_one("#clusters-table", DataTable), self.clusters)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        if event.data_table.id == "clusters-table":
            self._detail()

    def _detail(self) -> None:
        c = self.current
        box = self.query_one("#cluster-detail", Static)
        if c is None:
            box.update(Text("No cluster of notes: nothing looks like one kind of fact yet.", style="dim"))
            return
        t = Text()
        for nv in c.notes:
            t.append(f"{fmt.text(nv.note.subject)}: ", style="cyan")
            t.append(fmt.clip(str(nv.note.value), 50))
            if nv.value is not None:
                t.append(f"  → {fmt.values([nv.value])}\n", style="green")
            else:
                t.append(f"  stays a note: {fmt.text(nv.error)}\n", style="yellow")
        box.update(t)

    @property
    def current_note(self) -> Any | None:
        return _row(self.query_one("#notes-table", DataTable), self.notes)

    def action_promote(self) -> None:
        c = self.current
        if c is None:
            self.app.notify("No note cluster to promote.", severity="warning")
            return
        cid = c.id
        self._promote(
            f"Promote cluster {c.id}",
            c.predicate or c.new_name,
            not c.predicate,
            [],
            lambda st, pred, define, reason, v: notes_svc.promote_plan(
                st, pred, cluster=cid, define=define, reason=reason
            ),
            f"{len(c.notes)} note(s)",
            note="about: " + fmt.text(", ".join(c.about)),
        )

    def action_promote_note(self) -> None:
        b = self.current_note
        if b is None:
            self.app.notify("No note held now to promote.", severity="warning")
            return
        event_id = b.event_id
        self._promote(
            "Promote one note",
            "",
            True,
            [Field("value", "its value under the predicate", placeholder="the typed value")],
            lambda st, pred, define, reason, v: notes_svc.promote_plan(
                st, pred, notes={event_id: v.get("value", "")}, define=define, reason=reason
            ),
            f"note {event_id}",
            note=f"{fmt.text(b.subject)}: {fmt.clip(str(b.value), 200)}",
        )

    def action_promote_match(self) -> None:
        fields = [
            Field(
                "match",
                "notes matching (a regular expression)",
                placeholder="the group named 'value' (or the first) is the value",
                required=True,
            ),
            Field("subject", "only this subject's notes", placeholder="blank: every subject"),
        ]
        self._promote(
            "Promote notes by regex",
            "",
            True,
            fields,
            lambda st, pred, define, reason, v: notes_svc.promote_plan(
                st, pred, match=v.get("match", ""), subject=v.get("subject") or None, define=define, reason=reason
            ),
            "notes matching a regex",
        )

    def _promote(
        self, title: str, predicate: str, new: bool, extra: list[Field], plan: Any, what: str, note: str = ""
    ) -> None:
        """The promote form: the notes (a cluster, one note or a regex), the predicate, and its definition when
        it is new (defined inside the same plan)."""
        fields = extra + [
            Field(
                "predicate",
                "promote into predicate",
                value=predicate,
                placeholder="an existing predicate, or a new one to define",
                required=True,
            )
        ]
        fields += [
            Field("define", "define it in the same plan (a new predicate)", "check", new),
            Field(
                "cardinality", "cardinality (when defined)", "select", "single", tuple((x, x) for x in CARDINALITIES)
            ),
            Field("value_type", "value type (when defined)", "select", "string", tuple((x, x) for x in VALUE_TYPES)),
            Field("description", "description (when defined)", placeholder="what it records"),
            Field("reason", "reason", placeholder="why, for the registry log"),
        ]

        def done(v: dict[str, Any] | None) -> None:
            if not v or not v.get("predicate"):
                return
            pred, reason = v["predicate"], v.get("reason", "")
            define = None
            if v.get("define"):
                define = Definition(
                    pred, v.get("cardinality") or "single", v.get("value_type") or "string", v.get("description", "")
                )
            self.post_message(
                StagePlan(Recipe(f"promote {what} into {pred}", lambda st: plan(st, pred, define, reason, v), "notes"))
            )

        self.app.ask(FormScreen(title, fields, note=note), done)


class QueuesView(Vertical):
    BINDINGS = bindings("queues")

    def compose(self) -> ComposeResult:
        with ViewTabs(id="queue-tabs"):
            with TabPane("Conflicts", id="q-conflicts"):
                yield ConflictsView(id="conflicts")
            with TabPane("Vocabulary", id="q-vocab"):
                yield VocabView(id="vocab")
            with TabPane("Notes", id="q-notes"):
                yield NotesView(id="notes")

    def show(self, which: str) -> None:
        self.query_one("#queue-tabs", TabbedContent).active = f"q-{which}"

    def action_next_tab(self) -> None:
        step_tab(self.query_one("#queue-tabs", TabbedContent), 1)
        self._focus()

    def action_prev_tab(self) -> None:
        step_tab(self.query_one("#queue-tabs", TabbedContent), -1)
        self._focus()

    def _focus(self) -> None:
        inner = self.query_one("#queue-tabs", TabbedContent).active.removeprefix("q-")
        self.query_one(
            {"conflicts": "#conflicts-table", "vocab": "#inbox-table", "notes": "#clusters-table"}[inner]
        ).focus()
