"""Registry: predicates with their definitions and registry log, the whole log, lint findings.

A filter narrows the predicates (by name) and the registry log (by name or operator).
From here an operator stages redefine, merge, split, define, a registry load and a
revert, and acts on a lint finding (stage the merge it suggests, or never merge).
"""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Input, Label, Static, TabbedContent, TabPane

from recall_admin import views
from recall_admin import vocab as vocab_svc
from recall_admin.governance import revert
from recall_admin.lint import lint
from recall_engine.instants import parse_instant
from recall_engine.registry import CARDINALITIES
from recall_engine.registry_files import starter_names
from recall_engine.values import VALUE_TYPES

from .. import format as fmt
from ..actions import bindings
from ..messages import Selection, StagePlan, StoreChanged
from ..screens.confirm import ConfirmScreen
from ..screens.form import Field, FormScreen
from ..services import ServiceCalls
from ..staging import Recipe, registry_load
from ..widgets.table import ConsoleTable
from ..widgets.view_tabs import ViewTabs
from .tabs import step_tab

KEEP = (("(unchanged)", ""),)
YES_NO = (("(unchanged)", ""), ("yes", "yes"), ("no", "no"))


def split_names(text: str) -> list[str]:
    return [x.strip() for x in (text or "").replace(";", ",").split(",") if x.strip()]


def load_registry(memory: Any) -> dict[str, Any]:
    """Everything the registry view shows, read in one worker call."""
    return {"list": views.registry_list_view(memory), "log": views.registry_log_view(memory)}


def lint_findings(memory: Any) -> list[dict[str, Any]]:
    """The registry lint service's findings; a near duplicate also says which name to merge into (and why),
    by the rule the vocabulary's suggestions follow."""
    out = [f.to_json() for f in lint(memory)]
    for f in out:
        if f["code"] == "near_duplicate":
            f["into"], f["why"] = vocab_svc.merge_direction(memory, f["names"])
    return out


def _ns(text: str | None) -> int | None:
    return parse_instant(text) if text else None


def matches(query: str, *texts: str) -> bool:
    """The filter box: every word of the query appears in one of the texts (case-insensitive)."""
    hay = " ".join(texts).lower()
    return all(w in hay for w in query.lower().split())


class RegistryView(ServiceCalls, Vertical):
    BINDINGS = bindings("registry")

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.all_predicates: list[dict[str, Any]] = []
        self.predicates: list[dict[str, Any]] = []  # those the filter lets through, as listed
        self.changes: list[dict[str, Any]] = []  # registry log entries the filter lets through
        self.data: dict[str, Any] = {}
        self.findings: list[dict[str, Any]] | None = None
        self.query_text = ""

    def compose(self) -> ComposeResult:
        with Horizontal(classes="bar"):
            yield Label("Registry", id="registry-title", classes="view-title")
            yield Input(placeholder="filter: name or operator (f)", id="registry-filter", compact=True)
        with ViewTabs(id="registry-tabs"):
            with TabPane("Predicates", id="reg-predicates"), Horizontal():
                table: DataTable[Any] = ConsoleTable(id="predicates-table", cursor_type="row")
                for name in ("predicate", "card.", "type", "events", "merged names"):
                    table.add_column(name)
                yield table
                with VerticalScroll(id="predicate-detail-box"):
                    yield Static("", id="predicate-detail")
            with TabPane("Registry log", id="reg-log"):
                log: DataTable[Any] = ConsoleTable(id="registry-log", cursor_type="row")
                for name in ("at (UTC)", "op", "name", "summary", "operator", "plan"):
                    log.add_column(name)
                yield log
                with VerticalScroll(classes="detail-box"):
                    yield Static("", id="log-detail")
            with TabPane("Lint", id="reg-lint"):
                yield Label("linting…", id="lint-note")
                lint: DataTable[Any] = ConsoleTable(id="lint-table", cursor_type="row")
                for name in ("finding", "names", "detail"):
                    lint.add_column(name)
                yield lint
                with VerticalScroll(classes="detail-box"):
                    yield Static("", id="lint-detail")

    def refresh_data(self, sel: Selection | None = None) -> None:
        memory = self.app.memory
        self.query_one("#lint-note", Label).update("linting…")
        self.call_service(load_registry, memory, then=self._show, group="registry")
        self.call_service(lint_findings, memory, then=self._show_lint, group="lint")

    def _show(self, data: dict[str, Any]) -> None:
        self.data = data
        listing = data["list"]
        self.all_predicates = listing["predicates"]
        vocab = "open" if listing["open_vocabulary"] else "closed"
        self.query_one("#registry-title", Label).update(
            f"{len(self.all_predicates)} predicates · vocabulary {vocab} · digest {fmt.esc(listing['digest'][7:19])}…"
        )
        self._fill()

    def _fill(self) -> None:
        """List what the filter lets through: predicates by name (or merged name), log entries by name or
        operator."""
        q = self.query_text
        table = self.query_one("#predicates-table", DataTable)
        keep = self.current["name"] if self.current else None
        self.predicates = [p for p in self.all_predicates if matches(q, p["name"], *p["merged"])]
        table.clear()
        for p in self.predicates:
            table.add_row(
                *fmt.cells(
                    p["name"],
                    p["cardinality"],
                    p["value_type"],
                    f"{p['events']:,}",
                    fmt.clip(", ".join(p["merged"]), 24),
                ),
                key=p["name"],
            )
        index = next((i for i, p in enumerate(self.predicates) if p["name"] == keep), 0)
        if self.predicates:
            table.move_cursor(row=index, animate=False)
            self._detail(self.predicates[index])
        else:
            self.query_one("#predicate-detail", Static).update(Text("No predicate matches the filter.", style="dim"))
        log = self.query_one("#registry-log", DataTable)
        log.clear()
        self.changes = [
            c
            for c in self.data.get("log", {}).get("changes", [])
            if matches(q, c["name"], c.get("into") or "", c.get("operator") or "")
        ]
        for c in self.changes:
            log.add_row(
                *fmt.cells(
                    fmt.instant(_ns(c["at"]))[:19],
                    c["op"],
                    c["name"],
                    fmt.clip(c["summary"], 70),
                    c.get("operator") or "—",
                    c.get("plan") or "—",
                )
            )
        self._log_detail()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "registry-filter":
            event.stop()
            self.query_text = event.value.strip()
            self._fill()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "registry-filter":
            event.stop()
            self._focus_tab()

    def action_filter(self) -> None:
        self.query_one("#registry-filter", Input).focus()

    def _show_lint(self, findings: list[dict[str, Any]]) -> None:
        self.findings = findings
        lt = self.query_one("#lint-table", DataTable)
        lt.clear()
        note = self.query_one("#lint-note", Label)
        for f in findings:
            lt.add_row(
                *fmt.cells(
                    str(f.get("code", "")).replace("_", " "),
                    fmt.clip(", ".join(f.get("names", [])), 36),
                    fmt.clip(str(f.get("detail", "")), 110),
                )
            )
        self._lint_detail()
        note.update(
            "No findings: the registry is clean."
            if not findings
            else f"{len(findings)} finding(s); the highlighted one in full below; x stages what it suggests"
        )

    @property
    def current(self) -> dict[str, Any] | None:
        table = self.query_one("#predicates-table", DataTable)
        if not self.predicates or not (0 <= table.cursor_row < len(self.predicates)):
            return None
        return self.predicates[table.cursor_row]

    @property
    def current_change(self) -> dict[str, Any] | None:
        table = self.query_one("#registry-log", DataTable)
        return self.changes[table.cursor_row] if 0 <= table.cursor_row < len(self.changes) else None

    @property
    def current_finding(self) -> dict[str, Any] | None:
        table = self.query_one("#lint-table", DataTable)
        findings = self.findings or []
        return findings[table.cursor_row] if 0 <= table.cursor_row < len(findings) else None

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        if event.data_table.id == "predicates-table":
            p = self.current
            if p is not None:
                self._detail(p)
        elif event.data_table.id == "lint-table":
            self._lint_detail()
        elif event.data_table.id == "registry-log":
            self._log_detail()

    def _lint_detail(self) -> None:
        f = self.current_finding
        box = self.query_one("#lint-detail", Static)
        if f is None:
            box.update("")
            return
        t = Text()
        t.append(str(f.get("code", "")).replace("_", " "), style="bold yellow")
        t.append("  " + fmt.text(", ".join(f.get("names", []))) + "\n", style="magenta")
        t.append(fmt.text(f.get("detail", "")))
        if f.get("code") == "near_duplicate":
            if f.get("why"):
                t.append(f"\nsuggested: merge into {fmt.text(f['into'])}, as {fmt.text(f['why'])}", style="green")
            t.append("\nx: stage the merge, or record that they never merge", style="cyan")
        elif f.get("code") == "note_like_predicate":
            t.append("\nThe notes are in Queues › Notes (6): promote them there (p, o or r).", style="cyan")
        box.update(t)

    def _log_detail(self) -> None:
        c = self.current_change
        box = self.query_one("#log-detail", Static)
        if c is None:
            box.update(Text("No registry log entry matches the filter.", style="dim"))
            return
        t = Text()
        t.append(f"{c['op']} {fmt.text(c['name'])}", style="bold")
        t.append(f"  at {fmt.instant(_ns(c['at']))}\n", style="dim")
        t.append(fmt.text(c["summary"]) + "\n")
        # the record's operator planned it; the plan's `applied` record names who applied it
        t.append("planned by ", style="dim")
        t.append(fmt.text(c.get("operator") or "— (written by an agent or the engine)"))
        if c.get("applied_by") and c.get("op") != "applied":
            t.append("   applied by ", style="dim")
            t.append(fmt.text(c["applied_by"]))
        t.append("   plan ", style="dim")
        t.append(fmt.text(c.get("plan") or "—"))
        if c.get("withdrawn_by"):
            t.append("\nwithdrawn by ", style="red")
            t.append(fmt.text(c["withdrawn_by"]), style="red")
        t.append("\nwhy: ", style="dim")
        t.append(fmt.text(c.get("reason") or "— (no reason recorded)"))
        if c.get("plan"):
            t.append("\nu: stage the plan that reverts it", style="cyan")
        box.update(t)

    def _detail(self, p: dict[str, Any]) -> None:
        t = Text()
        t.append(fmt.text(p["name"]), style="bold")
        t.append(f"  {p['cardinality']}-valued {p['value_type']}\n")
        if p["description"]:
            t.append(fmt.text(p["description"]) + "\n", style="italic")
        for label, key in (
            ("allowed", "allowed"),
            ("excludes", "excludes"),
            ("aliases", "aliases"),
            ("merged names (read as this one)", "merged"),
        ):
            if p[key]:
                t.append(f"{label}: ", style="dim")
                t.append(fmt.text(", ".join(p[key])) + "\n")
        if p["historical"]:
            t.append("historical: only an explicit retraction withdraws a value\n", style="yellow")
        t.append(
            f"origin: {fmt.text(p['origin'])}"
            + (f" at {fmt.instant(_ns(p['since']))}" if p.get("since") else "")
            + "\n",
            style="dim",
        )
        t.append(f"{p['events']:,} event(s) under its names\n", style="dim")
        log = Table(
            title="Its registry log, oldest first",
            title_justify="left",
            title_style="bold yellow",
            box=None,
            show_header=False,
            expand=True,
        )
        log.add_column("at", no_wrap=True, style="dim")
        log.add_column("what")
        for c in self.data.get("log", {}).get("changes", []):
            if c["name"] == p["name"] or c.get("into") == p["name"] or c["name"] in p["merged"]:
                log.add_row(
                    *fmt.cells(
                        fmt.day(_ns(c["at"])),
                        f"{c['op']}: {c['summary']}" + (f" — {c['operator']}" if c.get("operator") else ""),
                    )
                )
        self.query_one("#predicate-detail", Static).update(Group(t, log))

    def action_next_tab(self) -> None:
        step_tab(self.query_one("#registry-tabs", TabbedContent), 1)
        self._focus_tab()

    def action_prev_tab(self) -> None:
        step_tab(self.query_one("#registry-tabs", TabbedContent), -1)
        self._focus_tab()

    def _focus_tab(self) -> None:
        active = self.query_one("#registry-tabs", TabbedContent).active
        target = {"reg-predicates": "#predicates-table", "reg-log": "#registry-log", "reg-lint": "#lint-table"}
        self.query_one(target.get(active, "#predicates-table")).focus()

    def _show_tab(self, tab: str) -> None:
        self.query_one("#registry-tabs", TabbedContent).active = tab
        self._focus_tab()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in STAGING and self.app.read_only:
            return None  # shown dimmed: the store is read-only (the top bar says so)
        return True

    # --- staging ---------------------------------------------------------------

    def _names(self) -> list[tuple[str, str]]:
        return [(p["name"], p["name"]) for p in self.all_predicates]

    def action_redefine(self) -> None:
        p = self.current
        if p is None:
            return
        fields = [
            Field(
                "cardinality",
                "cardinality",
                "select",
                "",
                KEEP + tuple((c, c) for c in CARDINALITIES),
                help=f"now {p['cardinality']}",
            ),
            Field(
                "add_excludes", "add excludes (comma-separated predicates)", placeholder="predicates, comma-separated"
            ),
            Field(
                "remove_excludes",
                "remove excludes",
                placeholder="predicates, comma-separated",
                help="now: " + (fmt.text(", ".join(p["excludes"])) or "none"),
            ),
            Field("historical", "historical", "select", "", YES_NO, help=f"now {'yes' if p['historical'] else 'no'}"),
            Field(
                "description",
                "description",
                placeholder="blank: unchanged",
                help="now: " + (fmt.clip(p["description"], 60) or "none"),
            ),
            Field("retroactive", "for its whole history (retroactive)", "check", False),
            Field("reason", "reason (recorded on the registry event)", placeholder="why, for the registry log"),
        ]
        if p["value_type"] == "enum":
            fields.insert(
                4,
                Field(
                    "allowed",
                    "allowed values (comma-separated)",
                    placeholder="blank: unchanged",
                    help="now: " + fmt.text(", ".join(p["allowed"])),
                ),
            )

        def done(v: dict[str, Any] | None) -> None:
            if v is None:
                return
            name = p["name"]
            kwargs: dict[str, Any] = {
                "cardinality": v.get("cardinality") or None,
                "add_excludes": split_names(v.get("add_excludes", "")),
                "remove_excludes": split_names(v.get("remove_excludes", "")),
                "historical": {"yes": True, "no": False}.get(v.get("historical") or ""),
                "description": v.get("description") or None,
                "retroactive": bool(v.get("retroactive")),
                "reason": v.get("reason", ""),
            }
            if v.get("allowed"):
                kwargs["allowed"] = split_names(v["allowed"])
            self.post_message(StagePlan(Recipe(f"redefine {name}", lambda st: st.redefine(name, **kwargs), "registry")))

        self.app.ask(
            FormScreen(f"Redefine {p['name']}", fields, note="Nothing is written: the plan is previewed in the tray."),
            done,
        )

    def action_merge(self) -> None:
        p = self.current
        if p is None:
            return
        others = tuple((n, n) for n, _ in self._names() if n != p["name"] and n != "note")
        self._stage_merge(p["name"], others)

    def _stage_merge(self, name: str, into: tuple[tuple[str, str], ...], default: str = "") -> None:
        fields = [
            Field("into", f"merge {name} into", "select", default, into),
            Field("reason", "reason", placeholder="why, for the registry log"),
        ]

        def done(v: dict[str, Any] | None) -> None:
            if not v or not v.get("into"):
                return
            target, reason = v["into"], v.get("reason", "")
            self.post_message(
                StagePlan(
                    Recipe(f"merge {name} into {target}", lambda st: st.merge(name, target, reason=reason), "registry")
                )
            )

        self.app.ask(FormScreen(f"Merge {name}", fields, note=f"{name} will read as the predicate you choose."), done)

    def action_split(self) -> None:
        merged = [(n, n) for p in self.all_predicates for n in p["merged"]]
        if not merged:
            self.app.notify("No merged name to split: no predicate is merged into another.", severity="warning")
            return
        p = self.current
        default = p["merged"][0] if p and p["merged"] else ""
        fields = [
            Field("name", "split this merged name back out", "select", default, tuple(merged)),
            Field("reason", "reason", placeholder="why, for the registry log"),
        ]

        def done(v: dict[str, Any] | None) -> None:
            if not v or not v.get("name"):
                return
            name, reason = v["name"], v.get("reason", "")
            self.post_message(StagePlan(Recipe(f"split {name}", lambda st: st.split(name, reason=reason), "registry")))

        self.app.ask(FormScreen("Split a merged name", fields), done)

    def action_define(self) -> None:
        fields = [
            Field("name", "name (snake_case)", placeholder="the new predicate's name", required=True),
            Field("cardinality", "cardinality", "select", "single", tuple((c, c) for c in CARDINALITIES)),
            Field("value_type", "value type", "select", "string", tuple((t, t) for t in VALUE_TYPES)),
            Field("description", "description", placeholder="what it records"),
            Field("allowed", "allowed values (enum only, comma-separated)", placeholder="enum values, comma-separated"),
            Field("excludes", "excludes (comma-separated predicates)", placeholder="predicates, comma-separated"),
            Field(
                "historical",
                "historical",
                "check",
                False,
                help="things that happened: only an explicit retraction withdraws a value",
            ),
            Field("reason", "reason", placeholder="why, for the registry log"),
        ]

        def done(v: dict[str, Any] | None) -> None:
            if not v or not v.get("name"):
                return
            name = v["name"]
            kwargs = dict(
                cardinality=v.get("cardinality") or "single",
                value_type=v.get("value_type") or "string",
                description=v.get("description", ""),
                allowed=split_names(v.get("allowed", "")),
                excludes=split_names(v.get("excludes", "")),
                historical=bool(v.get("historical")),
                reason=v.get("reason", ""),
            )
            self.post_message(StagePlan(Recipe(f"define {name}", lambda st: st.define(name, **kwargs), "registry")))

        self.app.ask(FormScreen("Define a predicate", fields), done)

    def action_load(self) -> None:
        starters = ", ".join(starter_names())
        fields = [
            Field(
                "registry",
                "a starter or a registry file",
                placeholder="starter name or path to a YAML file",
                required=True,
                help=f"starters: {starters}",
            ),
            Field("reason", "reason", placeholder="why, for the registry log"),
        ]

        def done(v: dict[str, Any] | None) -> None:
            if v and v.get("registry"):
                self.post_message(StagePlan(registry_load(v["registry"], v.get("reason", ""))))

        self.app.ask(
            FormScreen(
                "Load a registry",
                fields,
                note="What it declares is staged as a plan: new and changed predicates are "
                "previewed in the tray before anything is written.",
            ),
            done,
        )

    def action_revert(self) -> None:
        c = self.current_change if self._active_tab == "reg-log" else None
        if c is None or not c.get("plan"):
            self._show_tab("reg-log")
            self.app.notify(
                "Highlight a registry log entry written by a plan (its plan column), then press u.", severity="warning"
            )
            return
        plan_id = c["plan"]

        def done(v: dict[str, Any] | None) -> None:
            if v is not None:
                reason = v.get("reason", "")
                self.post_message(
                    StagePlan(Recipe(f"revert {plan_id}", lambda st: revert(st, plan_id, reason=reason), "registry"))
                )

        self.app.ask(
            FormScreen(
                f"Revert {plan_id}",
                [Field("reason", "reason (recorded on the withdraw record)", placeholder="why, for the registry log")],
                note=f"Stages the plan that takes back what {plan_id} wrote: {self._plan_records(plan_id)}. "
                "The registry then reads as if it had never been applied. It is previewed first.",
            ),
            done,
        )

    def _plan_records(self, plan_id: str) -> str:
        """What a plan wrote, in words: its records by op and name, the first few named."""
        mine = [c for c in self.data.get("log", {}).get("changes", []) if c.get("plan") == plan_id]
        recs = [f"{c['op']} {c['name']}".strip() for c in mine if c["op"] != "applied"]
        shown = ", ".join(fmt.text(r) for r in recs[:3]) + (f" and {len(recs) - 3} more" if len(recs) > 3 else "")
        n = len(recs)
        return f"{n} registry record{'s' if n != 1 else ''} ({shown})" if recs else "its operator statements"

    def action_fix(self) -> None:
        f = self.current_finding if self._active_tab == "reg-lint" else None
        if f is None or f.get("code") != "near_duplicate":
            self._show_tab("reg-lint")
            self.app.notify("Highlight a near-duplicate finding in Lint, then press x.", severity="warning")
            return
        a, b = f["names"][0], f["names"][1]
        if f.get("into") == b:  # the suggested direction first
            a, b = b, a
        fields = [
            Field(
                "choice",
                f"{a} and {b}",
                "select",
                f"merge:{b}:{a}",
                (
                    (f"merge {b} into {a} (a plan)", f"merge:{b}:{a}"),
                    (f"merge {a} into {b} (a plan)", f"merge:{a}:{b}"),
                    ("never merge them (a review decision)", "never"),
                ),
            ),
            Field("reason", "reason", placeholder="why, for the registry log"),
        ]

        def done(v: dict[str, Any] | None) -> None:
            if not v or not v.get("choice"):
                return
            if v["choice"] == "never":
                self._never(a, b)
                return
            _, name, into = v["choice"].split(":")
            reason = v.get("reason", "")
            self.post_message(
                StagePlan(
                    Recipe(f"merge {name} into {into}", lambda st: st.merge(name, into, reason=reason), "registry")
                )
            )

        why = f"; suggested: merge into {f['into']}, as {f['why']}" if f.get("why") else ""
        self.app.ask(FormScreen("Act on a lint finding", fields, note=fmt.text(f.get("detail", "") + why)), done)

    def _never(self, a: str, b: str) -> None:
        def done(yes: bool | None) -> None:
            if yes:
                self.call_service(
                    vocab_svc.never,
                    self.app.memory,
                    [(a, b)],
                    self.app.operator,
                    then=lambda _: self._recorded(a, b),
                    group="never",
                )

        self.app.ask(
            ConfirmScreen(
                "Never merge these names?",
                Text(f"{a} and {b} will not be suggested for a merge again (a review decision)."),
            ),
            done,
        )

    def _recorded(self, a: str, b: str) -> None:
        self.app.notify(f"Recorded: never merge {a} and {b}", markup=False)
        self.post_message(StoreChanged("never"))

    @property
    def _active_tab(self) -> str:
        return self.query_one("#registry-tabs", TabbedContent).active


STAGING = {"redefine", "merge", "split", "define", "load", "revert", "fix"}
