"""Small CLI defects (issues 11 and 12), each with the message an operator sees."""

from __future__ import annotations

import json
import re

import pytest

from recall_admin.demo import build_demo
from recall_engine.storage import open_backend

from .conftest import Cli


def test_plan_out_into_a_missing_folder_is_invalid_input(coding, tmp_path):
    target = tmp_path / "no-such-folder" / "p.json"
    err = coding.fail("define", "shell_used", "--cardinality", "single", "--type", "string", "--plan-out", str(target))
    assert err["code"] == "invalid_input"
    assert err["message"] == (
        f"cannot write the plan to {str(target)!r}: the folder {str(target.parent)!r} does not exist"
    )


def test_plan_out_onto_a_folder_is_invalid_input(coding, tmp_path):
    err = coding.fail(
        "define", "shell_used", "--cardinality", "single", "--type", "string", "--plan-out", str(tmp_path)
    )
    assert err["code"] == "invalid_input" and "it is a folder" in err["message"]


def test_a_written_plan_leaves_no_temporary_file(coding, tmp_path):
    target = tmp_path / "plans" / "p.json"
    target.parent.mkdir()
    coding.ok("define", "shell_used", "--cardinality", "single", "--type", "string", "--plan-out", str(target))
    assert [p.name for p in target.parent.iterdir()] == ["p.json"]


def test_apply_on_a_folder_is_invalid_input(coding, tmp_path):
    err = coding.fail("apply", str(tmp_path))
    assert err == {"code": "invalid_input", "message": f"{str(tmp_path)!r} is a folder, not a plan file"}


@pytest.mark.parametrize(
    "operator, message",
    [
        ("", "--operator must not be blank (leave it out to use the login name)"),
        ("   ", "--operator must not be blank (leave it out to use the login name)"),
        ("x" * 65, "--operator is at most 64 characters, got 65"),
        ("ana\x1b[2J", "--operator holds a control or invisible character: 'ana\\x1b[2J'"),
    ],
)
def test_a_bad_operator_is_refused(coding, operator, message):
    err = coding.fail(
        "--operator", operator, "define", "shell_used", "--cardinality", "single", "--type", "string", "--apply"
    )
    assert err == {"code": "invalid_input", "message": message}
    assert "shell_used" not in {p["name"] for p in coding.ok("registry", "list")["predicates"]}


def test_running_demo_again_says_on_stderr_that_it_added_nothing(cli: Cli):
    first = cli.run("demo", json_mode=False)
    assert first.exit_code == 0 and "Seeded" in first.stdout
    again = cli.run("demo", json_mode=False)
    assert again.exit_code == 0
    assert again.stdout == ""
    assert "already holds the demo; nothing was added" in again.stderr
    assert cli.ok("demo")["already_seeded"] is True


@pytest.fixture
def demo(cli: Cli) -> Cli:
    with open_backend(cli.url) as backend:
        build_demo(backend, "memories")
    return cli


def test_ids_stay_whole_in_80_columns(demo: Cli):
    conflicts = demo.ok("conflicts", "list")["conflicts"]
    notes = demo.ok("notes", "list")["notes"]
    suggestions = demo.ok("vocab", "suggest")["clusters"]
    env = {"COLUMNS": "80"}
    shown = {
        "conflicts": [c["id"] for c in conflicts],
        "notes": [n["event_id"] for n in notes],
        "vocab": [c["id"] for c in suggestions],
    }
    for command, ids in shown.items():
        sub = {"conflicts": ("conflicts", "list"), "notes": ("notes", "list"), "vocab": ("vocab", "suggest")}[command]
        r = demo.run(*sub, json_mode=False, env=env)
        assert r.exit_code == 0, r.stderr
        assert ids, command
        lines = r.stdout.splitlines()
        assert max(len(line) for line in lines) <= 80
        for ident in ids:
            assert any(re.search(rf"(^|\s){re.escape(ident)}(\s|$)", line) for line in lines), (ident, r.stdout)


def test_promote_define_normalises_the_new_name_in_the_service(cli: Cli):
    cli.ok("init", "--registry", "coding", "--open")
    n = cli.ok("remember", "u1", "note", "I use fish as my shell", "--at", "2026-03-01")["stored"]["event_id"]
    data = cli.ok("notes", "promote", "Shell Used", "--define", "--note", f"{n}=fish", "--apply")
    assert data["applied"]
    assert json.dumps(cli.ok("recall", "u1", "shell_used")["beliefs"][0]["value"]) == '"fish"'


BOX = re.compile(r"[\s│┃━─╇┡┩┏┓┗┛┳┻╋┼┬┴├┤└┘┌┐═║]+")

NARROW_COMMANDS = [
    ("conflicts", "list", "--all"),
    ("conflicts", "list", "--subject", "user"),
    ("vocab", "suggest", "--threshold", "0.6"),
    ("vocab", "list", "--all"),
    ("notes", "list"),
    ("notes", "clusters"),
    ("registry", "log"),
    ("registry", "list"),
    ("registry", "lint"),
    ("registry", "show", "likes"),
    ("recall", "user"),
    ("history", "user", "likes"),
    ("explain", "user", "likes", "--as-of", "2026-11-01"),
    ("redefine", "likes", "--cardinality", "single", "--retroactive"),
]


@pytest.mark.parametrize("args", NARROW_COMMANDS, ids=lambda a: " ".join(a))
def test_tables_at_80_columns_never_split_a_token(demo: Cli, args):
    """Every token shown at 80 columns is a whole token of the same output at 400 columns:
    nothing (an id, a name, a word) is cut in two to fit the width."""
    wide = demo.run(*args, json_mode=False, env={"COLUMNS": "400"})
    narrow = demo.run(*args, json_mode=False, env={"COLUMNS": "80"})
    assert wide.exit_code == narrow.exit_code == 0, (narrow.stdout, narrow.stderr)
    assert max(len(line) for line in narrow.stdout.splitlines()) <= 80
    whole = set(BOX.split(wide.stdout))
    split = [t for t in BOX.split(narrow.stdout) if t not in whole]
    assert split == [], narrow.stdout


def test_vocab_never_shows_its_optional_argument_in_one_pair_of_brackets(cli: Cli):
    # the metavar carried its own brackets and Click added a second pair: "[[OTHER]]"
    r = cli.run("vocab", "never", "--help", json_mode=False, env={"COLUMNS": "120"})
    assert r.exit_code == 0
    assert "vocab never [OPTIONS] {ID_OR_NAME} [OTHER]" in r.stdout
    assert "[[OTHER]]" not in r.stdout


def test_advice_beside_an_answer_goes_to_stderr(cli: Cli):
    # `KEY=$(recall-admin key create ...)` held the key and a line of advice; `> file` kept
    # "Decide with: ..." and the like as if they were data
    r = cli.run("key", "create", "--namespace", "team:a", json_mode=False)
    assert r.exit_code == 0
    assert re.fullmatch(r"rcl_[0-9a-f]{12}_\S+\n", r.stdout)
    assert "The key is shown once: keep it now." in r.stderr
    for args, advice in [
        (("demo",), "Try: recall-admin recall user"),
        (("conflicts", "list"), "Decide with: conflicts confirm ID --keep PREDICATE"),
        (("vocab", "suggest"), "Not the same thing? vocab never ID keeps a pair from coming back."),
    ]:
        r = cli.run(*args, json_mode=False)
        assert r.exit_code == 0, (args, r.stderr)
        assert r.stdout.strip() and advice not in r.stdout, args
        assert advice in r.stderr, args


def test_columns_zero_is_taken_as_no_width_given(editors: Cli):
    # COLUMNS=0 laid every table and help out in no columns: nothing printed, exit 0
    r = editors.run("recall", "user", "prefers_editor", json_mode=False, env={"COLUMNS": "0"})
    assert r.exit_code == 0 and "zed" in r.stdout and "replaced emacs" in r.stdout
    r = editors.run("vocab", "--help", json_mode=False, env={"COLUMNS": "0"})
    assert r.exit_code == 0 and "recall-admin vocab [OPTIONS] COMMAND" in r.stdout


def test_blank_option_variables_are_not_given_and_a_bad_threshold_names_its_option(editors: Cli):
    # a blank RECALL_STORE always meant "not given"; a blank RECALL_COLLECTION was a bad
    # collection name and a blank RECALL_MATCH_THRESHOLD a usage error
    blank = {"RECALL_COLLECTION": "  ", "RECALL_MATCH_THRESHOLD": " ", "RECALL_OPERATOR": "\t"}
    data = editors.ok("recall", "user", "prefers_editor", env=blank)
    assert [b["value"] for b in data["beliefs"]] == ["zed"]
    for given in (("--match-threshold", "2"), ("--match-threshold", "nan")):
        err = editors.fail(*given, "recall", "user")
        assert err == {
            "code": "invalid_input",
            "message": "--match-threshold (RECALL_MATCH_THRESHOLD) must be at most 1 (a negative one turns "
            f"matching off), got {given[1]}",
        }


def test_dash_as_an_output_file_is_stdout_and_no_file_named_dash_is_written(editors: Cli, tmp_path, monkeypatch):
    # `-o -` wrote a file named "-" in the working folder, while `import -` and `audit verify -`
    # read standard input
    monkeypatch.chdir(tmp_path)
    r = editors.run("export", "-o", "-", "--subject", "user", json_mode=False)
    assert r.exit_code == 0 and json.loads(r.stdout.splitlines()[0])["subject"] == "user"
    r = editors.run("audit", "export", "--subject", "user", "-o", "-", json_mode=False)
    assert r.exit_code == 0 and json.loads(r.stdout)["scope"]["subject"] == "user"
    err = editors.fail("redefine", "prefers_editor", "--cardinality", "multi", "--plan-out", "-")
    assert err == {
        "code": "invalid_input",
        "message": "--plan-out takes a file name, not - (stdout holds the preview); `apply FILE` reads it back",
    }
    assert not (tmp_path / "-").exists()


def test_a_bad_operator_is_shown_escaped_once_on_a_terminal(cli: Cli):
    result = cli.run("--operator", "op\x1b]0;x\x07", "registry", "list", json_mode=False)
    assert result.exit_code != 0
    assert "--operator holds a control or invisible character: 'op\\x1b]0;x\\x07'" in result.stderr
    assert "\\\\" not in result.stderr and "\x1b" not in result.stderr
