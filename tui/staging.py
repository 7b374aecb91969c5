"""What the plan tray holds: a recipe that builds a plan from a Stager. No Textual here.

The tray keeps the recipe rather than only the plan so that a stale plan can be
planned again against the store as it is now: the recipe calls the same service
(``Stager.merge``, ``conflicts.confirm_plan``...) a second time.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from recall_admin.governance import Stager
from recall_admin.plans import Plan, read_plan


@dataclass(frozen=True)
class Recipe:
    title: str  # what the operator asked for, e.g. "merge editor_preference into prefers_editor"
    build: Callable[[Stager], Plan]
    source: str = ""  # the view that staged it
    replannable: bool = True  # False for a plan read from a file: it is applied as written or not at all


def typed_path(text: str) -> str:
    """A path typed in a form. No shell reads it, so ``~`` is expanded here, as a shell would for the CLI."""
    return os.path.expanduser(text.strip())


def registry_load(name_or_path: str, reason: str = "") -> Recipe:
    """Declaring what a starter or a registry file changes, with the service ``registry load`` calls (its
    details list every predicate of the file: new, changed field by field, or unchanged)."""
    from recall_admin.registry_sync import load_plan
    from recall_engine.registry_files import load_starter

    def build(st: Stager) -> Plan:
        plan, _notes = load_plan(st, load_starter(typed_path(name_or_path)), reason=reason)
        return plan

    return Recipe(f"load registry {name_or_path}", build, "registry")


def plan_file(path: str) -> Recipe:
    """A plan saved with ``--plan-out`` (or the tray's Save): previewed, then applied exactly as written."""
    return Recipe(f"plan file {path}", lambda st: read_plan(typed_path(path)), "file", replannable=False)
