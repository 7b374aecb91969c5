"""What a plan's operations would append against the store now (docs/governance.md, "Plan file").

A plan file is sealed with an unkeyed hash, so anyone who can edit it can reseal it.
``apply`` therefore runs each of its operations again, through the same ``Stager``
method the command that planned it used, against the current store and as its
planner, and refuses the plan when what that produces differs from what the file
holds: a definition a redefine could not make, a promoted value its note does not
parse to, a confirm statement whose value, kind, replaces or retractions are not the
conflict's. What cannot be re-derived (an operation no command plans) is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from recall_engine.errors import PlanError, RecallError
from recall_engine.records import Event
from recall_engine.registry import RegistryRecord

from .conflicts import confirm_evidence, confirm_plan, find_conflicts
from .governance import Stager, revert
from .plans import Plan
from .registry_sync import plan_declarations


def check_rederived(stager: Stager, plan: Plan) -> None:
    """Refuse ``plan`` unless its operations, run again now, produce exactly its events."""
    bad = f"plan {plan.id} cannot be applied:"
    try:
        records, statements = _rederive(stager, plan)
    except RecallError as err:
        raise PlanError(f"{bad} its operations cannot be made against this store now: {err.message}") from None
    mine = [replace(r, plan="") for r in plan.records]
    theirs = [replace(r, plan="") for r in records]
    for i, (a, b) in enumerate(zip(mine, theirs, strict=False)):
        if a != b:
            raise PlanError(
                f"{bad} its record {i + 1} ({a.op} {a.name or a.withdraws}) is not what its operation "
                "produces against this store now; plan it again"
            )
    if len(mine) != len(theirs):
        raise PlanError(f"{bad} it holds {len(mine)} record(s) where its operations produce {len(theirs)}")
    for e, f in zip(plan.statements, statements, strict=False):
        if e != f:
            raise PlanError(
                f"{bad} its statement {e.id} is not what its confirm produces against this store now; plan it again"
            )
    if len(plan.statements) != len(statements):
        raise PlanError(
            f"{bad} it holds {len(plan.statements)} statement(s) where its confirm produces {len(statements)}"
        )


def _rederive(stager: Stager, plan: Plan) -> tuple[Sequence[RegistryRecord], Sequence[Event]]:
    kind, recs = plan.kind, plan.records
    if kind == "confirm":
        return (), _confirm(stager, plan)
    if not recs:
        raise PlanError(f"a {kind} plan holds at least one record")
    reason = recs[0].reason
    if kind in ("redefine", "exclude"):
        return [x for r in recs for x in _redefine(stager, r)], ()
    if kind == "merge" and len(recs) == 1:
        return stager.merge(recs[0].name, recs[0].into, reason=reason).records, ()
    if kind == "split" and len(recs) == 1:
        return stager.split(recs[0].name, reason=reason).records, ()
    if kind == "define" and len(recs) == 1 and recs[0].definition is not None:
        d = recs[0].definition
        return stager.define(
            d.name,
            cardinality=d.cardinality,
            value_type=d.value_type,
            allowed=d.allowed,
            description=d.description,
            excludes=d.excludes,
            historical=d.historical,
            reason=reason,
        ).records, ()
    if kind == "promote" and recs[-1].op == "promote" and len(recs) <= 2:
        declared = recs[0].definition if len(recs) == 2 else None
        notes = {p.event_id: p.value for p in recs[-1].notes}
        return stager.promote(recs[-1].name, notes=notes, new_definition=declared, reason=reason).records, ()
    if kind == "registry-load":
        defs = {r.name: r.definition for r in recs if r.op == "declare" and r.definition is not None}
        opened = any(r.op == "vocabulary" and r.open for r in recs)
        tl = stager.memory.timeline()
        found = plan_declarations(tl, defs, stager.operator, open_vocabulary=opened)
        return stager.registry_records(found, plan.title, reason=reason).records, ()
    if kind == "revert" and len(recs) == 1:
        return revert(stager, recs[0].withdraws, reason=reason).records, ()
    raise PlanError(f"no command plans a {kind} of {len(recs)} {'/'.join(sorted({r.op for r in recs}))} record(s)")


def _redefine(stager: Stager, r: RegistryRecord) -> Sequence[RegistryRecord]:
    """The redefine record the command would make for the change ``r`` states."""
    new = r.definition
    old = stager.memory.timeline().definition(r.name)
    if r.op != "redefine" or new is None or old is None:
        raise PlanError(f"{r.op} {r.name} is not a redefine of a registered predicate")
    return stager.redefine(
        r.name,
        cardinality=new.cardinality,
        add_excludes=[x for x in new.excludes if x not in old.excludes],
        remove_excludes=[x for x in old.excludes if x not in new.excludes],
        historical=new.historical,
        allowed=new.allowed if old.value_type == "enum" else None,
        description=new.description,
        retroactive=r.retroactive,
        reason=r.reason,
    ).records


def _confirm(stager: Stager, plan: Plan) -> Sequence[Event]:
    """The statements a confirm of the same conflict, keeping the same predicate, makes at the plan's instant."""
    if plan.records or not plan.statements:
        raise PlanError("a confirm plan holds one operator statement and its retractions, and no record")
    first = plan.statements[0]
    opening = confirm_evidence(stager.operator)
    if first.evidence != opening and not first.evidence.startswith(opening + ": "):
        raise PlanError(f"its statement does not say it was confirmed by its planner {stager.operator!r}")
    reason = first.evidence[len(opening) + 2 :]
    conflicts = [
        c
        for c in find_conflicts(stager.memory, first.subject, include_dismissed=True).conflicts
        if c.subject == first.subject and c.belief(first.predicate) is not None
    ]
    made: Sequence[Event] = ()
    for c in conflicts:
        made = confirm_plan(stager, c, first.predicate, reason, at=first.observed_at).statements
        if list(made) == list(plan.statements):
            break
    if not conflicts:
        raise PlanError(f"no open conflict of {first.subject!r} holds {first.predicate}")
    return made
