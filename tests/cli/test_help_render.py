"""`--help` is drawn by Typer's renderer loaded without rich.markdown and rich.traceback
(`recall_admin/cli/richhelp.py`): every command's help, and a usage error, must come out
byte for byte as the renderer loaded with the real modules draws them, with and without
colour, and the deferred modules must stay unloaded."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from recall_admin.cli.richhelp import DEFERRED, _stand_in

# Renders the help of the root, of every command and of every subcommand of a group,
# through the CLI's own entry point, in one fresh interpreter; with FULL, the deferred
# modules are imported first, so Typer's renderer is loaded with the real ones.
RUN = """
import contextlib, io, json, sys
if {full!r}:
    import rich.markdown, rich.traceback
from recall_admin.cli.root import COMMAND_MODULES, app, build_commands
import typer

root = typer.main.get_command(app)
paths = [[]]
for name, command in build_commands(list(COMMAND_MODULES), plugins=True).items():
    paths.append([name])
    paths.extend([name, sub] for sub in getattr(command, "commands", {{}}))
paths.append(["recall", "--no-such-option"])  # a usage error, drawn by the same renderer

def run(args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = root.main(args=args, prog_name="recall-admin", standalone_mode=False)
    return [code, out.getvalue(), err.getvalue()]

drawn = {{" ".join(p): run([*p, "--help"] if "--no-such-option" not in p else p) for p in paths}}
late = sorted(m for m in ("rich.markdown", "rich.traceback", "markdown_it", "pygments") if m in sys.modules)
print(json.dumps({{"drawn": drawn, "loaded": late}}))
"""


def render(full: bool, **env: str) -> dict:
    environ = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR", "COLUMNS", "TERM")}
    environ.update(env)
    out = subprocess.run(
        [sys.executable, "-c", RUN.format(full=full)], capture_output=True, text=True, check=True, env=environ
    )
    return json.loads(out.stdout)


@pytest.mark.parametrize("env", [{"COLUMNS": "100"}, {"COLUMNS": "72", "FORCE_COLOR": "1", "TERM": "xterm-256color"}])
def test_every_help_is_drawn_as_typers_full_renderer_draws_it(env):
    light, full = render(False, **env), render(True, **env)
    assert light["loaded"] == []  # nothing deferred was imported to draw any of them
    assert set(light["drawn"]) == set(full["drawn"])
    assert len(light["drawn"]) > 40  # the root, every command, every group's subcommands
    for path, (code, out, err) in full["drawn"].items():
        assert light["drawn"][path] == [code, out, err], path
        assert out or err, path
    code, _out, err = light["drawn"]["recall --no-such-option"]
    assert code == 2 and "No such option" in err
    if "FORCE_COLOR" in env:
        assert "\x1b[" in light["drawn"][""][1]  # the colour variant did draw colour


def test_a_stand_in_builds_the_real_object():
    import rich.markdown
    import rich.traceback

    markdown = _stand_in("rich.markdown", DEFERRED["rich.markdown"])("# A title", style="bold")
    assert type(markdown) is rich.markdown.Markdown and markdown.style == "bold"
    try:
        raise ValueError("boom")
    except ValueError as e:
        tb = _stand_in("rich.traceback", DEFERRED["rich.traceback"]).from_exception(type(e), e, e.__traceback__)
    assert type(tb) is rich.traceback.Traceback and tb.trace.stacks[0].exc_value == "boom"
