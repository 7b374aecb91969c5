"""`verify`: check a live store's log (docs/audit.md, "Verifying a live store")."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.console import Console

from ..options import state
from ..render import line, table, txt


def register(app: typer.Typer) -> None:
    @app.command(rich_help_panel="Audit")
    def verify(
        ctx: typer.Context,
        digest: Annotated[
            str | None,
            typer.Option("--digest", metavar="D", help="A log digest printed by an earlier verify, kept elsewhere."),
        ] = None,
    ) -> None:
        """Check the collection's log: ids match content, counts match, and the log digest (against a kept one)."""
        from recall_engine.integrity import verify_log

        st = state(ctx)
        st.read_only = True  # verify never writes, and must open a store whose guards were dropped
        result = verify_log(st.session(create=False).store, digest or "")
        st.output.emit(result.to_json(), render_verification)
        if not result.ok:
            st.output.message(summary(result.to_json()), "red")
            raise typer.Exit(1)  # the report is the answer; the exit says it does not verify


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
        con.print(
            txt("Keep the log digest elsewhere; `verify --digest D` later shows whether those events changed.", "dim")
        )
