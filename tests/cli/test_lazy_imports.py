"""CLI start-up imports only what the command uses (docs/benchmarks.md, "Speed").

Each command runs in a fresh interpreter, through the real entry point, and reports
which heavy modules it loaded: numpy (the matcher and search), psycopg (PostgreSQL),
textual (the console), mcp (agents), the sentence model and pydantic (which Typer
uses to convert option values) stay out of `--help` and of a read on an SQLite store;
a read in --json mode draws nothing, so it loads no Rich either (nor does a read's table
written to a pipe, drawn without Rich where Rich would draw no style), and a read builds only
the commands of its own module.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

HEAVY = (
    "numpy",
    "psycopg",
    "textual",
    "mcp",
    "tokenizers",
    "safetensors",
    "recall_engine.sentence",
    "sqlalchemy",
    "pydantic",
)
READ_JSON = ("rich", "recall_engine.audit", "recall_admin.cli.commands.governance", "recall_admin.cli.commands.agents")

RUN = """
import sys
sys.argv = ["recall-admin", *{args!r}]
try:
    from recall_admin.cli.root import main
    main()
except SystemExit:
    pass
print("LOADED " + __import__("json").dumps(sorted(m for m in {heavy!r} if m in sys.modules)), file=sys.stderr)
"""


def loaded(*args: str, heavy: tuple[str, ...] = HEAVY, **env: str) -> list[str]:
    code = RUN.format(args=list(args), heavy=heavy)
    environ = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE", "COLUMNS")}
    environ.update(env)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=environ)
    line = next(x for x in out.stderr.splitlines() if x.startswith("LOADED "))
    return json.loads(line.removeprefix("LOADED "))


def test_help_loads_none_of_the_heavy_modules():
    assert loaded("--help") == []
    # the console's commands are found without importlib.metadata (cli/plugins.py)
    assert loaded("--help", heavy=("importlib.metadata", "recall_tui.cli")) == ["recall_tui.cli"]


def test_a_read_on_sqlite_loads_none_of_the_heavy_modules(coding, tmp_path):
    coding.ok("remember", "user", "prefers_editor", "vim")
    assert loaded("--store", coding.url, "recall", "user") == []
    assert loaded("--store", coding.url, "--json", "history", "user", "prefers_editor") == []


def test_a_json_read_loads_no_rich_and_no_other_command_module(coding):
    coding.ok("remember", "user", "prefers_editor", "vim")
    assert loaded("--store", coding.url, "--json", "recall", "user", heavy=READ_JSON) == []
    assert loaded("--store", coding.url, "recall", "user", "--json", heavy=READ_JSON) == []
    # drawn for a person into a pipe, its table is written without Rich (cli/plain.py);
    # where Rich might draw styles or a narrower table, it loads Rich, and only Rich of these
    assert loaded("--store", coding.url, "recall", "user", heavy=READ_JSON) == []
    assert loaded("--store", coding.url, "recall", "user", heavy=READ_JSON, FORCE_COLOR="") == ["rich"]
    assert loaded("--store", coding.url, "recall", "user", heavy=READ_JSON, COLUMNS="60") == ["rich"]


def test_a_read_loads_neither_the_history_module_nor_the_import_thread_pool(coding):
    coding.ok("remember", "user", "prefers_editor", "vim")
    later = ("recall_engine.history", "concurrent.futures", "logging")
    assert loaded("--store", coding.url, "recall", "user", "prefers_editor", heavy=later) == []
    # history loads the module it needs
    assert loaded("--store", coding.url, "--json", "history", "user", "prefers_editor", heavy=later) == [
        "recall_engine.history"
    ]


def test_a_read_loads_none_of_what_only_other_commands_use(coding):
    """Typer's launcher, completion installer and command suggestions (cli/deferred.py), and
    the calendar module (instants do its arithmetic themselves)."""
    coding.ok("remember", "user", "prefers_editor", "vim")
    unused = ("subprocess", "shellingham", "difflib", "calendar", "locale")
    assert loaded("--store", coding.url, "recall", "user", heavy=unused) == []
    assert loaded("--store", coding.url, "--json", "recall", "user", heavy=unused) == []


def test_typer_uses_the_deferred_modules_as_the_real_ones():
    probe = """
import sys
from recall_admin.cli import root  # Typer, imported with the stand-ins
import typer._completion_shared as shared
import typer.main
print("subprocess" in sys.modules, "shellingham" in sys.modules)
import shellingham, subprocess  # the real modules
print(typer.main.subprocess.Popen is subprocess.Popen, typer.main.subprocess.DEVNULL == subprocess.DEVNULL)
print(shared.subprocess.run is subprocess.run, shared.shellingham.detect_shell is shellingham.detect_shell)
print(shared.shellingham.ShellDetectionFailure is shellingham.ShellDetectionFailure)
print("difflib" in sys.modules, typer.core.get_close_matches("recal", ["recall", "search"]) == ["recall"])
"""
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False", *["True"] * 5, "False", "True"]
