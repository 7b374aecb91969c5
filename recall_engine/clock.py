"""The only place the engine reads the wall clock (and the environment's bound on
instants, docs/records.md "Instants"). Pure modules never import this."""

from __future__ import annotations

import os
import time

from . import instants

instants.latest_from_environment(os.environ.get(instants.LATEST_ENV))


def now_ns() -> int:
    return time.time_ns()
