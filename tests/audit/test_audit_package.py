"""The audit package's shape: no storage, no clock, one module per job, each format behind BundleFormat."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from recall_engine.audit.bundle_format import BundleFormat
from recall_engine.audit.load import FORMATS

AUDIT = Path(__file__).resolve().parents[2] / "recall_engine" / "audit"


@pytest.mark.parametrize("path", sorted(AUDIT.glob("*.py")), ids=lambda p: p.name)
def test_audit_modules_import_neither_storage_nor_the_outside_world(path):
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            names.add("." * node.level + (node.module or ""))
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    bad = {
        n for n in names if "storage" in n or "clock" in n or n.split(".")[0] in ("os", "time", "sqlite3", "psycopg")
    }
    assert not bad


def test_every_format_provides_every_method_of_the_protocol():
    wanted = {n for n, v in vars(BundleFormat).items() if inspect.isfunction(v)}
    assert wanted >= {"check_versions", "digests", "check", "checksum", "replay_events", "import_events"}
    for version, fmt in FORMATS.items():
        assert fmt.version == version
        missing = {
            n
            for n in wanted
            if not callable(getattr(type(fmt), n, None)) or getattr(type(fmt), n) is getattr(BundleFormat, n)
        }
        assert not missing, (version, missing)
