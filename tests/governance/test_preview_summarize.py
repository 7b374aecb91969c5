"""``preview.summarize`` counts what it counted when it keyed every pair's answers again and
compared every subject's conflicts (it now skips what cannot differ): a reference beside it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from recall_engine.preview import Impact, PairImpact, conflicts_of, summarize
from recall_engine.values import value_key

answer = st.lists(st.sampled_from(["a", "A", "b", 1, 1.0]), max_size=3).map(tuple)


@st.composite
def subjects(draw):
    out = []
    for n in range(draw(st.integers(0, 4))):
        preds = draw(st.lists(st.sampled_from(["p", "q", "r", "note"]), unique=True, max_size=4))
        pairs = []
        for p in preds:
            as_of = draw(st.booleans())
            pairs.append(
                PairImpact(
                    f"s{n}",
                    p,
                    draw(answer),
                    draw(answer),
                    draw(answer) if as_of else None,
                    draw(answer) if as_of else None,
                    draw(st.booleans()),
                    ({"value": "a", "before": [], "after": []},) if draw(st.booleans()) else (),
                )
            )
        out.append(pairs)
    return out


def reference(per_subject) -> Impact:
    imp = Impact()
    for pairs in per_subject:
        if not pairs:
            continue
        imp.subjects += 1
        before, after = {}, {}
        for pi in pairs:
            imp.pairs += 1
            before[pi.predicate], after[pi.predicate] = pi.before, pi.after
            if pi.changed:
                imp.answers_changed += 1
                imp.values_hidden += len({value_key(v) for v in pi.before} - {value_key(v) for v in pi.after})
            imp.answers_changed_as_of += pi.changed_as_of
            imp.history_changed += pi.history_changed
            imp.replaced_changed += bool(pi.replaced_changes)
            if pi.changed or pi.history_changed or pi.changed_as_of or pi.replaced_changes:
                imp.changes.append(pi)
        subject = pairs[0].subject
        cb, ca = conflicts_of(subject, before), conflicts_of(subject, after)
        shown = {value_key(v): v for vals in (*before.values(), *after.values()) for v in vals}
        for s, k, ps in sorted(ca - cb):
            imp.conflicts_created.append({"subject": s, "value_key": k, "value": shown.get(k), "predicates": list(ps)})
        for s, k, ps in sorted(cb - ca):
            imp.conflicts_resolved.append({"subject": s, "value_key": k, "value": shown.get(k), "predicates": list(ps)})
    return imp


@settings(max_examples=300, deadline=None)
@given(subjects())
def test_summarize_counts_what_the_reference_counts(per_subject):
    assert repr(summarize(per_subject).to_json()) == repr(reference(per_subject).to_json())
