"""The memory tools agents call, the same over MCP stdio, MCP over HTTP and ``POST /v1/<tool>``.

Each tool has a name, a JSON schema for its arguments and a description that says what
it does to memory and what its answer lists. ``Toolbox.call`` checks the arguments,
asks the engine, and answers with exactly the data the CLI's ``--json`` gives for the
same command (the functions of ``recall_admin.views``), so ``replaced``, ``elsewhere``,
``unreplaced`` and ``already_known`` reach agents as they reach operators. Errors are
``RecallError``s with the CLI's codes; the transports wrap both in the CLI's envelope.
Nothing here imports the MCP SDK or an HTTP stack (docs/agents.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from recall_engine.errors import InvalidInput, ReadOnlyStore, RecallError
from recall_engine.memory import Memory
from recall_engine.storage.base import Store
from recall_engine.timeline import Timeline
from recall_engine.values import Value

from .. import views
from ..inputs import instant, typed_value
from .attribution import AttributedStore

DEFAULT_MAX_VALUE_BYTES = 16 * 1024
SOURCES = ["user_stated", "agent_inferred", "tool_result"]


class UsageError(RecallError):
    """A tool called with arguments its schema does not take (the CLI's usage errors)."""

    code = "usage_error"


class TooLarge(RecallError):
    code = "too_large"


# --- the tools -----------------------------------------------------------------

_TEXT = {"type": "string"}
_VALUE = {"type": ["string", "number", "boolean"]}
_INSTANT = {"type": "string", "description": "RFC3339 instant (2026-09-01T12:00:00Z) or a day (2026-09-01)."}


def _obj(required: list[str], **props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    schema: dict[str, Any]
    writes: bool = False


TOOLS: dict[str, Tool] = {
    t.name: t
    for t in [
        Tool(
            "remember",
            "Store one statement: subject, predicate, value (typed by the predicate: 8000 for a number, "
            "true for a boolean). Appends an event; never edits or deletes. Restating what is already "
            "believed writes nothing and answers already_known: true. Answer: stored (the belief now held, "
            "with replaced: the earlier values it displaced and elsewhere: the same value under other "
            "predicates), already_known, displaced (beliefs this statement withdrew, of this predicate or "
            "named in replaces), unreplaced (each replaces entry that withdrew nothing, with the reason), "
            "related (current beliefs that may contradict it), registry_changes (a predicate this write "
            "defined or filed under an existing name, under an open vocabulary). Unknown predicate: call "
            'predicates first, or use predicate "note" with the statement as the value.',
            _obj(
                ["subject", "predicate", "value"],
                subject={"type": "string", "description": "Who or what it is about, e.g. user."},
                predicate={"type": "string", "description": "A predicate from the predicates tool."},
                value={**_VALUE, "description": "The value, typed by the predicate."},
                at={**_INSTANT, "description": "When it was stated (default now); " + _INSTANT["description"]},
                source={"type": "string", "enum": SOURCES, "description": "Default user_stated."},
                kind={"type": "string", "enum": ["fact", "preference"], "description": "Default fact."},
                confidence={"type": "number", "minimum": 0, "maximum": 1, "description": "Default 1."},
                evidence={"type": "string", "description": "The words it came from (at most 2048 bytes)."},
                replaces={
                    "type": "array",
                    "description": "Earlier beliefs, under any predicate, this statement withdraws.",
                    "items": _obj(["predicate", "value"], predicate=_TEXT, value=_VALUE),
                },
            ),
            writes=True,
        ),
        Tool(
            "recall",
            "Read what is believed about a subject: one predicate, or every predicate when predicate is "
            "omitted, now or as of an instant. Reads only. Answer: as_of, beliefs (each with value, "
            "observed_at, event_id, source, confidence; replaced: what it displaced; elsewhere: the same "
            "value held under other predicates).",
            _obj(["subject"], subject=_TEXT, predicate=_TEXT, as_of=_INSTANT),
        ),
        Tool(
            "forget",
            "Withdraw one value of a pair (value), or every value (all: true). Appends a retraction; the "
            "history keeps what was believed. Forgetting what is not believed writes nothing. Answer: "
            "withdrawn (the beliefs withdrawn, empty when none).",
            _obj(["subject", "predicate"], subject=_TEXT, predicate=_TEXT, value=_VALUE, all={"type": "boolean"}),
            writes=True,
        ),
        Tool(
            "history",
            "Every event of one pair, oldest first. Reads only. Answer: subject, predicate, believed_now "
            "(values), steps (each: at, event_id, action, value, before and after: the values believed "
            "around it).",
            _obj(["subject", "predicate"], subject=_TEXT, predicate=_TEXT),
        ),
        Tool(
            "diff",
            "What began and stopped being believed between two instants, for one subject or all. Reads "
            "only. Answer: from, to, subject (null for all), changes (each pair: before, after, began, stopped).",
            _obj(["from"], subject=_TEXT, **{"from": _INSTANT, "to": {**_INSTANT, "description": "Default now."}}),
        ),
        Tool(
            "explain",
            "Why a pair answers what it does. Reads only. Answer: subject, predicate, as_of, beliefs, reasons "
            "(one per value: held or not, and why), rules (the registry definitions in force), steps (as in "
            "history), events (each with written_by: the agent key that wrote it, when an agent did).",
            _obj(["subject", "predicate"], subject=_TEXT, predicate=_TEXT, as_of=_INSTANT),
        ),
        Tool(
            "predicates",
            "The vocabulary. Reads only. Call it before the first remember. Answer: open_vocabulary (true: "
            "a remember may define a new predicate), digest (changes whenever the vocabulary does), "
            "predicates (each: name, cardinality (single: a new value replaces the old; multi: values "
            "accumulate), value_type, allowed values, excludes, historical, aliases, description, events).",
            _obj([]),
        ),
        Tool(
            "search",
            "Find beliefs by meaning and keywords (a time phrase such as 'two weeks ago' narrows it). "
            "Reads only. Answer: as_of, beliefs (as in recall; each hit answers with what its pair holds).",
            _obj(["question"], question=_TEXT, as_of=_INSTANT, limit={"type": "integer", "minimum": 1, "maximum": 100}),
        ),
    ]
}

_JSON_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}


def check_arguments(tool: str, schema: dict[str, Any], args: Any, where: str = "") -> None:
    """Arguments against a tool's schema: known names, required ones present, JSON types right."""
    if not isinstance(args, dict):
        raise UsageError(f"{tool}: the arguments must be a JSON object")
    props = schema["properties"]
    for name in args:
        if name not in props:
            takes = ", ".join(props) or "no arguments"
            raise UsageError(f"{tool}: unknown argument {where}{name!r}; it takes: {takes}")
    for name in schema["required"]:
        if args.get(name) is None:
            raise UsageError(f"{tool}: missing argument {where}{name!r}")
    for name, value in args.items():
        if value is None:
            continue
        spec = props[name]
        types = spec.get("type", [])
        types = [types] if isinstance(types, str) else types
        if types and not any(_JSON_TYPES[t](value) for t in types):
            raise UsageError(f"{tool}: argument {where}{name!r} must be {' or '.join(types)}")
        if "enum" in spec and value not in spec["enum"]:
            raise UsageError(f"{tool}: argument {where}{name!r} must be one of {', '.join(spec['enum'])}")
        if "items" in spec:
            for i, item in enumerate(value):
                check_arguments(tool, spec["items"], item, f"{where}{name}[{i}].")


# --- memory for agents ---------------------------------------------------------------


def agent_memory(store: Store, writer: dict[str, str], **kwargs: Any) -> Memory:
    """Memory over one collection whose every write records ``writer``. The engine's own
    caches (the registry timeline, the folded pairs) catch up with what other writers
    append, so a long-lived server needs nothing more (recall_engine.pair_cache)."""
    return Memory(AttributedStore(store, writer), **kwargs)


class Toolbox:
    """The tools over one collection, for one caller (who writes, and whether it may)."""

    def __init__(
        self,
        memory: Memory,
        *,
        writable: bool,
        read_only_reason: str = "",
        max_value_bytes: int = DEFAULT_MAX_VALUE_BYTES,
    ) -> None:
        self.memory = memory
        self.writable = writable
        self.read_only_reason = read_only_reason or (
            "this MCP server is read-only; start it with `recall-admin mcp --write` to let agents write"
        )
        self.max_value_bytes = max_value_bytes

    def call(self, name: str, args: dict[str, Any] | None) -> dict[str, Any]:
        """Run one tool; the answer is the CLI's ``data`` for the same command."""
        tool = TOOLS.get(name)
        if tool is None:
            raise UsageError(f"no tool named {name!r}; the tools are: {', '.join(TOOLS)}")
        args = {} if args is None else args
        check_arguments(name, tool.schema, args)
        if tool.writes and not self.writable:
            raise ReadOnlyStore(self.read_only_reason)
        return getattr(self, "_" + name)(**{k: v for k, v in args.items() if v is not None})

    # --- helpers -----------------------------------------------------------------

    def _size(self, value: Value, what: str = "value") -> None:
        n = len(json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass"))
        if n > self.max_value_bytes:
            raise TooLarge(f"the {what} is {n} bytes; this server takes values of at most {self.max_value_bytes} bytes")

    def _typed(self, predicate: str, value: Value, tl: Timeline | None = None) -> Value:
        # Text is read as the predicate's type, as on the command line; JSON numbers and
        # booleans are already typed and go to the engine as they are.
        return typed_value(self.memory, predicate, value, tl) if isinstance(value, str) else value

    # --- the tools ----------------------------------------------------------------

    def _remember(
        self,
        subject: str,
        predicate: str,
        value: Value,
        at: str | None = None,
        source: str = "user_stated",
        kind: str = "fact",
        confidence: float = 1.0,
        evidence: str = "",
        replaces: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        self._size(value)
        for r in replaces or []:
            self._size(r["value"], "replaces value")
        m = self.memory
        tl = m.timeline()
        reps = [(r["predicate"], self._typed(r["predicate"], r["value"], tl)) for r in replaces or []]
        result = m.remember(
            subject,
            predicate,
            self._typed(predicate, value, tl),
            at=instant(at, "at"),
            kind=kind,
            source=source,
            confidence=confidence,
            evidence=evidence,
            replaces=reps,
        )
        return views.remember_view(result)

    def _recall(self, subject: str, predicate: str | None = None, as_of: str | None = None) -> dict[str, Any]:
        return views.recall_view(self.memory, subject, predicate, instant(as_of, "as_of"))

    def _forget(self, subject: str, predicate: str, value: Value | None = None, all: bool = False) -> dict[str, Any]:
        if (value is None) == (not all):
            raise InvalidInput("forget needs exactly one of a value or all: true")
        typed = self._typed(predicate, value) if value is not None else None
        gone = self.memory.forget(subject, predicate, typed, all_values=all)
        return {"withdrawn": views.beliefs_json(gone)}

    def _history(self, subject: str, predicate: str) -> dict[str, Any]:
        return views.history_view(self.memory, subject, predicate)

    def _diff(self, subject: str | None = None, **span: str) -> dict[str, Any]:
        start = instant(span["from"], "from")
        assert start is not None
        return views.diff_view(self.memory, start, instant(span.get("to"), "to"), subject)

    def _explain(self, subject: str, predicate: str, as_of: str | None = None) -> dict[str, Any]:
        return views.explain_view(self.memory, subject, predicate, instant(as_of, "as_of"))

    def _predicates(self) -> dict[str, Any]:
        return views.registry_list_view(self.memory)

    def _search(self, question: str, as_of: str | None = None, limit: int = 10) -> dict[str, Any]:
        return views.search_view(self.memory, question, instant(as_of, "as_of"), limit)
