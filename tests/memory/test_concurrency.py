"""Several processes writing one store, and a process killed mid-write, on every backend."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from recall_engine.memory import Memory
from recall_engine.storage import open_backend

from .conftest import declare

ROOT = Path(__file__).resolve().parents[2]
WRITERS = 4
PER_WRITER = int(os.environ.get("RECALL_TEST_PER_WRITER", "2000"))


def _spawn(*args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "tests.memory.workers", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _answers(memory: Memory, subjects):
    return {s: sorted((b.predicate, str(b.value)) for b in memory.profile(s)) for s in subjects}


def test_four_writers_lose_nothing_and_agree_with_a_replay(backend_url, tmp_path):
    backend = open_backend(backend_url)
    memory = Memory(backend.store("memories"))
    declare(memory)
    procs = [_spawn("remember", backend_url, str(w), str(PER_WRITER)) for w in range(WRITERS)]
    for p in procs:
        out, err = p.communicate(timeout=900)
        assert p.returncode == 0, err
    store = backend.store("memories")
    events = list(store.all_events())
    statements = [e for e in events if not e.subject.startswith("recall:")]
    # every remember wrote one statement unless its value already held at that instant
    assert len({e.id for e in events}) == len(events)
    subjects = sorted({e.subject for e in statements})
    live = _answers(memory, subjects)

    replay_backend = open_backend(f"sqlite:///{tmp_path / 'replay.db'}")
    replay_store = replay_backend.store("memories")
    replay_store.append(events)
    replay = _answers(Memory(replay_store), subjects)
    assert live == replay
    # each writer's last statement per subject is visible in the final answers of single pairs
    for w in range(WRITERS):
        k = PER_WRITER - 1 if (PER_WRITER - 1) % 2 else PER_WRITER - 2
        subject = f"shared-{k % 7}" if k % 3 == 0 else f"w{w}-{k % 40}"
        assert subject in live
    replay_backend.close()
    backend.close()


def test_sigkill_during_remember_with_replaces_leaves_all_or_nothing(backend_url):
    backend = open_backend(backend_url)
    memory = Memory(backend.store("memories"))
    declare(memory)
    for run, delay in enumerate((0.4, 0.9, 1.5)):
        p = _spawn("replaces", backend_url, str(run))
        assert p.stdout.readline().strip() == "started"
        time.sleep(delay)
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=30)
    store = backend.store("memories")
    events = list(store.all_events())
    dids = [e for e in events if e.predicate == "did" and not e.retraction]
    assert dids, "the writer never got to write"
    caused = {}
    for e in events:
        if e.retraction and e.caused_by:
            caused.setdefault(e.caused_by, []).append(e)
    for d in dids:
        assert d.replaces and len(caused.get(d.id, [])) == 1, f"{d.id} lost its retraction"
    assert all(c in {d.id for d in dids} for c in caused)
    backend.close()
