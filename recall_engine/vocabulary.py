"""Open-vocabulary name matching: is a new predicate name one we already have?

Pure and deterministic. Names are compared as words after light stemming and a
small table of words that mean the same in predicate names (prefers /
preference / favorite); rapidfuzz scores what remains. Descriptions can only
veto a near name (when both say what they are about and share no word). Names
that differ by a word of opposite meaning (likes / dislikes, avoids) never
match. Measured in benchmarks/bench_matching.py on a labelled set.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import re
from rapidfuzz import fuzz

from .embed import tokens
from .registry import Definition
from .text import NOTE

DEFAULT_THRESHOLD = 0.9

# Words that mean the same inside a predicate name, mapped to one stem.
_SAME = {
    "prefers": "prefer", "preference": "prefer", "preferred": "prefer", "prefer": "prefer",
    "favorite": "prefer", "favourite": "prefer", "fav": "prefer", "preferences": "prefer",
    "uses": "use", "using": "use", "used": "use", "use": "use", "usage": "use",
    "lives": "live", "living": "live", "live": "live", "resides": "live", "residence": "live",
    "works": "work", "working": "work", "work": "work", "employed": "work", "employer": "work",
    "employment": "work", "job": "work",
    "likes": "like", "like": "like", "liked": "like", "enjoys": "like", "loves": "like",
    "owns": "own", "own": "own", "owned": "own", "has": "own", "possesses": "own",
    "email": "email", "mail": "email", "e": "", "address": "address", "addr": "address",
    "phone": "phone", "telephone": "phone", "tel": "phone", "mobile": "phone", "number": "number",
    "lang": "language", "language": "language", "languages": "language",
    "tech": "technology", "technology": "technology", "technologies": "technology", "stack": "technology",
    "pkg": "package", "package": "package", "packages": "package",
    "tz": "timezone", "timezone": "timezone", "zone": "zone",
    "ide": "editor", "editor": "editor", "editors": "editor",
    "city": "city", "town": "city", "location": "location",
    "goal": "goal", "goals": "goal", "aim": "goal", "objective": "goal",
    "name": "name", "called": "name",
}
# Words whose presence on one side only turns the meaning around.
_OPPOSITE = {
    "dislikes", "dislike", "disliked", "hates", "hate", "avoids", "avoid", "not", "no", "never",
    "former", "ex", "previous", "past", "old", "stopped", "quit", "left", "gave", "sold", "lost",
    "un", "non", "anti", "without", "except", "declined", "rejected", "refuses", "won't", "cant",
}
_FILLER = {"the", "a", "an", "of", "to", "for", "is", "user", "users", "s"}


def _words(name: str) -> list[str]:
    out = []
    for w in name.lower().replace("-", "_").split("_"):
        if not w or w in _FILLER:
            continue
        out.append(w)
    return out


def stem(w: str) -> str:
    """A word reduced to the stem names are compared by (plural -s/-ies, listed synonyms)."""
    if w in _SAME:
        return _SAME[w]
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        return w[:-1]
    return w


def name_similarity(a: str, b: str) -> float:
    """Similarity of two predicate names in [0, 1]; 0 when one reverses the other's meaning."""
    wa, wb = _words(a), _words(b)
    oa = {w for w in wa if w in _OPPOSITE}
    ob = {w for w in wb if w in _OPPOSITE}
    if oa != ob:
        return 0.0
    sa = sorted({s for w in wa if (s := stem(w))})
    sb = sorted({s for w in wb if (s := stem(w))})
    if not sa or not sb:
        return 0.0
    if sa == sb:
        return 1.0
    # Each side's words must mostly find a close partner on the other side.
    ratio = fuzz.token_sort_ratio(" ".join(sa), " ".join(sb)) / 100.0
    overlap = len(set(sa) & set(sb)) / max(len(sa), len(sb))
    return min(ratio, 0.5 + 0.5 * overlap) if overlap < 1 else ratio


# Words that say nothing about what a description is about.
_DESCRIPTION_STOP = frozenset(
    """a an the i me my you your we our they their them he his him she her it its this that these those is am are
    was were be been being do does did has have had to of in on at by for from with as and or but so than then
    there here very just also too now when which what who whom whose where how one per statement given known
    something someone somebody person people user users customer developer thing things e g eg etc usual
    usually exactly few words word""".split()
)
_EXAMPLES = re.compile(r"\be\.g\.|\bfor example\b|\bsuch as\b", re.IGNORECASE)
DESCRIPTION_VETO = 0.85  # a near name whose description is about something else drops below any strict threshold


def description_words(text: str) -> set[str]:
    """The stems a description is about (its examples and filler words left out)."""
    head = _EXAMPLES.split(text or "", maxsplit=1)[0]
    return {stem(w) for w in tokens(head) if w not in _DESCRIPTION_STOP and len(w) > 1}


def descriptions_disagree(a: str, b: str) -> bool:
    """Two real descriptions (two words or more each) that share no word at all."""
    wa, wb = description_words(a), description_words(b)
    return len(wa) >= 2 and len(wb) >= 2 and not (wa & wb)


def similarity(name: str, description: str, other: Definition) -> float:
    """How likely ``name`` (described by ``description``) means ``other``, in [0, 1].

    The names decide; descriptions, when both say what they are about, can only
    veto: ``plans`` ("something the person intends to do") is not ``plan`` ("the
    subscription tier") however close the names are.
    """
    n = name_similarity(name, other.name)
    if n > 0 and descriptions_disagree(description, other.description):
        return n * DESCRIPTION_VETO
    return n


@dataclass(frozen=True, slots=True)
class Match:
    name: str
    score: float


def best_match(
    name: str,
    storage_class: str,
    candidates: Mapping[str, Definition],
    *,
    description: str = "",
    cardinality: str | None = None,
    threshold: float = DEFAULT_THRESHOLD,
) -> Match | None:
    """The existing predicate a new name most likely means, if it scores at or above the threshold."""
    if threshold < 0:
        return None
    best: Match | None = None
    for cand in sorted(candidates):
        d = candidates[cand]
        if cand == NOTE or cand == name or d.storage_class != storage_class:
            continue
        if cardinality and d.cardinality != cardinality:
            continue
        s = similarity(name, description, d)
        if best is None or s > best.score:
            best = Match(cand, s)
    if best is not None and best.score >= threshold:
        return best
    return None
