"""Renderers of the data commands: audit bundles, the demo, and verify."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from . import beliefs_table, hint, line, names, table, txt


def render_verify(con: Console, data: dict[str, Any]) -> None:
    con.print(line(("valid", "bold green"), f"  {data['events']} event(s)  digest {data['digest']}"))


def render_replay(con: Console, data: dict[str, Any]) -> None:
    if not data["beliefs"]:
        con.print(txt(f"Nothing was believed as of {data['as_of']}.", "dim"))
        return
    con.print(txt(f"Beliefs as of {data['as_of']}", "bold"))
    con.print(beliefs_table(data["beliefs"]))


def render_bundle_written(con: Console, data: dict[str, Any]) -> None:
    con.print(txt(f"Wrote {data['events']} event(s) to {data['file']}; digest {data['digest']}"))


def render_demo(con: Console, data: dict[str, Any]) -> None:
    if data.get("already_seeded"):
        return  # said on stderr: nothing was added
    con.print(txt(f"Seeded {names(data['collections'])}: {data['events']:,} event(s) in {data['collections'][0]}."))
    hint("Try: recall-admin recall user · recall-admin conflicts list · recall-admin vocab suggest · recall-admin tui")


def summary(data: dict[str, Any]) -> str:
    shown = "; ".join(
        (f"{p['event_id']} of {p['subject']!r}" if p["event_id"] else "")
        + (f" at position {p['position']}" if p["position"] is not None else "")
        + (": " if p["event_id"] else "")
        + p["reason"]
        for p in data["problems"][:5]
    )
    more = f" (and {len(data['problems']) - 5} more)" if len(data["problems"]) > 5 else ""
    return f"collection {data['collection']!r} does not verify: {shown}{more}"


def render_verification(con: Console, data: dict[str, Any]) -> None:
    verdict = ("verified", "bold green") if data["valid"] else ("NOT verified", "bold red")
    con.print(line(verdict, f"  collection {data['collection']}: {data['events']} event(s), count {data['counted']}"))
    if data["digest"]:
        con.print(txt(f"log digest {data['digest']}"))
    if data["kept"]:
        con.print(txt(f"kept digest {'matches' if data['kept_matches'] else 'does NOT match'}"))
    bad = [p for p in data["problems"] if p["event_id"]]
    if bad:
        t = table("position", "event", "subject", "reason", title="Bad events")
        for b in bad:
            pos = "" if b["position"] is None else str(b["position"])
            t.add_row(txt(pos), txt(b["event_id"]), txt(b["subject"]), txt(b["reason"]))
        con.print(t)
    for p in data["problems"]:
        if not p["event_id"]:
            con.print(txt(f"- {p['reason']}", "red"))
    if data["valid"] and not data["kept"]:
        con.print(  # part of the report: which digest to keep
            txt("Keep the log digest elsewhere; `verify --digest D` later shows whether those events changed.", "dim")
        )


def render_verifications(con: Console, data: dict[str, Any]) -> None:
    """``verify --all``: each collection's report, then the count of those that do not verify."""
    for v in data["collections"]:
        render_verification(con, v)
    bad = [v["collection"] for v in data["collections"] if not v["valid"]]
    n = len(data["collections"])
    if bad:
        con.print(txt(f"{len(bad)} of {n} collection(s) do NOT verify: {', '.join(bad)}", "bold red"))
    else:
        con.print(txt(f"all {n} collection(s) verified", "bold green"))
