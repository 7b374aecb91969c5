"""What each read shows, as JSON-ready data: the CLI renders it, the TUI displays it.

Every function here asks the engine and shapes the answer into the documented
fields (docs/cli-contract.md); none of them decides what is believed.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from recall_engine.errors import InvalidInput, UnknownPredicate
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


def _valid_at(memory: Memory, as_of: int | None, known_at: int | None) -> int:
    """The valid instant of a read: ``as_of``, else ``known_at`` ("what a read then
    answered"), else now (docs/history-diff-explain.md, "Two time axes")."""
    return as_of if as_of is not None else known_at if known_at is not None else memory.now()


@contextmanager
def _registered_then(memory: Memory, predicate: str | None, known_at: int | None) -> Iterator[None]:
    """A predicate known now but not yet declared at ``known_at`` is refused by a read known
    then, as it was; the message says so (it listed the registry of then, which did not
    hold a name ``registry list`` shows)."""
    try:
        yield
    except UnknownPredicate:
        if known_at is None or not predicate or not memory.timeline().knows(predicate):
            raise
        raise UnknownPredicate(
            f"predicate {predicate!r} was not yet in the registry known at {format_rfc3339(known_at)}, "
            f"so a read then refused it; `registry log --name {predicate}` shows when it was recorded"
        ) from None


def _known(out: dict[str, Any], **instants: int | None) -> dict[str, Any]:
    """``out`` with the known-at instants a read was given (left out when not given)."""
    out.update({k: format_rfc3339(t) for k, t in instants.items() if t is not None})
    return out


def recall_view(
    memory: Memory,
    subject: str,
    predicate: str | None = None,
    as_of: int | None = None,
    known_at: int | None = None,
) -> dict[str, Any]:
    """An exact read of one pair, or the profile of a subject, at an instant (default now),
    as known at ``known_at`` (default: the whole log)."""
    at = _valid_at(memory, as_of, known_at)
    if predicate:
        with _registered_then(memory, predicate, known_at):
            beliefs = memory.read_pair(subject, predicate, at, known_at=known_at)
    else:
        beliefs = memory.profile(subject, at, known_at=known_at)
    return _known({"as_of": format_rfc3339(at), "beliefs": beliefs_json(beliefs)}, known_at=known_at)


def history_view(memory: Memory, subject: str, predicate: str, known_at: int | None = None) -> dict[str, Any]:
    """Every step of a pair; each step says when it was said (``at``) and when the store
    recorded it (``recorded_at``). Known at an instant, only the steps recorded by then,
    and ``believed_then``: what a read at that instant answered."""
    from recall_engine.history import answer_at  # not loaded by the other views (docs/benchmarks.md, "Start-up")

    with _registered_then(memory, predicate, known_at):
        s, p, steps = memory.history(subject, predicate, known_at=known_at)
    out = {
        "subject": s,
        "predicate": p,
        "believed_now": list(answer_at(steps, memory.now())),
        "steps": [st.to_json() for st in steps],
    }
    if known_at is not None:
        out["believed_then"] = list(answer_at(steps, known_at))
    return _known(out, known_at=known_at)


def diff_view(
    memory: Memory,
    from_at: int,
    to_at: int | None = None,
    subject: str | None = None,
    *,
    known_from: int | None = None,
    known_to: int | None = None,
) -> dict[str, Any]:
    """What changed between two reads: as of ``from_at`` known at ``known_from``, and as of
    ``to_at`` (default: ``known_to``, else now) known at ``known_to`` (default: ``known_from``)."""
    known_after = known_from if known_to is None else known_to
    to = _valid_at(memory, to_at, known_after)
    changes = memory.diff(from_at, to, subject, known_at=known_from, known_to=known_after)
    out = {
        "from": format_rfc3339(from_at),
        "to": format_rfc3339(to),
        "subject": normalize_subject(subject) if subject else None,
        "changes": [c.to_json() for c in changes],
    }
    return _known(out, known_from=known_from, known_to=known_after)


def explain_view(
    memory: Memory, subject: str, predicate: str, as_of: int | None = None, known_at: int | None = None
) -> dict[str, Any]:
    """Why a pair answers what it does. Known at an instant: the answer given then, with
    the rules and reasons that decided it then, and ``since``: today's answer for the
    same valid instant and the statements and registry records recorded after
    ``known_at`` that make it differ (docs/history-diff-explain.md)."""
    with _registered_then(memory, predicate, known_at):
        x = memory.explain(subject, predicate, as_of, known_at=known_at)
    out: dict[str, Any] = {
        "subject": x.subject,
        "predicate": x.predicate,
        "as_of": format_rfc3339(x.at),
        "beliefs": beliefs_json(x.beliefs),
        "reasons": [r.to_json() for r in x.reasons],
        "rules": [r.to_json() for r in x.rules],
        "steps": [s.to_json() for s in x.steps],
        "events": _with_writers(memory, x.events),
    }
    if known_at is not None:
        out["since"] = _since(memory, x, known_at)
    return _known(out, known_at=known_at)


def _since(memory: Memory, then: Any, known_at: int) -> dict[str, Any]:
    """What was recorded after ``known_at`` that bears on the pair at the same valid
    instant: today's answer, the later statements, the later registry records."""
    now = memory.explain(then.subject, then.predicate, then.at)
    seen = {e.id for e in then.events}
    later = [e for e in now.events if e.id not in seen]
    ruled = {r.event_id for r in then.rules}
    rules = [r for r in now.rules if r.event_id not in ruled]
    recorded = {e.id: e.recorded_at for e in memory.store.events_by_id([r.event_id for r in rules])}
    return {
        "beliefs": beliefs_json(now.beliefs),
        "changed": [b.key for b in now.beliefs] != [b.key for b in then.beliefs],
        "reasons": [r.to_json() for r in now.reasons],
        "statements": [
            {**e, "recorded_at": format_rfc3339(ev.recorded_at) if ev.recorded_at is not None else None}
            for e, ev in zip(_with_writers(memory, later), later, strict=True)
        ],
        "registry": [
            {**r.to_json(), "recorded_at": format_rfc3339(at) if (at := recorded.get(r.event_id)) else None}
            for r in rules
        ],
    }


def _with_writers(memory: Memory, events: list) -> list[dict[str, Any]]:
    """Events as JSON; one an agent wrote says which key (docs/agents.md)."""
    from .agents.attribution import written_by

    writers = written_by(memory.store, [e.id for e in events])
    return [{**e.to_json(), **({"written_by": writers[e.id]} if e.id in writers else {})} for e in events]


def search_view(
    memory: Memory, text: str, as_of: int | None = None, limit: int = 10, known_at: int | None = None
) -> dict[str, Any]:
    from recall_engine.search import search

    at = _valid_at(memory, as_of, known_at)
    beliefs = search(memory, text, as_of=at, limit=limit, known_at=known_at)
    return _known({"as_of": format_rfc3339(at), "beliefs": beliefs_json(beliefs)}, known_at=known_at)


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
    from recall_engine.history import describe_record

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
