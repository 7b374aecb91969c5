"""Typer imported without the modules it imports at load and uses only in functions this CLI
never calls on a command's way (docs/benchmarks.md, "Start-up").

``typer.main`` imports ``subprocess`` (to open a URL with ``typer.launch``),
``typer._completion_shared`` imports ``subprocess`` and ``shellingham`` (to install shell
completion, turned off here), and ``typer.core`` takes ``get_close_matches`` from
``difflib`` (to suggest a command for a mistyped one): together about a tenth of what
importing Typer costs. While Typer is imported, a stand-in module holds each of those
names; the first attribute looked up on it imports the real module and answers from it,
and the stand-in ``get_close_matches`` imports the real one when it is called, so every use
behaves as before (tests/cli/test_lazy_imports.py). Other code importing them afterwards
gets the real modules.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from importlib import import_module
from types import ModuleType
from typing import Any

DEFERRED = ("subprocess", "shellingham", "difflib")


class _StandIn(ModuleType):
    get_close_matches: Any  # difflib's, set below

    def __getattr__(self, name: str) -> Any:
        if name == "__path__":  # `from X import y` asks first whether X is a package: not yet
            raise AttributeError(name)
        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]
        return getattr(import_module(self.__name__), name)


def _get_close_matches(*args: Any, **kwargs: Any) -> Any:
    from difflib import get_close_matches

    return get_close_matches(*args, **kwargs)


def import_standing_in(target: str, stand_ins: Mapping[str, ModuleType]) -> ModuleType:
    """``target`` imported while each stand-in holds its module's name in ``sys.modules``;
    the next import of each of those names is the real module."""
    sys.modules.update(stand_ins)
    try:
        return import_module(target)
    finally:
        for name, stand_in in stand_ins.items():
            if sys.modules.get(name) is stand_in:
                del sys.modules[name]


def import_typer() -> ModuleType:
    """``typer``, imported now if it is not yet, with the deferred modules stood in for."""
    loaded = sys.modules.get("typer")
    if loaded is not None:
        return loaded
    stand_ins = {name: _StandIn(name) for name in DEFERRED if name not in sys.modules}
    if "difflib" in stand_ins:  # taken by name when typer.core is imported
        stand_ins["difflib"].get_close_matches = _get_close_matches
    return import_standing_in("typer", stand_ins)


import_typer()  # root.py imports this module before anything else imports Typer
import typer  # noqa: E402 - the module just imported, typed as itself

__all__ = ["DEFERRED", "import_standing_in", "import_typer", "typer"]
