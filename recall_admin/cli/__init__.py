"""The `recall-admin` command line (docs/architecture.md).

Loaded lazily: ``recall_admin.cli.render`` is shared with the console, which must
not pay for building the Typer app to draw a plan preview.
"""

from __future__ import annotations

from typing import Any


def main() -> int | None:
    """Console entry point (`recall-admin`). A help drawn before is written from the help
    cache when nothing it depends on changed (``helpcache``), without importing Typer."""
    import sys

    from . import helpcache

    answered = helpcache.answer(sys.argv)
    if answered is not None:
        return answered

    def run() -> None:
        from .root import main as run_root

        run_root()

    try:
        helpcache.draw(sys.argv, run)
    finally:
        _before_exit()
    return None


def _before_exit() -> None:
    """The process ends next. The interpreter's exit collects garbage once (finalizers run)
    and then again and again as it tears the modules down, each pass over every object the
    command loaded: about 5% of `recall user` (docs/benchmarks.md, "Start-up"). Here the
    first collection is made as the exit would make it, and what is left is frozen out of
    the later passes; the modules are still torn down and their objects freed."""
    import gc

    gc.collect()
    gc.freeze()


def __getattr__(name: str) -> Any:
    if name == "app":
        from .root import app

        return app
    raise AttributeError(name)
