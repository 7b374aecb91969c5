"""The `recall-admin` command line (docs/architecture.md).

Loaded lazily: ``recall_admin.cli.render`` is shared with the console, which must
not pay for building the Typer app to draw a plan preview.
"""

from __future__ import annotations

from typing import Any


def main() -> None:
    """Console entry point (`recall-admin`). A help drawn before is written from the help
    cache when nothing it depends on changed (``helpcache``), without importing Typer."""
    import sys

    from . import helpcache

    if helpcache.answer(sys.argv):
        return

    def run() -> None:
        from .root import main as run_root

        run_root()

    helpcache.draw(sys.argv, run)


def __getattr__(name: str) -> Any:
    if name == "app":
        from .root import app

        return app
    raise AttributeError(name)
