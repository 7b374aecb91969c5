"""The notes queue: statements filed as ``note`` because no predicate fitted.

- ``list_notes``: the notes held now (promoted notes read under their predicate and
  are no longer listed), optionally of one subject and matching a regular expression
  (case-insensitive), most recent first.
- ``note_clusters``: notes that look like one kind of fact. Each note is reduced to
  its *frame words*: words other notes share (the words a value is not made of),
  stop words left out. Notes whose frame words are close (cosine of their lexical
  embeddings) are joined. For each cluster: the words it is about, a suggested
  predicate (an existing one whose name and description are closest to those words,
  or a new name), and for each note the value it would be promoted with: the words
  of the note that are not the cluster's frame, in the note's own spelling. A note
  whose value cannot be found is listed with the reason and stays a note.
- ``promote_plan``: one promote plan for a chosen predicate (existing, or defined in
  the same plan), from a cluster's per-note values, explicit ``ID=VALUE`` pairs or a
  regex; ``Stager.promote`` gives the per-note parse result.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from recall_engine.embed import embed
from recall_engine.errors import InvalidInput, NotFound, PlanError
from recall_engine.fold import fold
from recall_engine.instants import format_rfc3339
from recall_engine.memory import Memory
from recall_engine.records import Belief, Event
from recall_engine.registry import Definition
from recall_engine.text import NOTE, normalize_subject, simple_lower
from recall_engine.vocabulary import stem

from .governance import Stager
from .patterns import Pattern
from .plans import Plan

MAX_CLUSTER_NOTES = 5000  # most recent notes clustered; older ones are listed but not clustered
CLUSTER_SIMILARITY = 0.5
PREDICATE_MIN_SCORE = 0.25
FRAME_SHARE = 0.75  # a word is frame when it is in at least this share of the notes the commonest word is in

_WORD = re.compile(r"[^\W_]+")
STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "i",
        "i'm",
        "im",
        "me",
        "my",
        "mine",
        "myself",
        "you",
        "your",
        "we",
        "our",
        "us",
        "they",
        "their",
        "them",
        "he",
        "his",
        "him",
        "she",
        "her",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "is",
        "am",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "do",
        "does",
        "did",
        "has",
        "have",
        "had",
        "having",
        "to",
        "of",
        "in",
        "on",
        "at",
        "by",
        "for",
        "from",
        "with",
        "as",
        "and",
        "or",
        "but",
        "so",
        "than",
        "then",
        "there",
        "here",
        "very",
        "really",
        "just",
        "also",
        "too",
        "now",
        "currently",
        "these",
        "days",
        "usually",
        "always",
        "about",
        "into",
        "over",
        "under",
        "again",
        "still",
        "all",
        "any",
        "some",
        "one",
    ]
)


# --- listing -----------------------------------------------------------------------


def _group_by_subject(events: Iterable[Event]) -> Iterable[tuple[str, list[Event]]]:
    by: dict[str, list[Event]] = {}
    for e in events:
        by.setdefault(e.subject, []).append(e)
    return by.items()


def list_notes(
    memory: Memory,
    subject: str | None = None,
    match: str | None = None,
    at: int | None = None,
    limit: int | None = None,
) -> list[Belief]:
    """Notes held now (not promoted, not forgotten), most recent first; at most ``limit``."""
    if limit is not None and limit < 1:  # 0 listed every note, -2 all but the last two
        raise InvalidInput(f"--limit must be 1 or more, got {limit}")
    tl = memory.timeline()
    now = memory.now() if at is None else at
    rx = None
    if match:
        rx = Pattern(match)
    subjects = [normalize_subject(subject)] if subject else None
    out: list[Belief] = []
    for s, events in _group_by_subject(memory.store.predicate_events(tl.stored_names(NOTE), subjects=subjects)):
        for b in fold(events, s, NOTE, tl, now):
            if rx is None or rx.search(str(b.value)):
                out.append(b)
    out.sort(key=lambda b: (-b.observed_at, b.subject, b.event_id))
    return out if limit is None else out[:limit]


# --- clusters ----------------------------------------------------------------------


def _words(text: str) -> list[tuple[str, int, int]]:
    """(lower-cased word, start, end) of each word of a note."""
    return [(simple_lower(m.group(0)), m.start(), m.end()) for m in _WORD.finditer(text)]


@dataclass
class NoteValue:
    note: Belief
    value: str | None
    error: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "event_id": self.note.event_id,
            "subject": self.note.subject,
            "note": self.note.value,
            "observed_at": format_rfc3339(self.note.observed_at),
            "ok": self.value is not None,
        }
        if self.value is not None:
            out["value"] = self.value
        else:
            out["error"] = self.error
        return out


@dataclass
class NoteCluster:
    id: str
    about: list[str]  # the frame words the notes share
    notes: list[NoteValue]
    predicate: str | None = None  # an existing predicate to promote into
    predicate_score: float = 0.0
    new_name: str = ""  # a name to define when nothing fits
    regex: str = ""  # a pattern matching the most common phrasing, value in group "value"
    candidates: list[tuple[str, float]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        parsed = sum(1 for n in self.notes if n.value is not None)
        if self.predicate:
            target = self.predicate
            cmd = f"recall-admin notes promote {self.predicate} --cluster {self.id}"
        else:
            target = self.new_name
            cmd = f"recall-admin notes promote {self.new_name} --cluster {self.id} --define --cardinality single --type string"
        return {
            "id": self.id,
            "about": self.about,
            "size": len(self.notes),
            "parsed": parsed,
            "suggestion": {
                "predicate": target,
                "existing": bool(self.predicate),
                "score": round(self.predicate_score, 4),
                "candidates": [{"predicate": p, "score": round(s, 4)} for p, s in self.candidates],
                "regex": self.regex,
                "command": cmd,
            },
            "notes": [n.to_json() for n in self.notes],
        }


def _frame(tokens: list[str], df: dict[str, int]) -> list[str]:
    return [t for t in tokens if df.get(t, 0) >= 2 and t not in STOP]


Phrasing = tuple[tuple[str, ...], tuple[str, ...]]  # the words before and after a value

TEMPLATE_NOTES = 200  # notes of a cluster compared pairwise to learn its phrasings


def _phrasings(token_lists: Sequence[list[str]]) -> set[Phrasing]:
    """Phrasings two notes share around one differing run of words (their values).

    "I use fish as my shell" and "I use VS Code as my shell" give (i use | as my shell)."""
    out: set[Phrasing] = set()
    seen: set[tuple[str, ...]] = set()
    lists = []
    for ts in token_lists[:TEMPLATE_NOTES]:
        if tuple(ts) not in seen:
            seen.add(tuple(ts))
            lists.append(ts)
    for x in range(len(lists)):
        a = lists[x]
        for y in range(x + 1, len(lists)):
            b = lists[y]
            n = min(len(a), len(b))
            p = 0
            while p < n and a[p] == b[p]:
                p += 1
            s = 0
            while s < n - p and a[-1 - s] == b[-1 - s]:
                s += 1
            if p + s >= len(a) or p + s >= len(b):
                continue  # one note is the other plus words: no single value between
            around = a[:p] + a[len(a) - s :]
            if any(w not in STOP for w in around):
                out.add((tuple(a[:p]), tuple(a[len(a) - s :])))
    return out


def _extract(note: Belief, frame: set[str], phrasings: Iterable[Phrasing] = ()) -> NoteValue:
    """A note's value: between the words of a phrasing the cluster shares, else the words
    of the note outside the cluster's frame, in the note's own spelling."""
    text = str(note.value)
    words = _words(text)
    if not words:
        return NoteValue(note, None, "the note has no words")
    toks = [w for w, _, _ in words]
    best: Phrasing | None = None
    for pre, post in phrasings:
        k, m = len(pre), len(post)
        if k + m < len(toks) and tuple(toks[:k]) == pre and tuple(toks[len(toks) - m :]) == post:
            if best is None or k + m > len(best[0]) + len(best[1]):
                best = (pre, post)
    if best is not None:
        lo, hi = len(best[0]), len(toks) - len(best[1]) - 1
        return NoteValue(note, text[words[lo][1] : words[hi][2]].strip())
    outside = [i for i, w in enumerate(toks) if w not in frame]
    # trim stop words at both ends of what is left
    while outside and toks[outside[0]] in STOP:
        outside.pop(0)
    while outside and toks[outside[-1]] in STOP:
        outside.pop()
    if not outside:
        return NoteValue(note, None, "every word of the note is shared with the others: no value left")
    lo, hi = outside[0], outside[-1]
    inside = [toks[i] for i in range(lo, hi + 1) if toks[i] in frame and toks[i] not in STOP]
    if inside:
        return NoteValue(note, None, f"the words left are split by {inside[0]!r}: give this note's value by hand")
    return NoteValue(note, text[words[lo][1] : words[hi][2]].strip())


def _template(nv: NoteValue) -> str | None:
    """The note as a regex with its value as the group ``value`` (case and spacing loose)."""
    if nv.value is None:
        return None
    text = str(nv.note.value)
    i = text.find(nv.value)
    if i < 0:
        return None
    before, after = text[:i], text[i + len(nv.value) :]
    head = r"\s+".join(re.escape(w) for w in before.split())
    tail = r"\s+".join(re.escape(w) for w in after.split())
    return (
        r"^\s*"
        + head
        + (r"\s+" if head and before[-1:].isspace() else "")
        + "(?P<value>.+?)"
        + (r"\s+" if tail and after[:1].isspace() else "")
        + tail
        + r"\s*$"
    )


def _name_words(name: str) -> set[str]:
    return {stem(w) for w in name.split("_") if w and w not in STOP}


def _predicate_candidates(about: Sequence[str], defs: dict[str, Definition]) -> list[tuple[str, float]]:
    """Existing predicates closest to what a cluster is about: shared name words, then descriptions."""
    if not about or not defs:
        return []
    stems = {stem(w) for w in about}
    q = embed(" ".join(about))
    out = []
    for n in sorted(defs):
        d = defs[n]
        if n == NOTE or d.storage_class != "string":
            continue
        nw = _name_words(n)
        shared = len(stems & nw)
        name_part = shared / len(nw) if nw else 0.0
        desc = float(np.dot(q, embed(n.replace("_", " ") + " " + d.description)))
        out.append((n, 0.6 * name_part + 0.4 * max(desc, 0.0)))
    out.sort(key=lambda x: (-x[1], x[0]))
    return out[:3]


def _weighted_vectors(frames: list[list[str]], df: dict[str, int], n: int) -> np.ndarray:
    """Each note's frame words weighted by rarity (smoothed idf), L2-normalized: words that
    half the notes use ("use", "like") link notes far less than the words of one kind of fact."""
    vocab = {w: i for i, w in enumerate(sorted({w for f in frames for w in f}))}
    m = np.zeros((len(frames), len(vocab)), dtype=np.float32)
    for r, f in enumerate(frames):
        for w in set(f):
            m[r, vocab[w]] = np.log((1 + n) / (1 + df[w])) + 1.0
    norms = np.linalg.norm(m, axis=1)
    norms[norms == 0] = 1.0
    return m / norms[:, None]


def note_clusters(
    memory: Memory, subject: str | None = None, *, similarity: float = CLUSTER_SIMILARITY, min_size: int = 2
) -> list[NoteCluster]:
    """Clusters of notes that look like one kind of fact, largest first."""
    notes = list_notes(memory, subject)[:MAX_CLUSTER_NOTES]
    if len(notes) < min_size:
        return []
    toks = [[w for w, _, _ in _words(str(b.value))] for b in notes]
    df: dict[str, int] = {}
    for ts in toks:
        for t in set(ts):
            df[t] = df.get(t, 0) + 1
    frames = [_frame(ts, df) for ts in toks]
    idx = [i for i, f in enumerate(frames) if f]
    if len(idx) < min_size:
        return []
    vecs = _weighted_vectors([frames[i] for i in idx], df, len(notes))
    parent = list(range(len(idx)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    block = 1024
    for start in range(0, len(idx), block):
        sims = vecs[start : start + block] @ vecs.T
        rows, cols = np.nonzero(sims >= similarity)
        for r, c in zip(rows.tolist(), cols.tolist(), strict=False):
            a, b = find(start + r), find(c)
            if a != b:
                parent[max(a, b)] = min(a, b)
    groups: dict[int, list[int]] = {}
    for k in range(len(idx)):
        groups.setdefault(find(k), []).append(idx[k])
    tl = memory.timeline()
    defs = tl.predicates()
    out = []
    for members in groups.values():
        if len(members) < min_size:
            continue
        # frame: the words (stop words too) nearly every note of the cluster uses; a value
        # repeated by a few notes ("fish" twice among five) stays outside it
        counts: dict[str, int] = {}
        for i in members:
            for t in set(toks[i]):
                counts[t] = counts.get(t, 0) + 1
        top = max(counts.values())
        frame = {t for t, c in counts.items() if c >= max(2.0, FRAME_SHARE * top)}
        about = sorted((t for t in frame if t not in STOP), key=lambda t: (-counts[t], t))
        members.sort(key=lambda i: (-notes[i].observed_at, notes[i].event_id))
        phrasings = _phrasings([toks[i] for i in members])
        values = [_extract(notes[i], frame, phrasings) for i in members]
        cands = _predicate_candidates(about, defs)
        cluster = NoteCluster(
            id="n-" + hashlib.sha256("\x00".join(sorted(notes[i].event_id for i in members)).encode()).hexdigest()[:12],
            about=about,
            notes=values,
            candidates=cands,
        )
        if cands and cands[0][1] >= PREDICATE_MIN_SCORE:
            cluster.predicate, cluster.predicate_score = cands[0]
        else:
            cluster.new_name = "_".join(about[:2]) or "fact"
        templates: dict[str, int] = {}
        for nv in values:
            template = _template(nv)
            if template:
                templates[template] = templates.get(template, 0) + 1
        if templates:
            cluster.regex = max(templates.items(), key=lambda kv: (kv[1], -len(kv[0])))[0]
        out.append(cluster)
    out.sort(key=lambda c: (-len(c.notes), c.id))
    return out


def find_note_cluster(memory: Memory, ident: str) -> NoteCluster:
    for c in note_clusters(memory):
        if c.id == ident.strip():
            return c
    raise NotFound(f"no note cluster {ident!r} (ids come from `notes clusters`)")


def promote_plan(
    stager: Stager,
    predicate: str,
    *,
    cluster: str | None = None,
    notes: dict[str, Any] | None = None,
    match: str | None = None,
    subject: str | None = None,
    define: Definition | None = None,
    reason: str = "",
) -> Plan:
    """One promote plan: a cluster's per-note values, explicit values, or a regex."""
    given = sum(x is not None for x in (cluster, notes, match))
    if given != 1:
        raise PlanError(
            "promote needs exactly one of --cluster ID, --note EVENT_ID=VALUE (one or more) or --match REGEX"
        )
    if cluster is not None:
        c = find_note_cluster(stager.memory, cluster)
        parsed = {nv.note.event_id: nv.value for nv in c.notes if nv.value is not None}
        if not parsed:
            raise PlanError(f"no note of cluster {c.id} has a value that could be found; give values with --note")
        plan = stager.promote(predicate, notes=parsed, new_definition=define, reason=reason)
        unparsed = [nv.to_json() for nv in c.notes if nv.value is None]
        if unparsed:
            details = dict(plan.details)
            details["notes"] = list(details.get("notes", [])) + [
                {
                    "event_id": u["event_id"],
                    "subject": u["subject"],
                    "note": u["note"],
                    "ok": False,
                    "error": u["error"],
                }
                for u in unparsed
            ]
            details["unparsed"] = details.get("unparsed", 0) + len(unparsed)
            from dataclasses import replace

            plan = replace(plan, details=details)
        return plan
    return stager.promote(
        predicate,
        notes=notes,
        match=match,
        subject=normalize_subject(subject) if subject else None,
        new_definition=define,
        reason=reason,
    )
