"""Files written whole or not at all: plans, exports, audit bundles.

The text goes to a temporary file beside the target, which is renamed over it only once
everything was written; a full disk, a kill or an error leaves the target as it was (no
0-byte or truncated file) and removes the temporary one. The failure is a clear
``StorageError`` naming the file, never an ``internal_error``.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from typing import IO, TypeVar

from recall_engine.errors import InvalidInput, StorageError

T = TypeVar("T")


def write_whole(path: str | os.PathLike[str], write: Callable[[IO[str]], T], what: str = "write") -> T:
    """Call ``write`` with a text file; the result lands at ``path`` only if it returns."""
    shown = os.fspath(path)
    target = os.path.abspath(shown)
    folder = os.path.dirname(target)
    if os.path.isdir(target):
        raise InvalidInput(f"cannot {what} {shown!r}: it is a folder; give a file name")
    if not os.path.isdir(folder):
        raise InvalidInput(f"cannot {what} {shown!r}: the folder {folder!r} does not exist")
    tmp = ""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".tmp", dir=folder)
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
