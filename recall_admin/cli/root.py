"""`recall-admin`: the command-line console (docs/cli.md).

The app, its global options, and error translation in one place (``RecallGroup.main``):
a ``RecallError`` becomes its code and message, a usage error exits 2 (1 with the JSON
envelope under --json), anything unexpected is a one-line ``internal error``, and no
traceback ever reaches the operator. The commands live in ``commands/`` by topic; each
parses its options, asks a service and hands the answer to a renderer in ``render/``
(docs/architecture.md).

Exit codes: 0 success, 1 error, 2 usage error in human mode (and, for governance
commands with ``--detailed-exitcode``, "changes present"), 130 interrupted.
"""

from __future__ import annotations

import contextlib
import copy
import sys
from collections.abc import Sequence
from typing import Annotated, Any

# isort: off
from .deferred import typer  # first: Typer without what it loads only to open URLs and install completion

# isort: on
# Typer vendors Click as typer._click (from 0.26, the lower bound in pyproject.toml)
from typer._click.exceptions import ClickException as _ClickException
from typer._click.exceptions import UsageError as _UsageError
from typer.core import TyperGroup

from recall_engine.errors import InvalidInput, RecallError

from ..defaults import DEFAULT_COLLECTION
from .options import State, state
from .output import Output, silence_stdout
from .richhelp import rich_utils

_Abort = typer.Abort

EXIT_OK = 0
EXIT_ERROR = 1  # every error; also usage errors under --json (2 belongs to --detailed-exitcode)
EXIT_USAGE = 2  # a usage error shown to a person, as Click does
EXIT_INTERRUPTED = 130


# --- error translation: one function for every command ------------------------------------


def _hoist_json(args: list[str]) -> tuple[list[str], bool]:
    """``--json`` is a global option, accepted after the subcommand too: every ``--json``
    before a ``--`` is moved to the front. Returns the arguments and whether it was given
    (known before parsing, so even a usage error answers with the JSON envelope)."""
    end = args.index("--") if "--" in args else len(args)
    given = "--json" in args[:end]
    if not given:
        return args, False
    rest = [a for a in args[:end] if a != "--json"]
    return ["--json", *rest, *args[end:]], True


def _error_code(e: BaseException) -> tuple[str, str, int]:
    if isinstance(e, RecallError):
        return e.code, e.message, EXIT_ERROR
    return "internal_error", f"internal error: {type(e).__name__}: {e}".rstrip(": "), EXIT_ERROR


def _check_utf8(argv: list[str]) -> None:
    """Python hands bytes that are not UTF-8 over as lone surrogates; refuse them here, once."""
    for arg in argv:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            shown = arg.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            raise InvalidInput(f"the argument '{shown[:80]}' is not valid UTF-8; nothing was done") from None


# the global options' environment variables: a blank one is not given, as a blank RECALL_STORE
# always was (a blank RECALL_COLLECTION was a bad name, a blank threshold a usage error)
OPTION_VARIABLES = ("RECALL_STORE", "RECALL_COLLECTION", "RECALL_OPERATOR", "RECALL_MATCH_THRESHOLD")


def _drop_unusable_environment() -> None:
    """Variables that give nothing are taken as not given. ``COLUMNS=0``: Rich (and Typer's
    help) laid the output out in no columns and printed nothing at all, exit 0."""
    import os

    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) < 1:
        del os.environ["COLUMNS"]
    for name in OPTION_VARIABLES:
        if name in os.environ and not os.environ[name].strip():
            del os.environ[name]


class RecallGroup(TyperGroup):
    """The root command: runs Typer without its own exit handling and translates every
    outcome into an exit code and, in --json mode, exactly one JSON document."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        from .coercion import lighten

        lighten(self)  # the global options
        _drop_unusable_environment()
        argv, json_mode = _hoist_json(list(sys.argv[1:] if args is None else args))
        state = State(output=Output(json_mode=json_mode))
        extra.setdefault("obj", state)
        code = EXIT_OK
        if not argv or "--help" in argv[: argv.index("--") if "--" in argv else len(argv)]:
            rich_utils()  # before Typer imports it in full
        try:
            _check_utf8(argv)
            rv = super().main(
                args=argv,
                prog_name=prog_name,
                complete_var=complete_var,
                standalone_mode=False,
                windows_expand_args=windows_expand_args,
                **extra,
            )
            code = rv if isinstance(rv, int) and not isinstance(rv, bool) else EXIT_OK
        except _UsageError as e:
            code = EXIT_ERROR if state.json_mode else EXIT_USAGE
            if state.json_mode:
                state.output.error("usage_error", e.format_message())
            elif type(e).__name__ == "NoArgsIsHelpError":
                rich_utils()
                e.show()  # the help of the command that was given no arguments
            else:
                _show_usage_error(e)
        except _ClickException as e:  # a file option Click could not open, and the like
            state.output.error("usage_error", e.format_message())
            code = EXIT_ERROR if state.json_mode else EXIT_USAGE
        except (_Abort, KeyboardInterrupt):
            code = EXIT_INTERRUPTED
        except BrokenPipeError:  # the reader went away (`| head`): stop quietly
            silence_stdout()
            code = EXIT_ERROR
        except Exception as e:  # noqa: BLE001 - a RecallError, or the last line of defence: never a traceback
            c, message, code = _error_code(e)
            state.output.error(c, message)
        finally:
            with contextlib.suppress(Exception):  # closing must not hide the command's own outcome
                state.close()
        if standalone_mode:
            sys.exit(code)
        return code


def _show_usage_error(e: Any) -> None:
    # Click escapes C0 controls in the arguments it quotes, not the bidirectional overrides
    # (they reorder the line shown); each line through ``visible``, the line breaks kept
    from ..display import visible

    e.message = "\n".join(visible(part) for part in e.message.split("\n"))
    try:
        rich_utils().rich_format_error(e)
    except Exception:  # noqa: BLE001
        e.show()


# --- commands from other modules, loaded when first asked for ----------------------------

# Each module of ``commands/`` and the commands it adds, in the order `--help` lists them.
# Only the module of the command being run is imported (docs/benchmarks.md, "Start-up").
COMMAND_MODULES: dict[str, tuple[str, ...]] = {
    "memory": ("init", "remember", "forget", "recall", "search", "history", "diff", "explain"),
    "registry": ("registry",),
    "data": ("collections", "import", "export", "demo"),
    "governance": ("redefine", "merge", "split", "define", "promote", "apply", "revert"),
    "queues": ("conflicts", "vocab", "notes"),
    "audit": ("audit",),
    "verify": ("verify",),  # a live store's log (docs/audit.md)
    "agents": ("mcp", "serve", "key"),  # docs/agents.md
}
_MODULE_OF = {name: module for module, names in COMMAND_MODULES.items() for name in names}
PLUGINS = "recall_admin.commands"  # the entry-point group other packages (the `tui` console) add commands through


def build_commands(
    modules: Sequence[str], plugins: bool, only: str | None = None, listing: bool = False
) -> dict[str, Any]:
    """The Click commands of these modules (and of the plugins), built as Typer builds them;
    with ``only``, that one command alone; for a ``listing``, without their options."""
    from importlib import import_module

    from typer.main import get_command_name, get_group

    from .coercion import lighten

    sub = typer.Typer(pretty_exceptions_enable=False, add_completion=False)
    for module in modules:
        import_module(f"{__package__}.commands.{module}").register(sub)
    if only is not None:
        sub.registered_commands = [
            c
            for c in sub.registered_commands
            if (c.name or get_command_name(getattr(c.callback, "__name__", ""))) == only
        ]
        sub.registered_groups = [g for g in sub.registered_groups if g.name == only]
    if plugins:
        # Packages that build on recall_admin add their commands through this group, so
        # the arrows keep pointing one way: tui -> recall_admin.
        from .plugins import plugins as added

        for register in added(PLUGINS):
            register(sub)
    if listing:
        return dict(get_group(_bare(sub)).commands)
    commands = dict(get_group(sub).commands)
    for command in commands.values():
        lighten(command)
    return commands


def _bare(app: typer.Typer) -> typer.Typer:
    """A copy of ``app`` whose functions have the same names and docstrings and no
    parameters: Typer derives each command's name, help and panel as it always does, and
    builds no options. Building every command's options is most of what listing them costs."""
    bare = copy.copy(app)
    bare.registered_commands = [_bare_info(c) for c in app.registered_commands]
    bare.registered_groups = []
    for g in app.registered_groups:
        g = _bare_info(g)
        if g.typer_instance is not None:
            g.typer_instance = _bare(g.typer_instance)
        bare.registered_groups.append(g)
    if app.registered_callback is not None:
        bare.registered_callback = _bare_info(app.registered_callback)
    return bare


def _bare_info(info: Any) -> Any:
    info = copy.copy(info)
    f = info.callback
    if callable(f):

        def callback() -> None:  # pragma: no cover - listed, never run
            raise AssertionError("a command built for the help listing ran")

        callback.__name__, callback.__doc__ = f.__name__, f.__doc__
        info.callback = callback
    return info


class LazyCommands(RecallGroup):
    """The root group: a command is built (its module imported) when it is first asked for;
    listing them (the help, a mistyped name) builds them all, in their usual order."""

    _complete = False

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands and not self._complete:
            module = _MODULE_OF.get(cmd_name)
            if module is None:  # a plugin's, or no command at all
                self._load_all()
            else:
                self.commands.update(build_commands([module], plugins=False, only=cmd_name))
        return self.commands.get(cmd_name)

    def list_commands(self, ctx: Any) -> list[str]:
        self._load_all()
        return list(self.commands)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        # the help lists every command by name, help and panel: built without their options
        built, complete = self.commands, self._complete
        self.commands = build_commands(list(COMMAND_MODULES), plugins=True, listing=True)
        self._complete = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self.commands, self._complete = built, complete

    def _load_all(self) -> None:
        if not self._complete:
            self.commands = build_commands(list(COMMAND_MODULES), plugins=True)
            self._complete = True


# --- the app ------------------------------------------------------------------------------

app = typer.Typer(
    cls=LazyCommands,
    name="recall-admin",
    help="Govern an agent memory store: read histories, diffs and explanations; curate the registry.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


@app.callback()
def root(
    ctx: typer.Context,
    store: Annotated[
        str | None,
        typer.Option(
            "--store",
            envvar="RECALL_STORE",
            metavar="URL",
            help="sqlite:///PATH, a file path, or postgresql://... (default: recall.db in the user data folder).",
        ),
    ] = None,
    collection: Annotated[
        str, typer.Option("--collection", envvar="RECALL_COLLECTION", metavar="NAME", help="Collection to use.")
    ] = DEFAULT_COLLECTION,
    operator: Annotated[
        str | None,
        typer.Option(
            "--operator",
            envvar="RECALL_OPERATOR",
            metavar="NAME",
            help="Recorded on registry events and review decisions (default: the login name).",
        ),
    ] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print exactly one JSON document on stdout.")] = False,
    read_only: Annotated[
        bool, typer.Option("--read-only", help="Open the store read-only; writes are refused.")
    ] = False,
    match_threshold: Annotated[
        float | None,
        typer.Option(
            "--match-threshold",
            envvar="RECALL_MATCH_THRESHOLD",
            metavar="X",
            help="Open vocabulary: how near a new name must be to file it under an existing predicate "
            "(default 0.7; negative turns matching off).",
        ),
    ] = None,
) -> None:
    state_ = state(ctx)
    if match_threshold is not None and not match_threshold <= 1:  # NaN too
        raise InvalidInput(
            f"--match-threshold (RECALL_MATCH_THRESHOLD) must be at most 1 (a negative one turns matching off), "
            f"got {match_threshold:g}"
        )
    state_.match_threshold = match_threshold
    state_.store_url = store if store and store.strip() else None
    state_.collection = collection
    state_.operator = operator
    state_.read_only = read_only
    state_.output.json_mode = json_output  # the real parse replaces the pre-scan of argv


def main() -> None:
    """Console entry point (`recall-admin`)."""
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
