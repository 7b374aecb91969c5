"""The only place the engine reads the wall clock. Pure modules never import this."""

from __future__ import annotations

import time


def now_ns() -> int:
    return time.time_ns()
