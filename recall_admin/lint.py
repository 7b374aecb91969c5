"""Registry lint: findings an operator should look at; nothing is changed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from recall_engine.matching import near_duplicates
from recall_engine.memory import Memory
from recall_engine.text import NOTE
from recall_engine.vocabulary import DEFAULT_THRESHOLD

from .vocab import never_pairs


@dataclass(frozen=True, slots=True)
class Finding:
    code: str
    names: tuple[str, ...]
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "names": list(self.names), "detail": self.detail}


def lint(memory: Memory, *, threshold: float = DEFAULT_THRESHOLD, note_sample: int = 2000) -> list[Finding]:
    tl = memory.timeline()
    preds = tl.predicates()
    counts: dict[str, int] = {}
    for name, n in memory.store.predicate_counts().items():
        c = tl.canonical(name)
        counts[c] = counts.get(c, 0) + n
    out: list[Finding] = []
    names = sorted(n for n in preds if n != NOTE)
    # a pair an operator marked "never merge" is no finding either (docs/review-queues.md)
    for a, b, s in near_duplicates({n: preds[n] for n in names}, threshold, skip=never_pairs(memory)):
        out.append(
            Finding(
                "near_duplicate",
                (a, b),
                f"{a} and {b} look like one predicate (score {s:.2f}); merge one into the other if they mean the same",
            )
        )
    for a in names:
        d = preds[a]
        for x in d.excludes:
            cx = tl.canonical(x)
            if cx not in preds:
                out.append(Finding("unknown_exclude", (a, x), f"{a} excludes {x}, which is not a registered predicate"))
                continue
            back = {tl.canonical(y) for y in preds[cx].excludes}
            if a not in back and not preds[cx].historical and not d.historical:
                out.append(
                    Finding(
                        "one_way_exclude",
                        (a, cx),
                        (
                            f"{a} excludes {cx} but {cx} does not exclude {a}: stating {a} withdraws {cx}, "
                            f"not the other way round; make it mutual if the two contradict each other"
                        ),
                    )
                )

    unused = tuple(a for a in names if counts.get(a, 0) == 0)
    if unused:
        out.append(Finding("never_used", unused, f"{len(unused)} predicate(s) hold no events yet: {', '.join(unused)}"))
    # notes that read like an existing predicate: a predicate's words inside the note
    hits: dict[str, list] = {}
    for k, e in enumerate(memory.store.predicate_events(tl.stored_names(NOTE))):
        if k >= note_sample:
            break
        if e.retraction or not isinstance(e.value, str) or tl.promotion(e.id) is not None:
            continue
        words = e.value.lower().replace("_", " ")
        for a in names:
            core = a.replace("_", " ").removeprefix("prefers ").strip()
            if len(core) >= 4 and core in words:
                hits.setdefault(a, []).append(e)
    for a, notes in sorted(hits.items()):
        first = notes[0]
        out.append(
            Finding(
                "note_like_predicate",
                (NOTE, a),
                (
                    f"{len(notes)} note(s) mention {a.replace('_', ' ').removeprefix('prefers ')!r} and may want to be "
                    f"promoted into {a} (e.g. {first.id} about {first.subject}: {first.value!r})"
                ),
            )
        )
    return out
