"""Open-vocabulary name matching: is a new predicate name one we already have?

One rule, used wherever two predicate names are compared (automatic matching on
write, ``vocab suggest``, ``registry lint``, near-duplicate risks, the console's
vocabulary queue); docs/review-queues.md ("How a match is decided") explains it
with its measured figures. Pure and deterministic: the sentence model's vectors
are an input (``texts_for`` says which texts a comparison reads, the caller
embeds them with ``recall_engine.sentence``), never loaded here.

1. Names are read as words: lower-cased, split on ``_``/``-``, British spellings
   and common abbreviations written out (colour/color, fav/favorite, tz/time zone).
2. Guards: a word of opposite meaning on one side only (likes / dislikes,
   former_employer / employer, start_date / end_date, subscribed / unsubscribed)
   gives 0 whatever else agrees.
3. Names with the same words (in any order, separators aside, or through the
   small table of same-meaning words) score 1.
4. Otherwise the model decides: the cosine of the two names' embeddings. When the
   names share words, what differs must itself mean the same (customer_email /
   client_email), and a word added after the shared ones names another thing
   (email / email_verified); light words (email / email_address) and grammar
   (indent / indentation) do not count as differences.
5. Descriptions can only veto: two real descriptions that share no word.

Without vectors (the model could not load) step 4 is the lexical rule: rapidfuzz
over the stemmed words.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from rapidfuzz import fuzz

from .embed import tokens
from .registry import Definition
from .text import NOTE

# Chosen on one half of benchmarks/name_pairs.txt (the highest recall at precision >= 0.97
# there); benchmarks/bench_matching.py reports the other half.
DEFAULT_THRESHOLD = 0.7
LEXICAL_THRESHOLD = 0.9  # where the lexical rule alone was right 95% of the time (benchmarks/match_pairs.json)

# Words that mean the same inside a predicate name, mapped to one stem.
_SAME = {
    "prefers": "prefer",
    "preference": "prefer",
    "preferred": "prefer",
    "prefer": "prefer",
    "favorite": "prefer",
    "favourite": "prefer",
    "fav": "prefer",
    "preferences": "prefer",
    "uses": "use",
    "using": "use",
    "used": "use",
    "use": "use",
    "usage": "use",
    "lives": "live",
    "living": "live",
    "live": "live",
    "resides": "live",
    "residence": "live",
    "works": "work",
    "working": "work",
    "work": "work",
    "employed": "work",
    "employer": "work",
    "employment": "work",
    "job": "work",
    "likes": "like",
    "like": "like",
    "liked": "like",
    "enjoys": "like",
    "loves": "like",
    "owns": "own",
    "own": "own",
    "owned": "own",
    "has": "own",
    "possesses": "own",
    "email": "email",
    "mail": "email",
    "e": "",
    "address": "address",
    "addr": "address",
    "phone": "phone",
    "telephone": "phone",
    "tel": "phone",
    "mobile": "phone",
    "number": "number",
    "lang": "language",
    "language": "language",
    "languages": "language",
    "tech": "technology",
    "technology": "technology",
    "technologies": "technology",
    "stack": "technology",
    "pkg": "package",
    "package": "package",
    "packages": "package",
    "tz": "timezone",
    "timezone": "timezone",
    "zone": "zone",
    "ide": "editor",
    "editor": "editor",
    "editors": "editor",
    "city": "city",
    "town": "city",
    "location": "location",
    "goal": "goal",
    "goals": "goal",
    "aim": "goal",
    "objective": "goal",
    "name": "name",
    "called": "name",
}
# British spellings and abbreviations, written out before anything is compared
# (one word may become several: dob -> date of birth).
_SPELLING = {
    "colour": "color",
    "colours": "colors",
    "coloured": "colored",
    "favourite": "favorite",
    "favourites": "favorites",
    "favour": "favor",
    "flavour": "flavor",
    "neighbour": "neighbor",
    "neighbourhood": "neighborhood",
    "behaviour": "behavior",
    "honour": "honor",
    "humour": "humor",
    "labour": "labor",
    "centre": "center",
    "metre": "meter",
    "litre": "liter",
    "theatre": "theater",
    "catalogue": "catalog",
    "dialogue": "dialog",
    "licence": "license",
    "defence": "defense",
    "programme": "program",
    "grey": "gray",
    "tyre": "tire",
    "analyse": "analyze",
    "travelled": "traveled",
    "cancelled": "canceled",
    "cancelling": "canceling",
    "labelled": "labeled",
    "modelling": "modeling",
    "jewellery": "jewelry",
    "pyjamas": "pajamas",
    "mum": "mom",
    "aeroplane": "airplane",
    "fav": "favorite",
    "fave": "favorite",
    "favs": "favorites",
    "pref": "preference",
    "prefs": "preferences",
    "num": "number",
    "nbr": "number",
    "addr": "address",
    "tel": "telephone",
    "dob": "date of birth",
    "tz": "time zone",
    "timezone": "time zone",
    "db": "database",
    "repo": "repository",
    "pkg": "package",
    "org": "organization",
    "dev": "development",
    "env": "environment",
    "qty": "quantity",
    "amt": "amount",
    "msg": "message",
    "cfg": "configuration",
    "config": "configuration",
    "info": "information",
    "mic": "microphone",
    "hq": "headquarters",
    "os": "operating system",
    "ide": "editor",
    "acct": "account",
    "dept": "department",
    "mgr": "manager",
    "yr": "year",
    "yrs": "years",
    "bday": "birthday",
}
_E_MAIL = re.compile(r"(?<![a-z0-9])e_mail")
_ISE = re.compile(
    r"^(organ|apolog|recogn|priorit|custom|personal|optim|real|author|categor|final|minim|maxim|"
    r"normal|summar|special|standard|util|visual|synchron|initial|serial|memor|emphas)is(e|ed|es|ing|ation|ations)$"
)
# Words whose presence on one side only turns the meaning around.
_OPPOSITE = {
    "dislikes",
    "dislike",
    "disliked",
    "hates",
    "hate",
    "avoids",
    "avoid",
    "not",
    "no",
    "never",
    "former",
    "ex",
    "previous",
    "past",
    "old",
    "stopped",
    "quit",
    "left",
    "gave",
    "sold",
    "lost",
    "un",
    "non",
    "anti",
    "without",
    "except",
    "declined",
    "rejected",
    "refuses",
    "won't",
    "cant",
    "least",
    "worst",
    "blocked",
    "disabled",
    "unsubscribed",
}
# Pairs of words that name the two ends of one thing: names differing by them never match.
_OPPOSITE_PAIRS = {
    frozenset(p)
    for p in (
        ("start", "end"),
        ("begin", "end"),
        ("first", "last"),
        ("min", "max"),
        ("minimum", "maximum"),
        ("open", "closed"),
        ("opened", "closed"),
        ("open", "close"),
        ("on", "off"),
        ("up", "down"),
        ("in", "out"),
        ("inbound", "outbound"),
        ("incoming", "outgoing"),
        ("input", "output"),
        ("male", "female"),
        ("won", "lost"),
        ("win", "loss"),
        ("morning", "evening"),
        ("day", "night"),
        ("enabled", "disabled"),
        ("added", "removed"),
        ("buyer", "seller"),
        ("source", "target"),
        ("frontend", "backend"),
        ("light", "dark"),
        ("before", "after"),
        ("current", "previous"),
        ("home", "work"),
        ("answered", "missed"),
        ("accepted", "rejected"),
        ("approved", "denied"),
        ("sent", "received"),
        ("upload", "download"),
        ("import", "export"),
        ("high", "low"),
        ("best", "worst"),
        ("most", "least"),
        ("top", "bottom"),
        ("left", "right"),
        ("caller", "callee"),
        ("sender", "recipient"),
        ("parent", "child"),
        ("mother", "father"),
        ("sister", "brother"),
        ("husband", "wife"),
        ("created", "updated"),
        ("created", "deleted"),
        ("muted", "unmuted"),
        ("wake", "sleep"),
        ("bought", "sold"),
        ("income", "expense"),
        ("debit", "credit"),
        ("pro", "con"),
        ("yes", "no"),
        ("like", "dislike"),
        ("likes", "dislikes"),
        ("likes", "wants"),
        ("like", "want"),
        ("has", "wants"),
        ("owns", "wants"),
    )
}
# Words of one kind where each names another thing: yearly_budget / monthly_budget.
_EXCLUSIVE = ({"hourly", "daily", "weekly", "monthly", "quarterly", "yearly", "annual", "annually"},)
_NEGATING_PREFIXES = ("un", "dis", "de", "non", "in", "im", "ir", "il", "anti", "mis")
# Words that add nothing to what a name is about (email / email_address, volume / volume_level).
_LIGHT = {"number", "address", "level", "value", "name", "information", "details"}
_FILLER = {"the", "a", "an", "of", "to", "for", "is", "user", "users", "s", "my", "their", "his", "her"}


@lru_cache(maxsize=65536)
def _words(name: str) -> tuple[str, ...]:
    """A name's words as the rule compares them: spelling and abbreviations written out, filler left out."""
    raw = [w for w in _E_MAIL.sub("email", name.lower().replace("-", "_").replace(" ", "_")).split("_") if w]
    out: list[str] = []
    for i, w in enumerate(raw):
        if w == "no" and i == len(raw) - 1 and i > 0:
            w = "number"  # phone_no; "no" elsewhere negates
        w = _SPELLING.get(w, w)
        if m := _ISE.match(w):
            w = f"{m.group(1)}iz{m.group(2)}"
        for part in w.split():
            if part not in _FILLER:
                out.append(part)
    return tuple(out)


def stem(w: str) -> str:
    """A word reduced to the stem names are compared by (plural -s/-ies, listed synonyms)."""
    if w in _SAME:
        return _SAME[w]
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        return w[:-1]
    return w


@lru_cache(maxsize=65536)
def name_text(name: str) -> str:
    """The text the model embeds for a name: its words, spelling and abbreviations written out."""
    return " ".join(_words(name)) or name.lower()


def definition_text(name: str, description: str = "") -> str:
    """The text the model embeds for a definition: the name, then what its description is about."""
    head = _EXAMPLES.split(description or "", maxsplit=1)[0].strip().rstrip(".,;:")
    return f"{name_text(name)}: {head}" if head else name_text(name)


def _negates(w: str, v: str) -> bool:
    # w is one of the prefixes followed by v
    return len(w) > len(v) and w.endswith(v) and w[: len(w) - len(v)] in _NEGATING_PREFIXES


def _ends(w: str, v: str) -> bool:
    # reopened / closed reads as opened / closed
    return frozenset((w, v)) in _OPPOSITE_PAIRS or (w.startswith("re") and frozenset((w[2:], v)) in _OPPOSITE_PAIRS)


@lru_cache(maxsize=65536)
def _opposite_words(w: str, v: str) -> bool:
    """Whether a word of one name and a word of the other turn the meaning around (``opposed``)."""
    if _ends(w, v) or _ends(v, w) or _negates(w, v) or _negates(v, w):
        return True
    if any(w in group and v in group for group in _EXCLUSIVE):
        return True
    return {w[-2:], v[-2:]} == {"er", "ee"} and w[:-2] == v[:-2]  # employer / employee, caller / callee


@lru_cache(maxsize=65536)
def _word_sets(name: str) -> tuple[frozenset[str], frozenset[str]]:
    """A name's words, and those of them that turn a meaning around (``opposed``)."""
    w = _words(name)
    return frozenset(w), frozenset(x for x in w if x in _OPPOSITE)


def opposite_words(name: str) -> frozenset[str]:
    """The words of a name that turn a meaning around: names that differ in them are
    ``opposed`` (its first test, one name at a time)."""
    return _word_sets(name)[1]


@lru_cache(maxsize=65536)
def opposed(a: str, b: str) -> bool:
    """Whether one name turns the other's meaning around (the antonym guard)."""
    (sa, oa), (sb, ob) = _word_sets(a), _word_sets(b)
    if oa != ob:
        return True
    only_b = sb - sa
    if only_b:  # (word pairs repeat across names: each is decided once)
        for w in sa - sb:
            for v in only_b:
                if _opposite_words(w, v):
                    return True
    wa, wb = _words(a), _words(b)
    # lived_in / lives_in, worked_at / works_at: a past tense first word is a former fact
    if wa and wb and wa[0] != wb[0] and wa[1:] == wb[1:]:
        x, y = sorted((wa[0], wb[0]), key=lambda w: w.endswith("ed"))
        if y.endswith("ed") and x.endswith("s") and (y[:-2] == x[:-1] or y[:-1] == x[:-1]):
            return True
    return False


_SUFFIXES = ("ation", "ition", "ment", "ion", "ing", "ed", "e")


@lru_cache(maxsize=65536)
def _key(w: str) -> str:
    """A word's stem with its grammar taken off (indentation / indent, cancelling / cancellation)."""
    w = stem(w)
    for suffix in _SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= (5 if suffix == "ing" else 4):
            w = w[: -len(suffix)]
            break
    if len(w) > 4 and w[-1] == w[-2] and w[-1] not in "aeiou":
        w = w[:-1]  # cancell -> cancel
    return w


def _compact(words: tuple[str, ...]) -> str:
    return "".join(words)


@lru_cache(maxsize=65536)
def _keyed(name: str) -> tuple[tuple[tuple[str, str], ...], frozenset[str]]:
    """A name's words each with its ``_key``, and the set of those keys."""
    pairs = tuple((w, _key(w)) for w in _words(name))
    return pairs, frozenset(k for _, k in pairs)


def _keys(name: str) -> frozenset[str]:
    return _keyed(name)[1]


@lru_cache(maxsize=65536)
def _split(a: str, b: str) -> tuple[tuple[str, ...], tuple[str, ...], list[str], list[str], set[str]]:
    """Two names' words, the words of each whose key the other lacks, and the keys they share."""
    (pa, ka), (pb, kb) = _keyed(a), _keyed(b)
    shared = set(ka & kb)
    return _words(a), _words(b), [w for w, k in pa if k not in shared], [w for w, k in pb if k not in shared], shared


_PREPOSITIONS = {"at", "in", "for", "on", "from", "with"}  # not "by": liked_by is not likes


@lru_cache(maxsize=65536)
def _stems(words: tuple[str, ...]) -> frozenset[str]:
    # works_at / works_for / employer: the table's stems, prepositions aside
    return frozenset({stem(w) for w in words if w not in _PREPOSITIONS} or {stem(w) for w in words})


@lru_cache(maxsize=65536)
def _heavy_keys(words: tuple[str, ...]) -> frozenset[str]:
    """The keys of a name's words other than light ones (all its keys if it has only light ones)."""
    return frozenset({_key(w) for w in words if w not in _LIGHT} or {_key(w) for w in words})


@lru_cache(maxsize=65536)
def same_words(a: str, b: str) -> bool:
    """Names with the same words, whatever their order, separators, grammar or light words."""
    wa, wb = _words(a), _words(b)
    if not wa or not wb:
        return False
    return _compact(wa) == _compact(wb) or _stems(wa) == _stems(wb) or _heavy_keys(wa) == _heavy_keys(wb)


def residual_texts(a: str, b: str) -> tuple[str, str] | None:
    """For names that share a word and each keep one of their own (``mixed``), what each
    keeps, as the texts whose cosine the score averages in; None for other pairs."""
    (pa, ka), (pb, kb) = _keyed(a), _keyed(b)  # (``_split`` from each name's keys alone)
    if ka.isdisjoint(kb) or ka <= kb or kb <= ka:
        return None
    return " ".join(w for w, k in pa if k not in kb), " ".join(w for w, k in pb if k not in ka)


def texts_for(a: str, b: str, description_a: str = "", description_b: str = "") -> list[str]:
    """The texts whose vectors the rule reads to compare two names (and their descriptions)."""
    out = [name_text(a), name_text(b)]
    if rest := residual_texts(a, b):
        out += rest
    if _described(description_a) and _described(description_b):
        out += [definition_text(a, description_a), definition_text(b, description_b)]
    return out


def decided_by_words(a: str, b: str) -> bool:
    """Whether two names' words alone decide their score (the antonym guard's 0, the same
    words' 1): no vector is read for them, not even their descriptions'."""
    return opposed(a, b) or not _words(a) or not _words(b) or same_words(a, b)


def _described(description: str) -> bool:
    return bool(_EXAMPLES.split(description or "", maxsplit=1)[0].strip())


def lexical_similarity(a: str, b: str) -> float:
    """The rule without the model: rapidfuzz over the stemmed words (the fallback).

    Put on the model's scale (piecewise linear, LEXICAL_THRESHOLD onto
    DEFAULT_THRESHOLD) so one threshold serves both."""
    s = _lexical(a, b)
    if s >= LEXICAL_THRESHOLD:
        return DEFAULT_THRESHOLD + (s - LEXICAL_THRESHOLD) * (1 - DEFAULT_THRESHOLD) / (1 - LEXICAL_THRESHOLD)
    return s * DEFAULT_THRESHOLD / LEXICAL_THRESHOLD


def _lexical(a: str, b: str) -> float:
    sa = sorted({s for w in _words(a) if (s := stem(w))})
    sb = sorted({s for w in _words(b) if (s := stem(w))})
    if not sa or not sb:
        return 0.0
    # Each side's words must mostly find a close partner on the other side.
    ratio = fuzz.token_sort_ratio(" ".join(sa), " ".join(sb)) / 100.0
    overlap = len(set(sa) & set(sb)) / max(len(sa), len(sb))
    return min(ratio, 0.5 + 0.5 * overlap) if overlap < 1 else ratio


def _cos(vectors: Mapping[str, np.ndarray], x: str, y: str) -> float:
    return max(0.0, min(1.0, float(np.dot(vectors[x], vectors[y]))))


TAIL_PENALTY = 0.8  # a heavy word added after the shared ones names another thing: below any strict threshold


def name_similarity(a: str, b: str, vectors: Mapping[str, np.ndarray] | None = None) -> float:
    """Similarity of two predicate names in [0, 1]; 0 when one reverses the other's meaning.

    ``vectors`` maps each of ``texts_for(a, b)`` to its unit vector from the
    sentence model; without them (or with any missing) the lexical rule decides.
    """
    if opposed(a, b):
        return 0.0
    wa, wb, ra, rb, shared = _split(a, b)
    if not wa or not wb:
        return 0.0
    if same_words(a, b):
        return 1.0
    # the texts read are texts_for(a, b), looked up here without building the list
    na, nb = name_text(a), name_text(b)
    if vectors is None or na not in vectors or nb not in vectors:
        return lexical_similarity(a, b)
    if shared and ra and rb:
        xa, xb = " ".join(ra), " ".join(rb)
        if xa not in vectors or xb not in vectors:
            return lexical_similarity(a, b)
        # what the names do not share must mean the same too: customer_email / client_email
        return (2 * _cos(vectors, na, nb) + _cos(vectors, xa, xb)) / 3
    full = _cos(vectors, na, nb)
    if not shared:
        return full
    longer, extra = (wa, ra) if ra else (wb, rb)
    last_shared = max(i for i, w in enumerate(longer) if _key(w) in shared)
    tail = [w for i, w in enumerate(longer) if i > last_shared and w in extra]
    # a state in front names another thing too: resolved_objection / objection
    states = [w for w in extra if w.endswith("ed") and w not in _SAME]
    if states or any(w not in _LIGHT for w in tail):
        return full * TAIL_PENALTY  # email / email_verified, os / os_version
    return full


# Words that say nothing about what a description is about.
_DESCRIPTION_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "i",
        "me",
        "my",
        "you",
        "your",
        "we",
        "our",
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
        "just",
        "also",
        "too",
        "now",
        "when",
        "which",
        "what",
        "who",
        "whom",
        "whose",
        "where",
        "how",
        "one",
        "per",
        "statement",
        "given",
        "known",
        "something",
        "someone",
        "somebody",
        "person",
        "people",
        "user",
        "users",
        "customer",
        "developer",
        "thing",
        "things",
        "e",
        "g",
        "eg",
        "etc",
        "usual",
        "usually",
        "exactly",
        "few",
        "words",
        "word",
    ]
)
_EXAMPLES = re.compile(r"\be\.g\.|\bfor example\b|\bsuch as\b", re.IGNORECASE)
DESCRIPTION_VETO = 0.6  # a near name whose description is about something else drops below the threshold


def description_words(text: str) -> set[str]:
    """The stems a description is about (its examples and filler words left out)."""
    head = _EXAMPLES.split(text or "", maxsplit=1)[0]
    return {stem(w) for w in tokens(head) if w not in _DESCRIPTION_STOP and len(w) > 1}


def descriptions_disagree(a: str, b: str) -> bool:
    """Two real descriptions (two words or more each) that share no word at all."""
    if not a or not b:
        return False
    wa, wb = description_words(a), description_words(b)
    return len(wa) >= 2 and len(wb) >= 2 and not (wa & wb)


def similarity(
    name: str, description: str, other: Definition, vectors: Mapping[str, np.ndarray] | None = None
) -> float:
    """How likely ``name`` (described by ``description``) means ``other``, in [0, 1].

    The names decide; descriptions, when both say what they are about, can only
    veto: ``plans`` ("something the person intends to do") is not ``plan`` ("the
    subscription tier") however close the names are.
    """
    n = name_similarity(name, other.name, vectors)
    if 0 < n < 1 and vectors is not None and description and other.description:
        # the model reads the name together with its description: both readings count
        x, y = definition_text(name, description), definition_text(other.name, other.description)
        if _described(description) and _described(other.description) and x in vectors and y in vectors:
            n = (n + _cos(vectors, x, y)) / 2
    if n > 0 and descriptions_disagree(description, other.description):
        return n * DESCRIPTION_VETO
    return n


def pair_score(a: Definition, b: Definition, vectors: Mapping[str, np.ndarray] | None = None) -> float:
    """Similarity of two definitions (0 across storage classes), the same in both directions:
    ``similarity`` is symmetric (every step is; tests/engine/test_vocab_matching.py checks it
    on the labelled sets), so one direction is scored."""
    if a.storage_class != b.storage_class:
        return 0.0
    return similarity(a.name, a.description, b, vectors)


_ROUNDING = 1e-5  # float32 products and float64 scores may differ in the last places


def score_bounds(
    name_cos: np.ndarray,
    description_cos: np.ndarray | None = None,
    mixed: np.ndarray | bool = True,
    residual_cos: np.ndarray | None = None,
) -> np.ndarray:
    """The highest score the rule can give pairs from their name cosines (and, where both
    are described, their description cosines; NaN elsewhere).

    A name score is the name cosine, or less, except for ``mixed`` pairs (names that
    share a word and each have one the other lacks), which average in the cosine of
    what differs (``residual_cos`` where known, else at most 1): (2 * cosine + 1) / 3.
    A described pair's score is the mean of that and the description cosine. A pair
    whose bound is below the threshold need not be scored."""
    full = np.clip(name_cos, 0.0, 1.0)
    rest = 1.0 if residual_cos is None else np.clip(residual_cos, 0.0, 1.0)
    bound = np.where(mixed, (2 * full + rest) / 3, full)
    if description_cos is not None:
        both = ~np.isnan(description_cos)
        bound = np.where(both, (bound + np.clip(np.nan_to_num(description_cos), 0.0, 1.0)) / 2, bound)
    return bound + _ROUNDING


def mixed(a: str, b: str) -> bool:
    """Whether two names share a word and each keep one of their own (``score_bounds``)."""
    ka, kb = _keys(a), _keys(b)  # (what ``_split`` says, from each name's keys alone)
    return not ka.isdisjoint(kb) and not ka <= kb and not kb <= ka


def tight_bounds(
    names_a: Sequence[str], names_b: Sequence[str], name_cos: np.ndarray, description_cos: np.ndarray | None
) -> np.ndarray:
    """``score_bounds`` of the pairs (names_a[k], names_b[k]), each told whether it is mixed:
    for the few pairs a loose bound (every pair mixed) let through."""
    n = len(names_a)
    flags = mixed_of_pairs(key_codes([*names_a, *names_b]), np.arange(n), np.arange(n, 2 * n))
    return score_bounds(name_cos, description_cos, flags)


def key_codes(names: Sequence[str]) -> np.ndarray:
    """Each name's distinct word keys (``_keys``) as small integers, one row a name padded with -1:
    what ``mixed_of_pairs`` reads."""
    codes: dict[str, int] = {}
    rows = [[codes.setdefault(k, len(codes)) for k in _keys(n)] for n in names]
    out = np.full((len(names), max(map(len, rows), default=0)), -1, dtype=np.int32)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return out


def mixed_of_pairs(codes: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """``mixed(names[first[k]], names[second[k]])`` for every k at once, from ``key_codes(names)``:
    the names share a key and each has one the other lacks."""
    out = np.zeros(len(first), dtype=bool)
    for start in range(0, len(first), _PAIRS_AT_ONCE):  # (a long name's keys times the other's, per pair)
        a, b = codes[first[start : start + _PAIRS_AT_ONCE]], codes[second[start : start + _PAIRS_AT_ONCE]]
        same = (a[:, :, None] == b[:, None, :]) & (a >= 0)[:, :, None]  # (pairs, a's keys, b's keys)
        shared_a, shared_b = same.any(2).sum(1), same.any(1).sum(1)
        out[start : start + len(a)] = (shared_a > 0) & (shared_a < (a >= 0).sum(1)) & (shared_b < (b >= 0).sum(1))
    return out


_PAIRS_AT_ONCE = 1 << 16


def same_words_of_pairs(names: Sequence[str], first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """``same_words(names[first[k]], names[second[k]])`` for every k at once: from three
    keys per name (its words run together, its stems, its heavy words' keys)."""
    codes: dict[object, int] = {}
    keys = np.full((len(names), 3), -1, dtype=np.int64)
    for i, n in enumerate(names):
        if w := _words(n):
            keys[i] = [codes.setdefault(k, len(codes)) for k in (_compact(w), _stems(w), _heavy_keys(w))]
    a, b = keys[first], keys[second]
    return (a[:, 0] >= 0) & (b[:, 0] >= 0) & (a == b).any(axis=1)


def _same_word_groups(defs: list[Definition]) -> list[list[int]]:
    keys: dict[tuple[str, object], set[int]] = {}
    for i, d in enumerate(defs):
        w = _words(d.name)
        for k in (_compact(w), frozenset(_stems(w)), frozenset(_key(x) for x in w if x not in _LIGHT)):
            keys.setdefault((d.storage_class, k), set()).add(i)
    return [sorted(g) for g in keys.values() if len(g) > 1]


def described(description: str) -> bool:
    """Whether a description says what a name is about (the model reads the two together then)."""
    return _described(description)


class Candidates:
    """Which index pairs (i < j, one storage class) of ``defs`` may score at or above
    ``threshold`` (``candidate_pairs``), some names at a time.

    ``descriptions`` holds each definition's ``definition_text`` vector, for the
    described ones (other rows are ignored). Pairs whose ``score_bounds`` fall below
    the threshold are left out; names with the same words are always candidates
    (``same_words``, no vector read). ``take(matrix, new)`` gives the pairs of a name in
    ``new`` with one taken before or in ``new``, from one matrix product of those rows: it
    reads no other row of the matrix, so names can be taken as their vectors come
    (``matching.near_duplicates``), and over all of them each pair is given once."""

    def __init__(self, defs: list[Definition], threshold: float, descriptions: np.ndarray | None = None):
        self.defs, self.threshold, self.descriptions = defs, threshold, descriptions
        kinds = {c: k for k, c in enumerate(sorted({d.storage_class for d in defs}))}
        self.classes = np.array([kinds[d.storage_class] for d in defs], dtype=np.int64)
        self.has = np.array([described(d.description) for d in defs], dtype=bool) if descriptions is not None else None
        # Without descriptions the loose bound (every pair mixed) is (2 * cos + 1) / 3 + rounding:
        # it reaches the threshold exactly when cos reaches ``floor`` (a hair lower, so no pair the
        # bound keeps is lost; the tight bound below decides), one comparison instead of a bound.
        self.floor = np.float32((3 * (threshold - _ROUNDING) - 1) / 2 - 1e-6)
        self._codes = key_codes([d.name for d in defs])  # whether a pair is mixed, for its tight bound
        self._taken = np.zeros(len(defs), dtype=bool)
        self._fresh = np.zeros(len(defs), dtype=bool)

    def same_words(self) -> set[tuple[int, int]]:
        out: set[tuple[int, int]] = set()
        for members in _same_word_groups(self.defs):
            out.update((members[a], members[b]) for a in range(len(members)) for b in range(a + 1, len(members)))
        return out

    def take(self, matrix: np.ndarray, new: Sequence[int]) -> list[tuple[int, int]]:
        """The pairs (i < j) of a name in ``new`` with one taken before or in ``new``; those
        names are taken. Only their rows and those of names taken before are read."""
        out: list[tuple[int, int]] = []
        for start in range(0, len(new), CANDIDATE_BLOCK):
            block = np.asarray(new[start : start + CANDIDATE_BLOCK], dtype=np.int64)
            self._fresh[block] = True
            out += self._among(matrix, block)
            self._taken[block] = True
            self._fresh[block] = False
        return out

    def _among(self, matrix: np.ndarray, new: np.ndarray) -> list[tuple[int, int]]:
        threshold, descriptions, has, fresh = self.threshold, self.descriptions, self.has, self._fresh
        cols = np.flatnonzero(self._taken | fresh)
        cos = matrix[new] @ matrix[cols].T  # row r is name new[r], column c name cols[c]
        dcos = None
        if descriptions is not None and has is not None and has[new].any():
            dcos = descriptions[new] @ descriptions[cols].T
            dcos[~(has[new, None] & has[None, cols])] = np.nan
            rows, at = np.nonzero(score_bounds(cos, dcos) >= threshold)  # loose: every pair mixed
        else:
            rows, at = np.nonzero(cos >= self.floor)
        i, j = new[rows], cols[at]
        keep = (~fresh[j] | (j < i)) & (self.classes[i] == self.classes[j])  # two new names: once
        rows, at, i, j = rows[keep], at[keep], i[keep], j[keep]
        first, second = np.minimum(i, j), np.maximum(i, j)
        # ``tight_bounds``, each pair told whether it is mixed without a Python call per pair
        tight = score_bounds(
            cos[rows, at], None if dcos is None else dcos[rows, at], mixed_of_pairs(self._codes, first, second)
        )
        ok = tight >= threshold
        return list(zip(first[ok].tolist(), second[ok].tolist(), strict=True))


CANDIDATE_BLOCK = 1024  # names at a time (``Candidates.take``): one product of at most 1024 x n cosines


def candidate_pairs(
    defs: list[Definition], matrix: np.ndarray, threshold: float, descriptions: np.ndarray | None = None
) -> list[tuple[int, int]]:
    """Index pairs (i < j, one storage class) that may score at or above ``threshold``
    (``Candidates``), sorted: one matrix product per block of names, so thousands of
    names cost no pairwise Python loop."""
    c = Candidates(defs, threshold, descriptions)
    return sorted(c.same_words().union(c.take(matrix, range(len(defs)))))


@dataclass(frozen=True, slots=True)
class Match:
    name: str
    score: float


def candidates_of(
    name: str, storage_class: str, candidates: Mapping[str, Definition], cardinality: str | None = None
) -> list[str]:
    """The existing predicates a new name may be matched into (sorted)."""
    out = []
    for cand in sorted(candidates):
        d = candidates[cand]
        if cand in (NOTE, name) or d.storage_class != storage_class:
            continue
        if cardinality and d.cardinality != cardinality:
            continue
        out.append(cand)
    return out


def best_match(
    name: str,
    storage_class: str,
    candidates: Mapping[str, Definition],
    *,
    description: str = "",
    cardinality: str | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    vectors: Mapping[str, np.ndarray] | None = None,
) -> Match | None:
    """The existing predicate a new name most likely means, if it scores at or above the threshold."""
    if threshold < 0:
        return None
    scored = [
        (similarity(name, description, candidates[c], vectors), c)
        for c in candidates_of(name, storage_class, candidates, cardinality)
    ]
    return pick(name, scored, threshold)


def pick(name: str, scored: list[tuple[float, str]], threshold: float) -> Match | None:
    """The best-scoring candidate at or above the threshold; among equal scores the one
    spelled most like ``name`` (favourite_color goes to favorite_colour, not fav_color)."""
    if not scored:
        return None
    s, cand = max(scored, key=lambda sc: (sc[0], fuzz.ratio(name, sc[1]), sc[1]))
    return Match(cand, s) if s >= threshold else None
