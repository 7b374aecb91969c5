"""`recall` and `search` write their beliefs table without Rich where Rich would draw no
style (`recall_admin/cli/plain.py`): whatever that renderer draws must be byte for byte
what Rich draws through the CLI's own renderer, and the CLI must give the same bytes
either way."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from contextlib import redirect_stdout

from hypothesis import given, settings
from hypothesis import strategies as st

from recall_admin.cli import plain
from recall_admin.cli.output import PIPE_WIDTH, _console
from recall_admin.cli.render.memory import render_beliefs


def rich_text(data: dict, columns: int | None = None) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        con = _console(stderr=False)  # what the CLI draws a pipe's output with
        if columns is not None:
            con.width = columns
        render_beliefs(con, data)
    return out.getvalue()


text = st.text(st.characters(codec="utf-8"), max_size=30)  # no lone surrogates
ascii_text = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=30)
some_text = st.one_of(ascii_text, ascii_text, text)
value = st.one_of(some_text, st.integers(-(10**12), 10**12), st.floats(allow_nan=False), st.booleans())
prior = st.fixed_dictionaries({"value": value}, optional={"predicate": st.one_of(st.none(), ascii_text)})
belief = st.fixed_dictionaries(
    {"subject": some_text, "predicate": some_text, "value": value, "observed_at": ascii_text, "source": some_text},
    optional={
        "replaced": st.lists(prior, max_size=3),
        "elsewhere": st.lists(st.fixed_dictionaries({"predicate": ascii_text, "value": value}), max_size=2),
        "stored_as": some_text,
        "promoted_from": some_text,
    },
)
answer = st.fixed_dictionaries(
    {"beliefs": st.lists(belief, max_size=6), "as_of": ascii_text},
    optional={"known_at": st.one_of(st.just(""), ascii_text)},
)


@settings(max_examples=400, deadline=None)
@given(answer, st.sampled_from([PIPE_WIDTH, 200, 60]))
def test_what_the_plain_renderer_draws_is_what_rich_draws(data, width):
    drawn = plain.render_beliefs(data, width)
    if drawn is not None:
        assert drawn == rich_text(data, width)


def test_a_usual_answer_is_drawn_plain():
    b = {"subject": "user", "predicate": "lives_in", "value": "Toronto", "observed_at": "2026-09-02T09:00:00Z"}
    data = {"beliefs": [{**b, "source": "user_stated", "replaced": [{"value": "Berlin"}]}], "as_of": "now"}
    drawn = plain.render_beliefs(data, PIPE_WIDTH)
    assert drawn is not None and "replaced Berlin" in drawn and drawn == rich_text(data)
    empty = {"beliefs": [], "as_of": "2026-01-01T00:00:00Z", "known_at": "2025-01-01T00:00:00Z"}
    assert plain.render_beliefs(empty, PIPE_WIDTH) == rich_text(empty)


def test_what_it_cannot_draw_exactly_is_left_to_rich():
    b = {"subject": "user", "predicate": "likes", "observed_at": "2026-09-02T09:00:00Z", "source": "user_stated"}
    assert plain.render_beliefs({"beliefs": [{**b, "value": "crème brûlée"}], "as_of": "now"}, PIPE_WIDTH) is None
    assert plain.render_beliefs({"beliefs": [{**b, "value": "x" * 200}], "as_of": "now"}, PIPE_WIDTH) is None


def run(url: str, *args: str, **env: str) -> tuple[int, bytes, bytes]:
    environ = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE", "COLUMNS")}
    environ.update(env)
    code = "import sys; sys.argv[0] = 'recall-admin'; from recall_admin.cli import main; main()"
    out = subprocess.run([sys.executable, "-c", code, "--store", url, *args], capture_output=True, env=environ)
    return out.returncode, out.stdout, out.stderr


def test_the_cli_writes_the_same_bytes_with_or_without_rich(coding):
    coding.ok("remember", "user", "prefers_editor", "vim")
    coding.ok("remember", "user", "prefers_editor", "emacs")
    coding.ok("remember", "user", "uses_technology", "python")
    for args in (["recall", "user"], ["recall", "user", "prefers_editor"], ["recall", "nobody"]):
        args = [*args, "--as-of", "2030-01-01T00:00:00Z"]  # one instant for both runs
        light = run(coding.url, *args)  # drawn plain
        rich = run(coding.url, *args, FORCE_COLOR="")  # Rich draws it, without style
        assert light == rich and light[0] == 0 and light[1], args
    assert b"replaced vim" in run(coding.url, "recall", "user")[1]
