"""Reads never write (issue 12): a read of a store file or a collection that does not exist
is ``not_found`` and creates nothing; only init, demo, remember, registry load --apply and
the imports create. On SQLite and on PostgreSQL."""

from __future__ import annotations

import os

import pytest

from recall_engine.storage import open_backend

from .conftest import Cli, isolated_cli

READS = [
    ("recall", "user"),
    ("history", "user", "likes"),
    ("explain", "user", "likes"),
    ("search", "coffee"),
    ("diff", "--from", "2026-01-01"),
    ("registry", "list"),
    ("registry", "show", "likes"),
    ("registry", "log"),
    ("registry", "lint"),
    ("registry", "load", "coding"),  # a preview: it reads
    ("conflicts", "list"),
    ("vocab", "list"),
    ("vocab", "suggest"),
    ("notes", "list"),
    ("notes", "clusters"),
    ("export",),
    ("forget", "user", "likes", "tea"),
    ("define", "likes", "--cardinality", "multi", "--type", "string"),
    ("define", "likes", "--cardinality", "multi", "--type", "string", "--apply"),
]


@pytest.fixture
def fresh(backend_url, tmp_path, monkeypatch) -> Cli:
    cli = isolated_cli(backend_url, tmp_path, monkeypatch)
    cli.ok("init", "--registry", "personal-assistant")  # the store exists; only "memories" is in it
    return cli


def collections(url: str) -> list[str]:
    with open_backend(url) as backend:
        return [name for name, _ in backend.collections()]


@pytest.mark.parametrize("args", READS, ids=lambda a: " ".join(a))
def test_a_read_of_a_missing_collection_is_not_found_and_creates_nothing(fresh: Cli, args):
    err = fresh.fail("--collection", "elsewhere", *args)
    assert err["code"] == "not_found"
    assert "no collection 'elsewhere'" in err["message"] and "collections: memories" in err["message"]
    assert collections(fresh.url) == ["memories"]


@pytest.mark.parametrize("args", [*READS, ("collections",), ("audit", "export", "-o", "bundle.json")])
def test_a_read_of_a_missing_store_file_is_not_found_and_creates_no_file(cli: Cli, tmp_path, args):
    path = tmp_path / "never.db"
    args = tuple(str(tmp_path / a) if a == "bundle.json" else a for a in args)
    err = cli.fail(*args, store=f"sqlite:///{path}")
    assert err["code"] == "not_found"
    assert err["message"] == (
        f"no store at sqlite:///{path} (no such file): nothing to read; "
        "`recall-admin init` (or demo, remember, import) creates it"
    )
    assert not os.path.exists(path) and not os.path.exists(tmp_path / "bundle.json")


@pytest.mark.parametrize(
    "args",
    [
        ("init",),
        ("remember", "user", "note", "I like tea"),
        ("registry", "load", "personal-assistant", "--apply"),
        ("demo",),
    ],
)
def test_the_commands_that_create_do(fresh: Cli, args):
    fresh.ok("--collection", "elsewhere", *args)
    assert {"elsewhere", "memories"} <= set(collections(fresh.url))  # the demo adds small ones too


def test_imports_create(fresh: Cli, tmp_path):
    path = tmp_path / "events.jsonl"
    fresh.ok("export", "-o", str(path))
    bundle = tmp_path / "bundle.json"
    fresh.ok("audit", "export", "-o", str(bundle))
    fresh.ok("--collection", "one", "import", str(path))
    fresh.ok("--collection", "two", "audit", "import", str(bundle))
    assert collections(fresh.url) == ["memories", "one", "two"]
