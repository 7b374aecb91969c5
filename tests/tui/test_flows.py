"""Pilot tests: each flow of the console, asserting on the store and the app's state, not pixels."""

from __future__ import annotations

import io
import threading
from typing import Any

from textual.widgets import DataTable, Input

from recall_admin import conflicts as conflicts_svc
from recall_admin import notes as notes_svc
from recall_engine.instants import parse_instant
from recall_engine.values import value_key
from recall_tui.actions import ACTIONS
from recall_tui.screens.confirm import ConfirmScreen
from recall_tui.screens.form import FormScreen
from recall_tui.screens.help import HelpScreen

from .conftest import FIXED_NOW, SIZE, press, ready, run, settle, wait_for


def keys(values: Any) -> set[str]:
    return {value_key(v) for v in values}


async def choose_pair(pilot: Any, subject: str, predicate: str) -> None:
    app = pilot.app
    app.main.query_one("#sidebar").select(subject)
    await wait_for(pilot, lambda: app.main.view("pairs").subject == subject, what=f"pairs of {subject}")
    pairs = app.main.view("pairs")
    index = next(i for i, r in enumerate(pairs.rows) if r.predicate == predicate)
    table = pairs.query_one("#pairs-table", DataTable)
    table.focus()
    table.move_cursor(row=index)
    await wait_for(pilot, lambda: app.main.predicate == predicate, what=predicate)


async def submit_form(pilot: Any, **values: str) -> None:
    app = pilot.app
    # pushed is not composed: wait until the form's own fields exist
    await wait_for(
        pilot,
        lambda: (
            isinstance(app.screen, FormScreen)
            and app.screen.query("#submit")
            and all(app.screen.query(f"#f-{name}") for name in values)
        ),
        what="the form",
    )
    for name, value in values.items():
        app.screen.query_one(f"#f-{name}").value = value
    await press(pilot, "ctrl+s")


async def staged(pilot: Any) -> Any:
    tray = pilot.app.main.view("plan")
    await wait_for(pilot, lambda: tray.preview is not None and not tray.busy, what="the preview")
    await settle(pilot)
    return tray


def palette_first(app: Any) -> str:
    """The highlighted command of the open palette (its list fills in as the providers answer)."""
    from textual.command import CommandList

    try:
        options = app.screen.query_one(CommandList)
    except Exception:
        return ""
    if options.highlighted is None or not options.option_count:
        return ""
    return str(options.get_option_at_index(options.highlighted).prompt).split("\n")[0]  # the help is its 2nd line


# --- browsing ----------------------------------------------------------------------------


def test_first_screen_lists_subjects_and_pairs_with_marks(make_app: Any) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            sidebar = app.main.query_one("#sidebar")
            assert [s for s, _ in sidebar.subjects][:1] == ["user"]
            rows = {r.predicate: r for r in app.main.view("pairs").rows}
            assert rows["lives_in"].values == ("Toronto",) and rows["lives_in"].replaced
            assert rows["did"].elsewhere and rows["goal"].elsewhere
            table = app.main.query_one("#pairs-table", DataTable)
            assert "↺" in str(table.get_row("lives_in")[2]) and "≠" in str(table.get_row("did")[2])
            assert app.errors == []

    run(scenario())


def test_search_uses_the_engine_and_opens_the_pair(make_app: Any) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await press(pilot, "slash")
            assert app.focused.id == "search"
            await press(pilot, *"Toronto", "enter")
            pairs = app.main.view("pairs")
            await wait_for(pilot, lambda: pairs.hits, what="search hits")
            hit = next(i for i, b in enumerate(pairs.hits) if b.predicate == "lives_in")
            app.main.query_one("#search-table", DataTable).move_cursor(row=hit)
            await press(pilot, "enter")
            await wait_for(pilot, lambda: app.main.active == "history", what="history")
            history = app.main.view("history")
            await wait_for(pilot, lambda: history.data is not None, what="the history")
            assert (history.data.subject, history.data.predicate) == ("user", "lives_in")

    run(scenario())


def test_history_shows_every_step_and_the_timeline(make_app: Any) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await choose_pair(pilot, "user", "lives_in")
            await press(pilot, "enter")
            history = app.main.view("history")
            await wait_for(pilot, lambda: history.data is not None)
            steps = history.data.steps
            assert [s.after for s in steps] == [("Lisbon",), ("Berlin",), ("Toronto",)]
            table = app.main.query_one("#history-table")
            assert table.row_count == 3
            spans = history.data.spans
            assert [s.value for s in spans] == ["Lisbon", "Berlin", "Toronto"] and spans[-1].held_now
            # ] moves to the next pair and re-reads its history
            await press(pilot, "right_square_bracket")
            await wait_for(pilot, lambda: history.data.predicate == "name")

    run(scenario())


def test_a_field_focused_while_the_history_reads_keeps_the_focus(make_app: Any, monkeypatch: Any) -> None:
    """Enter reads the history first and shows it when read; an instant typed meanwhile (`a`, then the
    digits) stays in its box. The view once took the focus when it was shown, and the rest of the digits
    switched views (the flaky snapshot ``TestHistoryScreen::test_history_as_of`` on a busy machine)."""
    from recall_tui.views import history as history_view

    release = threading.Event()
    read = history_view.read_history

    def slow_read(*args: Any) -> Any:
        release.wait(60)  # a busy machine: the read ends after the next keys
        return read(*args)

    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await choose_pair(pilot, "user", "lives_in")
            monkeypatch.setattr(history_view, "read_history", slow_read)
            await press(pilot, "enter")
            await press(pilot, "a", *"2026-06")
            release.set()
            history = app.main.view("history")
            await wait_for(pilot, lambda: history.shown == "lives_in" and app.main.active == "history")
            box = app.main.query_one("#as-of", Input)
            assert app.focused is box and box.value == "2026-06"
            await press(pilot, *"-01", "enter")
            await wait_for(pilot, lambda: app.settled and history.data is not None and history.data.at < FIXED_NOW)
            assert box.value == "2026-06-01" and app.as_of == parse_instant("2026-06-01")
            assert app.main.active == "history" and app.focused is app.main.query_one("#history-table")

    run(scenario())


def test_as_of_refolds_every_view(make_app: Any) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await choose_pair(pilot, "user", "lives_in")
            await press(pilot, "enter")
            history = app.main.view("history")
            await wait_for(pilot, lambda: history.data is not None)
            assert history.data.answer == ("Toronto",)
            await press(pilot, "a")
            assert app.focused.id == "as-of"
            await press(pilot, *"2026-06-01", "enter")
            at = parse_instant("2026-06-01")
            await wait_for(pilot, lambda: history.data.at == at, what="the re-fold")
            assert history.data.answer == ("Berlin",)
            assert app.main.query_one("#history-table").cursor_row == 1  # the step in force
            await press(pilot, "1")
            pairs = app.main.view("pairs")
            await wait_for(pilot, lambda: {r.predicate: r.values for r in pairs.rows}.get("lives_in") == ("Berlin",))
            await press(pilot, "n")  # back to now
            await wait_for(pilot, lambda: {r.predicate: r.values for r in pairs.rows}.get("lives_in") == ("Toronto",))

    run(scenario())


def test_explain_shows_events_rule_and_registry_events(make_app: Any) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await choose_pair(pilot, "user", "likes")
            await press(pilot, "e")
            view = app.main.view("explain")
            await wait_for(pilot, lambda: view.data is not None)
            x = view.data.explanation
            assert [b.value for b in x.beliefs] == ["hiking"]
            assert any("exclu" in r.reason for r in x.reasons)  # mangoes withdrawn by dislikes
            assert view.data.in_force is not None and view.data.in_force.cardinality == "multi"
            assert [r.at for r in x.rules] == sorted(r.at for r in x.rules)  # oldest first
            assert any(r.name == "dislikes" for r in x.rules)  # the exclusion that governs it
            # narrower than its columns (80 columns with the subjects shown), a table stacks its rows: the
            # registry event reads whole, not folded into columns a letter or two wide
            from rich.console import Console

            from recall_tui.views.explain import render_explanation

            console = Console(width=56, record=True, file=io.StringIO())
            console.print(render_explanation(view.data))
            text = console.export_text()
            assert "dislikes excludes likes" in " ".join(text.split()), text

    run(scenario())


def test_diff_between_two_instants(make_app: Any) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await press(pilot, "4", "i")
            await press(pilot, *"2026-06-01", "tab", *"2026-10-01", "tab")
            app.main.query_one("#diff-subject", Input).value = "user"
            await press(pilot, "enter")
            view = app.main.view("diff")
            await wait_for(pilot, lambda: view.changes, what="the diff")
            by = {c.predicate: c for c in view.changes}
            assert by["lives_in"].before == ("Berlin",) and by["lives_in"].after == ("Toronto",)
            # the whole store: blank subject
            app.main.query_one("#diff-subject", Input).value = ""
            await press(pilot, "c")
            await wait_for(pilot, lambda: any(c.subject != "user" for c in view.changes), what="whole store")

    run(scenario())


def test_registry_lists_predicates_log_and_lint(make_app: Any) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await press(pilot, "5")
            view = app.main.view("registry")
            await wait_for(pilot, lambda: view.predicates, what="predicates")
            names = [p["name"] for p in view.predicates]
            assert "lives_in" in names and "note" in names
            assert app.main.query_one("#registry-log", DataTable).row_count == len(view.data["log"]["changes"])
            await wait_for(pilot, lambda: view.findings is not None, what="lint")
            assert any(f["code"] == "near_duplicate" and "editor_preference" in f["names"] for f in view.findings)
            assert app.main.query_one("#lint-table", DataTable).row_count == len(view.findings)

    run(scenario())


# --- plans ---------------------------------------------------------------------------------


def test_stage_preview_apply_changes_the_store_exactly_as_previewed(make_app: Any) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await press(pilot, "6", "greater_than_sign")  # the vocabulary inbox
            vocab = app.main.view("vocab")
            await wait_for(pilot, lambda: vocab.clusters, what="suggestions")
            await press(pilot, "m")
            await submit_form(pilot, reason="same predicate")
            tray = await staged(pilot)
            assert app.main.active == "plan"
            pv = tray.preview
            assert pv.plan.kind == "merge" and pv.impact.answers_changed == 4
            expected = {(c.subject, c.predicate): c.after for c in pv.impact.changes}
            memory = app.memory
            position = memory.store.position()
            events = pv.plan.events()
            await press(pilot, "A")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the confirmation")
            await press(pilot, "y")
            await wait_for(pilot, lambda: tray.applied is not None, what="apply")
            # exactly the plan's events were appended ...
            assert [e.id for e in memory.store.events_by_id([e.id for e in events])] != []
            assert tray.applied["events"] == [e.id for e in events]
            assert memory.store.position() > position
            new = list(memory.store.all_events(position))  # the plan's events and its `applied` record
            assert {e.id for e in new} - {e.id for e in events} == {new[-1].id}
            assert '"op":"applied"' in new[-1].value
            # ... and every answer now is the previewed "after"
            for (subject, predicate), after in expected.items():
                now = memory.profile(subject)
                held = [b.value for b in now if b.predicate == predicate]
                assert keys(held) == keys(after), (subject, predicate)
            assert tray.recipe is None and tray.preview is None

    run(scenario())


def test_discard_writes_nothing(make_app: Any) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            position = app.memory.store.position()
            await press(pilot, "5")
            view = app.main.view("registry")
            await wait_for(pilot, lambda: view.predicates)
            index = next(i for i, p in enumerate(view.predicates) if p["name"] == "likes")
            app.main.query_one("#predicates-table", DataTable).move_cursor(row=index)
            await press(pilot, "e")
            await submit_form(pilot, add_excludes="avoids")
            tray = await staged(pilot)
            assert tray.preview.plan.kind == "redefine"
            await press(pilot, "D")
            await wait_for(pilot, lambda: tray.recipe is None)
            assert app.memory.store.position() == position

    run(scenario())


def test_stale_plan_is_explained_and_replanned(make_app: Any) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await press(pilot, "6", "greater_than_sign")
            vocab = app.main.view("vocab")
            await wait_for(pilot, lambda: vocab.clusters)
            await press(pilot, "m")
            await submit_form(pilot)
            tray = await staged(pilot)
            first = tray.preview.plan.id
            # another agent writes to a pair in the plan's scope
            app.memory.remember(
                "erin", "editor_preference", "nano", at=parse_instant("2026-11-01"), source="agent_inferred"
            )
            await press(pilot, "A")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
            await press(pilot, "y")
            await wait_for(pilot, lambda: tray.stale is not None, what="the stale plan")
            assert "stale" in tray.stale
            assert tray.query_one("#plan-problem").display
            assert not tray.check_action("apply", ())
            await press(pilot, "R")
            await staged(pilot)
            assert tray.preview.plan.id != first and tray.stale is None
            assert any(c.subject == "erin" for c in tray.preview.impact.changes)
            await press(pilot, "A")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
            await press(pilot, "y")
            await wait_for(pilot, lambda: tray.applied is not None)
            assert [b.value for b in app.memory.read_pair("erin", "prefers_editor")] == ["nano"]

    run(scenario())


def test_preview_compares_answers_as_of_an_instant(make_app: Any) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await press(pilot, "6", "greater_than_sign")
            await wait_for(pilot, lambda: app.main.view("vocab").clusters)
            await press(pilot, "m")
            await submit_form(pilot)
            tray = await staged(pilot)
            await press(pilot, "c")
            assert app.focused.id == "plan-as-of"
            await press(pilot, *"2026-04-20", "enter")
            await wait_for(
                pilot,
                lambda: tray.preview.impact.changes and tray.preview.impact.changes[0].before_as_of is not None,
                what="as-of compare",
            )
            table = tray.query_one("#plan-changes", DataTable)
            assert any("as of" in str(c.label) for c in table.columns.values())

    run(scenario())


# --- queues -------------------------------------------------------------------------------


def test_dismiss_a_conflict(make_app: Any) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await press(pilot, "6")
            view = app.main.view("conflicts")
            await wait_for(pilot, lambda: view.items, what="conflicts")
            before = len(view.items)
            index = next(i for i, c in enumerate(view.items) if c.subject == "alice")
            app.main.query_one("#conflicts-table", DataTable).move_cursor(row=index)
            target = view.items[index].id
            await press(pilot, "d")
            await submit_form(pilot, reason="the same fact, said twice")
            await wait_for(pilot, lambda: view.listing is not None and len(view.items) == before - 1, what="re-read")
            assert target not in {c.id for c in view.items}
            assert target not in {c.id for c in conflicts_svc.find_conflicts(app.memory).conflicts}

    run(scenario())


def test_confirm_a_conflict_stages_a_plan(make_app: Any) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await press(pilot, "6")
            view = app.main.view("conflicts")
            await wait_for(pilot, lambda: view.items)
            index = next(i for i, c in enumerate(view.items) if c.subject == "bob")
            app.main.query_one("#conflicts-table", DataTable).move_cursor(row=index)
            await press(pilot, "k")
            await submit_form(pilot, keep="avoids")
            tray = await staged(pilot)
            assert tray.preview.plan.kind == "confirm"
            change = {(c.subject, c.predicate): c for c in tray.preview.impact.changes}
            assert change[("bob", "likes")].after == ()

    run(scenario())


def test_promote_notes(make_app: Any) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await press(pilot, "6", "greater_than_sign", "greater_than_sign")
            view = app.main.view("notes")
            await wait_for(pilot, lambda: view.clusters, what="note clusters")
            assert len(view.notes) == 6
            await press(pilot, "p")
            await submit_form(pilot, predicate="prefers_shell")
            tray = await staged(pilot)
            assert tray.preview.plan.kind == "promote"
            await press(pilot, "A")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
            await press(pilot, "y")
            await wait_for(pilot, lambda: tray.applied is not None)
            assert [b.value for b in app.memory.read_pair("bob", "prefers_shell")] == ["fish"]
            assert [b.value for b in app.memory.read_pair("alice", "prefers_shell")] == ["zsh"]
            assert len(notes_svc.list_notes(app.memory)) == 1  # only the unrelated note stays
            await wait_for(pilot, lambda: len(view.notes) == 1 if app.main.active == "queues" else True)

    run(scenario())


# --- keys, palette, errors, sizes, mouse ----------------------------------------------------


def test_palette_lists_every_action_and_runs_one(make_app: Any) -> None:
    async def scenario() -> None:
        from recall_tui.commands import RecallCommands

        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            provider = RecallCommands(app.screen)
            found = [h async for h in provider.discover()]
            assert len(found) == len(ACTIONS)
            await press(pilot, "ctrl+p")
            await settle(pilot)
            await press(pilot, *"go to registry")
            await wait_for(pilot, lambda: palette_first(app) == "Go to registry", what="the palette's match")
            await press(pilot, "enter")
            await wait_for(pilot, lambda: app.main.active == "registry", what="the palette's action")

    run(scenario())


def test_help_screen_lists_keys(make_app: Any) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await press(pilot, "question_mark")
            await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
            await press(pilot, "escape")
            await wait_for(pilot, lambda: not isinstance(app.screen, HelpScreen))

    run(scenario())


def test_errors_appear_in_the_app(make_app: Any) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await press(pilot, "a", *"not a day", "enter")
            await wait_for(pilot, lambda: app.errors, what="the error")
            assert app.errors[-1][0] == "invalid input" and "day" in app.errors[-1][1]
            assert app.focused.id == "as-of"  # still there, to correct it; escape leaves it
            await press(pilot, "escape")
            assert app.focused.id == "pairs-table"
            # a plan the service refuses: define a name that exists
            await press(pilot, "5")
            view = app.main.view("registry")
            await wait_for(pilot, lambda: view.predicates)
            await press(pilot, "d")
            await submit_form(pilot, name="lives_in")  # already exists
            await wait_for(pilot, lambda: len(app.errors) == 2, what="the refusal")
            tray = app.main.view("plan")
            assert "already exists" in app.errors[-1][1] and tray.query_one("#plan-problem").display
            assert app.is_running

    run(scenario())


def test_a_store_that_cannot_open_shows_an_error_screen(tmp_path: Any) -> None:
    async def scenario() -> None:
        from recall_tui.app import RecallApp

        app = RecallApp(f"sqlite:///{tmp_path}/missing/folder/x.db")
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: app.errors, what="the error")
            text = str(app.main.query_one("#startup-error").render())
            assert "Cannot open the store" in text and "no such file" in text

    run(scenario())


def test_an_invalid_operator_is_headed_as_an_option_not_as_a_store_that_cannot_open(store_url: str) -> None:
    """The store opens; the operator name is at fault: the screen says which, under a heading that fits."""

    async def scenario(**options: str) -> None:
        from recall_tui.app import RecallApp

        app = RecallApp(store_url, **options)
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: app.errors, what="the error")
            text = str(app.main.query_one("#startup-error").render())
            assert text.startswith("Invalid option") and "Cannot open the store" not in text, text
            assert next(iter(options)) in text and "\x1b" not in app.export_screenshot()
            assert app.session is None

    run(scenario(operator="bad\x1bname"))
    run(scenario(collection="bad name!"))


def test_a_missing_store_file_is_not_found_on_screen_and_is_not_created(tmp_path: Any) -> None:
    async def scenario() -> None:
        from recall_tui.app import RecallApp

        app = RecallApp(f"sqlite:///{tmp_path}/never.db")
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: app.errors, what="the error")
            text = str(app.main.query_one("#startup-error").render())
            assert "Cannot open the store" in text and "nothing to read" in text
            assert app.session is None and app.stager is None  # nothing to stage
        assert not (tmp_path / "never.db").exists()

    run(scenario())


def test_small_terminal_and_mouse(make_app: Any) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await ready(pilot)
            for wid in ("#pairs-table", "#pair-detail-box"):
                region = app.main.query_one(wid).region
                assert region.width > 60 and region.height >= 3, wid
            # below 100 columns the subjects start hidden; b shows them
            assert not app.main.query_one("#sidebar").display
            await press(pilot, "b")
            assert app.main.query_one("#sidebar").region.width >= 18
            await settle(pilot)
            # a click on the third subject row selects it; a click on a tab shows its view
            await pilot.click("#subject-table", offset=(3, 3))
            await wait_for(pilot, lambda: app.main.subject == "bob", what="the clicked subject")
            await pilot.click("#views Tab#--content-tab-registry")
            await wait_for(pilot, lambda: app.main.active == "registry", what="the clicked tab")
            assert app.errors == []

    run(scenario())


def test_brackets_in_data_are_shown_as_text(make_app: Any) -> None:
    """A subject, value or note holding "[...]" is data, never markup."""

    async def scenario() -> None:
        app = make_app()
        app.session.memory.remember("[/b]odd [x]", "note", "my [/i] note [b]", at=parse_instant("2026-11-01"))
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            sidebar = app.main.query_one("#sidebar")
            subject = next(s for s, _ in sidebar.subjects if "odd" in s)
            await choose_pair(pilot, subject, "note")
            await press(pilot, "enter")
            await wait_for(pilot, lambda: app.main.view("history").shown == "note")
            await press(pilot, "6", "greater_than_sign", "greater_than_sign")
            await wait_for(pilot, lambda: any("[/i]" in str(b.value) for b in app.main.view("notes").notes))
            await press(pilot, "slash", *"note", "enter")
            await wait_for(pilot, lambda: app.main.view("pairs").hits)
            assert app.errors == []

    run(scenario())
