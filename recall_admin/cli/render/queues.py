"""Renderers of the review queues: conflicts, the vocabulary inbox and suggestions, notes."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from . import hint, line, names, table, txt, val, values_text


def render_conflicts(con: Console, data: dict[str, Any]) -> None:
    conflicts = data["conflicts"]
    if not conflicts:
        extra = f" ({data['dismissed']} dismissed)" if data.get("dismissed") else ""
        con.print(txt(f"No conflicts: no subject holds one value under two predicates{extra}.", "dim"))
        return
    if data.get("groups"):
        t = table("group", "predicates", "subjects", "latest", "settle with", title="Groups (one decision each)")
        for g in data["groups"]:
            t.add_row(
                txt(g["id"]),
                txt(names(g["predicates"])),
                txt(g["count"]),
                txt(g["latest"]),
                txt(g["settle"]["exclude"], "dim"),
            )
        con.print(t)
    t = table("id", "subject", "value", "held under", "latest", title="Conflicts (most recent first)")
    for c in conflicts:
        held = Text("; ").join(
            line((h["predicate"], "magenta"), (f" since {h['observed_at'][:10]} ({h['source']})", "dim"))
            for h in c["held"]
        )
        if c.get("dismissed"):
            held.append(" [dismissed]", style="yellow")
        t.add_row(txt(c["id"]), txt(c["subject"]), val(c["value"]), held, txt(c["latest"]))
    con.print(t)
    if data.get("dismissed"):
        shown = any(c.get("dismissed") for c in conflicts)
        con.print(
            txt(f"{data['dismissed']} dismissed conflict(s) " + ("marked [dismissed]." if shown else "hidden."), "dim")
        )
    hint(
        "Decide with: conflicts confirm ID --keep PREDICATE | conflicts exclude ID | conflicts dismiss ID --reason TEXT"
    )


def render_dismissed(con: Console, data: dict[str, Any]) -> None:
    n = len(data.get("conflicts", []))
    con.print(
        txt(
            f"Dismissed {data['dismissed']} ({n} conflict(s)); it stays away until either belief changes.", "bold green"
        )
    )


def render_undismissed(con: Console, data: dict[str, Any]) -> None:
    con.print(txt(f"Conflict {data['undismissed']} is shown again.", "bold green"))


def render_inbox(con: Console, data: dict[str, Any]) -> None:
    items = data["predicates"]
    if not items:
        con.print(txt("The vocabulary inbox is empty: no name defined or matched by agents awaits review.", "dim"))
        return
    t = table("name", "origin", "into / shape", "score", "at", "events", "first write", "status")
    for p in items:
        shape = p.get("into") or f"{p.get('cardinality', '?')} {p.get('value_type', '')}".strip()
        cb = p.get("caused_by")
        first = line(cb["subject"], ": ", val(cb["value"]), f" ({cb['observed_at'][:10]})") if cb else txt("—")
        score = f"{p['score']:.2f}" if p.get("score") is not None else "—"
        t.add_row(
            txt(p["name"]),
            txt(p["origin"]),
            txt(shape),
            txt(score),
            txt(p["at"]),
            txt(p["events"]),
            first,
            txt(p["status"]),
        )
    con.print(t)


def render_suggest(con: Console, data: dict[str, Any]) -> None:
    clusters = data["clusters"]
    if not clusters:
        con.print(txt(f"No near-duplicate predicates at threshold {data['threshold']}.", "dim"))
        return
    t = table("id", "names", "score", "suggestion", "why", "stage with")
    for c in clusters:
        s = c["suggestion"]
        t.add_row(
            txt(c["id"]),
            txt(names(c["names"])),
            txt(f"{c['score']:.2f}"),
            txt(f"merge {names(s['merge'])} into {s['into']}"),
            txt(s["reason"]),
            txt(s["stage"], "dim"),
        )
    con.print(t)
    hint("Not the same thing? vocab never ID keeps a pair from coming back.")


def render_never(con: Console, data: dict[str, Any]) -> None:
    pairs = ", ".join(" / ".join(p) for p in data["never"])
    con.print(txt(f"Never merge: {pairs}" + ("" if data["events"] else " (already recorded)"), "bold green"))


def render_notes(con: Console, data: dict[str, Any]) -> None:
    notes = data["notes"]
    if not notes:
        con.print(txt("No notes.", "dim"))
        return
    t = table("event", "subject", "note", "at", "source")
    for n in notes:
        t.add_row(txt(n["event_id"]), txt(n["subject"]), val(n["value"]), txt(n["observed_at"]), txt(n["source"]))
    con.print(t)


def render_note_clusters(con: Console, data: dict[str, Any]) -> None:
    clusters = data["clusters"]
    if not clusters:
        con.print(txt("No notes look alike yet.", "dim"))
        return
    for c in clusters:
        s = c["suggestion"]
        con.print(
            line(
                (c["id"], "bold"),
                f"  {c['size']} note(s) about ",
                (names(c["about"]), "cyan"),
                "  → ",
                (s["predicate"], "magenta"),
                ("" if s["existing"] else " (new)", "yellow"),
            )
        )
        t = table("event", "subject", "note", "value")
        for n in c["notes"]:
            v = (
                txt(f"→ {values_text([n['value']])}", "green")
                if n["ok"]
                else txt(f"stays a note: {n['error']}", "yellow")
            )
            t.add_row(txt(n["event_id"]), txt(n["subject"]), val(n["note"]), v)
        con.print(t)
        if s["regex"]:
            con.print(txt(f"  regex: {s['regex']}", "dim"))
        con.print(txt(f"  stage: {s['command']}", "dim"))
