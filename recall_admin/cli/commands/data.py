"""CLI commands for audit bundles, the demo store, and registry lint."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from recall_engine.errors import AuditError

if sys.version_info >= (3, 9):
    from typing import Annotated
else:  # pragma: no cover
    from typing_extensions import Annotated

MAX_BUNDLE_BYTES = 64 << 20


def _state(ctx: typer.Context) -> Any:
    state = ctx.find_root().obj
    if state is None or not hasattr(state, "session"):
        raise RuntimeError("these commands run under the recall-admin root command")
    return state


def _read_input(path: str) -> bytes:
    """A bundle from a file or standard input (-), at most 64 MiB."""
    try:
        if path == "-":
            data = sys.stdin.buffer.read(MAX_BUNDLE_BYTES + 1)
        else:
            with open(path, "rb") as f:
                data = f.read(MAX_BUNDLE_BYTES + 1)
    except FileNotFoundError:
        raise AuditError(f"bundle file {path!r} does not exist") from None
    except IsADirectoryError:
        raise AuditError(f"{path!r} is a folder, not a bundle file") from None
    except OSError as exc:
        raise AuditError(f"cannot read {path!r}: {exc.strerror}") from None
    if len(data) > MAX_BUNDLE_BYTES:
        raise AuditError("audit input exceeds 64 MiB")
    return data


# --- renderers ------------------------------------------------------------------------------


def _render_verify(con: Console, data: dict[str, Any]) -> None:
    con.print(Text.assemble(("valid", "bold green"), f"  {data['events']} event(s)  digest {data['digest']}"))


def _render_replay(con: Console, data: dict[str, Any]) -> None:
    from ..output import beliefs_table

    if not data["beliefs"]:
        con.print(Text(f"Nothing was believed as of {data['as_of']}.", style="dim"))
        return
    con.print(Text(f"Beliefs as of {data['as_of']}", style="bold"))
    con.print(beliefs_table(data["beliefs"]))


def _render_export(con: Console, data: dict[str, Any]) -> None:
    con.print(Text(f"Wrote {data['events']} event(s) to {data['file']}; digest {data['digest']}"))


def _render_import(con: Console, data: dict[str, Any]) -> None:
    con.print(Text(f"Imported {data['imported']} event(s); skipped {data['skipped']} already stored."))


def _render_demo(con: Console, data: dict[str, Any]) -> None:
    con.print(Text(f"Seeded {', '.join(data['collections'])}: {data['events']:,} event(s) in {data['collections'][0]}."))
    con.print(Text("Try: recall-admin recall user · recall-admin conflicts list · recall-admin vocab suggest · "
                   "recall-admin tui", style="dim"))


def _render_lint(con: Console, data: dict[str, Any]) -> None:
    if not data["findings"]:
        con.print(Text("No findings.", style="green"))
        return
    t = Table(show_header=True, header_style="bold")
    for c in ("code", "names", "detail"):
        t.add_column(c, overflow="fold")
    for f in data["findings"]:
        t.add_row(Text(f["code"]), Text(", ".join(f["names"])), Text(f["detail"]))  # data, never markup
    con.print(t)


# --- commands -------------------------------------------------------------------------------


def register(app: typer.Typer, registry_app: typer.Typer) -> None:
    audit_app = typer.Typer(help="Audit bundles: export, verify and replay offline, import.", no_args_is_help=True)
    app.add_typer(audit_app, name="audit", rich_help_panel="Audit")

    @audit_app.command("export")
    def audit_export(
        ctx: typer.Context,
        subject: Annotated[Optional[str], typer.Option("--subject", metavar="S", help="Only this subject.")] = None,
        predicate: Annotated[Optional[str], typer.Option("--predicate", metavar="P", help="Only this predicate.")] = None,
        as_of: Annotated[Optional[str], typer.Option("--as-of", metavar="T", help="The bundle's instant (default now).")] = None,
        output_file: Annotated[Optional[str], typer.Option("-o", "--output", metavar="FILE", help="Write to FILE (default stdout).")] = None,
    ) -> None:
        """A bundle of the complete histories in scope, with the registry and a digest."""
        import json

        from recall_engine.audit import encode_bundle

        from ...audit_io import export_bundle
        from ...inputs import instant

        state = _state(ctx)
        s = state.session(create=False)
        bundle = export_bundle(s.memory, subject=subject, predicate=predicate, as_of=instant(as_of, "--as-of"))
        if output_file:
            Path(output_file).write_bytes(encode_bundle(bundle))
            state.output.emit({"file": output_file, "digest": bundle["digest"], "events": len(bundle["events"])},
                              _render_export)
        elif state.json_mode:
            state.output.emit(json.loads(encode_bundle(bundle)), None)
        else:
            sys.stdout.write(encode_bundle(bundle).decode("utf-8"))
            sys.stdout.flush()
            state.output.message(f"digest {bundle['digest']}")

    @audit_app.command("verify")
    def audit_verify(
        ctx: typer.Context,
        file: Annotated[str, typer.Argument(metavar="FILE", help="A bundle file (- for standard input).")],
        digest: Annotated[Optional[str], typer.Option("--digest", metavar="D", help="The digest obtained separately.")] = None,
    ) -> None:
        """Check a bundle offline (no database): versions, events, scope, registry, digest."""
        from recall_engine.audit import verify

        state = _state(ctx)
        state.output.emit(verify(_read_input(file), digest=digest).to_json(), _render_verify)

    @audit_app.command("replay")
    def audit_replay(
        ctx: typer.Context,
        file: Annotated[str, typer.Argument(metavar="FILE", help="A bundle file (- for standard input).")],
        notes: Annotated[bool, typer.Option("--notes", help="Keep only notes.")] = False,
        digest: Annotated[Optional[str], typer.Option("--digest", metavar="D", help="The digest obtained separately.")] = None,
    ) -> None:
        """The beliefs the bundle's events give at its as_of instant, offline."""
        from recall_engine.audit import replay, verify
        from recall_engine.instants import format_rfc3339

        state = _state(ctx)
        result = verify(_read_input(file), digest=digest)
        beliefs = replay(result, notes_only=notes)
        state.output.emit({"as_of": format_rfc3339(result.as_of), "beliefs": [b.to_json() for b in beliefs]},
                          _render_replay)

    @audit_app.command("import")
    def audit_import(
        ctx: typer.Context,
        file: Annotated[str, typer.Argument(metavar="FILE", help="A bundle file (- for standard input).")],
    ) -> None:
        """Verify a bundle, then append its events; importing it twice adds nothing."""
        from ...audit_io import import_bundle

        state = _state(ctx)
        data = _read_input(file)
        state.output.emit(import_bundle(state.session().memory, data), _render_import)

    @app.command(rich_help_panel="Data")
    def demo(
        ctx: typer.Context,
        events: Annotated[Optional[int], typer.Option("--events", metavar="N", help="Grow the collection to about N events.")] = None,
        seed: Annotated[int, typer.Option("--seed", metavar="S", help="Seed of the generated history.")] = 7,
    ) -> None:
        """Seed the collection with a realistic nine-month history (and small support, sales, voice ones)."""
        from recall_engine.errors import InvalidInput

        from ...demo import build_demo

        state = _state(ctx)
        if events is not None and not (0 <= events <= 50_000_000):
            raise InvalidInput(f"--events must be between 0 and 50,000,000, got {events}")
        s = state.session()
        from ...demo import is_seeded

        if is_seeded(s.store):
            # running the README's first command twice is not an error: the demo is there
            state.output.message(f"collection {s.collection!r} already holds the demo; nothing was added")
            state.output.emit({"collections": [s.collection], "events": s.store.count(), "already_seeded": True},
                              _render_demo)
            return
        if s.store.count() > 0:
            raise InvalidInput(
                f"collection {s.collection!r} already holds {s.store.count()} event(s); "
                "the demo seeds an empty collection (choose another with --collection or --store)"
            )
        bar = _DemoProgress(state, events or 0)
        try:
            data = build_demo(s.backend, s.collection, events=events, seed=seed, operator=s.operator,
                              progress=bar.update)
        finally:
            bar.stop()
        state.output.emit(data, _render_demo)

    @registry_app.command("lint")
    def registry_lint(ctx: typer.Context) -> None:
        """Near-duplicate names, unknown or one-way exclusions, unused predicates, notes that want a predicate."""
        from ...lint import lint

        state = _state(ctx)
        findings = lint(state.session(create=False).memory)
        state.output.emit({"findings": [f.to_json() for f in findings]}, _render_lint)


class _DemoProgress:
    def __init__(self, state: Any, total: int) -> None:
        self.state, self.total, self.progress, self.task = state, total, None, None

    def update(self, done: int) -> None:
        if self.progress is None and self.total >= 20_000:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self.progress = Progress(TextColumn("Seeding"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                                     console=self.state.output.err, transient=True)
            self.progress.start()
            self.task = self.progress.add_task("demo", total=self.total)
        if self.progress is not None:
            self.progress.update(self.task, completed=done)

    def stop(self) -> None:
        if self.progress is not None:
            self.progress.stop()
