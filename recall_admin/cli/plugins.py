"""The commands other packages add (the entry-point group ``recall_admin.commands``), found
without importing ``importlib.metadata``: that import alone costs the help listing more than
reading every installed package's ``entry_points.txt`` (docs/benchmarks.md, "Start-up").

The quick scan reads the folders on ``sys.path`` as ``importlib.metadata`` does for an
ordinary install (``*.dist-info`` and ``*.egg-info`` folders, the first of each name wins,
folders and files in the order the system lists them) and answers the same entry points in
the same order (tests/cli/test_plugins.py holds the two together). Anything it is not sure
of (a zip or an egg on the path, another finder of distributions, a line it cannot read)
makes it answer None, and ``importlib.metadata`` decides.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Callable
from importlib import import_module
from typing import Any

# EntryPoint.pattern of importlib.metadata: module, optional attribute path, optional extras
_VALUE = re.compile(r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$")


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower().replace("-", "_")


def _in_group(text: str, group: str) -> list[tuple[str, str]] | None:
    """(name, value) of ``group`` in an entry_points.txt, read as importlib.metadata reads it."""
    out: list[tuple[str, str]] = []
    section = None
    for line in map(str.strip, text.splitlines()):
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line.strip("[]")
            continue
        if section is None:
            continue
        if "=" not in line:
            return None  # importlib.metadata would refuse this file: let it say so
        name, value = line.split("=", 1)
        if section == group:
            if not _VALUE.match(value.strip()):
                return None
            out.append((name.strip(), value.strip()))
    return out


def scan(group: str) -> list[tuple[str, str]] | None:
    """(name, value) of every entry point of ``group``, or None when unsure."""
    from importlib.machinery import PathFinder

    if any(hasattr(f, "find_distributions") and f is not PathFinder for f in sys.meta_path):
        return None
    seen: set[str] = set()
    found: list[tuple[str, str]] = []
    for entry in sys.path:
        root = entry or "."
        if os.path.basename(root).lower().endswith(".egg"):
            return None
        try:
            children = os.listdir(root)
        except NotADirectoryError:
            return None  # a zip on the path
        except OSError:
            continue
        # importlib.metadata lists a folder's distributions grouped by name, in first-seen order
        infos: dict[str, list[str]] = {}
        for child in children:
            low = child.lower()
            if low.endswith((".dist-info", ".egg-info")):
                infos.setdefault(_normalized(low.rpartition(".")[0].partition("-")[0]), []).append(child)
        for name, dists in infos.items():
            for child in dists:
                if name in seen:
                    continue
                seen.add(name)
                try:
                    with open(os.path.join(root, child, "entry_points.txt"), encoding="utf-8") as f:
                        text = f.read()
                except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
                    continue  # no entry points, as importlib.metadata reads it
                except (OSError, ValueError):  # unreadable, or not UTF-8
                    return None
                if group not in text:
                    continue
                pairs = _in_group(text, group)
                if pairs is None:
                    return None
                found.extend(pairs)
    return found


def load(value: str) -> Any:
    """The object an entry point names (``EntryPoint.load``)."""
    match = _VALUE.match(value)
    assert match is not None, "scan() keeps only values that match"
    module = import_module(match.group("module"))
    attrs = filter(None, (match.group("attr") or "").split("."))
    return functools.reduce(getattr, attrs, module)


def plugins(group: str) -> list[Callable[..., Any]]:
    """What each entry point of ``group`` names, loaded, in importlib.metadata's order."""
    found = scan(group)
    if found is None:
        from importlib.metadata import entry_points

        return [ep.load() for ep in entry_points(group=group)]
    return [load(value) for _name, value in found]
