"""Renderers of the agent commands: key create, key list, key revoke."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from . import hint, table, txt


def render_key(con: Console, data: dict[str, Any]) -> None:
    con.print(data["key"], markup=False, highlight=False)  # alone on stdout: KEY=$(recall-admin key create ...)
    hint(
        f"id {data['id']}, namespace {data['namespace']} (collection {data['collection']}), "
        f"expires {data['expires'] or 'never'}{', read-only' if data['read_only'] else ''}. "
        "The key is shown once: keep it now."
    )


def render_keys(con: Console, data: dict[str, Any]) -> None:
    if not data["keys"]:
        con.print(txt("no keys", "dim"))
        return
    t = table("id", "namespace", "collection", "expires", "read-only", "revoked")
    for k in data["keys"]:
        t.add_row(
            txt(k["id"]),
            txt(k["namespace"]),
            txt(k["collection"]),
            txt(k["expires"] or "never"),
            txt("yes" if k["read_only"] else ""),
            txt(k["revoked_at"] or ""),
        )
    con.print(t)


def render_revoked(con: Console, data: dict[str, Any]) -> None:
    con.print(txt(f"revoked {data['revoked']}"))
