"""The agent commands' own errors: clear messages, exit 1, nothing written."""

from __future__ import annotations

import json
import os

from typer.testing import CliRunner

from recall_admin.cli import app


def run(*args: str) -> tuple[int, dict]:
    r = CliRunner().invoke(app, ["--json", *args])
    return r.exit_code, json.loads(r.stdout)


def test_serve_refuses_limits_that_are_not_positive(tmp_path):
    store = f"sqlite:///{tmp_path / 'r.db'}"
    for flag in ("--rate", "--max-body", "--max-value"):
        code, doc = run("--store", store, "serve", flag, "0")
        assert code == 1
        assert doc["error"] == {
            "code": "invalid_input",
            "message": "--max-body, --max-value and --rate must be positive",
        }
    assert not os.path.exists(tmp_path / "r.db")  # refused before the store was opened


def test_serve_refuses_a_group_window_out_of_range(tmp_path):
    store = f"sqlite:///{tmp_path / 'r.db'}"
    for window, shown in (("-1", "-1"), ("1001", "1001"), ("nan", "nan")):
        code, doc = run("--store", store, "serve", "--group-window", window)
        assert code == 1
        assert doc["error"] == {
            "code": "invalid_input",
            "message": f"--group-window takes 0 to 1000 milliseconds, got {shown}",
        }
    assert not os.path.exists(tmp_path / "r.db")


def test_a_read_only_mcp_server_needs_an_existing_store(tmp_path):
    code, doc = run("--store", f"sqlite:///{tmp_path / 'missing.db'}", "mcp")
    assert code == 1 and doc["error"]["code"] == "not_found"  # reads never create a store
    assert "(no such file): nothing to read" in doc["error"]["message"]
    assert not os.path.exists(tmp_path / "missing.db")


def test_a_read_only_mcp_server_needs_an_existing_collection(tmp_path):
    store = f"sqlite:///{tmp_path / 'r.db'}"
    assert run("--store", store, "init")[0] == 0
    code, doc = run("--store", store, "mcp", "--collection", "nowhere")
    assert code == 1 and doc["error"]["code"] == "not_found" and "nowhere" in doc["error"]["message"]
