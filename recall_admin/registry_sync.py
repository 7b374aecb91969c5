"""Bring a collection's registry in line with registry files (``init --registry``).

Declaring is idempotent: a predicate is declared only when its latest definition
in the registry log differs from the file's, so running ``init`` again with the
same files declares nothing. Every record of one sync is appended in one
transaction at one registry write instant (+1 ns per record, in sorted name
order), with the operator who ran it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from recall_engine.errors import RegistryError
from recall_engine.memory import Memory
from recall_engine.records import Event
from recall_engine.registry import Definition, RegistryRecord, check_registry
from recall_engine.registry_files import RegistryFile
from recall_engine.text import NOTE
from recall_engine.timeline import Timeline


@dataclass(frozen=True)
class SyncResult:
    declared: list[str]
    opened: bool
    events: list[Event] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # things an operator may want to know


def combine(files: Iterable[RegistryFile]) -> tuple[dict[str, Definition], list[str]]:
    """The definitions of several registry files as one registry.

    Files may share a predicate when they agree on its rules (cardinality, type,
    allowed values, excludes, historical); the first file's wording of the
    description and aliases is kept and the difference is reported. Files that
    disagree on a rule are refused: loading both would make one of them wrong.
    """
    combined: dict[str, tuple[str, Definition]] = {}
    notes: list[str] = []
    for f in files:
        fname = f.name or f.path or "registry file"
        for name, d in f.definitions.items():
            prev = combined.get(name)
            if prev is None:
                combined[name] = (fname, d)
                continue
            first, pd = prev
            if pd == d:
                continue
            if pd.rules() != d.rules():
                raise RegistryError(
                    f"registries {first!r} and {fname!r} define {name!r} with different rules "
                    f"({_shape(pd)} against {_shape(d)}); load one of them, or make them agree"
                )
            notes.append(f"{name}: {first!r} and {fname!r} describe it differently; keeping the wording of {first!r}")
    return {n: d for n, (_, d) in combined.items()}, notes


def _shape(d: Definition) -> str:
    parts = [d.cardinality, d.value_type or "string"]
    if d.allowed:
        parts.append("allowed " + "/".join(d.allowed))
    if d.excludes:
        parts.append("excludes " + "/".join(d.excludes))
    if d.historical:
        parts.append("historical")
    return " ".join(parts)


def current_definition(tl: Timeline, name: str) -> Definition | None:
    """The latest definition the log holds for this name (the built-in one for note)."""
    d = tl.own_definition(name)
    if d is None and name == NOTE:
        d = tl.definition(NOTE)
    return d


def plan_declarations(
    tl: Timeline, definitions: Mapping[str, Definition], operator: str, *, open_vocabulary: bool = False
) -> list[RegistryRecord]:
    """The records a sync would append: one ``declare`` per changed predicate, sorted by
    name, then a ``vocabulary`` record when the vocabulary should open and is closed."""
    check_registry(dict(definitions), where="registry files", known=tl.predicates().keys())
    records = [
        RegistryRecord(op="declare", name=name, definition=definitions[name], operator=operator)
        for name in sorted(definitions)
        if current_definition(tl, name) != definitions[name]
    ]
    if open_vocabulary and not tl.open_vocabulary:
        records.append(RegistryRecord(op="vocabulary", name="", open=True, operator=operator))
    return records


def sync_registry(
    memory: Memory, files: Sequence[RegistryFile], operator: str, *, open_vocabulary: bool = False
) -> SyncResult:
    """Declare what the files define and the log does not yet hold; open the vocabulary if asked."""
    definitions, notes = combine(files)
    tl = memory.timeline()
    records = plan_declarations(tl, definitions, operator, open_vocabulary=open_vocabulary)
    events = memory.append_records(records, source="operator") if records else []
    return SyncResult(
        declared=[r.name for r in records if r.op == "declare"],
        opened=any(r.op == "vocabulary" for r in records),
        events=events,
        notes=notes,
    )


def load_plan(stager, registry_file, reason: str = ""):
    """`registry load` for any front end: the plan declaring what ``registry_file`` changes
    in the collection's registry, and the notes an operator may want to read."""
    definitions, notes = combine([registry_file])
    records = plan_declarations(stager.memory.timeline(), definitions, stager.operator)
    plan = stager.registry_records(
        records, f"load registry {registry_file.name}", reason=reason, definitions=definitions
    )
    return plan, notes
