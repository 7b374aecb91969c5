"""Renderers of the data commands: audit bundles and the demo."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from . import beliefs_table, line, names, txt


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
    con.print(
        txt(
            "Try: recall-admin recall user · recall-admin conflicts list · recall-admin vocab suggest · "
            "recall-admin tui",
            "dim",
        )
    )
