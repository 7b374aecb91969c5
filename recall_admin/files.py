"""Files written whole or not at all: plans, exports, audit bundles.

The text goes to a temporary file beside the target, which is renamed over it only once
everything was written; a full disk, a kill or an error leaves the target as it was (no
0-byte or truncated file) and removes the temporary one. The failure is a clear
``StorageError`` naming the file, never an ``internal_error``.

A symlink is written through (the file it names is replaced, with its mode; the link
stays), and a target that is not a file (``/dev/null``, ``/dev/stdout``, a FIFO) is
written as a stream: a rename over it would replace the device itself when run as root.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable
from typing import IO, TypeVar

from recall_engine.errors import InvalidInput, StorageError

T = TypeVar("T")


def write_whole(path: str | os.PathLike[str], write: Callable[[IO[str]], T], what: str = "write") -> T:
    """Call ``write`` with a text file; the result lands at ``path`` only if it returns."""
    shown = os.fspath(path)
    if os.path.isdir(shown):
        raise InvalidInput(f"cannot {what} {shown!r}: it is a folder; give a file name")
    try:
        existing = os.stat(shown)  # through a symlink
    except (FileNotFoundError, NotADirectoryError):
        existing = None
    except OSError as exc:
        raise StorageError(f"cannot {what} {shown!r}: {exc.strerror or exc}; nothing was written") from None
    if existing is not None and not stat.S_ISREG(existing.st_mode):
        return _write_stream(shown, write, what)
    target = os.path.realpath(shown) if existing is not None else os.path.abspath(shown)
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):
        problem = "is a file, not a folder" if os.path.exists(folder) else "does not exist"
        raise InvalidInput(f"cannot {what} {shown!r}: the folder {folder!r} {problem}")
    tmp = ""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".tmp", dir=folder)
        if existing is not None:  # a replaced file keeps who may read it
            os.chmod(tmp, stat.S_IMODE(existing.st_mode))
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            result = write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
        tmp = ""
        return result
    except OSError as exc:
        raise StorageError(f"cannot {what} {shown!r}: {exc.strerror or exc}; nothing was written") from None
    finally:
        if tmp:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _write_stream(shown: str, write: Callable[[IO[str]], T], what: str) -> T:
    """A device or a pipe, written as it is opened: there is no file to replace whole."""
    try:
        with open(shown, "w", encoding="utf-8", newline="\n") as f:
            return write(f)
    except BrokenPipeError:  # the reader went away (`-o /dev/stdout | head`): the CLI stops quietly
        raise
    except OSError as exc:
        raise StorageError(f"cannot {what} {shown!r}: {exc.strerror or exc}") from None
