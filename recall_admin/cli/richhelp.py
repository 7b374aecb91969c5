"""Typer's help renderer (``typer.rich_utils``), loaded without the two Rich modules it
imports and never uses here.

``typer.rich_utils`` imports ``rich.markdown`` (markdown-it and Pygments) and
``rich.traceback`` at module level, and they cost more to import than the rest of
``--help``. It draws Markdown only for ``rich_markup_mode="markdown"`` (this CLI uses
Rich markup) and a traceback only for Typer's pretty exceptions (turned off here). While
it is imported, a stand-in module holds each of those two names; calling one imports the
real module and builds the real object, so the output is the same either way
(docs/benchmarks.md, "Start-up"; tests/cli/test_help_render.py holds every command's help
to the renderer loaded with the real modules).
"""

from __future__ import annotations

import sys
from importlib import import_module
from types import ModuleType
from typing import Any

from .deferred import import_standing_in

# module -> the name typer.rich_utils takes from it
DEFERRED = {"rich.markdown": "Markdown", "rich.traceback": "Traceback"}


def _stand_in(module: str, name: str) -> type:
    """A class named like ``module.name`` whose construction (or ``from_exception``, the
    traceback's constructor) builds the real one."""

    def real() -> Any:
        return getattr(import_module(module), name)

    class StandIn:
        def __new__(cls, *args: Any, **kwargs: Any) -> Any:
            return real()(*args, **kwargs)

        @classmethod
        def from_exception(cls, *args: Any, **kwargs: Any) -> Any:
            return real().from_exception(*args, **kwargs)

    StandIn.__name__ = StandIn.__qualname__ = name
    StandIn.__module__ = module
    return StandIn


def rich_utils() -> ModuleType:
    """``typer.rich_utils``, imported now if it is not yet, without the deferred modules
    (a module already imported is used as it is)."""
    loaded = sys.modules.get("typer.rich_utils")
    if loaded is not None:
        return loaded
    stand_ins: dict[str, ModuleType] = {}
    for module, name in DEFERRED.items():
        if module not in sys.modules:
            stand_ins[module] = ModuleType(module)
            setattr(stand_ins[module], name, _stand_in(module, name))
    return import_standing_in("typer.rich_utils", stand_ins)
