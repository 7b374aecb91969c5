"""`--known-at` on recall, search, history, diff and explain (docs/cli.md): the issue's
editor example through the command line. The store records each append at the real
clock; the test reads the recorded instants back from `history --json`."""

from __future__ import annotations

from tests.cli.conftest import Cli


def values(beliefs) -> list:
    return sorted(b["value"] for b in beliefs)


def story(coding: Cli) -> dict[str, str]:
    """emacs (Aug 1), vim (Aug 20); then prefers_editor made multi-valued for its whole
    history by ana, then helix said on Aug 25 but recorded last. Returns the recorded
    instants: after vim ("vim"), after the redefine ("redefine") and after helix."""
    coding.ok("remember", "user", "prefers_editor", "emacs", "--at", "2026-08-01")
    coding.ok("remember", "user", "prefers_editor", "vim", "--at", "2026-08-20")
    known = {"vim": coding.ok("history", "user", "prefers_editor")["steps"][-1]["recorded_at"]}
    coding.ok(
        "--operator", "ana", "redefine", "prefers_editor", "--cardinality", "multi", "--retroactive",
        "--reason", "people use several editors", "--apply",
    )  # fmt: skip
    coding.ok("remember", "user", "prefers_editor", "helix", "--at", "2026-08-25")
    steps = coding.ok("history", "user", "prefers_editor")["steps"]
    known["helix"] = next(s["recorded_at"] for s in steps if s["value"] == "helix")
    return known


def test_recall_known_at_answers_what_was_answered_then(coding: Cli):
    known = story(coding)
    today = coding.ok("recall", "user", "prefers_editor", "--as-of", "2026-09-01")
    assert values(today["beliefs"]) == ["emacs", "helix", "vim"] and "known_at" not in today
    then = coding.ok("recall", "user", "prefers_editor", "--as-of", "2026-09-01", "--known-at", known["vim"])
    assert values(then["beliefs"]) == ["vim"]
    assert then["known_at"] == known["vim"] and then["as_of"] == "2026-09-01T00:00:00Z"
    alone = coding.ok("recall", "user", "prefers_editor", "--known-at", known["vim"])
    assert alone["as_of"] == known["vim"] and values(alone["beliefs"]) == ["vim"]
    profile = coding.ok("recall", "user", "--as-of", "2026-09-01", "--known-at", known["vim"])
    assert values(profile["beliefs"]) == ["vim"]
    found = coding.ok("search", "editor vim emacs helix", "--as-of", "2026-09-01", "--known-at", known["vim"])
    assert values(found["beliefs"]) == ["vim"] and found["known_at"] == known["vim"]


def test_history_shows_both_axes_and_hides_what_was_recorded_later(coding: Cli):
    known = story(coding)
    h = coding.ok("history", "user", "prefers_editor")
    said = {s["value"]: (s["at"], s["recorded_at"]) for s in h["steps"]}
    assert said["helix"][0] == "2026-08-25T00:00:00Z" and said["helix"][1] == known["helix"]
    assert said["vim"][1] <= known["vim"] < said["helix"][1]
    then = coding.ok("history", "user", "prefers_editor", "--known-at", known["vim"])
    assert [s["value"] for s in then["steps"]] == ["emacs", "vim"]
    assert then["believed_then"] == ["vim"] and then["known_at"] == known["vim"]
    out = coding.run("history", "user", "prefers_editor", "--recorded", json_mode=False)
    assert out.exit_code == 0, out.stderr
    assert "said at" in out.stdout and "recorded at" in out.stdout and known["helix"] in out.stdout
    assert "recorded at" not in coding.run("history", "user", "prefers_editor", json_mode=False).stdout


def test_explain_known_at_shows_the_answer_then_and_what_changed_since(coding: Cli):
    known = story(coding)
    x = coding.ok("explain", "user", "prefers_editor", "--as-of", "2026-09-01", "--known-at", known["vim"])
    assert values(x["beliefs"]) == ["vim"]
    assert [r["op"] for r in x["rules"]] == ["declare"]  # the rule that decided it then
    since = x["since"]
    assert since["changed"] is True and values(since["beliefs"]) == ["emacs", "helix", "vim"]
    assert [(s["value"], s["observed_at"], s["recorded_at"]) for s in since["statements"]] == [
        ("helix", "2026-08-25T00:00:00Z", known["helix"])
    ]
    (rule,) = since["registry"]
    assert (rule["op"], rule["operator"], rule["reason"]) == ("redefine", "ana", "people use several editors")
    assert known["vim"] < rule["recorded_at"] < known["helix"]
    text = coding.run(
        "explain", "user", "prefers_editor", "--as-of", "2026-09-01", "--known-at", known["vim"], json_mode=False
    ).stdout
    assert "Believed then" in text and "Registry records after" in text and "people use several editors" in text
    assert "Statements recorded after" in text
    now = coding.ok("explain", "user", "prefers_editor", "--as-of", "2026-09-01")
    assert "since" not in now and "known_at" not in now


def test_diff_compares_two_known_at_instants_for_one_valid_instant(coding: Cli):
    known = story(coding)
    d = coding.ok(
        "diff", "--subject", "user", "--as-of", "2026-09-01", "--known-from", known["vim"], "--known-to", known["helix"]
    )
    assert (d["from"], d["to"]) == ("2026-09-01T00:00:00Z", "2026-09-01T00:00:00Z")
    assert (d["known_from"], d["known_to"]) == (known["vim"], known["helix"])
    (c,) = d["changes"]
    assert (c["predicate"], c["before"], sorted(c["began"])) == ("prefers_editor", ["vim"], ["emacs", "helix"])
    # --known-from alone compares with what a read now answers
    assert coding.ok("diff", "--as-of", "2026-09-01", "--known-from", known["vim"])["changes"] == d["changes"]
    # one known instant for both sides, valid instants moving
    both = coding.ok("diff", "--from", "2026-08-10", "--to", "2026-09-01", "--known-at", known["vim"])
    assert [(c["before"], c["after"]) for c in both["changes"]] == [(["emacs"], ["vim"])]
    text = coding.run("diff", "--as-of", "2026-09-01", "--known-from", known["vim"], json_mode=False).stdout
    assert f"known at {known['vim']}" in text


def test_known_at_errors_are_clear(coding: Cli):
    e = coding.fail("recall", "user", "prefers_editor", "--known-at", "yesterday-ish")
    assert e["code"] == "invalid_input" and "--known-at" in e["message"]
    e = coding.fail("diff", "--as-of", "2026-09-01", "--from", "2026-08-01", "--known-from", "2026-09-01")
    assert e["message"] == "diff takes --as-of (one valid instant) or --from/--to, not both"
    e = coding.fail("diff", "--as-of", "2026-09-01")
    assert e["message"] == "diff --as-of compares two known-at instants: give --known-from T1 (and --known-to T2)"
    e = coding.fail("diff", "--from", "2026-08-01", "--known-at", "2026-09-01", "--known-to", "2026-09-02")
    assert e["message"] == "diff takes --known-at (both sides) or --known-from/--known-to, not both"
    e = coding.fail("diff")
    assert e["message"] == "diff needs --from T (the earlier instant), or --as-of T with --known-from/--known-to"


def test_audit_export_recorded_then_replay_known_at(coding: Cli, tmp_path):
    known = story(coding)
    path = str(tmp_path / "b.json")
    coding.ok("audit", "export", "--subject", "user", "--as-of", "2026-09-01", "--recorded", "-o", path)
    then = coding.ok("audit", "replay", path, "--known-at", known["vim"])
    assert values(then["beliefs"]) == ["vim"] and then["known_at"] == known["vim"]
    assert values(coding.ok("audit", "replay", path)["beliefs"]) == ["emacs", "helix", "vim"]
    plain = str(tmp_path / "plain.json")
    coding.ok("audit", "export", "--subject", "user", "--as-of", "2026-09-01", "-o", plain)
    e = coding.fail("audit", "replay", plain, "--known-at", known["vim"])
    assert "the bundle carries no recorded instants" in e["message"]


def test_a_predicate_declared_after_the_known_at_instant_is_refused_saying_so(cli):
    # the refusal listed the registry of then ("registered predicates are: note") for a
    # name `registry list` shows now, and said nothing of the instant
    cli.ok("init", "--registry", "coding")
    cli.ok("remember", "user", "prefers_editor", "vim", "--at", "2026-09-01")
    for command in ("recall", "history", "explain"):
        err = cli.fail(command, "user", "prefers_editor", "--known-at", "2001-01-01")
        assert err == {
            "code": "unknown_predicate",
            "message": "predicate 'prefers_editor' was not yet in the registry known at 2001-01-01T00:00:00Z, "
            "so a read then refused it; `registry log --name prefers_editor` shows when it was recorded",
        }
    err = cli.fail("recall", "user", "nosuch", "--known-at", "2001-01-01")
    assert err["code"] == "unknown_predicate" and "registered predicates are" in err["message"]
