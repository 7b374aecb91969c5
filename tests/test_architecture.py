"""The arrows point one way (tui -> recall_admin -> recall_engine) and the pure core stays pure."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PURE = [
    "instants", "text", "values", "records", "registry", "timeline", "fold", "history", "preview",
    "ranking", "when", "vocabulary", "embed", "errors",
]
IMPURE = {"sqlite3", "psycopg", "sqlalchemy", "sqlmodel", "pgvector", "textual", "typer", "rich", "time",
          "datetime.now", "os", "platformdirs", "subprocess", "socket"}


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                pkg = path.relative_to(ROOT).parts[0]
                out.add(f"{pkg}.{node.module or ''}".rstrip("."))
            elif node.module:
                out.add(node.module)
    return out


def files(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("package, forbidden", [("recall_engine", ("recall_admin", "tui")), ("recall_admin", ("tui",))])
def test_arrows_point_one_way(package, forbidden):
    bad = {
        (str(f.relative_to(ROOT)), name)
        for f in files(package)
        for name in imports_of(f)
        if name.split(".")[0] in forbidden
    }
    assert not bad


@pytest.mark.parametrize("module", PURE)
def test_pure_core_has_no_clock_io_or_ui(module):
    names = imports_of(ROOT / "recall_engine" / f"{module}.py")
    assert not {n for n in names if n.split(".")[0] in IMPURE or n == "recall_engine.clock"}
    source = (ROOT / "recall_engine" / f"{module}.py").read_text(encoding="utf-8")
    assert "time_ns(" not in source and ".now(" not in source


def test_the_tui_reaches_the_engine_only_through_services():
    # the console may read engine types, but never the storage layer directly
    bad = {
        (str(f.relative_to(ROOT)), name)
        for f in files("tui")
        for name in imports_of(f)
        if name.startswith("recall_engine.storage") or name.split(".")[0] in ("sqlite3", "psycopg", "sqlalchemy")
    }
    assert not bad
