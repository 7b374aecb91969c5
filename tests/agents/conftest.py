"""Fixtures of the agent tests; the helpers are in helpers.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .helpers import serve_factory_impl


@pytest.fixture
def serve_factory(tmp_path: Path) -> Iterator[Any]:
    """Start `recall-admin serve` processes; every one is stopped after the test."""
    yield from serve_factory_impl(tmp_path)
