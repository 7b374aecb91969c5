"""Renderers of the memory commands: recall, search, remember, forget, history, diff, explain, init,
collections, import and export."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from . import beliefs_table, line, names, prior_text, table, txt, val, vals, values_text


def render_beliefs(con: Console, data: dict[str, Any]) -> None:
    beliefs = data["beliefs"]
    if not beliefs:
        con.print(txt(f"Nothing is believed (as of {data['as_of']}).", "dim"))
        return
    con.print(beliefs_table(beliefs))


def render_remember(con: Console, data: dict[str, Any]) -> None:
    s = data["stored"]
    what = line(s["subject"], " ", s["predicate"], " = ", val(s["value"]))
    if data["already_known"]:
        con.print(line(("Already known: ", "bold"), what, (f"  (since {s['observed_at']})", "dim")))
    else:
        con.print(line(("Stored: ", "bold green"), what, (f"  ({s['observed_at']}, {s['event_id']})", "dim")))
    for ch in data.get("registry_changes", []):
        if ch["op"] == "merge":
            con.print(txt(f"  {ch['name']} is read as {ch['into']} (matched an existing predicate)", "yellow"))
        else:
            con.print(txt(f"  defined new predicate {ch['name']} on first use", "yellow"))
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
        con.print(txt("Nothing was believed, so nothing was written.", "dim"))
        return
    con.print(beliefs_table(data["withdrawn"], title="Withdrawn"))


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
        if s.get("stored_as") and s["stored_as"] != predicate:  # read under a merge
            action += f" (stored as {s['stored_as']})"
        change = Text.assemble(vals(s["before"]), " → ", vals(s["after"]))
        value = (
            val(s["value"]) if s["value"] is not None else txt("all" if s["action"] == "retract_all" else "—", "dim")
        )
        t.add_row(txt(s["at"]), txt(action), value, change, txt(s.get("source", "")))
    return t


def render_history(con: Console, data: dict[str, Any]) -> None:
    now = values_text(data["believed_now"]) if data["believed_now"] else "nothing"
    con.print(line((f"{data['subject']} / {data['predicate']}", "bold"), f": believed now: {now}"))
    if data["steps"]:
        con.print(steps_table(data["steps"], predicate=data["predicate"]))
    else:
        con.print(txt("No events.", "dim"))


def render_diff(con: Console, data: dict[str, Any]) -> None:
    con.print(txt(f"From {data['from']} to {data['to']}", "bold"))
    if not data["changes"]:
        con.print(txt("No answer changed.", "dim"))
        return
    t = table("subject", "predicate", "began", "stopped")
    for c in data["changes"]:
        t.add_row(txt(c["subject"]), txt(c["predicate"]), vals(c["began"]), vals(c["stopped"]))
    con.print(t)


def render_explain(con: Console, data: dict[str, Any]) -> None:
    con.print(txt(f"{data['subject']} / {data['predicate']} as of {data['as_of']}", "bold"))
    if data["beliefs"]:
        con.print(beliefs_table(data["beliefs"], title="Believed"))
    else:
        con.print(txt("Nothing is believed.", "dim"))
    if data["reasons"]:
        t = table("value", "held", "why", "at", "event", title="Why")
        for r in data["reasons"]:
            t.add_row(
                val(r["value"]), txt("yes" if r["held"] else "no"), txt(r["reason"]), txt(r["at"]), txt(r["event_id"])
            )
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


def render_init(con: Console, data: dict[str, Any]) -> None:
    con.print(line(("Store: ", "bold"), data["store"], ("  collection: ", "bold"), data["collection"]))
    if data["declared"]:
        con.print(txt(f"Declared {len(data['declared'])} predicate(s): " + names(data["declared"])))
    else:
        con.print(txt("The registry already matches: nothing declared.", "dim"))
    if data.get("opened"):
        con.print(txt("The vocabulary is open: writes may define new predicates."))


def render_collections(con: Console, data: dict[str, Any]) -> None:
    if not data["collections"]:
        con.print(txt("No collections.", "dim"))
        return
    t = table("name", "events", "registry")
    for c in data["collections"]:
        t.add_row(txt(c["name"]), txt(c["events"]), txt(c["registry"]))
    con.print(t)


def render_import(con: Console, data: dict[str, Any]) -> None:
    """`import` and `audit import` alike."""
    con.print(txt(f"Imported {data['imported']} event(s); skipped {data['skipped']} already stored."))


def render_export(con: Console, data: dict[str, Any]) -> None:
    con.print(txt(f"Exported {data['exported']} event(s) to {data['file']}."))
