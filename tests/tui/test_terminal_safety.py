"""Every console view shows text from agents with its control characters escaped (issue 11):
an ESC sequence in a value, a note, evidence or a subject reaches no widget raw."""

from __future__ import annotations

from typing import Any

from textual.widgets import DataTable

from .conftest import FIXED_NOW, SIZE, idle, press, ready, run, screen_text, wait_for

TITLE = "zsh\x1b]0;PWNED\x07"  # OSC 0: set the window title
CLEAR = "x\x1b[2J\u009b31m"  # clear the screen; a one-byte C1 CSI


def test_every_view_escapes_control_characters(make_app: Any) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            m = app.memory
            m.remember("user", "likes", TITLE, at=FIXED_NOW - 30, evidence=CLEAR)
            m.remember("user", "note", "I use " + TITLE + " as my shell", at=FIXED_NOW - 20)
            m.remember("user", "dislikes", TITLE, at=FIXED_NOW - 10)  # a conflict: one value, two names
            await press(pilot, "ctrl+r")
            pairs = app.main.view("pairs")
            await wait_for(pilot, lambda: any("PWNED" in str(r.values) for r in pairs.rows), what="the values")
            await idle(pilot)
            table = app.main.query_one("#pairs-table", DataTable)
            table.move_cursor(row=table.get_row_index("likes"))
            for key in ("1", "2", "3", "4", "5", "6", "7"):  # pairs, history, explain, diff, registry, queues, plan
                await press(pilot, key)
                await idle(pilot)
                shot = app.export_screenshot()
                assert not [c for c in ("\x1b", "\x07", "\u009b") if c in shot], key
            await press(pilot, "2")
            await idle(pilot)
            assert "\\x1b]0;PWNED" in app.export_screenshot()
            # a plan over the pair: its changes, and what a read known at now answered, escaped too
            from recall_tui.messages import StagePlan
            from recall_tui.staging import Recipe

            other = "single" if m.timeline().definition("likes").cardinality != "single" else "multi"
            app.main.post_message(
                StagePlan(
                    Recipe("redefine likes", lambda st: st.redefine("likes", cardinality=other, retroactive=True))
                )
            )
            tray = app.main.view("plan")
            await wait_for(pilot, lambda: tray.preview is not None and not tray.busy, what="the preview")
            assert any(c.subject == "user" and c.predicate == "likes" for c in tray.preview.impact.changes)
            recorded = max(e.recorded_at for e in m.store.all_events())
            from recall_engine.instants import format_rfc3339

            await press(pilot, "k", *format_rfc3339(recorded), "enter")
            await wait_for(pilot, lambda: tray.selected.answered, what="the answers given then")
            assert any(TITLE in (v or []) for v in tray.selected.answered.values())
            await idle(pilot)
            shot = app.export_screenshot()
            assert not [c for c in ("\x1b", "\x07", "\u009b") if c in shot] and "\\x1b]0;PWNED" in shot

    run(scenario())


def test_the_palette_lists_a_subject_with_its_escapes_shown(make_app: Any) -> None:
    """The palette offers every listed subject by name; a subject is agent-written, so an OSC 52 in it
    (write the clipboard) or a bidi override reaches the screen escaped, and choosing it opens the subject."""
    from .test_console import palette_open
    from .test_flows import palette_first

    subject = "\x1b]52;c;chduzwq=\x07eve\u202egnp.exe"  # as stored: subjects are lower-cased

    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            app.memory.remember(subject, "likes", "tea", at=FIXED_NOW - 10)
            await press(pilot, "ctrl+r")
            await idle(pilot)
            await press(pilot, "ctrl+p")
            await wait_for(pilot, lambda: palette_open(app), what="the palette")
            await press(pilot, *"gnp.exe")
            shown = "Subject: \\x1b]52;c;chduzwq=\\x07eve\\u202egnp.exe"
            await wait_for(pilot, lambda: palette_first(app).startswith("Subject: "), what="the subject's hit")
            assert palette_first(app) == shown
            shot = app.export_screenshot()
            assert not [c for c in ("\x1b", "\x07", "\u202e") if c in shot]
            await press(pilot, "enter")
            await wait_for(pilot, lambda: app.main.subject == subject, what="the subject opened")

    run(scenario())


def test_dismiss_and_undismiss_notices_show_the_subject_escaped(make_app: Any) -> None:
    """The notice after a dismiss (and an undismiss) names the conflict's subject: agent-written, so escaped."""
    from .test_flows import submit_form

    subject = "eve\x1b]0;pwned\x07"

    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            app.memory.remember(subject, "drinks", "tea", at=FIXED_NOW - 20)
            app.memory.remember(subject, "orders", "tea", at=FIXED_NOW - 10)  # one value, two names
            await press(pilot, "ctrl+r", "6")
            view = app.main.view("conflicts")
            await wait_for(pilot, lambda: any(c.subject == subject for c in view.items), what="the conflict")
            table = app.main.query_one("#conflicts-table", DataTable)
            table.move_cursor(row=next(i for i, c in enumerate(view.items) if c.subject == subject))
            await press(pilot, "d")
            await submit_form(pilot, reason="said twice")
            await wait_for(pilot, lambda: not any(c.subject == subject for c in view.items), what="dismissed")
            await press(pilot, "t")
            await wait_for(pilot, lambda: any(c.subject == subject for c in view.items), what="listed again")
            await idle(pilot)
            table.move_cursor(row=next(i for i, c in enumerate(view.items) if c.subject == subject))
            await press(pilot, "u")
            await submit_form(pilot, reason="look again")
            await wait_for(pilot, lambda: len(app._notifications) >= 2, what="both notices")
            await idle(pilot)
            notices = [str(n.message) for n in app._notifications]
            assert any(n.startswith("Dismissed ") and "(eve\\x1b]0;pwned\\x07)" in n for n in notices), notices
            assert any("(eve\\x1b]0;pwned\\x07) is shown again" in n for n in notices), notices
            shot = app.export_screenshot()
            assert not [c for c in ("\x1b", "\x07") if c in shot]

    run(scenario())


def test_zero_width_characters_are_shown_escaped(make_app: Any) -> None:
    """A zero-width space makes "ad\\u200bmin" read as "admin"; a sequence joined by U+200D is drawn one
    width by some terminals and another by Textual, which shifts the rest of the row. Both are shown escaped,
    so the pairs table's rows stay aligned."""

    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            app.memory.remember("user", "handle", "ad\u200bmin\ufeff", at=FIXED_NOW - 20)
            app.memory.remember("user", "family", "\U0001f469\u200d\U0001f467", at=FIXED_NOW - 10)
            await press(pilot, "ctrl+r")
            pairs = app.main.view("pairs")
            await wait_for(pilot, lambda: any(r.predicate == "family" for r in pairs.rows), what="the values")
            await idle(pilot)
            shot = app.export_screenshot()
            assert not [c for c in ("\u200b", "\u200d", "\ufeff") if c in shot]
            text = screen_text(app)
            assert "ad\\u200bmin\\ufeff" in text and "\U0001f469\\u200d\U0001f467" in text

    run(scenario())


def test_an_error_quoting_agent_text_is_shown_escaped(make_app: Any, monkeypatch: Any) -> None:
    """A service's message may quote a value or a subject: the notice and the plan tray's panel show its
    control characters escaped, and keep its line breaks."""
    from recall_admin import browse
    from recall_engine.errors import InvalidInput

    def refuse(*_args: Any, **_kwargs: Any) -> Any:
        raise InvalidInput("cannot explain 'eve\x1b]0;pwned\x07'\nsee the history")

    async def scenario() -> None:
        from recall_tui.messages import StagePlan
        from recall_tui.staging import Recipe

        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            monkeypatch.setattr(browse, "explain_answer", refuse)
            await press(pilot, "3")
            await wait_for(pilot, lambda: app.errors, what="the error")
            assert app.errors[-1] == ("invalid input", "cannot explain 'eve\\x1b]0;pwned\\x07'\nsee the history")

            def fail(_st: Any) -> Any:
                raise RuntimeError("bad \x1b[2J")

            app.main.post_message(StagePlan(Recipe("a failing plan", fail)))
            tray = app.main.view("plan")
            await wait_for(pilot, lambda: tray.selected is not None and tray.selected.error, what="the refusal")
            assert tray.selected.error.endswith("RuntimeError: bad \\x1b[2J")
            await idle(pilot)
            shot = app.export_screenshot()
            assert not [c for c in ("\x1b", "\x07") if c in shot] and "\\x1b[2J" in shot

    run(scenario())


def test_the_sidebar_clips_a_long_subject_with_a_mark_and_never_inside_an_escape(make_app: Any) -> None:
    """A long subject ran past the sidebar's edge, its count off screen, cut mid-escape (``…==\\x``) with no
    mark: it is clipped to what the sidebar holds beside its count, ending in ``…`` between escapes."""
    import re

    from recall_admin.display import visible

    subject = "abcdefghijkl\x1bxyz-the-rest-of-a-long-name"
    whole = visible(subject)

    async def scenario(size: tuple[int, int]) -> None:
        app = make_app()
        async with app.run_test(size=size) as pilot:
            await ready(pilot)
            app.memory.remember(subject, "likes", "tea", at=FIXED_NOW - 10)
            await press(pilot, "ctrl+r")
            sidebar = app.main.query_one("#sidebar")
            await wait_for(pilot, lambda: any(s == subject for s, _ in sidebar.subjects), what="the subject")
            if not sidebar.display:
                await press(pilot, "b")  # below 100 columns the sidebar starts hidden
            await idle(pilot)
            table = app.main.query_one("#subject-table", DataTable)
            cell = str(table.get_row(subject)[0])
            kept = cell.removesuffix("…")
            assert cell.endswith("…") and whole.startswith(kept) and len(kept) < len(whole), size
            assert not re.search(r"\\(x[0-9a-f]?|u[0-9a-f]{0,3})?$", kept), (size, cell)  # no escape split
            row = next(line for line in screen_text(app).splitlines() if kept in line)
            assert re.search(re.escape(cell) + r"\s+1\b", row), (size, row)  # its count in view beside it
            assert "\x1b" not in app.export_screenshot()

    for size in (SIZE, (80, 24)):
        run(scenario(size))
