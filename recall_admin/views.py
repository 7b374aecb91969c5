"""What each read shows, as JSON-ready data: the CLI renders it, the TUI displays it.

Every function here asks the engine and shapes the answer into the documented
fields (docs/cli-contract.md); none of them decides what is believed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from recall_engine.errors import InvalidInput
from recall_engine.history import answer_at, describe_record
from recall_engine.instants import format_rfc3339
from recall_engine.memory import Memory, RememberResult
from recall_engine.records import REGISTRY_SUBJECT, Belief
from recall_engine.registry import OPS, decode_record
from recall_engine.storage.base import Backend, Store
from recall_engine.text import NOTE, normalize_subject
from recall_engine.timeline import DEFINING, LoggedRecord, Timeline

ORIGINS = {"declare": "declared", "define": "defined", "redefine": "redefined", "split": "split"}


def beliefs_json(beliefs: Iterable[Belief]) -> list[dict[str, Any]]:
    return [b.to_json() for b in beliefs]


# --- memory reads ---------------------------------------------------------------


def recall_view(memory: Memory, subject: str, predicate: str | None = None, as_of: int | None = None) -> dict[str, Any]:
    """An exact read of one pair, or the profile of a subject, at an instant (default now)."""
    at = memory.now() if as_of is None else as_of
    beliefs = memory.read_pair(subject, predicate, at) if predicate else memory.profile(subject, at)
    return {"as_of": format_rfc3339(at), "beliefs": beliefs_json(beliefs)}


def history_view(memory: Memory, subject: str, predicate: str) -> dict[str, Any]:
    s, p, steps = memory.history(subject, predicate)
    return {
        "subject": s,
        "predicate": p,
        "believed_now": list(answer_at(steps, memory.now())),
        "steps": [st.to_json() for st in steps],
    }


def diff_view(memory: Memory, from_at: int, to_at: int | None = None, subject: str | None = None) -> dict[str, Any]:
    to = memory.now() if to_at is None else to_at
    changes = memory.diff(from_at, to, subject)
    return {
        "from": format_rfc3339(from_at),
        "to": format_rfc3339(to),
        "subject": normalize_subject(subject) if subject else None,
        "changes": [c.to_json() for c in changes],
    }


def explain_view(memory: Memory, subject: str, predicate: str, as_of: int | None = None) -> dict[str, Any]:
    x = memory.explain(subject, predicate, as_of)
    return {
        "subject": x.subject,
        "predicate": x.predicate,
        "as_of": format_rfc3339(x.at),
        "beliefs": beliefs_json(x.beliefs),
        "reasons": [r.to_json() for r in x.reasons],
        "rules": [r.to_json() for r in x.rules],
        "steps": [s.to_json() for s in x.steps],
        "events": _with_writers(memory, x.events),
    }


def _with_writers(memory: Memory, events: list) -> list[dict[str, Any]]:
    """Events as JSON; one an agent wrote says which key (docs/agents.md)."""
    from .agents.attribution import written_by

    writers = written_by(memory.store, [e.id for e in events])
    return [{**e.to_json(), **({"written_by": writers[e.id]} if e.id in writers else {})} for e in events]


def search_view(memory: Memory, text: str, as_of: int | None = None, limit: int = 10) -> dict[str, Any]:
    from recall_engine.search import search

    at = memory.now() if as_of is None else as_of
    beliefs = search(memory, text, as_of=at, limit=limit)
    return {"as_of": format_rfc3339(at), "beliefs": beliefs_json(beliefs)}


def remember_view(result: RememberResult) -> dict[str, Any]:
    out = result.to_json()
    changes = []
    for e in result.events:
        if e.subject == REGISTRY_SUBJECT:
            rec = decode_record(e)
            changes.append({"op": rec.op, "name": rec.name, **({"into": rec.into} if rec.into else {})})
    out["registry_changes"] = changes
    return out


# --- registry -------------------------------------------------------------------


def origin_of(tl: Timeline, name: str) -> tuple[str, int | None]:
    """How a predicate came to be: the first record that defined it, or built in."""
    for r in tl.log:
        if not r.ignored and r.record.name == name and r.record.op in DEFINING:
            return ORIGINS[r.record.op], r.at
    return ("builtin" if name == NOTE else "unknown"), None


def predicate_view(tl: Timeline, name: str, counts: dict[str, int]) -> dict[str, Any]:
    d = tl.definition(name)
    assert d is not None
    names = tl.stored_names(name)
    origin, since = origin_of(tl, name)
    return {
        "name": name,
        "cardinality": d.cardinality,
        "value_type": d.value_type or "string",
        "allowed": list(d.allowed),
        "excludes": list(d.excludes),
        "historical": d.historical,
        "aliases": list(d.aliases),
        "description": d.description,
        "origin": origin,
        "since": format_rfc3339(since) if since is not None else None,
        "merged": names[1:],
        "events": sum(counts.get(n, 0) for n in names),
    }


def registry_list_view(memory: Memory) -> dict[str, Any]:
    tl = memory.timeline()
    counts = memory.store.predicate_counts()
    return {
        "open_vocabulary": tl.open_vocabulary,
        "digest": tl.digest,
        "predicates": [predicate_view(tl, n, counts) for n in sorted(tl.predicates())],
    }


def change_view(r: LoggedRecord) -> dict[str, Any]:
    """One registry log entry: when, what, who, from which plan, and the record itself."""
    rec = r.record
    out: dict[str, Any] = {
        "at": format_rfc3339(r.at),
        "op": rec.op,
        "name": rec.name,
        "event_id": r.event_id,
        "operator": rec.operator,
        "plan": rec.plan,
    }
    for k, v in rec.to_json().items():
        out.setdefault(k, v)
    out["summary"] = summarize(r)
    if r.ignored:
        out["ignored"] = True
    return out


def summarize(r: LoggedRecord) -> str:
    rec = r.record
    if rec.op == "vocabulary":
        return "vocabulary opened: writes may define new predicates" if rec.open else "vocabulary closed"
    text = describe_record(r, rec.name)
    if r.ignored:
        text += " (ignored: the name was already defined)"
    return text


def registry_show_view(memory: Memory, name: str) -> dict[str, Any]:
    tl = memory.timeline()
    p = memory.resolve(name, tl)
    out = predicate_view(tl, p, memory.store.predicate_counts())
    if p != name.strip():
        out["asked_as"] = name.strip()
    out["log"] = [change_view(r) for r in tl.governing(p)]
    return out


def registry_log_view(
    memory: Memory,
    *,
    name: str | None = None,
    op: str | None = None,
    operator: str | None = None,
    since: int | None = None,
    limit: int | None = None,
) -> dict[str, Any]:
    """The registry log, oldest first, filtered; each entry with its reason, who applied its plan,
    and the revert that withdrew it (docs/governance.md, "Registry log")."""
    tl = memory.timeline()
    applied_by = {r.record.plan: r.record.operator for r in tl.log if r.record.op == "applied"}
    if op is not None and op not in OPS:
        raise InvalidInput(f"--op must be one of {', '.join(OPS)}, got {op!r}")
    if limit is not None and limit < 1:
        raise InvalidInput(f"--limit must be 1 or more, got {limit}")
    wanted = tl.canonical(name.strip()) if name else None
    out = []
    for r in tl.log:
        rec = r.record
        if wanted is not None and wanted not in {tl.canonical(n) for n in (rec.name, rec.into) if n}:
            continue
        who = applied_by.get(rec.plan, "")
        if op is not None and rec.op != op:
            continue
        if operator is not None and operator not in (rec.operator, who):
            continue
        if since is not None and r.at < since:
            continue
        v = change_view(r)
        v["applied_by"] = who
        v["withdrawn_by"] = r.withdrawn_by
        tail = []
        if rec.reason:
            tail.append(f"reason: {rec.reason}")
        if who and rec.op != "applied":
            tail.append(f"applied by {who}")
        if r.withdrawn_by:
            tail.append(f"withdrawn by {r.withdrawn_by}")
        if tail:
            v["summary"] = f"{v['summary']} ({'; '.join(tail)})"
        out.append(v)
    if limit is not None:
        out = out[-limit:]
    return {"changes": out}


# --- collections ----------------------------------------------------------------


def registry_size(store: Store) -> int:
    """Predicates in a collection's registry, not counting the built-in note."""
    tl = Timeline(store.registry_events())
    return len([n for n in tl.predicates() if n != NOTE])


def collections_view(backend: Backend) -> dict[str, Any]:
    out = []
    for name, events in backend.collections():
        store = backend.store(name, create=False)
        out.append({"name": name, "events": events, "registry": registry_size(store)})
    return {"collections": out}
