"""`registry list`, `registry show`, `registry log`, and `collections`."""

from __future__ import annotations

PREDICATE_FIELDS = {
    "name",
    "cardinality",
    "value_type",
    "allowed",
    "excludes",
    "historical",
    "aliases",
    "description",
    "origin",
    "events",
}


def test_registry_list_shows_every_predicate_with_its_rules(coding):
    coding.ok("remember", "user", "prefers_editor", "vim", "--at", "2026-09-01")
    coding.ok("remember", "user", "prefers_editor", "zed", "--at", "2026-09-02")
    data = coding.ok("registry", "list")
    preds = {p["name"]: p for p in data["predicates"]}
    assert [p["name"] for p in data["predicates"]] == sorted(preds)
    for p in data["predicates"]:
        assert set(p) >= PREDICATE_FIELDS
    ed = preds["prefers_editor"]
    assert (ed["cardinality"], ed["value_type"], ed["origin"], ed["events"]) == ("single", "string", "declared", 2)
    assert preds["experience_level"]["value_type"] == "enum"
    assert preds["experience_level"]["allowed"] == ["beginner", "intermediate", "advanced"]
    assert preds["avoids_technology"]["excludes"] == ["uses_technology"]
    assert preds["did"]["historical"] is True
    assert preds["note"]["origin"] == "builtin" and preds["note"]["cardinality"] == "multi"
    assert preds["likes"]["events"] == 0
    assert data["open_vocabulary"] is False


def test_registry_list_of_an_empty_store_has_only_note(cli):
    assert cli.fail("registry", "list")["code"] == "not_found"  # no store yet: a read creates none
    cli.ok("init")
    data = cli.ok("registry", "list")
    assert [p["name"] for p in data["predicates"]] == ["note"]
    assert cli.ok("registry", "log") == {"changes": []}


def test_registry_show_one_predicate_and_its_log(coding):
    coding.ok("remember", "user", "likes", "tea")
    data = coding.ok("registry", "show", "likes")
    assert set(data) >= PREDICATE_FIELDS
    assert data["name"] == "likes" and data["events"] == 1
    assert data["excludes"] == ["dislikes"]
    log = data["log"]
    # its own declaration, and dislikes' (which excludes likes)
    assert [(c["op"], c["name"]) for c in log] == [("declare", "dislikes"), ("declare", "likes")]
    for c in log:
        assert {"at", "op", "name", "event_id", "operator", "plan"} <= set(c)
        assert c["operator"] == "ana"
        assert c["at"].endswith("Z")


def test_registry_show_reads_a_merged_name_as_its_predicate(cli):
    cli.ok("init", "--registry", "coding", "--open")
    cli.ok("remember", "user", "favourite_editor", "vim")  # under an open vocabulary
    log = cli.ok("registry", "log")["changes"]
    last = log[-1]
    assert last["op"] in ("define", "merge")
    if last["op"] == "merge":
        data = cli.ok("registry", "show", "favourite_editor")
        assert data["name"] == last["into"]
        assert "favourite_editor" in data["merged"]
        assert data["asked_as"] == "favourite_editor"
    else:
        assert cli.ok("registry", "show", "favourite_editor")["origin"] == "defined"


def test_registry_log_lists_every_record_with_its_fields(cli):
    cli.ok("--operator", "ana", "init", "--registry", "coding")
    cli.ok("--operator", "rui", "init", "--open")
    changes = cli.ok("registry", "log")["changes"]
    assert changes[0]["op"] == "declare"
    assert changes[0]["definition"]["cardinality"] in ("single", "multi")  # the record's own fields
    for c in changes:
        assert {"at", "op", "name", "event_id", "operator", "plan", "summary"} <= set(c)
        assert c["event_id"].startswith("m-")
    vocab = changes[-1]
    assert (vocab["op"], vocab["name"], vocab["open"], vocab["operator"]) == ("vocabulary", "", True, "rui")
    assert "opened" in vocab["summary"]


def test_collections_lists_names_events_and_registry_size(cli):
    cli.ok("init", "--registry", "coding")
    cli.ok("--collection", "support-bot", "init", "--registry", "support")
    cli.ok("--collection", "support-bot", "remember", "c1", "note", "called twice about billing")
    data = cli.ok("collections")
    got = {c["name"]: c for c in data["collections"]}
    assert set(got) == {"memories", "support-bot"}
    coding_size = len(cli.ok("registry", "list")["predicates"]) - 1
    assert got["memories"]["registry"] == coding_size
    support_log = cli.ok("--collection", "support-bot", "registry", "log")["changes"]
    assert got["support-bot"]["events"] == len(support_log) + 1


def test_read_only_reads_work(coding):
    coding.ok("remember", "user", "prefers_editor", "vim", "--at", "2026-09-01")
    data = coding.ok("--read-only", "recall", "user", "prefers_editor")
    assert [b["value"] for b in data["beliefs"]] == ["vim"]
    assert coding.ok("--read-only", "registry", "show", "prefers_editor")["events"] == 1
