"""`recall-admin`: the command-line console (docs/cli-contract.md is its contract).

Thin on purpose: each command parses its options, asks a service
(``views``, ``registry_sync``, ``transfer``, the engine's ``Memory``) and hands the
answer to the renderer in ``output``. Errors are translated in one place
(``RecallGroup.main``): a ``RecallError`` becomes its code and message, a usage
error exits 2, anything unexpected is a one-line ``internal error``, and no
traceback ever reaches the operator.

Exit codes: 0 success, 1 error, 2 usage error (and, for governance commands
with ``--detailed-exitcode``, "changes present"), 130 interrupted.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator, List, Optional

import typer
from typer.core import TyperGroup

try:  # recent Typer vendors Click as typer._click
    from typer._click.exceptions import ClickException as _ClickException, UsageError as _UsageError
except ImportError:  # pragma: no cover - Typer on Click
    from click.exceptions import ClickException as _ClickException, UsageError as _UsageError
_Abort = typer.Abort

from recall_engine.errors import RecallError

from . import output as out
from .output import Output

if TYPE_CHECKING:
    from .session import Session

DEFAULT_COLLECTION = "memories"  # as session.DEFAULT_COLLECTION; the engine is imported only when a command runs

if sys.version_info >= (3, 9):
    from typing import Annotated
else:  # pragma: no cover
    from typing_extensions import Annotated

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


# --- state shared by the root callback and the commands --------------------------------


@dataclass
class State:
    """The global options of one invocation, and the session they open (lazily)."""

    store_url: Optional[str] = None
    collection: str = DEFAULT_COLLECTION
    operator: Optional[str] = None
    read_only: bool = False
    match_threshold: Optional[float] = None
    output: Output = field(default_factory=Output)
    _session: Optional["Session"] = None

    @property
    def json_mode(self) -> bool:
        return self.output.json_mode

    def session(self, *, create: bool = True) -> "Session":
        if self._session is None:
            from .session import Session

            self._session = Session.open(
                self.store_url, self.collection, self.operator, self.read_only, create=create,
                match_threshold=self.match_threshold,
            )
        return self._session

    def close(self) -> None:
        if self._session is not None:
            s, self._session = self._session, None
            s.close()


def _state(ctx: typer.Context) -> State:
    """The invocation's State: the root context's obj, set by ``RecallGroup.main``.

    Looked up by place rather than by type, so modules that add commands (and a
    second copy of this module under ``python -m``) find the same object."""
    root = ctx.find_root()
    if root.obj is None:  # invoked without RecallGroup.main (should not happen)
        root.obj = State()
    return root.obj


# --- error translation: one function for every command ------------------------------------


def _json_requested(args: List[str]) -> bool:
    """--json among the global options (before the command), for errors raised before the
    root callback ran (a bad global option)."""
    for a in args:
        if a == "--":
            return False
        if a == "--json":
            return True
    return False


def _error_code(e: BaseException) -> tuple[str, str, int]:
    if isinstance(e, RecallError):
        return e.code, e.message, EXIT_ERROR
    return "internal_error", f"internal error: {type(e).__name__}: {e}".rstrip(": "), EXIT_ERROR


class RecallGroup(TyperGroup):
    """The root command: runs Typer without its own exit handling and translates every
    outcome into an exit code and, in --json mode, exactly one JSON document."""

    def main(  # type: ignore[override]
        self,
        args: Optional[List[str]] = None,
        prog_name: Optional[str] = None,
        complete_var: Optional[str] = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        state = State(output=Output(json_mode=_json_requested(argv)))
        extra.setdefault("obj", state)
        code = EXIT_OK
        try:
            rv = super().main(
                args=argv, prog_name=prog_name, complete_var=complete_var, standalone_mode=False, **extra
            )
            code = rv if isinstance(rv, int) and not isinstance(rv, bool) else EXIT_OK
        except RecallError as e:
            state.output.error(e.code, e.message)
            code = EXIT_ERROR
        except _UsageError as e:
            code = e.exit_code if isinstance(e.exit_code, int) else EXIT_USAGE
            if state.json_mode:
                state.output.error("usage_error", e.format_message())
            elif type(e).__name__ == "NoArgsIsHelpError":
                e.show()  # the help of the command that was given no arguments
            else:
                _show_usage_error(e)
        except _ClickException as e:  # a file option Click could not open, and the like
            state.output.error("usage_error", e.format_message())
            code = EXIT_USAGE
        except (_Abort, KeyboardInterrupt):
            code = EXIT_INTERRUPTED
        except BrokenPipeError:  # the reader went away (`| head`): stop quietly
            _silence_stdout()
            code = EXIT_ERROR
        except Exception as e:  # noqa: BLE001 - the last line of defence: never a traceback
            c, message, code = _error_code(e)
            state.output.error(c, message)
        finally:
            try:
                state.close()
            except Exception:  # noqa: BLE001
                pass
        if standalone_mode:
            sys.exit(code)
        return code


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def _show_usage_error(e: Any) -> None:
    try:
        from typer import rich_utils

        rich_utils.rich_format_error(e)
    except Exception:  # noqa: BLE001
        e.show()


# --- the app ------------------------------------------------------------------------------

app = typer.Typer(
    cls=RecallGroup,
    name="recall-admin",
    help="Govern an agent memory store: read histories, diffs and explanations; curate the registry.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
registry_app = typer.Typer(help="Read the predicate registry and its log.", no_args_is_help=True)
app.add_typer(registry_app, name="registry", rich_help_panel="Registry")


@app.callback()
def root(
    ctx: typer.Context,
    store: Annotated[
        Optional[str],
        typer.Option(
            "--store", envvar="RECALL_STORE", metavar="URL",
            help="sqlite:///PATH, a file path, or postgresql://... (default: recall.db in the user data folder).",
        ),
    ] = None,
    collection: Annotated[
        str, typer.Option("--collection", envvar="RECALL_COLLECTION", metavar="NAME", help="Collection to use.")
    ] = DEFAULT_COLLECTION,
    operator: Annotated[
        Optional[str],
        typer.Option("--operator", envvar="RECALL_OPERATOR", metavar="NAME",
                     help="Recorded on registry events and review decisions (default: the login name)."),
    ] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print exactly one JSON document on stdout.")] = False,
    read_only: Annotated[bool, typer.Option("--read-only", help="Open the store read-only; writes are refused.")] = False,
    match_threshold: Annotated[
        Optional[float],
        typer.Option("--match-threshold", envvar="RECALL_MATCH_THRESHOLD", metavar="X",
                     help="Open vocabulary: how near a new name must be to file it under an existing predicate "
                          "(default 0.9; negative turns matching off)."),
    ] = None,
) -> None:
    state = _state(ctx)
    state.match_threshold = match_threshold
    state.store_url = store if store and store.strip() else None
    state.collection = collection
    state.operator = operator
    state.read_only = read_only
    state.output.json_mode = json_output  # the real parse replaces the pre-scan of argv


def _emit(ctx: typer.Context, data: Any, render: out.Renderer) -> None:
    _state(ctx).output.emit(data, render)


# --- memory -------------------------------------------------------------------------------

AtOption = Annotated[
    Optional[str], typer.Option("--as-of", metavar="T", help="RFC3339 time or a day (midnight UTC); default now.")
]


@app.command(rich_help_panel="Memory")
def init(
    ctx: typer.Context,
    registry: Annotated[
        Optional[List[str]],
        typer.Option("--registry", metavar="NAME_OR_PATH",
                     help="A starter (coding, support, sales, personal-assistant, voice) or a registry file. Repeatable."),
    ] = None,
    open_vocabulary: Annotated[
        bool, typer.Option("--open", help="Open the vocabulary: writes may define new predicates.")
    ] = False,
) -> None:
    """Create the store and collection if needed and declare the registries' predicates."""
    from recall_engine.registry_files import load_starter

    from .registry_sync import sync_registry

    state = _state(ctx)
    files = [load_starter(r) for r in registry or []]
    s = state.session()
    result = sync_registry(s.memory, files, s.operator, open_vocabulary=open_vocabulary)
    for note in result.notes:
        state.output.message(note, style="dim")
    data = {
        "store": s.display_url,
        "collection": s.collection,
        "declared": result.declared,
        "opened": result.opened,
        "open_vocabulary": s.memory.timeline().open_vocabulary,
        "registries": [f.name for f in files],
    }
    _emit(ctx, data, out.render_init)


@app.command(rich_help_panel="Memory")
def remember(
    ctx: typer.Context,
    subject: Annotated[str, typer.Argument(metavar="SUBJECT", help="Who or what the statement is about.")],
    predicate: Annotated[str, typer.Argument(metavar="PREDICATE", help="A registered predicate (see `registry list`).")],
    value: Annotated[str, typer.Argument(metavar="VALUE", help="Read as the predicate's type: 8000 for a number, true for a boolean.")],
    at: Annotated[Optional[str], typer.Option("--at", metavar="T", help="When it was stated (default now).")] = None,
    kind: Annotated[str, typer.Option("--kind", help="fact or preference.")] = "fact",
    source: Annotated[
        str, typer.Option("--source", help="user_stated, agent_inferred, tool_result or operator.")
    ] = "user_stated",
    confidence: Annotated[float, typer.Option("--confidence", help="Between 0 and 1.")] = 1.0,
    evidence: Annotated[str, typer.Option("--evidence", metavar="TEXT", help="The words it came from.")] = "",
    evidence_id: Annotated[str, typer.Option("--evidence-id", metavar="ID", help="Where those words are kept.")] = "",
    replaces: Annotated[
        Optional[List[str]],
        typer.Option("--replaces", metavar="PREDICATE=VALUE", help="An earlier belief this statement withdraws. Repeatable."),
    ] = None,
    cardinality: Annotated[
        Optional[str], typer.Option("--cardinality", help="single or multi, for a predicate this write defines.")
    ] = None,
    description: Annotated[
        str, typer.Option("--description", metavar="TEXT", help="For a predicate this write defines.")
    ] = "",
) -> None:
    """Remember one statement."""
    from .inputs import instant, parse_replaces, typed_value
    from .views import remember_view

    m = _state(ctx).session().memory
    tl = m.timeline()
    when = instant(at, "--at")
    typed = typed_value(m, predicate, value, tl)
    reps = parse_replaces(m, replaces or [], tl)
    result = m.remember(
        subject, predicate, typed, at=when, kind=kind, source=source, confidence=confidence,
        evidence=evidence, evidence_id=evidence_id, replaces=reps, cardinality=cardinality,
        description=description,
    )
    _emit(ctx, remember_view(result), out.render_remember)


@app.command(rich_help_panel="Memory")
def forget(
    ctx: typer.Context,
    subject: Annotated[str, typer.Argument(metavar="SUBJECT")],
    predicate: Annotated[str, typer.Argument(metavar="PREDICATE")],
    value: Annotated[Optional[str], typer.Argument(metavar="VALUE", help="The value to withdraw (or --all).")] = None,
    all_values: Annotated[bool, typer.Option("--all", help="Withdraw every value of the pair.")] = False,
) -> None:
    """Withdraw a value (or every value) of a pair; forgetting what is not believed writes nothing."""
    from recall_engine.errors import InvalidInput

    from .inputs import typed_value

    if (value is None) == (not all_values):
        raise InvalidInput("forget needs exactly one of a VALUE or --all")
    m = _state(ctx).session().memory
    typed = typed_value(m, predicate, value) if value is not None else None
    gone = m.forget(subject, predicate, typed, all_values=all_values)
    _emit(ctx, {"withdrawn": [b.to_json() for b in gone]}, out.render_forget)


@app.command(rich_help_panel="Memory")
def recall(
    ctx: typer.Context,
    subject: Annotated[str, typer.Argument(metavar="SUBJECT")],
    predicate: Annotated[Optional[str], typer.Argument(metavar="PREDICATE", help="Omit for every pair of the subject.")] = None,
    as_of: AtOption = None,
) -> None:
    """What is believed about a subject (one pair, or all of them) at an instant."""
    from .inputs import instant
    from .views import recall_view

    when = instant(as_of, "--as-of")
    m = _state(ctx).session().memory
    _emit(ctx, recall_view(m, subject, predicate, when), out.render_beliefs)


@app.command(rich_help_panel="Memory")
def search(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(metavar="TEXT", help="Words, optionally with a time phrase such as 'two weeks ago'.")],
    as_of: AtOption = None,
    limit: Annotated[int, typer.Option("--limit", metavar="N", help="At most this many beliefs.")] = 10,
) -> None:
    """Search beliefs by meaning and keywords; each hit answers with what its pair holds."""
    from .inputs import instant
    from .views import search_view

    when = instant(as_of, "--as-of")
    m = _state(ctx).session().memory
    _emit(ctx, search_view(m, text, when, limit), out.render_beliefs)


@app.command(rich_help_panel="Memory")
def history(
    ctx: typer.Context,
    subject: Annotated[str, typer.Argument(metavar="SUBJECT")],
    predicate: Annotated[str, typer.Argument(metavar="PREDICATE")],
) -> None:
    """Every event of a pair, oldest first, with what was believed before and after it."""
    from .views import history_view

    m = _state(ctx).session().memory
    _emit(ctx, history_view(m, subject, predicate), out.render_history)


@app.command(rich_help_panel="Memory")
def diff(
    ctx: typer.Context,
    from_: Annotated[str, typer.Option("--from", metavar="T", help="The earlier instant.")],
    to: Annotated[Optional[str], typer.Option("--to", metavar="T", help="The later instant (default now).")] = None,
    subject: Annotated[Optional[str], typer.Option("--subject", metavar="S", help="Only this subject.")] = None,
) -> None:
    """What began and stopped being believed between two instants."""
    from .inputs import instant
    from .views import diff_view

    start = instant(from_, "--from")
    end = instant(to, "--to")
    m = _state(ctx).session().memory
    _emit(ctx, diff_view(m, start, end, subject), out.render_diff)  # type: ignore[arg-type]


@app.command(rich_help_panel="Memory")
def explain(
    ctx: typer.Context,
    subject: Annotated[str, typer.Argument(metavar="SUBJECT")],
    predicate: Annotated[str, typer.Argument(metavar="PREDICATE")],
    as_of: AtOption = None,
) -> None:
    """Why a pair answers what it does: its events, the reason for each value, the registry rules."""
    from .inputs import instant
    from .views import explain_view

    when = instant(as_of, "--as-of")
    m = _state(ctx).session().memory
    _emit(ctx, explain_view(m, subject, predicate, when), out.render_explain)


# --- registry -----------------------------------------------------------------------------


@registry_app.command("list")
def registry_list(ctx: typer.Context) -> None:
    """Every readable predicate with its rules, origin and event count."""
    from .views import registry_list_view

    _emit(ctx, registry_list_view(_state(ctx).session().memory), out.render_registry_list)


@registry_app.command("show")
def registry_show(ctx: typer.Context, name: Annotated[str, typer.Argument(metavar="NAME", help="A predicate or one of its names.")]) -> None:
    """One predicate and the registry events that decide it."""
    from .views import registry_show_view

    _emit(ctx, registry_show_view(_state(ctx).session().memory, name), out.render_registry_show)


@registry_app.command("log")
def registry_log(ctx: typer.Context) -> None:
    """The registry log, oldest first: who changed what, when, from which plan."""
    from .views import registry_log_view

    _emit(ctx, registry_log_view(_state(ctx).session().memory), out.render_registry_log)


# --- data ---------------------------------------------------------------------------------


@app.command(rich_help_panel="Data")
def collections(ctx: typer.Context) -> None:
    """Every collection of the store with its event count and registry size."""
    from .views import collections_view

    s = _state(ctx).session()
    _emit(ctx, collections_view(s.backend), out.render_collections)


@app.command("import", rich_help_panel="Data")
def import_(
    ctx: typer.Context,
    file: Annotated[str, typer.Argument(metavar="FILE", help="A JSONL file of events (- for standard input).")],
) -> None:
    """Import events from JSONL (as written by `export`); already stored events are skipped."""
    from .transfer import import_file

    state = _state(ctx)
    s = state.session()
    if file != "-" and os.path.isfile(file) and os.path.getsize(file) > BIG_IMPORT_BYTES:
        state.output.message(f"Checking every line of {file} before writing anything...")
    with _progress(state, "Importing") as bar:
        result = import_file(s.store, file, progress=bar.update, on_validated=bar.start)
    _emit(ctx, result.to_json(), out.render_import)


@app.command(rich_help_panel="Data")
def export(
    ctx: typer.Context,
    output_file: Annotated[
        Optional[str], typer.Option("-o", "--output", metavar="FILE", help="Write to FILE (default: stdout).")
    ] = None,
    subject: Annotated[Optional[str], typer.Option("--subject", metavar="S", help="Only this subject's events.")] = None,
) -> None:
    """Export events as JSONL, one event per line, in log order (registry records included)."""
    from .transfer import events_for_export, export_file, write_events

    state = _state(ctx)
    s = state.session()
    if output_file:
        n = export_file(s.store, output_file, subject)
        _emit(ctx, {"exported": n, "file": output_file}, out.render_export)
    elif state.json_mode:
        events = [e.to_json() for e in events_for_export(s.store, subject)]
        _emit(ctx, {"exported": len(events), "events": events}, out.render_export)
    else:
        events = events_for_export(s.store, subject)
        try:
            n = write_events(events, sys.stdout)
            sys.stdout.flush()
        finally:
            events.close()  # end the store's cursor while the store is still open
        state.output.message(f"exported {n} event(s)")


PROGRESS_MIN_EVENTS = 2000
BIG_IMPORT_BYTES = 16 << 20


class _Bar:
    """A progress bar on stderr for long work in human mode; silent otherwise."""

    def __init__(self, state: State, label: str) -> None:
        self.state = state
        self.label = label
        self.progress: Any = None
        self.task: Any = None

    def start(self, total: int) -> None:
        if self.state.json_mode or total < PROGRESS_MIN_EVENTS or self.progress is not None:
            return
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self.progress = Progress(
            TextColumn(self.label), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
            console=self.state.output.err, transient=True,
        )
        self.progress.start()
        self.task = self.progress.add_task(self.label, total=total)

    def update(self, done: int, total: int) -> None:
        self.start(total)
        if self.progress is not None:
            self.progress.update(self.task, completed=done)

    def stop(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None


@contextmanager
def _progress(state: State, label: str) -> Iterator[_Bar]:
    bar = _Bar(state, label)
    try:
        yield bar
    finally:
        bar.stop()


# --- commands from other modules: governance, review queues, audit/demo/lint ---------------


def _register_extensions() -> None:
    from . import cli_data, cli_governance, cli_queues

    cli_governance.register(app)
    cli_governance.register_registry_load(registry_app)
    cli_queues.register(app)
    cli_data.register(app, registry_app)
    from . import cli_agents; cli_agents.register(app)  # mcp, serve, key (docs/agents.md)
    # Packages that build on recall_admin (the `tui` console) add their commands through
    # this entry-point group, so the arrows keep pointing one way: tui -> recall_admin.
    from importlib.metadata import entry_points

    for ep in entry_points(group="recall_admin.commands"):
        ep.load()(app)


_register_extensions()


def main() -> None:
    """Console entry point (`recall-admin`)."""
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
