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
    if data.get("known_at"):
        con.print(txt(f"As answered by a read known at {data['known_at']} (as of {data['as_of']})", "bold"))
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


def steps_table(
    steps: Sequence[dict[str, Any]], title: str | None = None, predicate: str = "", *, recorded: bool = False
) -> Table:
    """The steps of a pair; ``recorded`` adds when the store recorded each one beside
    when it was said (``at``), which shows backdated statements."""
    t = (
        table("said at", "recorded at", "action", "value", "before → after", "source", title=title)
        if recorded
        else (table("at", "action", "value", "before → after", "source", title=title))
    )
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
        cells = [txt(action), value, change, txt(s.get("source", ""))]
        if recorded:
            rec = s.get("recorded_at") or ""
            late = bool(rec) and rec > s["at"]  # RFC3339 UTC instants order as text
            t.add_row(txt(s["at"]), txt(rec, "yellow" if late else ""), *cells)
        else:
            t.add_row(txt(s["at"]), *cells)
    return t


def render_history(con: Console, data: dict[str, Any], *, recorded: bool = False) -> None:
    now = values_text(data["believed_now"]) if data["believed_now"] else "nothing"
    con.print(line((f"{data['subject']} / {data['predicate']}", "bold"), f": believed now: {now}"))
    if data.get("known_at"):
        then = values_text(data["believed_then"]) if data["believed_then"] else "nothing"
        con.print(txt(f"Known at {data['known_at']} (steps recorded by then); a read then answered: {then}"))
    if data["steps"]:
        con.print(steps_table(data["steps"], predicate=data["predicate"], recorded=recorded))
    else:
        con.print(txt("No events.", "dim"))


def render_diff(con: Console, data: dict[str, Any]) -> None:
    if data.get("known_from") or data.get("known_to"):
        con.print(
            txt(
                f"As of {data['from']} known at {data.get('known_from') or 'now'} → "
                f"as of {data['to']} known at {data.get('known_to') or 'now'}",
                "bold",
            )
        )
    else:
        con.print(txt(f"From {data['from']} to {data['to']}", "bold"))
    if not data["changes"]:
        con.print(txt("No answer changed.", "dim"))
        return
    t = table("subject", "predicate", "began", "stopped")
    for c in data["changes"]:
        t.add_row(txt(c["subject"]), txt(c["predicate"]), vals(c["began"]), vals(c["stopped"]))
    con.print(t)


def render_explain(con: Console, data: dict[str, Any]) -> None:
    known = f", as answered by a read known at {data['known_at']}" if data.get("known_at") else ""
    con.print(txt(f"{data['subject']} / {data['predicate']} as of {data['as_of']}{known}", "bold"))
    if data["beliefs"]:
        con.print(beliefs_table(data["beliefs"], title="Believed then" if known else "Believed"))
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
    if data.get("since"):
        render_since(con, data["since"], data["known_at"], data["as_of"])


def render_since(con: Console, since: dict[str, Any], known_at: str, as_of: str) -> None:
    """What was recorded after ``known_at`` and what it does to the answer as of ``as_of``."""
    if not since["changed"]:
        con.print(txt(f"Today's answer as of {as_of} is the same.", "dim"))
    elif since["beliefs"]:
        con.print(beliefs_table(since["beliefs"], title=f"Believed as of {as_of} today"))
    else:
        con.print(txt(f"Today nothing is believed as of {as_of}.", "bold"))
    if since["statements"]:
        t = table(
            "recorded at", "said at", "statement", "value", "source", title=f"Statements recorded after {known_at}"
        )
        for e in since["statements"]:
            what = ("retract" if e["retraction"] else "assert") + (f" {e['predicate']}" if e.get("predicate") else "")
            t.add_row(
                txt(e.get("recorded_at") or ""), txt(e["observed_at"]), txt(what), val(e["value"]), txt(e["source"])
            )
        con.print(t)
    if since["registry"]:
        t = table("recorded at", "op", "rule", "operator", "reason", title=f"Registry records after {known_at}")
        for r in since["registry"]:
            t.add_row(
                txt(r.get("recorded_at") or ""), txt(r["op"]), txt(r["change"]), txt(r["operator"]), txt(r["reason"])
            )
        con.print(t)
    if not since["statements"] and not since["registry"]:
        con.print(txt(f"Nothing that bears on this pair was recorded after {known_at}.", "dim"))


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
