"""Every input that can be wrong shows the error a user reads, exit status 1, and the
JSON error envelope; usage errors exit 2; nothing ever prints a traceback."""

from __future__ import annotations

import json

import pytest

import recall_admin.views as views

# --- values and names -----------------------------------------------------------------


def test_unknown_predicate_lists_registered_names_and_the_note_advice(coding):
    err = coding.fail("remember", "user", "favourite_colour", "blue")
    assert err["code"] == "unknown_predicate"
    msg = err["message"]
    assert "'favourite_colour' is not in the registry" in msg
    assert "prefers_editor" in msg and "likes" in msg
    assert 'predicate "note"' in msg
    for args in (
        ("recall", "user", "favourite_colour"),
        ("history", "user", "favourite_colour"),
        ("explain", "user", "favourite_colour"),
        ("forget", "user", "favourite_colour", "--all"),
        ("registry", "show", "favourite_colour"),
    ):
        assert coding.fail(*args)["code"] == "unknown_predicate", args


def test_wrong_value_type_for_a_number_predicate_says_what_was_expected(cli, typed_registry):
    cli.ok("init", "--registry", typed_registry)
    err = cli.fail("remember", "acme", "budget", "lots")
    assert err["code"] == "invalid_input"
    assert err["message"] == "budget expects a number value, got string 'lots'"
    err = cli.fail("remember", "acme", "remote", "perhaps")
    assert "remote expects a boolean value" in err["message"]


def test_enum_value_not_allowed_lists_the_allowed_values(coding):
    err = coding.fail("remember", "user", "experience_level", "wizard")
    assert err["code"] == "invalid_input"
    assert "experience_level expects one of: beginner, intermediate, advanced" in err["message"]
    assert "'wizard'" in err["message"]


@pytest.mark.parametrize(
    "args, expected",
    [
        pytest.param(("--confidence", "1.5"), "confidence must be in [0, 1], got 1.5", id="confidence-above-1"),
        pytest.param(("--confidence", "-0.1"), "confidence must be in [0, 1], got -0.1", id="confidence-negative"),
        pytest.param(("--at", "2099-01-01"), "observed_at 2099-01-01T00:00:00Z is in the future", id="future"),
        pytest.param(
            ("--at", "2026-02-30"),
            "--at must be an RFC3339 time or a day such as 2026-09-01, got '2026-02-30'",
            id="no-such-day",
        ),
        pytest.param(("--at", "last tuesday"), "--at must be an RFC3339 time or a day", id="malformed-instant"),
        pytest.param(("--kind", "rumour"), 'kind must be "fact" or "preference"', id="kind"),
        pytest.param(("--source", "gossip"), "source must be", id="source"),
        pytest.param(
            ("--evidence", "x" * 3000), "evidence must be UTF-8 of at most 2048 bytes", id="evidence-too-long"
        ),
        pytest.param(("--replaces", "prefers_editor"), "--replaces takes PREDICATE=VALUE", id="replaces-shape"),
        pytest.param(("--cardinality", "many"), "cardinality must be single or multi", id="cardinality"),
    ],
)
def test_bad_remember_options(coding, args, expected):
    err = coding.fail("remember", "user", "prefers_editor", "vim", *args)
    assert err["code"] == "invalid_input"
    assert expected in err["message"]
    assert coding.ok("recall", "user")["beliefs"] == []  # nothing was written


def test_empty_subject(coding):
    err = coding.fail("remember", "  ", "prefers_editor", "vim")
    assert err == {"code": "invalid_input", "message": "subject must not be empty"}
    assert coding.fail("recall", "")["message"] == "subject must not be empty"


def test_reserved_subject(coding):
    err = coding.fail("remember", "recall:registry", "prefers_editor", "vim")
    assert "reserved" in err["message"]


def test_malformed_instants_in_reads(coding):
    assert "--as-of must be an RFC3339 time" in coding.fail("recall", "user", "--as-of", "yesterday")["message"]
    assert "--from must be an RFC3339 time" in coding.fail("diff", "--from", "2026/09/01")["message"]
    assert "--to must be an RFC3339 time" in coding.fail("diff", "--from", "2026-09-01", "--to", "x")["message"]


def test_forget_needs_a_value_or_all(coding):
    assert "exactly one of a VALUE or --all" in coding.fail("forget", "user", "likes")["message"]
    assert "exactly one of a VALUE or --all" in coding.fail("forget", "user", "likes", "tea", "--all")["message"]


def test_search_needs_text(coding):
    assert coding.fail("search", "  ")["message"] == "search needs some text"
    assert "limit must be between 1 and" in coding.fail("search", "vim", "--limit", "0")["message"]


# --- stores --------------------------------------------------------------------------------


def test_bad_store_url_is_refused_without_showing_its_password(cli):
    err = cli.fail("recall", "user", store="mysql://ana:s3cret@db.example/recall")
    assert "unsupported store URL" in err["message"]
    assert "accepted:" in err["message"]
    assert "s3cret" not in err["message"]


def test_store_in_a_missing_folder(cli, tmp_path):
    err = cli.fail("init", store=f"sqlite:///{tmp_path / 'no' / 'such' / 'r.db'}")
    assert err["code"] == "storage_error"
    assert "does not exist" in err["message"]
    err = cli.fail("recall", "user", store=f"sqlite:///{tmp_path / 'no' / 'such' / 'r.db'}")
    assert err["code"] == "not_found"  # a read: nothing to read there


def test_bad_collection_name(cli):
    err = cli.fail("--collection", "no spaces please", "recall", "user")
    assert err["code"] == "invalid_input"
    assert "collection name must be" in err["message"]


def test_read_only_store_refuses_a_write(coding):
    err = coding.fail("--read-only", "remember", "user", "prefers_editor", "vim")
    assert err["code"] == "read_only"
    assert "read-only" in err["message"]
    assert coding.fail("--read-only", "init", "--registry", "voice")["code"] == "read_only"
    assert coding.ok("recall", "user")["beliefs"] == []


def test_read_only_missing_store_or_collection(cli, tmp_path):
    err = cli.fail("--read-only", "recall", "user", store=f"sqlite:///{tmp_path / 'none.db'}")
    assert err["code"] == "not_found" and "nothing to read" in err["message"]
    # a write under --read-only on a missing file was a storage_error ("nothing to open
    # read-only"): not_found like a read, saying what to do
    for args in (("remember", "user", "likes", "tea"), ("init",), ("import", "-")):
        err = cli.fail("--read-only", *args, store=f"sqlite:///{tmp_path / 'none.db'}", input="")
        assert err == {
            "code": "not_found",
            "message": f"no store at sqlite:///{tmp_path / 'none.db'} (no such file): "
            "--read-only creates nothing; run it without --read-only to create it",
        }
    assert not (tmp_path / "none.db").exists()
    cli.ok("init")
    err = cli.fail("--read-only", "--collection", "other", "recall", "user")
    assert err["code"] == "not_found"
    assert "no collection 'other'" in err["message"]


def test_key_list_and_revoke_on_a_missing_store_are_not_found_and_make_no_file(cli, tmp_path):
    # `key revoke` opened the store for writing first: a typo'd --store left an empty file
    missing = tmp_path / "none.db"
    for args in (("key", "list"), ("key", "revoke", "0123456789ab")):
        err = cli.fail(*args, store=f"sqlite:///{missing}")
        assert err["code"] == "not_found"
        assert err["message"].startswith(f"no store at sqlite:///{missing} (no such file): nothing to read")
        assert not missing.exists()


def test_tui_without_a_terminal_or_with_json_is_refused_before_it_starts(coding, monkeypatch):
    # it started the console anyway: escape sequences into the pipe, then a wait for keys
    # that never came (a script's `recall-admin --json tui` hung)
    import recall_tui.app

    monkeypatch.setattr(recall_tui.app, "main", lambda **kw: pytest.fail("the console started"))
    err = coding.fail("tui")
    assert err == {
        "code": "invalid_input",
        "message": "tui is the interactive console and writes no JSON; run it without --json",
    }
    r = coding.run("tui", json_mode=False)
    assert r.exit_code == 1 and r.stdout == ""
    assert r.stderr == (
        "error: tui needs a terminal: standard input and output are not one "
        "(run it in a terminal, without pipes or redirection)\n"
    )


def test_serve_on_an_address_it_cannot_listen_on_is_refused_with_the_envelope(cli, tmp_path):
    # uvicorn logged the failure (a traceback, for a port out of range) and ended the
    # process with status 3: no envelope, an exit code no page documents
    import socket

    missing = tmp_path / "none.db"
    err = cli.fail("serve", "--port", "99999", store=f"sqlite:///{missing}")
    assert err == {"code": "invalid_input", "message": "--port takes 1 to 65535, got 99999"}
    assert not missing.exists()  # refused before the store was opened
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        err = cli.fail("serve", "--port", str(port))
    assert err["code"] == "invalid_input"
    assert err["message"].startswith(f"cannot listen on 127.0.0.1:{port}: ")
    assert err["message"].endswith("; choose another --host or --port")


def test_key_create_on_a_read_only_store_is_refused_before_anything_is_written(coding):
    # it declared the namespace's registry through a session that ignored --read-only,
    # then failed with "internal error: AssertionError" where the key was to be written
    err = coding.fail("--read-only", "key", "create", "--namespace", "team:a", "--registry", "coding")
    assert err == {
        "code": "read_only",
        "message": "the store is open read-only; writes are refused (open it without --read-only to write)",
    }
    assert [c["name"] for c in coding.ok("collections")["collections"]] == ["memories"]
    assert coding.ok("key", "list")["keys"] == []


# --- registry files -------------------------------------------------------------------------------


def test_unknown_starter_registry(cli):
    err = cli.fail("init", "--registry", "cooking")
    assert "no starter registry" in err["message"] and "coding" in err["message"]


def test_malformed_registry_file_names_file_and_line(cli, tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("registry: bad\npredicates:\n  likes:\n    cardinality: several\n", encoding="utf-8")
    err = cli.fail("init", "--registry", str(path))
    assert err["code"] == "invalid_registry_file"
    assert err["message"].startswith(f"{path}:4")
    assert cli.fail("registry", "log")["code"] == "not_found"  # nothing declared, no store created


def test_registry_files_that_disagree_on_a_rule(cli, tmp_path):
    a = tmp_path / "a.yaml"
    b = tmp_path / "b.yaml"
    a.write_text("registry: a\npredicates:\n  likes:\n    cardinality: multi\n", encoding="utf-8")
    b.write_text("registry: b\npredicates:\n  likes:\n    cardinality: single\n", encoding="utf-8")
    err = cli.fail("init", "--registry", str(a), "--registry", str(b))
    assert "registries 'a' and 'b' define 'likes' with different rules" in err["message"]


# --- import ---------------------------------------------------------------------------------


def test_import_a_missing_file(coding, tmp_path):
    err = coding.fail("import", str(tmp_path / "nope.jsonl"))
    assert err["code"] == "not_found"
    assert "no such file" in err["message"]


def test_import_a_bad_line_names_it_and_writes_nothing(coding, tmp_path):
    coding.ok("remember", "user", "prefers_editor", "vim", "--at", "2026-09-01")
    exported = coding.run("export", json_mode=False).stdout.splitlines()
    good = [json.loads(x) for x in exported]
    bad = dict(good[-1], confidence=7)
    lines = [json.dumps(e) for e in good[:2]] + ["", json.dumps(bad)] + [json.dumps(e) for e in good[2:]]
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    other = f"sqlite:///{tmp_path / 'other.db'}"
    err = coding.fail("import", str(path), store=other)
    assert err["code"] == "invalid_event"
    assert err["message"].startswith("line 4: ")
    assert "invalid confidence" in err["message"]
    assert coding.ok("collections", store=other)["collections"][0]["events"] == 0

    path.write_text(json.dumps(good[0]) + "\n{not json\n", encoding="utf-8")
    err = coding.fail("import", str(path), store=other)
    assert err["message"].startswith("line 2: not valid JSON")


def test_import_a_bad_registry_record(coding, tmp_path):
    from recall_engine.records import make_event

    e = make_event("recall:registry", "registry_change", '{"op": "declare", "name": "x"}', 1_000_000_000)
    path = tmp_path / "reg.jsonl"
    path.write_text(json.dumps(e.to_json()) + "\n", encoding="utf-8")
    err = coding.fail("import", str(path))
    assert err["message"].startswith("line 1: ") and "needs a definition" in err["message"]


def test_export_to_a_missing_folder(coding, tmp_path):
    err = coding.fail("export", "-o", str(tmp_path / "no" / "out.jsonl"))
    assert "does not exist" in err["message"]


# --- usage, human mode, the last line of defence ------------------------------------------------------


def test_usage_errors_exit_1_with_the_envelope_in_json_mode(coding):
    # exit 2 belongs to --detailed-exitcode ("the plan changes answers"), never to a mistake
    err = coding.fail("recall", "user", "--bogus")
    assert err == {"code": "usage_error", "message": "No such option: --bogus"}
    err = coding.fail("diff")
    assert "--from" in err["message"]
    err = coding.fail("remember", "user", "prefers_editor", "vim", "--confidence", "high")
    assert err["code"] == "usage_error" and "--confidence" in err["message"]
    r = coding.run("--bogus", "recall", "user")
    assert r.exit_code == 1 and json.loads(r.stdout)["error"]["code"] == "usage_error"


@pytest.mark.parametrize(
    ("group", "commands"),
    [
        ("registry", "list, show, log, load, lint"),
        ("conflicts", "list, confirm, exclude, dismiss, undismiss"),
        ("vocab", "list, suggest, merge, never, split"),
        ("notes", "list, clusters, promote"),
        ("audit", "export, verify, replay, import"),
        ("key", "create, list, revoke"),
    ],
)
def test_a_group_without_its_command_answers_with_the_envelope_in_json_mode(coding, group, commands):
    # Click draws the group's help on stdout while it builds its "no arguments" error:
    # a script got a help page where its one JSON document should be
    err = coding.fail(group)
    assert err == {"code": "usage_error", "message": f"Missing command: one of {commands}."}
    r = coding.run(group, json_mode=False)  # a person still gets the help
    assert r.exit_code == 2 and f"recall-admin {group} [OPTIONS] COMMAND" in r.stdout


def test_json_is_accepted_after_the_subcommand(coding):
    coding.ok("remember", "user", "prefers_editor", "vim", "--at", "2026-09-01")
    r = coding.run("recall", "user", "prefers_editor", "--json", json_mode=False)
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["data"]["beliefs"][0]["value"] == "vim"
    r = coding.run("recall", "user", "--bogus", "--json", json_mode=False)
    assert r.exit_code == 1
    assert json.loads(r.stdout)["error"] == {"code": "usage_error", "message": "No such option: --bogus"}


def test_usage_errors_in_human_mode_go_to_stderr(coding):
    r = coding.run("recall", "user", "--bogus", json_mode=False)
    assert r.exit_code == 2
    assert r.stdout == ""
    assert "No such option" in r.stderr


def test_usage_errors_in_human_mode_escape_bidirectional_overrides(coding):
    # Click escapes the C0 controls of an argument it quotes, not a right-to-left override
    r = coding.run("recall", "user", "likes", "x\u202ey", json_mode=False)
    assert r.exit_code == 2
    assert "\u202e" not in r.stderr and "(x\\u202ey)" in r.stderr


def test_errors_in_human_mode_go_to_stderr(coding):
    r = coding.run("remember", "user", "favourite_colour", "blue", json_mode=False)
    assert r.exit_code == 1
    assert r.stdout == ""
    assert r.stderr.startswith("error: predicate 'favourite_colour' is not in the registry")
    assert "Traceback" not in r.stderr


def test_an_unexpected_exception_is_one_line(coding, monkeypatch):
    def boom(*a, **k):
        raise RuntimeError("the disk is on fire")

    monkeypatch.setattr(views, "recall_view", boom)
    err = coding.fail("recall", "user")
    assert err == {"code": "internal_error", "message": "internal error: RuntimeError: the disk is on fire"}
    r = coding.run("recall", "user", json_mode=False)
    assert r.exit_code == 1
    assert r.stderr.strip() == "error: internal error: RuntimeError: the disk is on fire"
    assert "Traceback" not in r.stderr


def test_keyboard_interrupt_exits_130_quietly(coding, monkeypatch):
    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(views, "recall_view", interrupted)
    r = coding.run("recall", "user", json_mode=False)
    assert r.exit_code == 130
    assert "Traceback" not in r.stdout + r.stderr
