"""`recall-admin ... --help` answered from the last time Typer drew that same help, without
importing Typer, Click or Rich (docs/benchmarks.md, "Start-up").

Drawing a help costs about three times what the interpreter costs to start, almost all of it
in importing Typer, Click and Rich and building the commands. The text it draws depends only
on what it read, so the first time a help is drawn it is drawn by Typer as always, and while
it is drawn everything it reads is noted:

- the command line, the interpreter (its path, version and ``sys.path``), and the terminal
  (which of stdin, stdout and stderr is a terminal, the size of each, and stdout's encoding);
- every environment variable that is looked up (a digest of its value, never the value: a
  store URL may hold a password; or that it is unset): colour and width settings (NO_COLOR,
  FORCE_COLOR, TERM, COLUMNS, ...), the language, Typer's own, the root's options;
- every file it depends on: each module loaded (the CLI, the plugins, Typer, Click, Rich and
  the standard library), each file opened and each folder listed (the plugins' entry points
  and the folders on ``sys.path``), by modification time, size and inode.

The drawn text is kept with those notes in the user's cache folder (readable by the user
alone), written to a new file and renamed into place, so a reader finds a whole entry or none. The next time the same
command line asks for its help, the text is written again only if every note still holds;
anything changed, missing or unreadable means Typer draws it again. A drawing that exits
with an error, writes to stderr, or reads the whole environment is not kept.
tests/cli/test_help_cache.py holds the kept text to Typer's, byte for byte.
"""

from __future__ import annotations

import builtins
import io
import os
import sys
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any

FORMAT = 1  # bumped when an entry's layout changes
LIMIT = 256  # entries kept; the oldest go first
_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_")


def _is_help_request(args: list[str]) -> bool:
    """A few command words and a last ``--help``: nothing else on the line (no option could
    change what is drawn, and no value could be a secret written to the cache)."""
    if len(args) > 4 or not args or args[-1] != "--help":
        return False
    return all(a and a[0].isalpha() and set(a) <= _WORD_CHARS for a in args[:-1])


def _folder() -> str:
    if sys.platform.startswith("linux"):  # platformdirs' rule, without its import
        base = os.environ.get("XDG_CACHE_HOME", "")
        if not base.strip():
            base = os.path.expanduser("~/.cache")
        return os.path.join(base, "recall-admin", "help")
    from platformdirs import user_cache_dir

    return os.path.join(user_cache_dir("recall-admin"), "help")


def _terminal() -> list[Any]:
    out: list[Any] = []
    for fd in (0, 1, 2):
        try:
            size: Any = list(os.get_terminal_size(fd))  # a list, as it reads back from JSON
        except (OSError, ValueError):
            size = None
        try:
            tty = os.isatty(fd)
        except OSError:
            tty = None
        out.append([tty, size])
    return out


def _situation(argv: list[str]) -> list[Any]:
    """What the drawing depends on that is known before it runs."""
    out = sys.stdout
    return [
        FORMAT,
        os.path.basename(argv[0]),
        argv[1:],
        sys.executable,
        sys.version,
        sys.path,
        _terminal(),
        [getattr(out, "encoding", None), getattr(out, "errors", None), getattr(out, "line_buffering", None)],
    ]


def _stat(path: str) -> list[int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return [st.st_mtime_ns, st.st_size, st.st_ino]


def _digest(value: str | None) -> str | None:
    """What an entry keeps of an environment variable's value: enough to tell a change."""
    if value is None:
        return None
    try:
        from _blake2 import blake2b  # CPython's own, without loading OpenSSL as hashlib does
    except ImportError:
        from hashlib import blake2b
    return blake2b(value.encode("utf-8", "surrogateescape"), digest_size=20).hexdigest()


def _entry_path(situation: list[Any]) -> str:
    import json

    # the name only spreads entries out: the whole situation is kept in the entry and compared
    name = f"{zlib.crc32(json.dumps(situation).encode('utf-8', 'surrogatepass')):08x}.json"
    return os.path.join(_folder(), name)


def _usable() -> bool:
    out = sys.stdout
    return os.name == "posix" and out is not None and sys.stderr is not None and hasattr(out, "buffer")


def answer(argv: list[str]) -> int | None:
    """Write the kept help for this command line if every note still holds, and give the
    exit status; None when it must be drawn."""
    if not _usable() or not _is_help_request(argv[1:]):
        return None
    import json  # here: a command that is not a help request need not load it

    try:
        situation = _situation(argv)
        with open(_entry_path(situation), encoding="utf-8") as f:
            entry = json.load(f)
        if entry["situation"] != situation:
            return None
        env = os.environ
        if any(_digest(env.get(name)) != seen for name, seen in entry["env"].items()):
            return None
        if any(_stat(path) != seen for path, seen in entry["files"].items()):
            return None
        data = entry["out"].encode("utf-8", "surrogateescape")
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    try:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    except BrokenPipeError:  # the reader went away (`| head`): quietly, as when Typer draws it
        from .output import silence_stdout

        silence_stdout()
        return 1
    return 0


class _Recorder(io.BufferedIOBase):
    """A stream's buffer, keeping a copy of the bytes that reach it."""

    def __init__(self, buffer: Any) -> None:
        super().__init__()
        self._buffer = buffer
        self.seen = bytearray()

    def write(self, b: Any) -> int:
        n = self._buffer.write(b)
        self.seen += bytes(b)
        return n

    def flush(self) -> None:
        self._buffer.flush()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return bool(self._buffer.isatty())

    def fileno(self) -> int:
        return int(self._buffer.fileno())

    def close(self) -> None:  # the real stream stays open
        self.flush()


def _tee(stream: Any) -> tuple[Any, _Recorder]:
    """The same text stream over a buffer that keeps a copy."""
    recorder = _Recorder(stream.buffer)
    text = io.TextIOWrapper(
        recorder,  # type: ignore[type-var]  # a buffered writer, as io.TextIOWrapper takes
        encoding=stream.encoding,
        errors=stream.errors,
        newline="\n",
        line_buffering=stream.line_buffering,
        write_through=getattr(stream, "write_through", False),
    )
    return text, recorder


class _Notes:
    """What a drawing looked up in the environment and which files and folders it read."""

    def __init__(self) -> None:
        self.env: dict[str, str | None] = {}
        self.paths: set[str] = set()
        self.whole_env = False


@contextmanager
def _noting() -> Iterator[_Notes]:
    notes = _Notes()
    environ_cls: Any = type(os.environ)
    getitem, iterate = environ_cls.__getitem__, environ_cls.__iter__
    opened, io_open, listdir, scandir = builtins.open, io.open, os.listdir, os.scandir

    def noted_getitem(self: Any, key: str) -> str:
        try:
            value = getitem(self, key)
        except KeyError:
            if self is os.environ:
                notes.env.setdefault(key, None)
            raise
        if self is os.environ:
            notes.env.setdefault(key, value)
        return value

    def noted_iter(self: Any) -> Iterator[str]:
        if self is os.environ:
            notes.whole_env = True
        return iterate(self)

    def path_of(target: Any) -> None:
        if isinstance(target, (str, bytes, os.PathLike)):
            notes.paths.add(os.path.abspath(os.fsdecode(target)))

    def noted_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        path_of(file)
        return opened(file, *args, **kwargs)

    def noted_listdir(path: Any = ".") -> Any:
        path_of(path)
        return listdir(path)

    def noted_scandir(path: Any = ".") -> Any:
        path_of(path)
        return scandir(path)

    environ_cls.__getitem__, environ_cls.__iter__ = noted_getitem, noted_iter
    builtins.open = io.open = noted_open
    os.listdir, os.scandir = noted_listdir, noted_scandir
    try:
        yield notes
    finally:
        environ_cls.__getitem__, environ_cls.__iter__ = getitem, iterate
        builtins.open, io.open, os.listdir, os.scandir = opened, io_open, listdir, scandir


def draw(argv: list[str], run: Callable[[], Any]) -> None:
    """Run the CLI (``run`` exits as it always does); a help it draws is kept for next time."""
    if not _usable() or not _is_help_request(argv[1:]):
        run()
        return
    situation = _situation(argv)
    stdout, stderr = sys.stdout, sys.stderr
    stdout.flush()
    stderr.flush()
    (out, kept), (err, errs) = _tee(stdout), _tee(stderr)
    code: Any = 0
    with _noting() as notes:
        sys.stdout, sys.stderr = out, err
        try:
            run()
        except SystemExit as e:
            code = e.code
        finally:
            sys.stdout, sys.stderr = stdout, stderr
            for tee in (out, err):
                tee.flush()
                tee.detach()  # the real streams keep their buffers
            stdout.buffer.flush()
    if code in (0, None) and not errs.seen and not notes.whole_env:
        _keep(situation, notes, bytes(kept.seen))
    if code not in (0, None):
        raise SystemExit(code)


def _keep(situation: list[Any], notes: _Notes, data: bytes) -> None:
    files = {p: _stat(p) for p in notes.paths}
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if isinstance(path, str):
            files[os.path.abspath(path)] = _stat(path)
    for folder in sys.path:
        root = os.path.abspath(folder or ".")
        files[root] = _stat(root)
    out = data.decode("utf-8", "surrogateescape")  # JSON holds text; any bytes survive the round trip
    env = {
        name: _digest(value) for name, value in notes.env.items()
    }  # never a value itself: a store URL may hold a password
    entry = {"situation": situation, "env": env, "files": files, "out": out}
    import json

    try:
        target = _entry_path(situation)
        folder = os.path.dirname(target)
        os.makedirs(folder, mode=0o700, exist_ok=True)
        temp = f"{target}.{os.getpid()}.tmp"
        try:
            with open(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as f:
                json.dump(entry, f)
            os.replace(temp, target)
        finally:
            if os.path.exists(temp):
                os.remove(temp)
        _prune(folder)
    except (OSError, ValueError, TypeError):
        pass  # a cache that cannot be written is only slower


def _prune(folder: str) -> None:
    names = [n for n in os.listdir(folder) if n.endswith(".json")]
    if len(names) <= LIMIT:
        return
    paths = sorted((os.path.join(folder, n) for n in names), key=lambda p: _stat(p) or [0])
    for path in paths[: len(paths) - LIMIT]:
        with suppress(OSError):
            os.remove(path)
