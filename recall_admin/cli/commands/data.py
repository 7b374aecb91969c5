"""Data commands: collections, import, export, demo."""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from ..options import Subject, state
from ..progress import DEMO_MIN_EVENTS, IMPORT_MIN_EVENTS, Progress
from ..render.data import render_demo
from ..render.memory import render_collections, render_export, render_import

BIG_IMPORT_BYTES = 16 << 20  # bigger files say that every line is checked first


def register(app: typer.Typer) -> None:
    @app.command(rich_help_panel="Data")
    def collections(ctx: typer.Context) -> None:
        """Every collection of the store with its event count and registry size."""
        from ...views import collections_view

        st = state(ctx)
        st.output.emit(collections_view(st.session().backend), render_collections)

    @app.command("import", rich_help_panel="Data")
    def import_(
        ctx: typer.Context,
        file: Annotated[str, typer.Argument(metavar="FILE", help="A JSONL file of events (- for standard input).")],
        statements: Annotated[
            bool,
            typer.Option(
                "--statements",
                help="FILE holds statements ({subject, predicate, value, ...} as remember takes them), not events.",
            ),
        ] = False,
    ) -> None:
        """Import events from JSONL (as written by `export`); already stored events are skipped."""
        from ...transfer import import_file, import_statements

        st = state(ctx)
        s = st.session(create=True)
        if statements:
            with Progress(st.output, "Remembering", min_total=IMPORT_MIN_EVENTS) as bar:
                result = import_statements(s.memory, file, progress=bar.update)
            st.output.emit(result.to_json(), render_import)
            return
        if file != "-" and os.path.isfile(file) and os.path.getsize(file) > BIG_IMPORT_BYTES:
            st.output.message(f"Checking every line of {file} before writing anything...")
        with Progress(st.output, "Importing", min_total=IMPORT_MIN_EVENTS) as bar:
            result = import_file(s.store, file, progress=bar.update, on_validated=bar.start)
        st.output.emit(result.to_json(), render_import)

    @app.command(rich_help_panel="Data")
    def export(
        ctx: typer.Context,
        output_file: Annotated[
            str | None,
            typer.Option("-o", "--output", metavar="FILE", help="Write to FILE (default, or -: stdout)."),
        ] = None,
        subject: Subject = None,
    ) -> None:
        """Export events as JSONL, one event per line, in log order (registry records included)."""
        from ...transfer import events_for_export, export_file, write_events

        st = state(ctx)
        s = st.session()
        if output_file and output_file != "-":  # -: stdout, as import reads - from stdin
            n = export_file(s.store, output_file, subject)
            st.output.emit({"exported": n, "file": output_file}, render_export)
        elif st.json_mode:
            events = [e.to_json() for e in events_for_export(s.store, subject)]
            st.output.emit({"exported": len(events), "events": events}, render_export)
        else:
            lines = events_for_export(s.store, subject)
            try:
                n = write_events(lines, sys.stdout)
                sys.stdout.flush()
            finally:
                lines.close()  # end the store's cursor while the store is still open
            st.output.message(f"exported {n} event(s)")

    @app.command(rich_help_panel="Data")
    def demo(
        ctx: typer.Context,
        events: Annotated[
            int | None, typer.Option("--events", metavar="N", help="Grow the collection to about N events.")
        ] = None,
        seed: Annotated[int, typer.Option("--seed", metavar="S", help="Seed of the generated history.")] = 7,
    ) -> None:
        """Seed the collection with a realistic nine-month history (and small support, sales, voice ones)."""
        from ...demo import seed_demo

        st = state(ctx)
        s = st.session(create=True)
        with Progress(st.output, "Seeding", total=events or 0, min_total=DEMO_MIN_EVENTS) as bar:
            data = seed_demo(
                s.backend, s.store, s.collection, events=events, seed=seed, operator=s.operator, progress=bar.update
            )
        if data.get("already_seeded"):
            # running the README's first command twice is not an error: the demo is there
            st.output.message(f"collection {s.collection!r} already holds the demo; nothing was added")
        st.output.emit(data, render_demo)
