"""``browse.pair_history`` keeps a pair's steps while the log stays where it was (the
console opens the same histories again and again); whatever is appended since, a
statement or a registry record, gives the steps a fresh read would give, and the answer
follows the clock at every call. On both backends (the ``store`` fixture)."""

from __future__ import annotations

from recall_admin import browse
from recall_engine.instants import parse_instant
from recall_engine.memory import Memory
from recall_engine.records import make_event
from recall_engine.registry import Definition, RegistryRecord

T = parse_instant


def fresh(memory: Memory, subject: str, predicate: str, known_at: int | None = None) -> browse.PairHistory:
    """The same read through a new ``Memory`` over the same store: nothing kept."""
    return browse.pair_history(Memory(memory.store, now=memory.now), subject, predicate, known_at=known_at)


def same(a: browse.PairHistory, b: browse.PairHistory) -> bool:
    return (a.subject, a.predicate, a.steps, a.answer, [(s.value, s.spans) for s in a.spans]) == (
        b.subject,
        b.predicate,
        b.steps,
        b.answer,
        [(s.value, s.spans) for s in b.spans],
    )


def test_a_history_opened_again_with_nothing_appended_is_the_kept_one(memory: Memory):
    for i, v in enumerate(["vim", "zed", "helix"]):
        memory.remember("user", "prefers_editor", v, at=T("2026-03-01") + i)
    first = browse.pair_history(memory, "user", "prefers_editor")
    again = browse.pair_history(memory, "user", "prefers_editor")
    assert again.steps is first.steps and again.spans is first.spans  # not walked a second time
    assert same(again, fresh(memory, "user", "prefers_editor"))
    assert [s.value for s in again.steps] == ["vim", "zed", "helix"] and again.answer == ("helix",)


def test_an_append_or_a_registry_record_gives_the_steps_a_fresh_read_gives(memory: Memory):
    memory.remember("user", "prefers_editor", "vim", at=T("2026-03-01"))
    memory.remember("user", "prefers_editor", "zed", at=T("2026-03-02"))
    before = browse.pair_history(memory, "user", "prefers_editor")
    assert before.answer == ("zed",)

    memory.remember("user", "prefers_editor", "helix", at=T("2026-03-03"))
    after = browse.pair_history(memory, "user", "prefers_editor")
    assert after.steps is not before.steps and len(after.steps) == 3
    assert same(after, fresh(memory, "user", "prefers_editor"))

    # a registry record changes how the same events fold: multi-valued for its whole history
    redefine = Definition("prefers_editor", "multi", "string")
    memory.append_records([RegistryRecord(op="redefine", name="prefers_editor", definition=redefine, retroactive=True)])
    multi = browse.pair_history(memory, "user", "prefers_editor")
    assert same(multi, fresh(memory, "user", "prefers_editor"))
    assert sorted(multi.answer) == ["helix", "vim", "zed"] and multi.steps != after.steps


def test_the_answer_follows_the_clock_while_the_steps_are_kept(memory: Memory, clock):
    clock.t = T("2026-03-01")
    memory.remember("user", "prefers_editor", "vim", at=T("2026-03-01"))
    # a statement dated ahead of the clock (remember refuses one; a store may hold it, e.g. imported)
    memory.store.append([make_event("user", "prefers_editor", "zed", T("2026-04-01"))])
    early = browse.pair_history(memory, "user", "prefers_editor")
    assert early.answer == ("vim",)
    clock.t = T("2026-05-01")  # nothing appended: only the clock moved past the second statement
    later = browse.pair_history(memory, "user", "prefers_editor")
    assert later.steps is early.steps
    assert later.answer == ("zed",) and later.now > early.now


def test_known_at_reads_keep_their_own_steps(memory: Memory):
    memory.remember("user", "prefers_editor", "vim", at=T("2026-03-01"))
    then = list(memory.store.all_events())[-1].recorded_at  # the store's instant of that append
    memory.remember("user", "prefers_editor", "zed", at=T("2026-03-05"))
    now = browse.pair_history(memory, "user", "prefers_editor")
    known = browse.pair_history(memory, "user", "prefers_editor", known_at=then)
    assert [s.value for s in known.steps] == ["vim"] and [s.value for s in now.steps] == ["vim", "zed"]
    assert browse.pair_history(memory, "user", "prefers_editor", known_at=then).steps is known.steps
    assert same(known, fresh(memory, "user", "prefers_editor", known_at=then))
