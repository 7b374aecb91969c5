"""Real servers for the agent tests (helpers; the fixture is in conftest.py): `recall-admin serve` and `recall-admin mcp` as processes.

Servers run the worktree's code (PYTHONPATH is passed on), listen on a free port of
127.0.0.1, and are ready when ``GET /healthz`` answers (polled, with a deadline).
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from recall_admin.cli import app

READY_SECONDS = 60.0


def recall_admin_command() -> str:
    exe = shutil.which("recall-admin")
    assert exe, "the recall-admin script is not installed"
    return exe


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cli_ok(store: str, *args: str) -> Any:
    r = CliRunner().invoke(app, ["--store", store, "--json", *args])
    assert r.exit_code == 0, (r.exit_code, r.stdout, r.stderr)
    return json.loads(r.stdout)["data"]


def new_key(store: str, namespace: str, *extra: str) -> str:
    return cli_ok(store, "key", "create", "--namespace", namespace, *extra)["key"]


class Served:
    """A running `recall-admin serve` process and a small JSON client for it."""

    def __init__(self, store: str, *flags: str, log_dir: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log_dir / f"serve-{self.port}.log"
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [recall_admin_command(), "--store", store, "serve", "--port", str(self.port), *flags],
                env=child_env(),
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self.wait_ready()

    def wait_ready(self) -> None:
        deadline = time.monotonic() + READY_SECONDS
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"serve exited with {self.proc.returncode}: {self.log.read_text()}")
            try:
                status, doc = self.request("GET", "/healthz")
                if status == 200 and doc["ok"]:
                    return
            except OSError:
                pass
            time.sleep(0.05)  # between polls of /healthz, bounded by the deadline
        raise AssertionError(f"serve was not ready within {READY_SECONDS} s: {self.log.read_text()}")

    def request(
        self, method: str, path: str, body: Any = None, key: str | None = None, raw: bytes | None = None
    ) -> tuple[int, Any]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            headers = {"Content-Type": "application/json"}
            if key is not None:
                headers["Authorization"] = f"Bearer {key}"
            data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            return resp.status, json.loads(resp.read())
        finally:
            conn.close()

    def call(self, key: str | None, tool: str, **args: Any) -> tuple[int, Any]:
        return self.request("POST", f"/v1/{tool}", args, key)

    def ok(self, key: str, tool: str, **args: Any) -> Any:
        status, doc = self.call(key, tool, **args)
        assert status == 200 and doc["ok"], (status, doc)
        return doc["data"]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def serve_factory_impl(tmp_path: Path) -> Iterator[Any]:
    started: list[Served] = []

    def start(store: str, *flags: str) -> Served:
        s = Served(store, *flags, log_dir=tmp_path)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()
