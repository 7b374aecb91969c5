"""The TUI's fixtures: a copy of a small demo store per test, and the app opened on it.

The demo store is built once per session (``build_demo`` without ``--events``) and
copied for each test, so a test that applies a plan never changes another's store.
The clock is fixed (``FIXED_NOW``) and the operator named, so plan ids, "now" and
every screen are the same on every run.
"""

from __future__ import annotations

import asyncio
import gc
import html
import re
import shutil
import time
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.keys import REPLACED_KEYS, _character_to_key, _get_unicode_name_from_key

from recall_admin.demo import build_demo
from recall_admin.session import Session
from recall_engine.instants import parse_instant
from recall_engine.storage import open_backend

FIXED_NOW = parse_instant("2026-11-15T12:00:00Z")
SIZE = (120, 40)


@pytest.fixture(scope="package")
def _frozen_heap() -> Iterator[None]:
    yield
    gc.unfreeze()  # after tests/tui, the rest of the suite collects as usual


@pytest.fixture(autouse=True)
def young_heap(_frozen_heap: None) -> None:
    """Each test's cycle collections scan only what the test makes. What earlier tests left alive (modules,
    Textual's and Rich's caches) is frozen out of them, as the app does after its first screen (``tune_gc``;
    tests pass ``tune_gc=False`` so that the app leaves the process's thresholds alone). Without this, every
    full collection walks all of it, and more of it with each test."""
    gc.collect()
    gc.freeze()


@pytest.fixture(scope="session")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tui-demo") / "demo.db"
    backend = open_backend(f"sqlite:///{path}")
    try:
        build_demo(backend)
    finally:
        backend.close()
    return path


@pytest.fixture
def store_url(demo_template: Path, tmp_path: Path) -> str:
    dst = tmp_path / "demo.db"
    for suffix in ("", "-wal", "-shm"):
        src = Path(str(demo_template) + suffix)
        if src.exists():
            shutil.copy(src, str(dst) + suffix)
    return f"sqlite:///{dst}"


@pytest.fixture
def open_session(store_url: str) -> Iterator[Callable[[], Session]]:
    opened: list[Session] = []

    def make() -> Session:
        s = Session.open(store_url, operator="tester", now=lambda: FIXED_NOW)
        s.display_url = "sqlite:///demo.db"  # the temporary path would differ on every run
        opened.append(s)
        return s

    yield make
    for s in opened:
        s.close()


@pytest.fixture
def make_app(open_session: Callable[[], Session]) -> Callable[[], Any]:
    from recall_tui.app import RecallApp

    def make() -> RecallApp:
        return steady(RecallApp(session=open_session(), tune_gc=False))  # the GC is the test process's

    return make


@pytest.fixture(autouse=True)
def steady_cursor(monkeypatch: pytest.MonkeyPatch) -> None:
    """A focused input's cursor blinks on a half-second timer, so a screenshot would show it or not by how
    long the test took to get there. In tests it stays shown, as it is right after the input took the focus."""
    from textual.widgets import Input

    def keep_shown(self: Input) -> None:
        self._cursor_visible = True

    monkeypatch.setattr(Input, "_toggle_cursor", keep_shown)


def steady(app: Any) -> Any:
    """Notices stay until the test ends: a toast that expires after some seconds of wall-clock time would
    make a screen depend on how fast the machine ran the test."""
    app.NOTIFICATION_TIMEOUT = app.ERROR_TIMEOUT = 24 * 3600
    return app


async def wait_for(pilot: Any, condition: Callable[[], Any], timeout: float = 120.0, what: str = "") -> Any:
    """Poll until ``condition()`` is truthy (workers report back through messages), then ``settle``: what
    the result set going (a focus move, a redraw) is done before the test goes on. Between polls the event
    loop runs the app; the poll only sleeps, so the main thread leaves the GIL to the worker it waits for.
    The timeout only turns a hang into a failure: it is generous, so a busy machine never trips it."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            await settle(pilot)
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or condition}")
        await asyncio.sleep(0.01)


def _nodes(app: Any) -> Iterator[Any]:
    yield app
    for screen in app.screen_stack:
        yield from screen.walk_children(with_self=True)


def _queued(app: Any) -> bool:
    """A message or callback waits in some node of some screen, or a table waits to size its new rows."""
    for node in _nodes(app):
        if not node._message_queue.empty() or node._next_callbacks:
            return True
        if getattr(node, "_require_update_dimensions", False):  # a DataTable sizes new rows when idle
            return True
    return False


def _undrawn(screen: Any) -> bool:
    """The screen has a layout, scroll, repaint or recompose pending (drawn on its 60 Hz timer)."""
    return bool(
        screen._layout_required
        or screen._scroll_required
        or screen._repaint_required
        or screen._recompose_required
        or screen._dirty_widgets
        or screen._callbacks
    )


def quiet(app: Any) -> bool:
    """The UI thread has nothing left to do: nothing ``_queued`` and nothing ``_undrawn``, so what a
    screenshot shows is what the widgets hold."""
    return not _undrawn(app.screen) and not _queued(app)


async def settle(pilot: Any, timeout: float = 120.0) -> None:
    """Until the UI thread is ``quiet``: every message queued so far, and every message those queued, handled,
    and the screen drawn. Polls the app's state; the short sleep only lets the screen's draw timer come round
    without spinning."""
    app = pilot.app
    deadline = time.monotonic() + timeout
    await asyncio.sleep(0)
    while True:
        await app.animator.wait_until_complete()  # a tab's underline slides to the tab just shown
        if quiet(app):
            return
        if time.monotonic() > deadline:
            raise AssertionError("the UI never went quiet")
        await asyncio.sleep(0 if _queued(app) else 0.002)


def key_event(key: str) -> events.Key:
    """The Key event Textual's own Pilot.press sends for ``key`` (a name such as "tab", or a character)."""
    if len(key) == 1 and not key.isalnum():
        key = _character_to_key(key)
    try:
        char: str | None = unicodedata.lookup(_get_unicode_name_from_key(REPLACED_KEYS.get(key, key)))
    except KeyError:
        char = key if len(key) == 1 else None
    return events.Key(key, char)


async def press(pilot: Any, *keys: str) -> None:
    """Press keys one at a time: each is handled, with everything it set going in the UI thread (a focus
    move, a message to a view), before the next is sent. ``Pilot.press`` moves on once the process *looks*
    idle (its CPU time stood still for 20 ms), which a busy machine fools: keys then queue up behind each
    other, and one lands before the focus it was meant for has moved (a digit typed for a field switches
    the view instead)."""
    app = pilot.app
    for key in keys:
        app.post_message(key_event(key))
        await settle(pilot)


async def ready(pilot: Any) -> None:
    """The first screen: subjects listed and the first subject's pairs shown."""
    app = pilot.app

    def shown() -> bool:
        try:
            return app.session is not None and bool(app.main.view("pairs").rows)
        except Exception:  # the main screen is not composed yet
            return False

    await wait_for(pilot, shown, what="first screen")
    await settle(pilot)


async def idle(pilot: Any, timeout: float = 120.0) -> None:
    """The app has settled: every service call finished and its result was handled (``app.settled``), no
    worker runs, and the UI thread is ``quiet`` (the screen shows what the widgets hold). It waits on the
    app's own state, never on time."""
    app = pilot.app
    deadline = time.monotonic() + timeout
    while True:
        await app.workers.wait_for_complete()
        await settle(pilot, timeout)
        if app.settled and not any(w.is_running for w in app.workers) and quiet(app):
            return
        if time.monotonic() > deadline:
            raise AssertionError("the app never settled")
        await pilot.pause(0.01)


def screen_text(app: Any) -> str:
    """What the screen shows, as lines of plain text (the screenshot's text, joined by row)."""
    rows: dict[float, list[tuple[float, str]]] = {}
    for m in re.finditer(r'<text class="[^"]*" x="([\d.]+)" y="([\d.]+)"[^>]*>(.*?)</text>', app.export_screenshot()):
        rows.setdefault(float(m.group(2)), []).append((float(m.group(1)), html.unescape(m.group(3))))
    return "\n".join("".join(t for _, t in sorted(rows[y])).replace("\xa0", " ") for y in sorted(rows))


def run(coro: Any) -> Any:
    return asyncio.run(coro)
