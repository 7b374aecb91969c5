"""Audit commands: export, verify and replay bundles offline, import them."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from ...display import json_safe
from ...files import write_whole
from ..options import CommandGroup, Subject, state
from ..render.data import render_bundle_written, render_replay, render_verify
from ..render.memory import render_import

Bundle = Annotated[str, typer.Argument(metavar="FILE", help="A bundle file (- for standard input).")]
Digest = Annotated[str | None, typer.Option("--digest", metavar="D", help="The digest obtained separately.")]


def register(app: typer.Typer) -> None:
    audit_app = typer.Typer(
        help="Audit bundles: export, verify and replay offline, import.", no_args_is_help=True, cls=CommandGroup
    )
    app.add_typer(audit_app, name="audit", rich_help_panel="Audit")

    @audit_app.command("export")
    def audit_export(
        ctx: typer.Context,
        subject: Subject = None,
        predicate: Annotated[str | None, typer.Option("--predicate", metavar="P", help="Only this predicate.")] = None,
        as_of: Annotated[
            str | None, typer.Option("--as-of", metavar="T", help="The bundle's instant (default now).")
        ] = None,
        output_file: Annotated[
            str | None,
            typer.Option("-o", "--output", metavar="FILE", help="Write to FILE (default, or -: stdout)."),
        ] = None,
        recorded: Annotated[
            bool,
            typer.Option("--recorded", help="Carry when the store recorded each event, for `audit replay --known-at`."),
        ] = False,
    ) -> None:
        """A bundle of the complete histories in scope, with the registry and a digest."""
        import json

        from recall_engine.audit import encode_bundle

        from ...audit_io import export_bundle
        from ...inputs import instant

        st = state(ctx)
        s = st.session(create=False)
        bundle = export_bundle(
            s.memory, subject=subject, predicate=predicate, as_of=instant(as_of, "--as-of"), recorded=recorded
        )
        if output_file and output_file != "-":  # -: stdout, as verify, replay and import read - from stdin
            text = encode_bundle(bundle).decode("utf-8")
            write_whole(output_file, lambda f: f.write(text), "write the bundle to")
            st.output.emit(
                {"file": output_file, "digest": bundle["digest"], "events": len(bundle["events"])},
                render_bundle_written,
            )
        elif st.json_mode:
            st.output.emit(json.loads(encode_bundle(bundle)), None)
        else:
            sys.stdout.write(json_safe(encode_bundle(bundle).decode("utf-8")))
            sys.stdout.flush()
            st.output.message(f"digest {bundle['digest']}")

    @audit_app.command("verify")
    def audit_verify(ctx: typer.Context, file: Bundle, digest: Digest = None) -> None:
        """Check a bundle offline (no database): versions, events, scope, registry, digest."""
        from recall_engine.audit import verify

        from ...audit_io import read_bundle

        state(ctx).output.emit(verify(read_bundle(file), digest=digest).to_json(), render_verify)

    @audit_app.command("replay")
    def audit_replay(
        ctx: typer.Context,
        file: Bundle,
        notes: Annotated[bool, typer.Option("--notes", help="Keep only notes.")] = False,
        digest: Digest = None,
        known_at: Annotated[
            str | None,
            typer.Option(
                "--known-at", metavar="T", help="Only what the exporting store had recorded by T (--recorded bundles)."
            ),
        ] = None,
    ) -> None:
        """The beliefs the bundle's events give at its as_of instant, offline."""
        from recall_engine.audit import replay, verify
        from recall_engine.instants import format_rfc3339

        from ...audit_io import read_bundle
        from ...inputs import instant

        known = instant(known_at, "--known-at")
        result = verify(read_bundle(file), digest=digest)
        beliefs = replay(result, notes_only=notes, known_at=known)
        data = {"as_of": format_rfc3339(result.as_of), "beliefs": [b.to_json() for b in beliefs]}
        if known is not None:
            data["known_at"] = format_rfc3339(known)
        state(ctx).output.emit(data, render_replay)

    @audit_app.command("import")
    def audit_import(ctx: typer.Context, file: Bundle) -> None:
        """Verify a bundle, then append its events; importing it twice adds nothing."""
        from ...audit_io import import_bundle, read_bundle

        st = state(ctx)
        data = read_bundle(file)
        st.output.emit(import_bundle(st.session(create=True).memory, data), render_import)
