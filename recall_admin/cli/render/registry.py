"""Renderers of the registry commands: list, show, log and lint."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from . import names, table, txt


def _rules_text(p: dict[str, Any]) -> str:
    parts = []
    if p["allowed"]:
        parts.append("one of " + "/".join(p["allowed"]))
    if p["excludes"]:
        parts.append("excludes " + ", ".join(p["excludes"]))
    if p["historical"]:
        parts.append("historical")
    if p["aliases"]:
        parts.append("aliases " + ", ".join(p["aliases"]))
    if p.get("merged"):
        parts.append("also read from " + ", ".join(p["merged"]))
    return "; ".join(parts)


def render_registry_list(con: Console, data: dict[str, Any]) -> None:
    t = table("name", "cardinality", "type", "rules", "origin", "events")
    for p in data["predicates"]:
        t.add_row(
            txt(p["name"]),
            txt(p["cardinality"]),
            txt(p["value_type"]),
            txt(_rules_text(p)),
            txt(p["origin"]),
            txt(p["events"]),
        )
    con.print(t)
    con.print(txt(f"Vocabulary: {'open' if data.get('open_vocabulary') else 'closed'}", "dim"))


def changes_table(changes: Sequence[dict[str, Any]], title: str | None = None) -> Table:
    t = table("at", "op", "name", "change", "operator", "plan", title=title)
    for c in changes:
        t.add_row(
            txt(c["at"]),
            txt(c["op"]),
            txt(c["name"]),
            txt(c.get("summary", "")),
            txt(c.get("operator") or ("automatic" if c.get("auto") else "")),
            txt(c.get("plan") or ""),
        )
    return t


def render_registry_show(con: Console, data: dict[str, Any]) -> None:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    for key in (
        "name",
        "cardinality",
        "value_type",
        "allowed",
        "excludes",
        "historical",
        "aliases",
        "merged",
        "description",
        "origin",
        "since",
        "events",
    ):
        v = data.get(key)
        if isinstance(v, list):
            v = names(v) or "—"
        elif isinstance(v, bool):
            v = "yes" if v else "no"
        grid.add_row(key, txt(v if v is not None else "—"))
    con.print(grid)
    if data["log"]:
        con.print(changes_table(data["log"], title="Registry log"))


def render_registry_log(con: Console, data: dict[str, Any]) -> None:
    if not data["changes"]:
        con.print(txt("The registry log is empty.", "dim"))
        return
    con.print(changes_table(data["changes"]))


def render_lint(con: Console, data: dict[str, Any]) -> None:
    if not data["findings"]:
        con.print(txt("No findings.", "green"))
        return
    t = table("code", "names", "detail")
    for f in data["findings"]:
        t.add_row(txt(f["code"]), txt(names(f["names"])), txt(f["detail"]))
    con.print(t)
