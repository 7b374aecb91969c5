"""Pilot flows for the whole curation job in the console (issue 14): each asserts on the store and the
app's state. Waits are on the app's own state (``wait_for``, ``idle``), never on time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Button, DataTable

from recall_admin.plans import read_plan
from recall_tui.actions import ACTIONS
from recall_tui.screens.form import FormScreen, field_label

from .conftest import FIXED_NOW, SIZE, idle, press, ready, run, screen_text, steady, wait_for
from .test_flows import palette_first, staged, submit_form


async def confirm_apply(pilot: Any) -> None:
    """Apply, then answer yes once the question is on screen (a key pressed before it would go elsewhere)."""
    from recall_tui.screens.confirm import ConfirmScreen

    await press(pilot, "A")
    await wait_for(
        pilot,
        lambda: isinstance(pilot.app.screen, ConfirmScreen) and pilot.app.screen.query("#yes"),
        what="the confirmation",
    )
    await press(pilot, "y")


def summary_text(tray: Any) -> str:
    """The plan tray's whole summary as plain text (the screen shows only what fits)."""
    import io

    from rich.console import Console

    console = Console(width=200, record=True, file=io.StringIO())
    console.print(tray.query_one("#plan-summary").content)
    return console.export_text()


async def registry(pilot: Any) -> Any:
    await press(pilot, "5")
    view = pilot.app.main.view("registry")
    await wait_for(pilot, lambda: view.all_predicates and view.findings is not None, what="the registry")
    return view


async def define(pilot: Any, name: str) -> Any:
    app = pilot.app
    await registry(pilot)
    before = len(app.main.view("plan").entries)
    await press(pilot, "d")
    await submit_form(pilot, name=name, description="a test predicate", reason="testing")
    tray = app.main.view("plan")
    await wait_for(pilot, lambda: len(tray.entries) == before + 1 and not tray.busy and tray.preview, what="preview")
    return tray


def test_store_text_is_shown_as_text_and_escape_sequences_never_reach_the_terminal(make_app: Any) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            app.memory.remember("user", "likes", "\x1b[31mred[/b] [link=x]", at=FIXED_NOW - 10)
            await press(pilot, "ctrl+r")
            pairs = app.main.view("pairs")
            await wait_for(pilot, lambda: any("red" in str(r.values) for r in pairs.rows), what="the new value")
            await idle(pilot)
            cell = str(app.main.query_one("#pairs-table", DataTable).get_row("likes")[1])
            assert "\\x1b[31mred[/b] [link=x]" in cell and "\x1b" not in cell
            shot = app.export_screenshot()
            assert "\x1b" not in shot and "\\x1b[31mred[/b]" in shot

    run(scenario())


def test_read_only_disables_staging_and_apply_with_a_visible_reason(store_url: str) -> None:
    from recall_admin.session import Session
    from recall_tui.app import RecallApp

    async def scenario() -> None:
        session = Session.open(store_url, operator="tester", read_only=True)
        app = steady(RecallApp(session=session, tune_gc=False))
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await idle(pilot)
            assert "read-only" in str(app.main.query_one("#plan-badge").render())
            await registry(pilot)
            position = app.memory.store.position()
            await press(pilot, "d")  # disabled: no form opens
            await idle(pilot)
            assert not isinstance(app.screen, FormScreen)
            # the palette runs the same rows: staging stays off there too
            for scope, action in (("registry", "load"), ("notes", "promote_match"), ("plan", "open_file")):
                row = next(a for a in ACTIONS if a.scope == scope and a.action == action)
                await app.run_action_row(row)
                await idle(pilot)
                assert not isinstance(app.screen, FormScreen), action
            await conflicts(pilot)
            await press(pilot, "d")
            await idle(pilot)
            assert not isinstance(app.screen, FormScreen)
            await press(pilot, "7")
            await idle(pilot)
            assert app.main.query_one("#plan-apply", Button).disabled
            shot = screen_text(app)
            assert "Read-only store (--read-only): plans cannot be staged or applied here." in shot
            assert "read-only: staging and apply are off" in shot
            assert app.memory.store.position() == position
        session.close()

    run(scenario())


def test_brackets_step_pairs_right_after_choosing_a_subject_in_the_filter(make_app: Any) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await press(pilot, "f", *"alice", "enter")
            pairs = app.main.view("pairs")
            await wait_for(pilot, lambda: pairs.subject == "alice" and app.main.predicate, what="alice's pairs")
            first = app.main.predicate
            await press(pilot, "right_square_bracket")
            await wait_for(pilot, lambda: app.main.predicate != first, what="the next pair")
            assert app.main.predicate == pairs.rows[1].predicate
            await press(pilot, "left_square_bracket")
            await wait_for(pilot, lambda: app.main.predicate == first, what="back")

    run(scenario())


def test_the_palette_finds_actions_by_the_words_an_operator_types(make_app: Any) -> None:
    async def scenario() -> None:
        from recall_tui.commands import RecallCommands

        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            provider = RecallCommands(app.screen)
            expect = {
                "promote": "Stage a note promotion",
                "revert": "Revert an applied plan",
                "undo": "Revert an applied plan",
                "load": "Load a registry",
                "dismiss": "Dismiss a conflict",
            }
            for word, title in expect.items():
                hits = [h async for h in provider.search(word)]
                assert any(title in (h.text or "") for h in hits), word

    run(scenario())


def test_the_palette_lists_every_subject_whose_name_matches_first(make_app: Any) -> None:
    """Typing "subject" matched the label "Subject: ..." of every subject alike, so the ones named subject-N
    ranked no higher than any other, and past the first 200 subjects listed none was offered at all."""
    from textual.command import CommandList

    names = [f"subject-{i}" for i in range(1, 12)]
    others = ["the-subject-of-a-talk", "[red]subject-in-brackets"]  # markup in a name is shown as it is

    def subject_hits(app: Any) -> list[str]:
        try:
            options = app.screen.query_one(CommandList)
        except Exception:
            return []
        prompts = [str(options.get_option_at_index(i).prompt).split("\n")[0] for i in range(options.option_count)]
        return [p.removeprefix("Subject: ") for p in prompts if p.startswith("Subject: ")]

    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            fillers = [
                {"subject": f"filler-{i:03}", "predicate": "likes", "value": v}
                for i in range(210)
                for v in ("tea", "jam")
            ]  # more events each: listed before the subject-N
            app.memory.remember_many(
                [*fillers, *({"subject": n, "predicate": "likes", "value": "tea"} for n in names + others)]
            )
            await press(pilot, "ctrl+r")
            await idle(pilot)
            await press(pilot, "ctrl+p")
            await wait_for(pilot, lambda: palette_open(app), what="the palette")
            await press(pilot, *"subject")
            # the exact word first, the shorter name first among equals; then names holding it further in;
            # then the subjects only the label "Subject:" matches
            first = [*names, "the-subject-of-a-talk", "[red]subject-in-brackets"]
            await wait_for(
                pilot, lambda: subject_hits(app)[: len(first)] == first and len(subject_hits(app)) > 200, what="hits"
            )

    run(scenario())


def test_registry_filters_by_name_and_the_log_by_operator(make_app: Any) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            view = await registry(pilot)
            await press(pilot, "f", *"editor")
            await wait_for(pilot, lambda: view.query_text == "editor", what="the filter")
            assert view.predicates and all(
                "editor" in p["name"] or any("editor" in m for m in p["merged"]) for p in view.predicates
            )
            assert len(view.predicates) < len(view.all_predicates)
            who = next(c["operator"] for c in view.data["log"]["changes"] if c.get("operator"))
            view.query_one("#registry-filter").value = who
            await wait_for(pilot, lambda: view.query_text == who, what="the filter")
            assert view.changes and all(who in (c.get("operator") or "") or who in c["name"] for c in view.changes)
            assert len(view.changes) < len(view.data["log"]["changes"])

    run(scenario())


def test_a_lint_finding_stages_the_merge_it_suggests_and_the_merged_name_reads_as_the_other(make_app: Any) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            view = await registry(pilot)
            await press(pilot, "greater_than_sign", "greater_than_sign")
            index = next(i for i, f in enumerate(view.findings) if f["code"] == "near_duplicate")
            view.query_one("#lint-table", DataTable).move_cursor(row=index)
            await idle(pilot)
            detail = str(view.query_one("#lint-detail").render())
            assert "editor_preference and prefers_editor look like one predicate" in detail
            assert "suggested: merge into prefers_editor, as prefers_editor is declared in a registry file" in detail
            await press(pilot, "x")
            await submit_form(pilot, reason="one predicate")
            tray = await staged(pilot)
            # the suggested direction: into the name declared in a registry file
            assert tray.recipe.title == "merge editor_preference into prefers_editor"
            table = app.main.query_one("#plan-changes", DataTable)
            cells = [str(c) for r in range(table.row_count) for c in table.get_row_at(r)]
            assert "read as prefers_editor" in cells

    run(scenario())


def test_several_plans_stage_preview_and_apply_each_on_its_own(make_app: Any) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await define(pilot, "shell_one")
            tray = await define(pilot, "shell_two")
            assert [s.recipe.title for s in tray.entries] == ["define shell_one", "define shell_two"]
            assert all(s.preview is not None for s in tray.entries)
            await idle(pilot)
            assert app.main.query_one("#plan-list").display
            await confirm_apply(pilot)
            await wait_for(pilot, lambda: len(tray.entries) == 1, what="the apply")
            assert app.memory.timeline().knows("shell_two") and not app.memory.timeline().knows("shell_one")
            assert tray.selected.recipe.title == "define shell_one" and tray.selected.preview is not None

    run(scenario())


def test_save_a_plan_to_a_file_and_apply_a_plan_file(make_app: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        app = make_app()
        path = tmp_path / "plan.json"
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            tray = await define(pilot, "from_a_file")
            planned = tray.preview.plan.id
            await press(pilot, "S")
            await submit_form(pilot, path=str(path))
            await wait_for(pilot, lambda: path.exists(), what="the file")
            assert read_plan(path).id == planned
            await press(pilot, "D")
            await wait_for(pilot, lambda: not tray.entries, what="discarded")
            await press(pilot, "O")
            await submit_form(pilot, path=str(path))
            await wait_for(pilot, lambda: tray.preview is not None and not tray.busy, what="the file's preview")
            assert tray.preview.plan.id == planned
            await confirm_apply(pilot)
            await wait_for(pilot, lambda: not tray.entries, what="the apply")
            assert app.memory.timeline().knows("from_a_file")

    run(scenario())


def test_promote_notes_by_regex_defining_the_predicate_in_the_same_plan(make_app: Any) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await press(pilot, "6", "greater_than_sign", "greater_than_sign")
            await wait_for(pilot, lambda: app.main.view("notes").notes, what="notes")
            await press(pilot, "r")
            await submit_form(
                pilot, match=r"(?:my shell is|I use) (?P<value>\w+)", predicate="login_shell", reason="shells"
            )
            tray = await staged(pilot)
            assert tray.recipe.title == "promote notes matching a regex into login_shell"
            assert ("declare", "login_shell") in [
                (op.get("op"), op.get("name")) for op in tray.preview.plan.to_json()["ops"]
            ]
            await idle(pilot)
            assert "nushell" in app.export_screenshot()  # the notes table stays in the preview

    run(scenario())


def test_revert_an_applied_plan_from_the_registry_log(make_app: Any) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            tray = await define(pilot, "to_revert")
            await confirm_apply(pilot)
            await wait_for(pilot, lambda: not tray.entries, what="the apply")
            view = await registry(pilot)
            await press(pilot, "greater_than_sign")
            await wait_for(pilot, lambda: any(c["name"] == "to_revert" for c in view.changes), what="the log")
            index = next(i for i, c in enumerate(view.changes) if c["name"] == "to_revert")
            view.query_one("#registry-log", DataTable).move_cursor(row=index)
            await press(pilot, "u")
            await submit_form(pilot, reason="defined by mistake")
            await wait_for(
                pilot,
                lambda: tray.entries and not tray.busy and (tray.preview or tray.selected.error),
                what="the revert's preview",
            )
            assert tray.recipe.title.startswith("revert plan-") and tray.selected.error is None
            assert "to_revert" in app.memory.timeline().predicates()
            await confirm_apply(pilot)
            await wait_for(pilot, lambda: not tray.entries, what="the revert's apply")
            assert "to_revert" not in app.memory.timeline().predicates()
            withdraw = [r.record for r in app.memory.timeline().log if r.record.op == "withdraw"]
            assert [(w.reason, w.operator) for w in withdraw] == [("defined by mistake", "tester")]
            # the log entry says who planned, who applied and what withdrew it
            view = await registry(pilot)
            await press(pilot, "greater_than_sign")
            await wait_for(pilot, lambda: any(c.get("withdrawn_by") for c in view.changes), what="the re-read log")
            index = next(
                i for i, c in enumerate(view.changes) if c["name"] == "to_revert" and c["op"] in ("define", "declare")
            )
            view.query_one("#registry-log", DataTable).move_cursor(row=index)
            await idle(pilot)
            detail = str(view.query_one("#log-detail").content)
            assert "planned by tester" in detail and "applied by tester" in detail and "withdrawn by plan-" in detail

    run(scenario())


def test_load_a_starter_previewed_name_by_name_applied_then_reverted(make_app: Any) -> None:
    """The whole registry round trip in the console: load the sales starter (l), read its preview
    predicate by predicate, apply it, then revert its plan from the registry log (u) and apply that."""

    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            memory = app.memory
            before = set(memory.timeline().predicates())
            await registry(pilot)
            await press(pilot, "l")
            await submit_form(pilot, registry="sales", reason="the sales team joins")
            tray = await staged(pilot)
            assert tray.recipe.title == "load registry sales"
            status = {p["name"]: p["status"] for p in tray.preview.plan.details["predicates"]}
            new = {n for n, st in status.items() if st == "new"}
            assert new and new.isdisjoint(before) and "unchanged" in status.values()  # every name of the file
            await idle(pilot)
            text = summary_text(tray)
            assert "Predicates:" in text and f"+ {sorted(new)[0]}: new" in text
            await confirm_apply(pilot)
            await wait_for(pilot, lambda: not tray.entries, what="the apply")
            loaded = tray.applied["applied"]
            assert new <= set(memory.timeline().predicates())
            view = await registry(pilot)
            await press(pilot, "greater_than_sign")
            await wait_for(pilot, lambda: any(c["name"] in new for c in view.changes), what="the log")
            index = next(i for i, c in enumerate(view.changes) if c["name"] in new)
            plan_id = view.changes[index]["plan"]
            assert plan_id == loaded
            view.query_one("#registry-log", DataTable).move_cursor(row=index)
            await press(pilot, "u")
            await wait_for(pilot, lambda: isinstance(app.screen, FormScreen), what="the revert form")
            records = len(tray.applied["events"])
            note = str(app.screen.query_one(".dialog-note").content)  # what the plan wrote, not one of its rows
            assert f"takes back what {plan_id} wrote: {records} registry records (declare " in note, note
            await submit_form(pilot, reason="not yet")
            await staged(pilot)
            assert tray.recipe.title.startswith(f"revert {plan_id}")
            await idle(pilot)
            text = summary_text(tray)
            assert f"withdraw plan {plan_id}" in text  # what it appends, in words
            assert f"Takes back what {plan_id} appended:" in text and f"- declare {sorted(new)[0]}: " in text
            await confirm_apply(pilot)
            await wait_for(pilot, lambda: not tray.entries, what="the revert's apply")
            assert set(memory.timeline().predicates()) == before

    run(scenario())


def test_a_near_duplicate_suggestion_is_readable_in_full_at_80x24(make_app: Any) -> None:
    """The suggestions table cuts its "why" short (at 80 columns it is off screen): the highlighted
    suggestion is written out in full below it."""

    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SMALL) as pilot:
            await ready(pilot)
            await app.run_action("show_view('vocab')")
            view = app.main.view("vocab")
            await wait_for(pilot, lambda: view.clusters, what="the suggestions")
            await idle(pilot)
            c = view.clusters[0]
            detail = str(view.query_one("#suggest-detail").content)
            assert c.reason in detail and f"merge into {c.into}" in detail
            assert c.reason.split(";")[0] in screen_text(app)

    run(scenario())


def test_a_form_with_a_blank_required_field_stays_open_and_says_so(make_app: Any) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await registry(pilot)
            await press(pilot, "d")
            await submit_form(pilot, name="", reason="no name given")
            await wait_for(pilot, lambda: app._notifications, what="the warning")
            assert isinstance(app.screen, FormScreen) and app.focused.id == "f-name"
            assert "Fill in “name (snake_case)” first." in [n.message for n in app._notifications]
            await press(pilot, "escape")
            await idle(pilot)
            assert app.main.view("plan").entries == [] and app.errors == []

    run(scenario())


def test_every_instant_says_its_zone(make_app: Any) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await idle(pilot)
            assert "UTC" in app.export_screenshot()
            await press(pilot, "2")  # the first pair's history (the subjects list has the focus)
            await wait_for(pilot, lambda: app.main.view("history").data is not None, what="history")
            await idle(pilot)
            assert "at (UTC)" in app.export_screenshot().replace("&#160;", " ")

    run(scenario())


def test_define_form_at_80x24_reaches_its_last_field_and_buttons_by_tab(make_app: Any) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await ready(pilot)
            await registry(pilot)
            await press(pilot, "d")
            await wait_for(
                pilot, lambda: isinstance(app.screen, FormScreen) and app.screen.query("#submit"), what="the form"
            )
            screen = app.screen
            names = {"f-historical", "f-reason", "submit"}
            seen = set()
            for _ in range(12):
                await press(pilot, "tab")
                await idle(pilot)
                focused = app.focused
                assert focused is not None
                region = focused.region
                assert region.height > 0 and region.y >= 0 and region.bottom <= 24, focused.id
                seen.add(focused.id)
            assert names <= seen
            assert screen.query_one("#submit").region.bottom <= 24

    run(scenario())


async def conflicts(pilot: Any) -> Any:
    await press(pilot, "6")
    view = pilot.app.main.view("conflicts")
    await wait_for(pilot, lambda: view.listing is not None and view.items, what="conflicts")
    return view


def highlight(view: Any, table: str, index: int) -> None:
    view.query_one(table, DataTable).move_cursor(row=index)


def test_a_dismissed_conflict_is_listed_on_request_and_undismissed(make_app: Any) -> None:
    from recall_admin import conflicts as conflicts_svc
    from recall_admin import review

    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            view = await conflicts(pilot)
            index = next(i for i, c in enumerate(view.items) if c.subject == "alice")
            target = view.items[index].id
            highlight(view, "#conflicts-table", index)
            await press(pilot, "d")
            await submit_form(pilot, reason="said twice")
            await wait_for(pilot, lambda: target not in {c.id for c in view.items}, what="the dismissal")
            # t lists the dismissed ones too, marked; u shows one again, with a reason
            await press(pilot, "t")
            await wait_for(pilot, lambda: any(c.id == target and c.dismissed for c in view.items), what="dismissed")
            index = next(i for i, c in enumerate(view.items) if c.id == target)
            highlight(view, "#conflicts-table", index)
            await idle(pilot)
            assert "✕" in str(app.main.query_one("#conflicts-table", DataTable).get_row_at(index)[0])
            assert "u shows it again" in screen_text(app)
            await press(pilot, "d")  # dismissing it twice says so, and writes nothing
            await wait_for(pilot, lambda: app._notifications, what="the warning")
            assert "already dismissed" in list(app._notifications)[-1].message
            await press(pilot, "u")
            await submit_form(pilot, reason="the values changed meaning")
            await wait_for(
                pilot, lambda: any(c.id == target and not c.dismissed for c in view.items), what="shown again"
            )
            assert target in {c.id for c in conflicts_svc.find_conflicts(app.memory).conflicts}
            decision = review.decisions(app.memory)[-1]
            assert decision.body["reason"] == "the values changed meaning" and decision.body["operator"] == "tester"
            await press(pilot, "t")  # hidden again: the list holds open conflicts only
            await wait_for(pilot, lambda: not view.show_dismissed and all(not c.dismissed for c in view.items))

    run(scenario())


def test_undismiss_needs_a_dismissed_conflict(make_app: Any) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await conflicts(pilot)
            position = app.memory.store.position()
            await press(pilot, "u")
            await wait_for(pilot, lambda: app._notifications, what="the warning")
            assert "Highlight a dismissed conflict" in list(app._notifications)[-1].message
            assert not isinstance(app.screen, FormScreen) and app.memory.store.position() == position

    run(scenario())


def test_exclude_settles_a_group_by_one_predicate_with_a_reason(make_app: Any) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            view = await conflicts(pilot)
            c = view.current
            await press(pilot, "x")
            await submit_form(pilot, by=c.predicates[0], reason="one excludes the other")
            tray = await staged(pilot)
            plan = tray.preview.plan.to_json()
            assert plan["kind"] == "exclude"
            assert list(plan["details"]["excludes"]) == [c.predicates[0]]  # only the chosen one
            assert [op.get("reason") for op in plan["ops"]] == ["one excludes the other"]

    run(scenario())


def test_keep_one_records_the_reason_in_the_statement(make_app: Any) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            view = await conflicts(pilot)
            c = view.current
            await press(pilot, "k")
            await submit_form(pilot, keep=c.predicates[0], reason="the user said so")
            tray = await staged(pilot)
            statement = tray.preview.plan.events()[0]
            assert statement.evidence == "conflicts confirm by tester: the user said so"

    run(scenario())


def test_typing_an_operator_word_in_the_palette_runs_the_action(make_app: Any) -> None:
    """ctrl+p, a word an operator would type, Enter: the action runs (its view shown first)."""

    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            expect = {
                "promote": "Notes: Stage a note promotion",
                "revert": "Registry: Revert an applied plan",
                "undo": "Registry: Revert an applied plan",
                "load": "Registry: Load a registry",
                "dismiss": "Conflicts: Dismiss a conflict",
            }
            for word, label in expect.items():
                await press(pilot, "ctrl+p")
                await wait_for(pilot, lambda: palette_open(app), what="the palette")
                await press(pilot, *word)
                await wait_for(pilot, lambda label=label: palette_first(app) == label, what=f"{label!r} for {word!r}")
                await press(pilot, "escape")
                await wait_for(pilot, lambda: not palette_open(app), what="the palette closed")
            await press(pilot, "ctrl+p")
            await wait_for(pilot, lambda: palette_open(app), what="the palette")
            await press(pilot, *"load")
            await wait_for(pilot, lambda: palette_first(app) == "Registry: Load a registry", what="load")
            await press(pilot, "enter")
            await wait_for(
                pilot, lambda: isinstance(app.screen, FormScreen) and app.screen.query("#f-registry"), what="the form"
            )
            assert app.main.active == "registry"

    run(scenario())


def palette_open(app: Any) -> bool:
    from textual.command import CommandPalette

    return isinstance(app.screen, CommandPalette)


SMALL = (80, 24)
# every form the console opens: the keys that show its view, what must be loaded there, its key
FORMS = (
    ("registry", "redefine", "e"),
    ("registry", "define", "d"),
    ("registry", "merge", "m"),
    ("registry", "load", "l"),
    ("conflicts", "keep one", "k"),
    ("conflicts", "exclude", "x"),
    ("conflicts", "dismiss", "d"),
    ("vocab", "merge suggestion", "m"),
    ("notes", "promote a cluster", "p"),
    ("notes", "promote one note", "o"),
    ("notes", "promote by regex", "r"),
)


async def tab_through(pilot: Any, what: str) -> None:
    """Tab round the open dialog once, then back with shift+tab: every focused widget is entirely on screen,
    with the label written above it, and so are the buttons."""
    app = pilot.app
    screen = app.screen
    first = app.focused
    seen = []
    for key in ("tab", "shift+tab"):
        for _ in range(40):
            focused = app.focused
            assert focused is not None, what
            await idle(pilot)
            assert screen.can_view_entire(focused), f"{what}: {focused.id} is not entirely on screen ({key})"
            label = field_label(focused)
            assert label is None or screen.can_view_entire(label), f"{what}: {focused.id}'s label is hidden ({key})"
            seen.append(focused.id)
            await press(pilot, key)
            if app.focused is first:
                break
        else:
            raise AssertionError(f"{what}: {key} never came back to the first field")
    for button in screen.query(Button):
        assert button.region.bottom <= SMALL[1] and button.region.right <= SMALL[0], f"{what}: {button.id}"
    assert "submit" in seen or "yes" in seen or "no" in seen, what


def test_every_dialog_is_usable_at_80x24(make_app: Any) -> None:
    from recall_tui.screens.confirm import ConfirmScreen
    from recall_tui.screens.help import HelpScreen

    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SMALL) as pilot:
            await ready(pilot)
            for view, what, key in FORMS:
                await app.run_action(f"show_view('{view}')")
                v = app.main.view(view)
                loaded = {
                    "registry": lambda v=v: v.all_predicates,
                    "conflicts": lambda v=v: v.items,
                    "vocab": lambda v=v: v.clusters,
                    "notes": lambda v=v: v.clusters and v.notes,
                }[view]
                await wait_for(pilot, loaded, what=view)
                await press(pilot, key)
                await wait_for(
                    pilot, lambda: isinstance(app.screen, FormScreen) and app.screen.query("#submit"), what=what
                )
                await tab_through(pilot, what)
                await press(pilot, "escape")
                await wait_for(pilot, lambda: not isinstance(app.screen, FormScreen), what=f"{what} closed")
            # the apply question, and the help
            await define(pilot, "at_80x24")
            await press(pilot, "A")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen) and app.screen.query("#yes"))
            await tab_through(pilot, "apply")
            await press(pilot, "escape")
            await press(pilot, "question_mark")
            await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
            await idle(pilot)
            assert "esc or ? closes" in screen_text(app)
            assert app.errors == []

    run(scenario())


def test_merge_from_the_registry_list_previews_the_merged_name_as_read_as_the_other(make_app: Any) -> None:
    """m on a predicate: choose the one it merges into (the form starts with none chosen)."""

    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            view = await registry(pilot)
            index = next(i for i, p in enumerate(view.predicates) if p["name"] == "editor_preference")
            highlight(view, "#predicates-table", index)
            await press(pilot, "m")
            await submit_form(pilot, into="prefers_editor", reason="one predicate")
            tray = await staged(pilot)
            assert tray.recipe.title == "merge editor_preference into prefers_editor"
            table = app.main.query_one("#plan-changes", DataTable)
            rows = [[str(c) for c in table.get_row_at(r)] for r in range(table.row_count)]
            merged = [r for r in rows if r[1] == "editor_preference"]
            assert merged and all(r[4] == "read as prefers_editor" for r in merged)
            await idle(pilot)
            assert "read as prefers_editor" in screen_text(app)

    run(scenario())


def test_a_merge_form_submitted_without_a_choice_stages_nothing(make_app: Any) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await registry(pilot)
            await press(pilot, "m")
            await submit_form(pilot, reason="no target chosen")
            await wait_for(pilot, lambda: not isinstance(app.screen, FormScreen), what="the form closed")
            await idle(pilot)
            assert app.main.view("plan").entries == [] and app.errors == []

    run(scenario())


def test_a_search_hit_with_a_long_subject_keeps_its_value_on_screen_at_80_columns(make_app: Any) -> None:
    """A subject may be 256 bytes: the hits table clips it, so the value beside it is still shown at 80x24."""

    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SMALL) as pilot:
            await ready(pilot)
            app.memory.remember("s" * 200, "likes", "teapot", at=FIXED_NOW - 10)
            await press(pilot, "ctrl+r", "slash", *"teapot", "enter")
            pairs = app.main.view("pairs")
            await wait_for(pilot, lambda: pairs.hits, what="search hits")
            await idle(pilot)
            row = next(line for line in screen_text(app).splitlines() if "sssss" in line)
            assert "teapot" in row and "s" * 23 + "…" in row

    run(scenario())


def test_split_in_the_vocabulary_says_where_a_merged_name_splits(make_app: Any) -> None:
    """s on a name that was not matched automatically says where a merge by a plan is undone (the Registry's
    split), and the palette finds the vocabulary's split by "unmerge"."""

    async def scenario() -> None:
        from recall_tui.commands import RecallCommands

        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await press(pilot, "6", ">")
            view = app.main.view("vocab")
            await wait_for(pilot, lambda: view.entries, what="the inbox")
            inbox = app.main.query_one("#inbox-table", DataTable)
            inbox.focus()
            inbox.move_cursor(row=next(i for i, e in enumerate(view.entries) if e.origin == "defined"))
            await press(pilot, "s")
            notice = str(list(app._notifications)[-1].message)
            assert "Registry (5)" in notice and "then s" in notice
            hits = [h async for h in RecallCommands(app.screen).search("unmerge")]
            assert any(h.text == "Vocabulary: Stage a split of a matched name" for h in hits)

    run(scenario())


def test_history_and_explain_titles_clip_a_long_subject_and_keep_the_predicate(make_app: Any) -> None:
    """A 200-character subject filled the history's and explain's title lines at 80 columns and cut off the
    predicate: the title clips the subject, so the pair it names is still read."""

    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SMALL) as pilot:
            await ready(pilot)
            subject = "s" * 200
            app.memory.remember(subject, "likes", "teapot", at=FIXED_NOW - 10)
            await press(pilot, "ctrl+r")
            await idle(pilot)
            app.open_subject(subject)
            pairs = app.main.view("pairs")
            await wait_for(pilot, lambda: pairs.subject == subject and pairs.rows, what="the subject's pairs")
            await press(pilot, "enter")
            history = app.main.view("history")
            await wait_for(pilot, lambda: history.data is not None and history.data.subject == subject)
            await idle(pilot)
            assert "s" * 31 + "… · likes — 1 step(s)" in screen_text(app)
            await press(pilot, "e")
            explain = app.main.view("explain")
            await wait_for(pilot, lambda: explain.data is not None, what="the explanation")
            await idle(pilot)
            assert "Why " + "s" * 31 + "… · likes answers" in screen_text(app)

    run(scenario())


def test_a_path_typed_with_a_tilde_is_read_from_the_home_folder(
    make_app: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No shell reads a form's path: Save, Open and Load expand ``~`` as a shell would for the CLI (the
    console said "plan file '~/plan.json' does not exist")."""
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "tiny.yaml").write_text("registry: tiny\npredicates:\n  shoe_size:\n    cardinality: single\n")

    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            tray = await define(pilot, "from_home")
            planned = tray.preview.plan.id
            await press(pilot, "S")
            await submit_form(pilot, path="~/plan.json")
            await wait_for(pilot, lambda: (tmp_path / "plan.json").exists() or app.errors, what="the file")
            assert read_plan(tmp_path / "plan.json").id == planned
            await press(pilot, "D")
            await wait_for(pilot, lambda: not tray.entries, what="discarded")
            await press(pilot, "O")
            await submit_form(pilot, path="~/plan.json")
            await wait_for(pilot, lambda: tray.preview is not None and not tray.busy, what="the file's preview")
            assert tray.preview.plan.id == planned and app.errors == []
            await press(pilot, "D", "5", "l")
            await submit_form(pilot, registry="~/tiny.yaml")
            tray = await staged(pilot)
            assert app.errors == [] and "shoe_size" in str(tray.preview.plan.to_json())

    run(scenario())


def test_re_plan_on_a_plan_file_says_why_it_cannot(make_app: Any, tmp_path: Path) -> None:
    """R on a plan read from a file did nothing at all: it says that such a plan is applied as written, and
    what to do instead."""

    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await press(pilot, "7", "O")
            await submit_form(pilot, path=str(tmp_path / "missing.json"))
            tray = app.main.view("plan")
            await wait_for(pilot, lambda: tray.selected is not None and tray.selected.error, what="the refusal")
            await press(pilot, "R")
            notice = str(list(app._notifications)[-1].message)
            assert "cannot be re-planned" in notice and "Discard it (D)" in notice

    run(scenario())
