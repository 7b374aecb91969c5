"""The TUI's fixtures: a copy of a small demo store per test, and the app opened on it.

The demo store is built once per session (``build_demo`` without ``--events``) and
copied for each test, so a test that applies a plan never changes another's store.
The clock is fixed (``FIXED_NOW``) and the operator named, so plan ids, "now" and
every screen are the same on every run.
"""

from __future__ import annotations

import asyncio
import html
import re
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from recall_admin.demo import build_demo
from recall_admin.session import Session
from recall_engine.instants import parse_instant
from recall_engine.storage import open_backend

FIXED_NOW = parse_instant("2026-11-15T12:00:00Z")
SIZE = (120, 40)


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


def steady(app: Any) -> Any:
    """Notices stay until the test ends: a toast that expires after some seconds of wall-clock time would
    make a screen depend on how fast the machine ran the test."""
    app.NOTIFICATION_TIMEOUT = app.ERROR_TIMEOUT = 24 * 3600
    return app


async def wait_for(pilot: Any, condition: Callable[[], Any], timeout: float = 120.0, what: str = "") -> Any:
    """Pause until ``condition()`` is truthy (workers report back through messages). The timeout only
    turns a hang into a failure: it is generous, so a busy machine never trips it."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or condition}")
        await pilot.pause(0.02)


async def ready(pilot: Any) -> None:
    """The first screen: subjects listed and the first subject's pairs shown."""
    app = pilot.app

    def shown() -> bool:
        try:
            return app.session is not None and bool(app.main.view("pairs").rows)
        except Exception:  # the main screen is not composed yet
            return False

    await wait_for(pilot, shown, what="first screen")
    await pilot.pause()


async def idle(pilot: Any) -> None:
    """The app has settled: every service call finished and its result was handled (``app.settled``), no
    worker runs, and the screen draws the same twice in a row (the footer's keys follow a refresh). It
    waits on the app's own state, never on time."""
    app = pilot.app
    previous = None
    for _ in range(200):
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.wait_for_scheduled_animations()
        if not app.settled or any(w.is_running for w in app.workers):
            continue
        shot = app.export_screenshot()
        if shot == previous:
            return
        previous = shot
    raise AssertionError("the app never settled")


def screen_text(app: Any) -> str:
    """What the screen shows, as lines of plain text (the screenshot's text, joined by row)."""
    rows: dict[float, list[tuple[float, str]]] = {}
    for m in re.finditer(r'<text class="[^"]*" x="([\d.]+)" y="([\d.]+)"[^>]*>(.*?)</text>', app.export_screenshot()):
        rows.setdefault(float(m.group(2)), []).append((float(m.group(1)), html.unescape(m.group(3))))
    return "\n".join("".join(t for _, t in sorted(rows[y])).replace("\xa0", " ") for y in sorted(rows))


def run(coro: Any) -> Any:
    return asyncio.run(coro)
