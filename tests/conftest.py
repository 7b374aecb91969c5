"""Shared fixtures: a real store on every backend.

``backend_url`` is parametrized over SQLite (a file in a temporary folder) and
PostgreSQL (a real server started once per test session from the
pip-installed pgserver, see tests/pg_server.py). Tests that take ``store`` or
``backend`` run on both; nothing is mocked and nothing is skipped.
"""

from __future__ import annotations

import itertools
import os

import pytest

_counter = itertools.count()


@pytest.fixture(scope="session", autouse=True)
def _own_cache_folder(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The suite's caches (the model's built graph and vectors, the help pages) live in a folder of
    its own: the user's are neither read nor written, and what another process on the machine keeps in
    them (another checkout's build of the model) never reaches a test. Subprocesses inherit it."""
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    os.environ.pop("RECALL_MODEL_CACHE", None)


@pytest.fixture(scope="session")
def pg_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    from tests.pg_server import start_server

    return start_server()


@pytest.fixture(params=["sqlite", "postgres"])
def backend_url(request: pytest.FixtureRequest, tmp_path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'recall.db'}"
    base = request.getfixturevalue("pg_url")
    from tests.pg_server import fresh_database

    return fresh_database(base, f"t{os.getpid()}_{next(_counter)}")


@pytest.fixture
def backend(backend_url: str):
    from recall_engine.storage import open_backend

    b = open_backend(backend_url)
    yield b
    b.close()


@pytest.fixture
def store(backend):
    return backend.store("memories")


@pytest.fixture
def sqlite_url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'recall.db'}"
