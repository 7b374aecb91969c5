"""Readable renderings of a plan preview, for the CLI and the TUI alike.

Every function takes the preview's JSON form (``Preview.to_json()``: the
document ``--json`` prints and a TUI worker can hold), so a preview saved to a
file, one computed in a worker and one printed by the CLI all look the same.
Nothing here decides anything: counts, changes and risks come from
``recall_admin.governance``. Rich only; no Typer, no Textual. Text from the store
(names, values, titles, risk details) is shown through ``display.visible``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from recall_engine.values import value_key, value_text

from ...display import visible
from . import FitTable, names, txt, values_text

# Risk flags (governance._risks) and how loudly to show them.
RISK_STYLES = {
    "values_hidden": "bold red",
    "retroactive": "bold red",
    "cardinality_mismatch": "bold yellow",
    "enum_narrowed": "yellow",
    "unparsed_notes": "yellow",
    "large_blast_radius": "bold red",
    "new_conflicts": "bold yellow",
}

MAX_ROWS = 200  # changes shown in the table; the JSON form always has all of them


def summary_line(data: Mapping[str, Any]) -> str:
    """Terraform-like one-liner: ``Plan plan-…: N pairs · S subjects · A answers change · H histories change``."""
    imp = data.get("impact", {})
    plan = data.get("plan", {})
    parts = [
        _count(imp.get("pairs", 0), "pair", "pairs"),
        _count(imp.get("subjects", 0), "subject", "subjects"),
        _count(imp.get("answers_changed", 0), "answer changes", "answers change"),
        _count(imp.get("history_changed", 0), "history changes", "histories change"),
    ]
    if any("before_as_of" in c for c in imp.get("changes", [])):
        parts.append(_count(imp.get("answers_changed_as_of", 0), "answer changes", "answers change") + " as of then")
    if imp.get("replaced_changed"):
        parts.append(_count(imp["replaced_changed"], "pair lists", "pairs list") + " other replaced values")
    return visible(f"Plan {plan.get('id', '?')}: " + " · ".join(parts))


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def ops_lines(plan: Mapping[str, Any]) -> list[str]:
    """One line per registry record the plan appends."""
    out = []
    for op in plan.get("ops", []):
        kind, name = op.get("op", "?"), op.get("name", "")
        if kind == "merge":
            out.append(f"merge {name} into {op.get('into', '?')}")
        elif kind == "promote":
            out.append(f"promote {len(op.get('notes', []))} note(s) into {name}")
        elif kind == "withdraw":
            events = len(op.get("events", []))
            out.append(f"withdraw plan {op.get('withdraws', '?')}" + (f" and its {events} event(s)" if events else ""))
        elif kind == "vocabulary":
            out.append("open the vocabulary" if op.get("open") else "close the vocabulary")
        else:
            d = op.get("definition") or {}
            shape = f"{d.get('cardinality', '?')}-valued {d.get('value_type') or 'string'}"
            extra = []
            if d.get("allowed"):
                extra.append("allowed " + "/".join(d["allowed"]))
            if d.get("excludes"):
                extra.append("excludes " + ", ".join(d["excludes"]))
            if d.get("historical"):
                extra.append("historical")
            if op.get("retroactive"):
                extra.append("whole history")
            out.append(f"{kind} {name}: {shape}" + (f" ({'; '.join(extra)})" if extra else ""))
    n = len(plan.get("statements", []))
    if n:
        out.append(f"{n} operator statement(s)")
    return [visible(x) for x in out]


def _field_text(v: Any) -> str:
    if isinstance(v, list):
        return ", ".join(str(x) for x in v) or "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    return str(v) if v not in (None, "") else "—"


def predicates_text(details: Mapping[str, Any]) -> Text | None:
    """A registry load, predicate by predicate: new, changed (each field before → after), unchanged."""
    preds = details.get("predicates")
    # other plans' details name predicates too (an exclude: a list of names); only a load has entries
    if not isinstance(preds, list) or not preds or not all(isinstance(p, Mapping) for p in preds):
        return None
    out = Text()
    same = [p.get("name", "") for p in preds if p.get("status") == "unchanged"]
    for p in preds:
        status, name = p.get("status"), visible(p.get("name", ""))
        if status == "new":
            d = p.get("definition") or {}
            out.append(
                f"  + {name}: new, {d.get('cardinality', '?')}-valued {d.get('value_type') or 'string'}\n", "green"
            )
        elif status == "changed":
            fields = "; ".join(
                f"{k} {visible(_field_text(f.get('before')))} → {visible(_field_text(f.get('after')))}"
                for k, f in (p.get("fields") or {}).items()
            )
            out.append(f"  ~ {name}: {fields}\n", "yellow")
    if same:
        out.append(f"  = unchanged: {visible(', '.join(same))}\n", "dim")
    out.rstrip()
    return out


def changes_table(
    changes: Iterable[Mapping[str, Any]], limit: int = MAX_ROWS, merged: Mapping[str, str] | None = None
) -> Table:
    """subject · predicate · before → after · history (and the as-of columns when compared).

    ``merged`` maps a name the plan merges away to the predicate it will read as, so
    its emptied rows say where its values went."""
    rows = list(changes)
    merged = merged or {}
    as_of = any("before_as_of" in c for c in rows)
    # values are never cut short with an ellipsis: they wrap between words, or the rows stack
    t = FitTable(title="Changes", title_justify="left", show_lines=False, expand=False)
    t.add_column("subject", style="cyan", overflow="fold")
    t.add_column("predicate", style="magenta", overflow="fold")
    t.add_column("before", style="red", overflow="fold")
    t.add_column("", no_wrap=True)
    t.add_column("after", style="green", overflow="fold")
    if as_of:
        t.add_column("as of: before → after", overflow="fold")
    t.add_column("history", overflow="fold")
    for c in rows[:limit]:
        before, after = c.get("before", []), c.get("after", [])
        same = _keys(before) == _keys(after)
        # data is never markup: a value or subject holding "[/i]" must print as written
        cells: list[RenderableType] = [
            txt(c.get("subject", "")),
            txt(c.get("predicate", "")),
            Text(values_text(before), style="dim" if same else "red"),
            "=" if same else "→",
            Text(values_text(after), style="dim" if same else "green"),
        ]
        if not after and c.get("predicate") in merged:
            cells[4] = txt(f"(read as {merged[c['predicate']]})", "dim")
        if as_of:
            if "before_as_of" in c:
                ba, aa = c.get("before_as_of", []), c.get("after_as_of", [])
                arrow = "=" if _keys(ba) == _keys(aa) else "→"
                cells.append(Text(f"{values_text(ba)} {arrow} {values_text(aa)}"))
            else:
                cells.append("")
        history = Text("changes", style="yellow") if c.get("history_changed") else Text("same", style="dim")
        cells.append(history)
        if c.get("replaced_changes"):  # a belief held now would list other `replaced` values
            history.append(
                " · replaced "
                + "; ".join(
                    f"{values_text([r['value']])}: " + (", ".join(_prior_text(p) for p in r["after"]) or "nothing")
                    for r in c["replaced_changes"]
                ),
                style="cyan",
            )
        t.add_row(*cells)
    if len(rows) > limit:
        t.caption = f"{len(rows) - limit} more change(s) not shown; --json lists every one"
    return t


def _prior_text(p: Mapping[str, Any]) -> str:
    return visible(f"{p['predicate']}: " if p.get("predicate") else "") + values_text([p["value"]])


def _keys(values: Sequence[Any]) -> frozenset[str]:
    return frozenset(value_key(v) for v in values)


def risks_text(risks: Iterable[Mapping[str, Any]]) -> Text:
    out = Text()
    for r in risks:
        flag = str(r.get("flag", "risk"))
        out.append("  ⚠ ", style=RISK_STYLES.get(flag, "yellow"))
        out.append(visible(flag.upper()), style=RISK_STYLES.get(flag, "yellow"))
        out.append(f"  {visible(r.get('detail', ''))}\n")
    out.rstrip()
    return out


def notes_table(details: Mapping[str, Any]) -> Table | None:
    """Per-note parse results of a promote: parsed value or the reason it stays a note."""
    notes = details.get("notes") if isinstance(details, Mapping) else None
    if not notes:
        return None
    t = FitTable(title="Notes", title_justify="left")
    t.add_column("note event", no_wrap=True)
    t.add_column("subject", style="cyan", no_wrap=True)
    t.add_column("note")
    t.add_column("result")
    for n in notes:
        result = (
            txt(f"→ {value_text(n.get('value'))}", "green")
            if n.get("ok")
            else txt(f"stays a note: {n.get('error', '')}", "yellow")
        )
        t.add_row(txt(n.get("event_id", "")), txt(n.get("subject", "")), txt(n.get("note", "")), result)
    return t


def conflicts_text(impact: Mapping[str, Any]) -> Text | None:
    created = impact.get("conflicts_created") or []
    resolved = impact.get("conflicts_resolved") or []
    if not created and not resolved:
        return None
    out = Text()
    for c in created:
        out.append("  + conflict ", style="yellow")
        out.append(
            visible(f"{c.get('subject')}: {value_text(c.get('value'))} held under {names(c.get('predicates', []))}")
            + "\n"
        )
    for c in resolved:
        out.append("  - conflict ", style="green")
        out.append(
            visible(
                f"{c.get('subject')}: {value_text(c.get('value'))} no longer under {names(c.get('predicates', []))}"
            )
            + "\n"
        )
    out.rstrip()
    return out


def preview_group(data: Mapping[str, Any]) -> Group:
    """The whole preview: summary line, what is appended, the changes table, risks."""
    plan = data.get("plan", {})
    imp = data.get("impact", {})
    risks = data.get("risks", [])
    changed = bool(imp.get("answers_changed") or imp.get("history_changed") or imp.get("answers_changed_as_of"))
    parts: list[RenderableType] = []
    head = Text()
    head.append(summary_line(data), style="bold yellow" if changed else "bold green")
    if plan.get("title"):
        head.append(f"\n  {visible(plan['title'])}", style="bold")
    based = plan.get("based_on", {})
    head.append(
        f"\n  against log position {based.get('position', '?')}, registry {str(based.get('registry_digest', ''))[:19]}…",
        style="dim",
    )
    parts.append(head)
    ops = ops_lines(plan)
    if ops:
        parts.append(Text("Appends:\n" + "\n".join(f"  + {line}" for line in ops), style="green"))
    predicates = predicates_text(plan.get("details", {}))
    if predicates is not None:
        parts.append(Text("Predicates:", style="bold") + Text("\n") + predicates)
    changes = imp.get("changes", [])
    if changes:
        merged = {op["name"]: op["into"] for op in plan.get("ops", []) if op.get("op") == "merge" and op.get("into")}
        parts.append(changes_table(changes, merged=merged))
    else:
        parts.append(Text("No answer and no past answer changes.", style="green"))
    conflicts = conflicts_text(imp)
    if conflicts is not None:
        parts.append(Text("Conflicts:", style="bold") + Text("\n") + conflicts)
    nt = notes_table(plan.get("details", {}))
    if nt is not None:
        parts.append(nt)
    if risks:
        parts.append(Text("Risks:", style="bold red") + Text("\n") + risks_text(risks))
    return Group(*parts)


def render_applied(data: Mapping[str, Any]) -> Text:
    """What apply appended: ``Applied plan-…: N event(s), log now at position P``."""
    events = data.get("events", [])
    out = txt(
        f"Applied {data.get('applied', '?')}: {len(events)} event(s) appended, log now at position {data.get('position', '?')}",
        "bold green",
    )
    if data.get("planned_by"):
        # the planner's name comes from the plan file, which is not signed (docs/governance.md)
        out.append("\n")
        out.append_text(
            txt(
                f"Its records name {data['planned_by']!r} as planner (the plan file says so; it is not signed); "
                f"the log records that {data.get('applied_by')!r} applied it.",
                "yellow",
            )
        )
    return out


# --- the CLI's renderers (the Renderer signature) -----------------------------------


def render_preview(con: Console, data: dict[str, Any]) -> None:
    """A staging command's answer: the preview, and what was applied when --apply ran."""
    con.print(preview_group(data))
    if "applied" in data:
        con.print(render_applied(data))


def render_apply(con: Console, data: dict[str, Any]) -> None:
    con.print(render_applied(data))
