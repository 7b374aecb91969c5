"""A reader that goes away (`recall-admin ... | head`): the command stops quietly, exit 1."""

from __future__ import annotations

import subprocess
import sys

import pytest

from .conftest import Cli


def _run_into_a_closed_pipe(cli: Cli, *args: str) -> tuple[int, str]:
    # The read end is closed before the child writes anything, so its first write fails
    # with EPIPE whatever the size of the output (no timing involved).
    proc = subprocess.Popen(
        [sys.executable, "-m", "recall_admin.cli", "--store", cli.url, *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    return proc.wait(), err


@pytest.mark.parametrize(
    "args",
    [
        ("export", "-o", "/dev/stdout"),
        ("--json", "export", "-o", "/dev/stdout"),
        ("export",),
        ("--json", "history", "user", "prefers_editor"),
    ],
)
def test_a_reader_that_goes_away_ends_the_command_quietly(editors: Cli, args):
    code, err = _run_into_a_closed_pipe(editors, *args)
    assert (code, err) == (1, "")


def test_export_into_a_closed_pipe_writes_nothing_to_the_store(editors: Cli):
    before = editors.ok("history", "user", "prefers_editor")
    _run_into_a_closed_pipe(editors, "export", "-o", "/dev/stdout")
    assert editors.ok("history", "user", "prefers_editor") == before
