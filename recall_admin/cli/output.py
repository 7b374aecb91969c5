"""Where a command's answer and messages go: a JSON envelope for scripts, the renderers'
tables for people (docs/cli.md).

Stdout holds data only: in ``--json`` mode exactly one JSON document
(``{"ok": true, "data": ...}`` or ``{"ok": false, "error": {"code", "message"}}``),
passed through ``display.json_safe``; in human mode the renderer's tables and lines.
Messages, warnings and progress go to stderr, shown through ``display.visible``
(they quote names and values written by agents).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..display import json_safe, visible

if TYPE_CHECKING:  # Rich is imported when something is shown to a person, never in --json mode
    from rich.console import Console

    from .render import Renderer

PIPE_WIDTH = 160  # lines written to a file or a pipe are not cut at 80 columns


def _console(stderr: bool) -> Console:
    from rich.console import Console

    # file=None: Rich writes to whatever sys.stdout/sys.stderr is at print time
    con = Console(stderr=stderr, highlight=False, emoji=False, soft_wrap=False)
    if not con.is_terminal and not os.environ.get("COLUMNS"):
        con.width = max(con.width, PIPE_WIDTH)
    return con


def err_console() -> Console:
    """A console on stderr, for the talk a renderer adds beside its answer (``render.hint``)."""
    return _console(stderr=True)


class Output:
    """Where a command's answer and messages go, in the mode the operator chose."""

    def __init__(self, json_mode: bool = False) -> None:
        self.json_mode = json_mode
        self._out: Console | None = None
        self._err: Console | None = None

    @property
    def out(self) -> Console:
        if self._out is None:
            self._out = _console(stderr=False)
        return self._out

    @property
    def err(self) -> Console:
        if self._err is None:
            self._err = _console(stderr=True)
        return self._err

    # --- results ----------------------------------------------------------------

    def emit(self, data: Any, render: Renderer | None = None) -> None:
        """The command's answer: the envelope in JSON mode, else the renderer's tables."""
        if self.json_mode:
            write_json({"ok": True, "data": data})
        elif render is not None:
            plain = getattr(render, "plain", None)
            if plain is not None:  # drawn without Rich where Rich would draw no style (plain.py)
                from .plain import plain_width

                width = plain_width(PIPE_WIDTH)
                text = None if width is None else plain(data, width)
                if text is not None:
                    sys.stdout.write(text)
                    sys.stdout.flush()
                    return
            render(self.out, data)

    def error(self, code: str, message: str) -> None:
        if self.json_mode:
            write_json({"ok": False, "error": {"code": code, "message": message}})
        else:
            from rich.text import Text

            self.err.print(Text.assemble(("error: ", "bold red"), visible(message)))

    # --- messages: stderr, in human mode only ----------------------------------------

    def message(self, text: str, style: str = "") -> None:
        if not self.json_mode:
            from rich.text import Text

            self.err.print(Text(visible(text), style=style))


def renderer(module: str, name: str, plain: str | None = None) -> Callable[..., None]:
    """The renderer ``name`` of ``render/<module>.py``, imported when it first draws, so
    that a command in --json mode never loads Rich (docs/benchmarks.md, "Start-up").
    ``plain`` names its twin in ``plain.py``, which draws the same text without Rich
    where Rich would draw no style, or answers None."""

    def draw(console: Console, data: Any, **options: Any) -> None:
        from importlib import import_module

        getattr(import_module(f"{__package__}.render.{module}"), name)(console, data, **options)

    if plain is not None:

        def draw_plain(data: Any, width: int) -> str | None:
            from importlib import import_module

            return getattr(import_module(f"{__package__}.plain"), plain)(data, width)

        draw.plain = draw_plain  # type: ignore[attr-defined]
    return draw


def write_json(doc: Any) -> None:
    sys.stdout.write(json_safe(json.dumps(doc, ensure_ascii=False)) + "\n")
    sys.stdout.flush()


def silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail again (the
    reader of a pipe went away: `| head`)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
