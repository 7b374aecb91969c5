"""The review queues in one place, for the CLI and the TUI alike.

The services live in ``conflicts`` (one value held under two predicates),
``vocab`` (the open-vocabulary inbox and near-duplicate suggestions), ``notes``
(listing, clusters, promotion) and ``review`` (the operator's decisions, kept as
``review_decision`` events). This module only re-exports them; see
docs/review-queues.md.
"""

from __future__ import annotations

from .conflicts import (
    Conflict,
    ConflictGroup,
    Listing,
    confirm_plan,
    conflict_id,
    dismiss,
    dismissed_conflicts,
    exclude_plan,
    find_conflicts,
    group_conflicts,
    group_id,
    lookup,
)
from .notes import NoteCluster, NoteValue, find_note_cluster, list_notes, note_clusters, promote_plan
from .review import DISMISS, NEVER_MERGE, Decision, decisions
from .vocab import (
    Cluster,
    InboxEntry,
    find_cluster,
    inbox,
    merge_plan,
    never,
    never_pairs,
    pair_score,
    resolve_pairs,
    suggest,
)

__all__ = [
    "Cluster", "Conflict", "ConflictGroup", "DISMISS", "Decision", "InboxEntry", "Listing", "NEVER_MERGE",
    "NoteCluster", "NoteValue", "confirm_plan", "conflict_id", "decisions", "dismiss", "dismissed_conflicts",
    "exclude_plan", "find_cluster", "find_conflicts", "find_note_cluster", "group_conflicts", "group_id", "inbox",
    "list_notes", "lookup", "merge_plan", "never", "never_pairs", "note_clusters", "pair_score", "promote_plan",
    "resolve_pairs", "suggest",
]
