"""What the plan tray holds: a recipe that builds a plan from a Stager. No Textual here.

The tray keeps the recipe rather than only the plan so that a stale plan can be
planned again against the store as it is now: the recipe calls the same service
(``Stager.merge``, ``conflicts.confirm_plan``...) a second time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from recall_admin.governance import Stager
from recall_admin.plans import Plan


@dataclass(frozen=True)
class Recipe:
    title: str  # what the operator asked for, e.g. "merge editor_preference into prefers_editor"
    build: Callable[[Stager], Plan]
    source: str = ""  # the view that staged it
