"""The arrows point one way (tui -> recall_admin -> recall_engine) and the pure core stays pure."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PURE = [
    "instants",
    "text",
    "values",
    "records",
    "registry",
    "timeline",
    "fold",
    "history",
    "preview",
    "ranking",
    "when",
    "vocabulary",
    "embed",
    "errors",
]
IMPURE = {
    "sqlite3",
    "psycopg",
    "sqlalchemy",
    "sqlmodel",
    "pgvector",
    "textual",
    "typer",
    "rich",
    "time",
    "datetime.now",
    "os",
    "platformdirs",
    "subprocess",
    "socket",
}


def imports_of(path: Path, *, names: bool = False) -> set[str]:
    """Absolute names of the modules a file imports (relative imports resolved); with
    ``names``, also ``module.name`` for each name taken by ``from module import name``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = list(path.relative_to(ROOT).with_suffix("").parts[:-1])
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            out.add(module)
            if names:
                out.update(f"{module}.{a.name}" for a in node.names)
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


# --- recall_admin: services below, the CLI package above (docs/architecture.md) ---------------

SERVICES = sorted(f for f in files("recall_admin") if "cli" not in f.relative_to(ROOT / "recall_admin").parts)


def test_the_cli_is_a_package_over_services():
    assert (ROOT / "recall_admin" / "cli" / "__init__.py").is_file()
    assert not list((ROOT / "recall_admin").glob("cli_*.py"))
    assert {f.name for f in SERVICES} >= {"governance.py", "conflicts.py", "vocab.py", "notes.py", "views.py"}


@pytest.mark.parametrize("path", SERVICES, ids=lambda p: p.name)
def test_services_import_neither_typer_nor_rich_nor_the_cli(path):
    bad = {
        n
        for n in imports_of(path)
        if n.split(".")[0] in ("typer", "rich", "click", "textual") or n.startswith("recall_admin.cli")
    }
    assert not bad


@pytest.mark.parametrize("path", SERVICES, ids=lambda p: p.name)
def test_services_use_only_the_engines_public_names(path):
    private = {
        n
        for n in imports_of(path, names=True)
        if n.startswith("recall_engine.") and n.rsplit(".", 1)[1].startswith("_")
    }
    assert not private
    # nor reach into an engine object's privates (memory._name, ...)
    source = path.read_text(encoding="utf-8")
    assert not [m for m in ("memory._", "m._", "tl._", "store._", "backend._") if m in source]


def test_command_modules_do_not_import_the_root_command():
    # the root imports every command module to register it: the other way would be a cycle
    bad = {
        (f.name, n)
        for f in files("recall_admin/cli/commands")
        for n in imports_of(f)
        if n == "recall_admin.cli.root" or n == "recall_admin.cli"
    }
    assert not bad


# --- no import cycles (storage backends and their shared module included) -------------------


def runtime_imports(path: Path, known: set[str]) -> set[str]:
    """The modules of ``known`` a file imports when it runs, at the top or in a function
    (names under ``if TYPE_CHECKING:`` are for the type checker only)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = list(path.relative_to(ROOT).with_suffix("").parts[:-1])
    out: set[str] = set()
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            todo.extend(node.orelse)
            continue
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - (node.level - 1)] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            out.add(module)
            out.update(f"{module}.{a.name}" for a in node.names)
        todo.extend(ast.iter_child_nodes(node))
    return out & known


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_no_module_imports_itself_through_others():
    paths = {module_name(f): f for package in ("recall_engine", "recall_admin") for f in files(package)}
    graph = {m: runtime_imports(f, set(paths)) - {m} for m, f in paths.items()}
    cycles = []
    for start in sorted(graph):  # a cycle through start: start reaches itself
        seen, todo = set(), list(graph[start])
        while todo:
            m = todo.pop()
            if m == start:
                cycles.append(start)
                break
            if m not in seen and not start.startswith(m + "."):  # a package is not its submodule's import
                seen.add(m)
                todo.extend(graph[m])
    assert cycles == []
