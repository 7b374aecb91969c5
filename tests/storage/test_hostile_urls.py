"""Store URLs a careless user writes: a query SQLite would never read is refused, not dropped."""

from __future__ import annotations

import pytest

from recall_engine.errors import InvalidInput
from recall_engine.storage.urls import parse_store_url
from tests.cli.conftest import isolated_cli


@pytest.mark.parametrize("query", ["?mode=ro", "?cache=shared&mode=ro", "?"])
def test_a_query_on_a_sqlite_url_is_refused(tmp_path, query):
    url = f"sqlite:///{tmp_path / 'recall.db'}{query}"
    with pytest.raises(InvalidInput) as err:
        parse_store_url(url)
    assert err.value.message == (
        f"store URL {url!r} has a query (?...), which a SQLite store URL does not take: for a read-only "
        "store give --read-only; a file name with '?' in it goes as a plain path"
    )


def test_mode_ro_never_opens_the_store_writable(tmp_path, monkeypatch):
    path = tmp_path / "recall.db"
    cli = isolated_cli(f"sqlite:///{path}", tmp_path, monkeypatch)
    cli.ok("init", "--registry", "coding")
    err = cli.fail("remember", "carol", "prefers_editor", "vim", store=f"sqlite:///{path}?mode=ro")
    assert err["code"] == "invalid_input" and "--read-only" in err["message"]
    assert cli.ok("recall", "carol")["beliefs"] == []  # nothing was written


def test_a_plain_path_with_a_question_mark_is_still_a_file(tmp_path):
    assert parse_store_url(str(tmp_path / "what?.db")).target == str(tmp_path / "what?.db")
