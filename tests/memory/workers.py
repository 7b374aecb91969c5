"""Processes that write into one store while tests watch (run with python -m)."""

from __future__ import annotations

import sys

from recall_engine.instants import parse_instant
from recall_engine.memory import Memory
from recall_engine.storage import open_backend

BASE = parse_instant("2026-03-01")


def remember_many(url: str, worker: int, count: int) -> None:
    backend = open_backend(url)
    memory = Memory(backend.store("memories"))
    for k in range(count):
        at = BASE + (k * 16 + worker) * 10**9
        subject = f"shared-{k % 7}" if k % 3 == 0 else f"w{worker}-{k % 40}"
        if k % 2:
            memory.remember(subject, "prefers_editor", f"editor-{(k * 7 + worker) % 5}", at=at)
        else:
            memory.remember(subject, "uses_technology", f"tech-{(k + worker) % 9}", at=at)
    backend.close()


def replaces_forever(url: str, run: str) -> None:
    """Goal then did-with-replaces, again and again, until killed."""
    backend = open_backend(url)
    memory = Memory(backend.store("memories"))
    k = 0
    while True:
        subject = f"crash-{run}-{k}"
        memory.remember(subject, "goal", "run a marathon", at=BASE + k * 10**9)
        memory.remember(
            subject, "did", "run a marathon", at=BASE + k * 10**9 + 1, replaces=[("goal", "run a marathon")]
        )
        k += 1
        if k == 1:
            print("started", flush=True)


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "remember":
        remember_many(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif cmd == "replaces":
        replaces_forever(sys.argv[2], sys.argv[3])
