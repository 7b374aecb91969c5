"""Checkpoints on a helper thread, so a writer does not wait for the disk
(docs/storage.md, "When the log is synced").

In WAL mode with ``synchronous=NORMAL`` a commit writes the log and syncs nothing; a
checkpoint syncs the log, copies it into the file and syncs the file. SQLite runs one
inside the commit that finds the log past ``wal_autocheckpoint`` pages, so a writer of
small transactions (a ``remember`` writes about 16 pages) used to wait for two fsyncs
every few dozen commits. Here a helper thread runs them instead, after every
``COMMITS`` commits of this backend or ``IDLE`` seconds after a commit, whichever comes
first, and once more when the backend closes. A ``PASSIVE`` checkpoint never blocks a
writer, and the sync it starts with is what makes a commit survive power loss, so
commits are synced sooner than when the writer checkpointed every 1,000 pages.

The writer's own checkpoint is kept as a bound (``LOG_PAGES``): a helper's checkpoint
cannot restart the log while commits keep landing behind it, so the commit that finds
the log past that size checkpoints and lets the next one start the log over.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable

COMMITS = 32  # about 500 pages of remembers: half of what the writer used to leave unsynced
IDLE = 1.0  # seconds after a commit, when fewer than COMMITS follow it
LOG_PAGES = 16_000  # the writer's own checkpoint: 64 MiB of log, the size it is truncated back to


class Checkpointer:
    """One backend's helper thread, started by its first commit."""

    def __init__(self, connect: Callable[[], sqlite3.Connection], name: str) -> None:
        self._connect = connect  # called on the helper thread: its own connection
        self._name = name
        self._wake = threading.Event()
        self._done = threading.Condition()
        self._start_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._pid = 0
        self._pending = 0  # commits since the last checkpoint began
        self._stop = False
        self.runs = 0  # checkpoints run
        self.last: tuple[int, int, int] | None = None  # (busy, log pages, pages copied) of the last one

    def committed(self) -> None:
        """Called after each commit of this backend, on the writer's thread."""
        self._pending += 1
        if self._thread is None or self._pid != os.getpid():  # the first commit, or a forked child
            self._start()
        elif self._pending == 1 or self._pending == COMMITS:
            self._wake.set()  # start the idle clock, or checkpoint now

    def _start(self) -> None:
        with self._start_lock:
            if self._stop or (self._thread is not None and self._pid == os.getpid()):
                return
            self._wake = threading.Event()
            self._wake.set()
            self._pid = os.getpid()
            # a daemon: a backend nobody closes does not hold the interpreter at exit
            # (its last commits are then synced by the next checkpoint of the file)
            self._thread = threading.Thread(target=self._run, name=f"recall-checkpoint {self._name}", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        conn: sqlite3.Connection | None = None
        try:
            while True:
                self._wake.wait()
                self._wake.clear()
                # a commit is pending: wait for more of them, up to IDLE seconds
                while not self._stop and self._pending < COMMITS and self._wake.wait(IDLE):
                    self._wake.clear()
                if self._stop:
                    return  # close() checkpoints what is pending, on a connection it already has
                try:
                    conn = conn or self._connect()
                except Exception:  # the backend was closed under it (StorageError): nothing left to do
                    return
                self.checkpoint(conn)
        finally:
            if conn is not None:
                conn.close()  # the helper's own connection ends with it

    def checkpoint(self, conn: sqlite3.Connection) -> None:
        """One ``PASSIVE`` checkpoint of what is pending."""
        self._pending = 0
        try:
            row = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            self.last = (int(row[0]), int(row[1]), int(row[2]))
        except sqlite3.Error:
            return  # the writer's own checkpoint still bounds the log
        with self._done:
            self.runs += 1
            self._done.notify_all()

    def wait_runs(self, n: int, timeout: float) -> bool:
        """Until ``n`` checkpoints have run (tests wait on it); False if ``timeout`` passed first."""
        with self._done:
            return self._done.wait_for(lambda: self.runs >= n, timeout)

    def close(self, conn: sqlite3.Connection | None) -> None:
        """Stop the thread and checkpoint what is pending on ``conn``, a connection of the
        closing backend: a process that wrote once (the CLI) opens no connection for it,
        and SQLite's own checkpoint when the last connection closes then finds nothing left."""
        with self._start_lock:
            self._stop = True
            thread = self._thread if self._pid == os.getpid() else None
        if thread is not None:
            self._wake.set()
            thread.join()
        if self._pending and conn is not None:
            self.checkpoint(conn)
