"""audit export/verify/replay/import, demo and registry lint through the CLI."""

from __future__ import annotations

import json

import pytest


@pytest.fixture
def demo(cli):
    data = cli.ok("demo")
    assert data["collections"][0] == "memories"
    assert set(data["collections"]) == {"memories", "support", "sales", "voice"}
    return data


def test_demo_holds_the_storylines(cli, demo):
    beliefs = {(b["predicate"], b["value"]) for b in cli.ok("recall", "user")["beliefs"]}
    assert {
        ("lives_in", "Toronto"),
        ("works_at", "Initech"),
        ("prefers_editor", "zed"),
        ("dislikes", "mangoes"),
        ("did", "run a marathon"),
        ("goal", "run a marathon"),
    } <= beliefs
    assert ("likes", "mangoes") not in beliefs
    then = cli.ok("recall", "user", "prefers_editor", "--as-of", "2026-09-25")["beliefs"]
    assert [b["value"] for b in then] == ["emacs"]
    cities = [s["value"] for s in cli.ok("history", "user", "lives_in")["steps"]]
    assert cities == ["Lisbon", "Berlin", "Toronto"]


def test_demo_twice_adds_nothing(cli, demo):
    again = cli.ok("demo")
    assert again["already_seeded"] is True and again["events"] == demo["events"]


def test_demo_refuses_a_collection_that_holds_other_events(cli):
    cli.ok("init", "--registry", "coding")
    err = cli.fail("demo")
    assert err["code"] == "invalid_input"
    assert "already holds" in err["message"] and "the demo seeds an empty collection" in err["message"]


def test_demo_grows_to_the_events_asked(cli):
    data = cli.ok("--collection", "big", "demo", "--events", "3000")
    assert data["events"] >= 3000
    assert cli.ok("--collection", "big", "collections")["collections"]


def test_an_interrupted_demo_writes_nothing_and_can_be_run_again(cli):
    # Ctrl-C while `demo --events N` grows the collection: a half-grown demo would read
    # as seeded (its storylines are there) and `demo` would never grow it again
    from recall_admin.demo import build_demo, is_seeded
    from recall_engine.storage import open_backend

    def interrupt(read: int) -> None:
        raise KeyboardInterrupt

    with open_backend(cli.url) as backend:
        with pytest.raises(KeyboardInterrupt):
            build_demo(backend, "big", events=12000, progress=interrupt)
        store = backend.store("big")
        assert store.count() == 0 and not is_seeded(store)
    assert cli.ok("--collection", "big", "demo", "--events", "12000")["events"] >= 12000


def test_audit_round_trip_replay_equals_live_and_import_twice_adds_nothing(cli, demo, tmp_path):
    bundle = tmp_path / "user.json"
    exported = cli.ok("audit", "export", "--subject", "user", "--as-of", "2026-11-01", "-o", str(bundle))
    checked = cli.ok("audit", "verify", str(bundle))
    assert checked["valid"] is True and checked["digest"] == exported["digest"]
    assert checked["events"] == exported["events"]
    replayed = cli.ok("audit", "replay", str(bundle))
    live = cli.ok("recall", "user", "--as-of", "2026-11-01")
    key = lambda b: (b["predicate"], json.dumps(b["value"]), b["event_id"])  # noqa: E731
    assert sorted(map(key, replayed["beliefs"])) == sorted(map(key, live["beliefs"]))
    assert replayed["as_of"] == "2026-11-01T00:00:00Z"
    notes = cli.ok("audit", "replay", str(bundle), "--notes")["beliefs"]
    assert notes and {b["predicate"] for b in notes} == {"note"}

    other = f"sqlite:///{tmp_path / 'other.db'}"
    first = cli.ok("audit", "import", str(bundle), store=other)
    assert first["imported"] > 0 and first["skipped"] == 0
    second = cli.ok("audit", "import", str(bundle), store=other)
    assert second == {"imported": 0, "skipped": first["imported"], "digest": first["digest"]}
    again = tmp_path / "again.json"
    redone = cli.ok("audit", "export", "--subject", "user", "--as-of", "2026-11-01", "-o", str(again), store=other)
    assert redone["digest"] == exported["digest"]


def test_verify_names_what_was_changed(cli, demo, tmp_path):
    bundle = tmp_path / "b.json"
    cli.ok("audit", "export", "--subject", "user", "-o", str(bundle))
    doc = json.loads(bundle.read_text())
    target = next(e for e in doc["events"] if e["predicate"] == "lives_in")
    target["value"] = "Paris"
    bundle.write_text(json.dumps(doc))
    err = cli.fail("audit", "verify", str(bundle))
    assert err["code"] in ("digest_mismatch", "invalid_audit")
    assert target["id"] in err["message"]


def test_verify_with_a_digest_obtained_separately(cli, demo, tmp_path):
    bundle = tmp_path / "b.json"
    cli.ok("audit", "export", "--subject", "user", "-o", str(bundle))
    err = cli.fail("audit", "verify", str(bundle), "--digest", "sha256:audit-v2:" + "0" * 64)
    assert err["code"] == "digest_mismatch"


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "does not exist"),
        (b"\xff\xfe not utf-8", "audit input must be UTF-8"),
        (b'{"version": "recall-audit-v1"} {}', "exactly one JSON"),
    ],
)
def test_bad_bundle_files_are_refused_with_the_reason(cli, tmp_path, content, message):
    path = tmp_path / "bad.json"
    if content is not None:
        path.write_bytes(content)
    err = cli.fail("audit", "verify", str(path))
    assert message in err["message"]


def test_export_refuses_rather_than_truncates(cli, tmp_path):
    cli.ok("--collection", "big", "demo", "--events", "10500")
    err = cli.fail("--collection", "big", "audit", "export")
    assert "more than 10000 events" in err["message"] and "narrow it" in err["message"]


def test_registry_lint_on_the_demo(cli, demo):
    findings = cli.ok("registry", "lint")["findings"]
    codes = {(f["code"], tuple(f["names"])) for f in findings if f["code"] != "never_used"}
    assert ("near_duplicate", ("editor_preference", "prefers_editor")) in codes
    assert ("note_like_predicate", ("note", "prefers_shell")) in codes
    unused = next(f for f in findings if f["code"] == "never_used")
    assert "prefers_shell" in unused["names"] and "prefers_editor" not in unused["names"]


def test_registry_lint_finds_one_way_exclusions(cli, tmp_path):
    reg = tmp_path / "r.yaml"
    reg.write_text(
        "registry: r\npredicates:\n  likes:\n    cardinality: multi\n"
        "  avoids:\n    cardinality: multi\n    excludes: [likes]\n",
        encoding="utf-8",
    )
    cli.ok("init", "--registry", str(reg))
    findings = cli.ok("registry", "lint")["findings"]
    assert any(f["code"] == "one_way_exclude" and f["names"] == ["avoids", "likes"] for f in findings)


def test_import_refuses_an_event_changed_after_it_was_written(cli, tmp_path):
    from recall_engine.records import make_event

    e = make_event("user", "prefers_editor", "vim", 1_788_220_800_000_000_000).to_json()
    e["value"] = "emacs"  # the id still says vim
    path = tmp_path / "events.jsonl"
    path.write_text(json.dumps(e) + "\n", encoding="utf-8")
    err = cli.fail("import", str(path))
    assert "line 1" in err["message"] and "does not match its content" in err["message"]


def test_the_inbox_and_lint_find_names_nobody_listed_on_the_demo_store(cli, demo):
    # names agents invent, defined on first use beside the demo's registry (the
    # sentence model finds them: docs/review-queues.md, "How a match is decided")
    from recall_engine.memory import Memory
    from recall_engine.registry import Definition, RegistryRecord
    from recall_engine.storage import open_backend

    backend = open_backend(cli.url)
    try:
        Memory(backend.store("memories")).append_records(
            [
                RegistryRecord(op="define", name=n, definition=Definition(n, "single", "string", ""), auto=True)
                for n in (
                    "fav_color",
                    "favorite_colour",
                    "employer",
                    "shipping_address",
                    "delivery_address",
                    "dislikes_food",
                )
            ]
        )
    finally:
        backend.close()
    clusters = {tuple(c["names"]) for c in cli.ok("vocab", "suggest")["clusters"]}
    assert ("fav_color", "favorite_colour") in clusters
    assert ("employer", "works_at") in clusters
    assert ("delivery_address", "shipping_address") in clusters
    # the antonym guard keeps it from likes; the added word from dislikes
    assert not any("dislikes_food" in c for c in clusters)
    lint = {tuple(f["names"]) for f in cli.ok("registry", "lint")["findings"] if f["code"] == "near_duplicate"}
    assert {("fav_color", "favorite_colour"), ("employer", "works_at")} <= lint
