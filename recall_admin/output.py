"""The one renderer: a JSON envelope for scripts, Rich tables and text for people.

Stdout holds data only: in ``--json`` mode exactly one JSON document
(``{"ok": true, "data": ...}`` or ``{"ok": false, "error": {"code", "message"}}``);
in human mode the tables and lines that answer the command. Messages, warnings
and progress go to stderr. Renderers only lay out the data a command computed;
they decide nothing.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Callable, Iterable, Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from recall_engine.values import value_text

from .display import visible

Renderer = Callable[[Console, Any], None]


PIPE_WIDTH = 160  # lines written to a file or a pipe are not cut at 80 columns


def _console(stderr: bool) -> Console:
    # file=None: Rich writes to whatever sys.stdout/sys.stderr is at print time
    con = Console(stderr=stderr, highlight=False, emoji=False, soft_wrap=False)
    if not con.is_terminal and not os.environ.get("COLUMNS"):
        con.width = max(con.width, PIPE_WIDTH)
    return con


class Output:
    """Where a command's answer and messages go, in the mode the operator chose."""

    def __init__(self, json_mode: bool = False) -> None:
        self.json_mode = json_mode
        self._out: Console | None = None
        self._err: Console | None = None

    @property
    def out(self) -> Console:
        if self._out is None:
            self._out = _console(stderr=False)
        return self._out

    @property
    def err(self) -> Console:
        if self._err is None:
            self._err = _console(stderr=True)
        return self._err

    # --- results ----------------------------------------------------------------

    def emit(self, data: Any, render: Renderer | None = None) -> None:
        """The command's answer: the envelope in JSON mode, else the renderer's tables."""
        if self.json_mode:
            write_json({"ok": True, "data": data})
        elif render is not None:
            render(self.out, data)

    def error(self, code: str, message: str) -> None:
        if self.json_mode:
            write_json({"ok": False, "error": {"code": code, "message": message}})
        else:
            self.err.print(Text.assemble(("error: ", "bold red"), message))

    # --- messages and warnings: stderr (messages in human mode only) ----------------

    def message(self, text: str, style: str = "") -> None:
        if not self.json_mode:
            self.err.print(Text(text, style=style))

    def warn(self, text: str) -> None:
        self.err.print(Text.assemble(("warning: ", "yellow"), text))


def write_json(doc: Any) -> None:
    sys.stdout.write(json.dumps(doc, ensure_ascii=False) + "\n")
    sys.stdout.flush()


# --- cells ------------------------------------------------------------------------


def val(v: Any) -> Text:
    """A value as it reads in a table (numbers without exponent, booleans lower-case)."""
    return Text(value_text(v))


def vals(vs: Iterable[Any]) -> Text:
    items = [value_text(v) for v in vs]
    return Text(", ".join(items) if items else "—", style="" if items else "dim")


def txt(s: Any, style: str = "") -> Text:
    return Text("" if s is None else str(s), style=style)


def table(*columns: str, title: str | None = None) -> Table:
    t = Table(title=title, title_justify="left", show_edge=False, pad_edge=False, header_style="bold")
    for c in columns:
        # nothing is ever cut with an ellipsis: long cells fold onto more lines
        t.add_column(c, overflow="fold", no_wrap=c in ("at", "since"))
    return t


def heading(con: Console, text: str) -> None:
    con.print(Text(text, style="bold"))


def _marks(b: dict[str, Any]) -> Text:
    out = Text()
    parts: list[Text] = []
    if b.get("replaced"):
        parts.append(Text("replaced " + prior_text(b["replaced"], b["predicate"]), style="cyan"))
    if b.get("elsewhere"):
        parts.append(
            Text(
                "also " + ", ".join(f"{e['predicate']}={value_text(e['value'])}" for e in b["elsewhere"]),
                style="yellow",
            )
        )
    if b.get("stored_as"):
        parts.append(Text(f"stored as {b['stored_as']}", style="dim"))
    if b.get("promoted_from"):
        parts.append(Text(f"promoted from {b['promoted_from']}", style="dim"))
    for i, p in enumerate(parts):
        if i:
            out.append("; ")
        out.append(p)
    return out


def prior_text(replaced: Sequence[dict[str, Any]], predicate: str) -> str:
    """`replaced` entries: a value of the same pair as itself, another pair's as ``likes: mangoes``."""
    return ", ".join(
        visible((f"{p['predicate']}: " if p.get("predicate") not in (None, "", predicate) else "") + value_text(p["value"]))
        for p in replaced
    )


# --- beliefs ----------------------------------------------------------------------


def beliefs_table(beliefs: Sequence[dict[str, Any]], title: str | None = None) -> Table:
    t = table("subject", "predicate", "value", "since", "source", "marks", title=title)
    for b in beliefs:
        t.add_row(
            txt(b["subject"]), txt(b["predicate"]), val(b["value"]), txt(b["observed_at"]),
            txt(b["source"]), _marks(b),
        )
    return t


def render_beliefs(con: Console, data: dict[str, Any]) -> None:
    beliefs = data["beliefs"]
    if not beliefs:
        con.print(Text(f"Nothing is believed (as of {data['as_of']}).", style="dim"))
        return
    con.print(beliefs_table(beliefs))


def render_remember(con: Console, data: dict[str, Any]) -> None:
    s = data["stored"]
    what = f"{s['subject']} {s['predicate']} = {value_text(s['value'])}"
    if data["already_known"]:
        con.print(Text.assemble(("Already known: ", "bold"), what, (f"  (since {s['observed_at']})", "dim")))
    else:
        con.print(Text.assemble(("Stored: ", "bold green"), what, (f"  ({s['observed_at']}, {s['event_id']})", "dim")))
    for ch in data.get("registry_changes", []):
        if ch["op"] == "merge":
            con.print(Text(f"  {ch['name']} is read as {ch['into']} (matched an existing predicate)", style="yellow"))
        else:
            con.print(Text(f"  defined new predicate {ch['name']} on first use", style="yellow"))
    if data["displaced"]:
        con.print(beliefs_table(data["displaced"], title="No longer believed"))
    if data["unreplaced"]:
        t = table("predicate", "value", "reason", title="Not replaced")
        for u in data["unreplaced"]:
            t.add_row(txt(u["predicate"]), val(u["value"]), txt(u["reason"]))
        con.print(t)
    if data["related"]:
        con.print(beliefs_table(data["related"], title="Related beliefs that may contradict it"))


def render_forget(con: Console, data: dict[str, Any]) -> None:
    if not data["withdrawn"]:
        con.print(Text("Nothing was believed, so nothing was written.", style="dim"))
        return
    con.print(beliefs_table(data["withdrawn"], title="Withdrawn"))


# --- history, diff, explain ---------------------------------------------------------


def steps_table(steps: Sequence[dict[str, Any]], title: str | None = None, predicate: str = "") -> Table:
    t = table("at", "action", "value", "before → after", "source", title=title)
    for s in steps:
        action = s["action"]
        if s.get("via") and action in ("exclude", "replaces"):
            action += f" ({s['via']})"
        if s.get("promoted_to"):
            action = s["promoted_to"]["text"]
        elsewhere = [p for p in s.get("replaced", []) if p.get("predicate") not in (None, "", predicate)]
        if elsewhere:  # its own pair's are in before → after already
            action += "; replaced " + prior_text(elsewhere, predicate)
        change = Text.assemble(vals(s["before"]), " → ", vals(s["after"]))
        value = val(s["value"]) if s["value"] is not None else Text("all" if s["action"] == "retract_all" else "—", style="dim")
        t.add_row(txt(s["at"]), txt(action), value, change, txt(s.get("source", "")))
    return t


def render_history(con: Console, data: dict[str, Any]) -> None:
    now = ", ".join(value_text(v) for v in data["believed_now"]) or "nothing"
    con.print(Text.assemble((f"{data['subject']} / {data['predicate']}", "bold"), f": believed now: {now}"))
    if data["steps"]:
        con.print(steps_table(data["steps"], predicate=data["predicate"]))
    else:
        con.print(Text("No events.", style="dim"))


def render_diff(con: Console, data: dict[str, Any]) -> None:
    con.print(Text(f"From {data['from']} to {data['to']}", style="bold"))
    if not data["changes"]:
        con.print(Text("No answer changed.", style="dim"))
        return
    t = table("subject", "predicate", "began", "stopped")
    for c in data["changes"]:
        t.add_row(txt(c["subject"]), txt(c["predicate"]), vals(c["began"]), vals(c["stopped"]))
    con.print(t)


def render_explain(con: Console, data: dict[str, Any]) -> None:
    con.print(Text(f"{data['subject']} / {data['predicate']} as of {data['as_of']}", style="bold"))
    if data["beliefs"]:
        con.print(beliefs_table(data["beliefs"], title="Believed"))
    else:
        con.print(Text("Nothing is believed.", style="dim"))
    if data["reasons"]:
        t = table("value", "held", "why", "at", "event", title="Why")
        for r in data["reasons"]:
            t.add_row(val(r["value"]), txt("yes" if r["held"] else "no"), txt(r["reason"]), txt(r["at"]), txt(r["event_id"]))
        con.print(t)
    if data["rules"]:
        t = table("at", "op", "name", "rule", "operator", title="Registry rules (oldest first)")
        for r in data["rules"]:
            t.add_row(txt(r["at"]), txt(r["op"]), txt(r["name"]), txt(r["change"]), txt(r.get("operator") or ""))
        con.print(t)
    if data["steps"]:
        con.print(steps_table(data["steps"], title="History", predicate=data["predicate"]))
    evidence = [e for e in data.get("events", []) if e.get("evidence")]
    if evidence:
        t = table("event", "evidence", title="Evidence")
        for e in evidence:
            t.add_row(txt(e["id"]), txt(e["evidence"]))
        con.print(t)


# --- registry -----------------------------------------------------------------------


def _rules_text(p: dict[str, Any]) -> Text:
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
    return Text("; ".join(parts))


def render_registry_list(con: Console, data: dict[str, Any]) -> None:
    t = table("name", "cardinality", "type", "rules", "origin", "events")
    for p in data["predicates"]:
        t.add_row(
            txt(p["name"]), txt(p["cardinality"]), txt(p["value_type"]), _rules_text(p), txt(p["origin"]),
            txt(p["events"]),
        )
    con.print(t)
    con.print(Text(f"Vocabulary: {'open' if data.get('open_vocabulary') else 'closed'}", style="dim"))


def changes_table(changes: Sequence[dict[str, Any]], title: str | None = None) -> Table:
    t = table("at", "op", "name", "change", "operator", "plan", title=title)
    for c in changes:
        t.add_row(
            txt(c["at"]), txt(c["op"]), txt(c["name"]), txt(c.get("summary", "")), txt(c.get("operator") or ""),
            txt(c.get("plan") or ""),
        )
    return t


def render_registry_show(con: Console, data: dict[str, Any]) -> None:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    for key in ("name", "cardinality", "value_type", "allowed", "excludes", "historical", "aliases",
                "merged", "description", "origin", "since", "events"):
        v = data.get(key)
        if isinstance(v, list):
            v = ", ".join(str(x) for x in v) or "—"
        elif isinstance(v, bool):
            v = "yes" if v else "no"
        grid.add_row(key, txt(v if v is not None else "—"))
    con.print(grid)
    if data["log"]:
        con.print(changes_table(data["log"], title="Registry log"))


def render_registry_log(con: Console, data: dict[str, Any]) -> None:
    if not data["changes"]:
        con.print(Text("The registry log is empty.", style="dim"))
        return
    con.print(changes_table(data["changes"]))


# --- store -------------------------------------------------------------------------


def render_init(con: Console, data: dict[str, Any]) -> None:
    con.print(Text.assemble(("Store: ", "bold"), data["store"], ("  collection: ", "bold"), data["collection"]))
    if data["declared"]:
        con.print(Text(f"Declared {len(data['declared'])} predicate(s): " + ", ".join(data["declared"])))
    else:
        con.print(Text("The registry already matches: nothing declared.", style="dim"))
    if data.get("opened"):
        con.print(Text("The vocabulary is open: writes may define new predicates."))


def render_collections(con: Console, data: dict[str, Any]) -> None:
    if not data["collections"]:
        con.print(Text("No collections.", style="dim"))
        return
    t = table("name", "events", "registry")
    for c in data["collections"]:
        t.add_row(txt(c["name"]), txt(c["events"]), txt(c["registry"]))
    con.print(t)


def render_import(con: Console, data: dict[str, Any]) -> None:
    con.print(Text(f"Imported {data['imported']} event(s); skipped {data['skipped']} already stored."))


def render_export(con: Console, data: dict[str, Any]) -> None:
    con.print(Text(f"Exported {data['exported']} event(s) to {data['file']}."))
