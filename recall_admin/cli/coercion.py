"""Plain option values without pydantic (docs/benchmarks.md, "Start-up").

Typer turns every option and argument into its Python type through a pydantic
``TypeAdapter``; importing pydantic and building those adapters costs more than the
rest of a read. Most values need no conversion at all: a text option is already a
``str``, a flag already a ``bool``. ``lighten`` gives each such parameter a coercion
that returns those values as they are and hands anything else (a number written as
text, a path, a bad value and its error message) to Typer's own, built on first use.
So every value Typer would accept comes out the same, and every refusal reads the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

try:  # Typer's coercion hook; without it (another Typer), parameters keep Typer's own
    from typer._click import Context
    from typer._coercion import RuntimeParam, build_runtime_param
except ImportError:  # pragma: no cover - depends on the installed Typer
    RuntimeParam = None  # type: ignore[assignment,misc]  # reason: optional hook of one Typer line

_PASS = object()


def _plain(annotation: Any, value: Any) -> Any:
    """The value itself when Typer's conversion would return it unchanged, else ``_PASS``."""
    t = type(value)
    if annotation is str and t is str:
        return value
    if annotation is bool and t is bool:
        return value
    if annotation is int and t is int:
        return value
    if annotation is float and t is float:
        return value
    if annotation == list[str] and t in (list, tuple) and all(type(v) is str for v in value):
        return list(value)
    return _PASS


if RuntimeParam is not None:

    @dataclass(frozen=True)
    class PlainParam(RuntimeParam):
        """Values returned as they are; anything else through Typer's coercion."""

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            out = _plain(self.annotation, value)
            if out is not _PASS:
                return out
            full = build_runtime_param(param.type_descriptor)
            param._runtime_param = full  # from now on, Typer's own
            return full._coerce_value(value, param=param, ctx=ctx)


def lighten(command: Any) -> None:
    """Give the parameters of ``command`` (and of its subcommands) the plain coercion."""
    if RuntimeParam is None:
        return
    params = list(getattr(command, "params", ()))
    if hasattr(command, "get_help_option"):  # Click builds --help on first use: build it now, to lighten it too
        params.append(command.get_help_option(Context(command)))
    for param in params:
        desc = getattr(param, "type_descriptor", None)
        if desc is None or getattr(param, "_runtime_param", _PASS) is not None:
            continue  # not a Typer parameter, or its coercion is built already
        info = desc.parameter_info
        if info.parser is None and getattr(info, "click_type", None) is None and info.min is None and info.max is None:
            param._runtime_param = PlainParam(parameter_info=info, annotation=desc.annotation)
    for sub in getattr(command, "commands", {}).values():
        lighten(sub)
