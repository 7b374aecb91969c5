"""Registry: predicates with their definitions and registry log, the whole log, lint findings."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Label, Static, TabbedContent, TabPane

from recall_admin import views
from recall_admin.lint import lint
from recall_engine.registry import CARDINALITIES
from recall_engine.values import VALUE_TYPES

from .. import format as fmt
from ..actions import bindings
from ..messages import StagePlan
from ..widgets.view_tabs import ViewTabs
from ..services import ServiceCalls
from ..staging import Recipe
from .form import Field, FormScreen


def split_names(text: str) -> list[str]:
    return [x.strip() for x in (text or "").replace(";", ",").split(",") if x.strip()]


def load_registry(memory: Any) -> dict[str, Any]:
    """Everything the registry view shows, read in one worker call."""
    return {"list": views.registry_list_view(memory), "log": views.registry_log_view(memory)}


def lint_findings(memory: Any) -> list[dict[str, Any]]:
    """The registry lint service's findings."""
    return [f.to_json() for f in lint(memory)]


class RegistryView(ServiceCalls, Vertical):
    BINDINGS = bindings("registry")

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.predicates: list[dict[str, Any]] = []
        self.data: dict[str, Any] = {}
        self.findings: list[dict[str, Any]] | None = None

    def compose(self) -> ComposeResult:
        yield Label("Registry", id="registry-title", classes="view-title")
        with ViewTabs(id="registry-tabs"):
            with TabPane("Predicates", id="reg-predicates"):
                with Horizontal():
                    table: DataTable = DataTable(id="predicates-table", cursor_type="row")
                    for name in ("predicate", "card.", "type", "events", "merged names"):
                        table.add_column(name)
                    yield table
                    with VerticalScroll(id="predicate-detail-box"):
                        yield Static("", id="predicate-detail")
            with TabPane("Registry log", id="reg-log"):
                log: DataTable = DataTable(id="registry-log", cursor_type="row")
                for name in ("at", "op", "name", "summary", "operator", "plan"):
                    log.add_column(name)
                yield log
            with TabPane("Lint", id="reg-lint"):
                yield Label("linting…", id="lint-note")
                lint: DataTable = DataTable(id="lint-table", cursor_type="row")
                for name in ("finding", "names", "detail"):
                    lint.add_column(name)
                yield lint
                with VerticalScroll(classes="detail-box"):
                    yield Static("", id="lint-detail")

    def refresh_data(self) -> None:
        memory = self.app.memory  # type: ignore[attr-defined]
        self.query_one("#lint-note", Label).update("linting…")
        self.call_service(load_registry, memory, then=self._show, group="registry")
        self.call_service(lint_findings, memory, then=self._show_lint, group="lint")

    def _show(self, data: dict[str, Any]) -> None:
        self.data = data
        listing = data["list"]
        self.predicates = listing["predicates"]
        table = self.query_one("#predicates-table", DataTable)
        keep = self.current["name"] if self.current else None
        table.clear()
        for p in self.predicates:
            table.add_row(*fmt.cells(p["name"], p["cardinality"], p["value_type"], f"{p['events']:,}",
                                     fmt.clip(", ".join(p["merged"]), 24)), key=p["name"])
        vocab = "open" if listing["open_vocabulary"] else "closed"
        self.query_one("#registry-title", Label).update(
            f"Registry — {len(self.predicates)} predicates · vocabulary {vocab} · digest {listing['digest'][7:19]}…"
        )
        index = next((i for i, p in enumerate(self.predicates) if p["name"] == keep), 0)
        if self.predicates:
            table.move_cursor(row=index, animate=False)
            self._detail(self.predicates[index])
        log = self.query_one("#registry-log", DataTable)
        log.clear()
        for c in data["log"]["changes"]:
            log.add_row(*fmt.cells(fmt.instant(_ns(c["at"])), c["op"], c["name"], fmt.clip(c["summary"], 70),
                                   c.get("operator") or "—", c.get("plan") or "—"))

    def _show_lint(self, findings: list[dict[str, Any]]) -> None:
        self.findings = findings
        lt = self.query_one("#lint-table", DataTable)
        lt.clear()
        note = self.query_one("#lint-note", Label)
        for f in findings:
            lt.add_row(*fmt.cells(str(f.get("code", "")).replace("_", " "), fmt.clip(", ".join(f.get("names", [])), 36),
                                  fmt.clip(str(f.get("detail", "")), 110)))
        self._lint_detail()
        note.update("No findings: the registry is clean." if not findings
                    else f"{len(findings)} finding(s); nothing is changed by lint")

    @property
    def current(self) -> dict[str, Any] | None:
        table = self.query_one("#predicates-table", DataTable)
        if not self.predicates or not (0 <= table.cursor_row < len(self.predicates)):
            return None
        return self.predicates[table.cursor_row]

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "predicates-table":
            event.stop()
            p = self.current
            if p is not None:
                self._detail(p)
        elif event.data_table.id == "lint-table":
            event.stop()
            self._lint_detail()

    def _lint_detail(self) -> None:
        table = self.query_one("#lint-table", DataTable)
        findings = self.findings or []
        f = findings[table.cursor_row] if 0 <= table.cursor_row < len(findings) else None
        box = self.query_one("#lint-detail", Static)
        if f is None:
            box.update("")
            return
        t = Text()
        t.append(str(f.get("code", "")).replace("_", " "), style="bold yellow")
        t.append("  " + ", ".join(f.get("names", [])) + "\n", style="magenta")
        t.append(str(f.get("detail", "")))
        box.update(t)

    def _detail(self, p: dict[str, Any]) -> None:
        t = Text()
        t.append(p["name"], style="bold")
        t.append(f"  {p['cardinality']}-valued {p['value_type']}\n")
        if p["description"]:
            t.append(p["description"] + "\n", style="italic")
        for label, key in (("allowed", "allowed"), ("excludes", "excludes"), ("aliases", "aliases"),
                           ("merged names", "merged")):
            if p[key]:
                t.append(f"{label}: ", style="dim")
                t.append(", ".join(p[key]) + "\n")
        if p["historical"]:
            t.append("historical: only an explicit retraction withdraws a value\n", style="yellow")
        t.append(f"origin: {p['origin']}" + (f" at {fmt.instant(_ns(p['since']))}" if p.get("since") else "") + "\n",
                 style="dim")
        t.append(f"{p['events']:,} event(s) under its names\n", style="dim")
        log = Table(title="Its registry log, oldest first", title_justify="left", title_style="bold yellow",
                    box=None, show_header=False, expand=True)
        log.add_column("at", no_wrap=True, style="dim")
        log.add_column("what")
        for c in self.data.get("log", {}).get("changes", []):
            if c["name"] == p["name"] or c.get("into") == p["name"] or c["name"] in p["merged"]:
                log.add_row(*fmt.cells(fmt.day(_ns(c["at"])), f"{c['op']}: {c['summary']}"
                                       + (f" — {c['operator']}" if c.get("operator") else "")))
        self.query_one("#predicate-detail", Static).update(Group(t, log))

    def action_next_tab(self) -> None:
        from .queues import step_tab

        step_tab(self.query_one("#registry-tabs", TabbedContent), 1)
        self._focus_tab()

    def action_prev_tab(self) -> None:
        from .queues import step_tab

        step_tab(self.query_one("#registry-tabs", TabbedContent), -1)
        self._focus_tab()

    def _focus_tab(self) -> None:
        active = self.query_one("#registry-tabs", TabbedContent).active
        target = {"reg-predicates": "#predicates-table", "reg-log": "#registry-log", "reg-lint": "#lint-table"}
        self.screen.set_focus(self.query_one(target.get(active, "#predicates-table")))

    # --- staging ---------------------------------------------------------------

    def _names(self) -> list[tuple[str, str]]:
        return [(p["name"], p["name"]) for p in self.predicates]

    def action_redefine(self) -> None:
        p = self.current
        if p is None:
            return
        keep = (("(unchanged)", ""),)
        fields = [
            Field("cardinality", "cardinality", "select", "", keep + tuple((c, c) for c in CARDINALITIES)),
            Field("add_excludes", "add excludes (comma-separated predicates)", placeholder="dislikes"),
            Field("remove_excludes", "remove excludes", placeholder=", ".join(p["excludes"])),
            Field("historical", "historical", "select", "", keep + (("yes", "yes"), ("no", "no"))),
            Field("description", "description (blank: unchanged)", placeholder=fmt.clip(p["description"], 60)),
            Field("retroactive", "for its whole history (retroactive)", "check", False),
            Field("reason", "reason (recorded on the registry event)"),
        ]
        if p["value_type"] == "enum":
            fields.insert(4, Field("allowed", "allowed values (comma-separated; blank: unchanged)",
                                   placeholder=", ".join(p["allowed"])))

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

        self.app.ask(FormScreen(f"Redefine {p['name']}", fields,
                                        note="Nothing is written: the plan is previewed in the tray."), done)

    def action_merge(self) -> None:
        p = self.current
        if p is None:
            return
        others = tuple((n, n) for n, _ in self._names() if n != p["name"] and n != "note")
        fields = [
            Field("into", f"merge {p['name']} into", "select", "", others),
            Field("reason", "reason"),
        ]

        def done(v: dict[str, Any] | None) -> None:
            if not v or not v.get("into"):
                return
            name, into, reason = p["name"], v["into"], v.get("reason", "")
            self.post_message(StagePlan(Recipe(f"merge {name} into {into}",
                                               lambda st: st.merge(name, into, reason=reason), "registry")))

        self.app.ask(FormScreen(f"Merge {p['name']}", fields), done)

    def action_split(self) -> None:
        merged = [(n, n) for p in self.predicates for n in p["merged"]]
        if not merged:
            self.app.notify("No merged name to split: no predicate is merged into another.", severity="warning")
            return
        p = self.current
        default = p["merged"][0] if p and p["merged"] else ""
        fields = [Field("name", "split this merged name back out", "select", default, tuple(merged)),
                  Field("reason", "reason")]

        def done(v: dict[str, Any] | None) -> None:
            if not v or not v.get("name"):
                return
            name, reason = v["name"], v.get("reason", "")
            self.post_message(StagePlan(Recipe(f"split {name}", lambda st: st.split(name, reason=reason), "registry")))

        self.app.ask(FormScreen("Split a merged name", fields), done)

    def action_define(self) -> None:
        fields = [
            Field("name", "name (snake_case)", placeholder="shell"),
            Field("cardinality", "cardinality", "select", "single", tuple((c, c) for c in CARDINALITIES)),
            Field("value_type", "value type", "select", "string", tuple((t, t) for t in VALUE_TYPES)),
            Field("description", "description"),
            Field("allowed", "allowed values (enum only, comma-separated)"),
            Field("excludes", "excludes (comma-separated predicates)"),
            Field("reason", "reason"),
        ]

        def done(v: dict[str, Any] | None) -> None:
            if not v or not v.get("name"):
                return
            name = v["name"]
            kwargs = dict(cardinality=v.get("cardinality") or "single", value_type=v.get("value_type") or "string",
                          description=v.get("description", ""), allowed=split_names(v.get("allowed", "")),
                          excludes=split_names(v.get("excludes", "")), reason=v.get("reason", ""))
            self.post_message(StagePlan(Recipe(f"define {name}", lambda st: st.define(name, **kwargs), "registry")))

        self.app.ask(FormScreen("Define a predicate", fields), done)


def _ns(text: str | None) -> int | None:
    if not text:
        return None
    from recall_engine.instants import parse_instant

    return parse_instant(text)
