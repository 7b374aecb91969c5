"""`verify`: check a live store's log (docs/audit.md, "Verifying a live store")."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.console import Console

from recall_engine.errors import RecallError

from ..options import state
from ..render import line, table, txt


class IntegrityFailed(RecallError):
    code = "integrity_failed"


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
        data = result.to_json()
        if result.ok:
            st.output.emit(data, render_verification)
            return
        if not st.json_mode:
            render_verification(st.output.out, data)
        raise IntegrityFailed(summary(data))


def summary(data: dict[str, Any]) -> str:
    parts = [*data["problems"]]
    bad = data["bad_events"]
    if bad:
        shown = "; ".join(
            f"{b['event_id']} of {b['subject']!r}"
            + (f" at position {b['position']}" if b["position"] is not None else "")
            + f": {b['reason']}"
            for b in bad[:5]
        )
        parts.append(f"{len(bad)} bad event(s): {shown}{' ...' if len(bad) > 5 else ''}")
    return f"collection {data['collection']!r} does not verify: " + " | ".join(parts)


def render_verification(con: Console, data: dict[str, Any]) -> None:
    verdict = ("verified", "bold green") if data["ok"] else ("NOT verified", "bold red")
    con.print(line(verdict, f"  collection {data['collection']}: {data['events']} event(s), count {data['counted']}"))
    if data["digest"]:
        con.print(txt(f"log digest {data['digest']}"))
    if data["kept"]:
        con.print(txt(f"kept digest {'matches' if data['kept_matches'] else 'does NOT match'}"))
    if data["bad_events"]:
        t = table("position", "event", "subject", "reason", title="Bad events")
        for b in data["bad_events"]:
            pos = "" if b["position"] is None else str(b["position"])
            t.add_row(txt(pos), txt(b["event_id"]), txt(b["subject"]), txt(b["reason"]))
        con.print(t)
    for p in data["problems"]:
        con.print(txt(f"- {p}", "red"))
    if data["ok"] and not data["kept"]:
        con.print(
            txt("Keep the log digest elsewhere; `verify --digest D` later shows whether those events changed.", "dim")
        )
