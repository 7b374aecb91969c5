"""Checkpoints on the SQLite backend's helper thread (storage/sqlite/checkpoint.py):
commits are synced and copied into the file without the writer running the checkpoint."""

from __future__ import annotations

import os
import sqlite3
import threading

import pytest

from recall_engine.instants import NS, parse_instant
from recall_engine.records import make_event
from recall_engine.storage import open_backend
from recall_engine.storage.sqlite import checkpoint
from recall_engine.storage.sqlite.checkpoint import COMMITS, LOG_PAGES

T0 = parse_instant("2026-03-01T09:00:00Z")
WAIT = 60  # seconds: only a bound on a broken helper, never a pause


def commit(store, k: int) -> None:
    store.append([make_event("user", "likes", f"tea-{k}", T0 + k * NS)])


def log_frames(path) -> int:
    """Frames in the write-ahead log: a 32-byte header, then (24-byte header + page) each."""
    return (os.path.getsize(f"{path}-wal") - 32) // (24 + 4096)


@pytest.fixture
def no_idle(monkeypatch):
    """Only the commit count (or close) starts a checkpoint, never the idle clock."""
    monkeypatch.setattr(checkpoint, "IDLE", 3600.0)


def test_every_commits_th_commit_is_checkpointed_on_the_helper_thread(tmp_path, no_idle):
    path = tmp_path / "recall.db"
    b = open_backend(str(path))
    try:
        store = b.store("memories")
        assert b.conn().execute("PRAGMA wal_autocheckpoint").fetchone() == (LOG_PAGES,)
        for k in range(COMMITS - 1):
            commit(store, k)
        assert b.checkpointer.runs == 0  # not yet: fewer commits than COMMITS, and no idle clock
        commit(store, COMMITS)
        assert b.checkpointer.wait_runs(1, WAIT)
        busy, log, copied = b.checkpointer.last
        # every frame of the log was synced and copied into the file, by the helper
        assert (busy, log, copied) == (0, log_frames(path), log_frames(path)) and log > COMMITS
        names = {t.name for t in threading.enumerate()}
        assert f"recall-checkpoint {path.name}" in names
    finally:
        b.close()
    assert all(not t.name.startswith("recall-checkpoint") or not t.is_alive() for t in threading.enumerate())


def test_a_lone_commit_is_checkpointed_once_the_writer_is_idle(tmp_path):
    path = tmp_path / "recall.db"
    with open_backend(str(path)) as b:
        commit(b.store("memories"), 0)
        assert b.checkpointer.wait_runs(1, WAIT)
        _, log, copied = b.checkpointer.last
        assert log == copied == log_frames(path) > 0


def test_closing_checkpoints_what_was_committed_since_the_last_checkpoint(tmp_path, no_idle):
    path = tmp_path / "recall.db"
    b = open_backend(str(path))
    other = sqlite3.connect(str(path), isolation_level=None)  # keeps the log: closing is not the last close
    try:
        other.execute("SELECT version FROM schema_meta").fetchone()
        store = b.store("memories")
        commit(store, 0)
        commit(store, 1)
        b.close()
        assert b.checkpointer.runs == 1
        busy, log, copied = b.checkpointer.last
        assert (busy, log, copied) == (0, log_frames(path), log_frames(path)) and log > 0
        assert other.execute("SELECT count(*) FROM events").fetchone() == (2,)
    finally:
        other.close()


def test_a_read_only_store_runs_no_helper(tmp_path):
    path = tmp_path / "recall.db"
    with open_backend(str(path)) as b:
        commit(b.store("memories"), 0)
    with open_backend(str(path), read_only=True) as ro:
        assert [e.value for e in ro.store("memories", create=False).pair_events("user", ["likes"])] == ["tea-0"]
        assert ro.checkpointer.runs == 0
        assert not any(t.name == f"recall-checkpoint {path.name}" and t.is_alive() for t in threading.enumerate())
