"""A realistic demo store: nine months of agents remembering, with the mess operators curate.

Storylines (collection ``memories``, coding and personal-assistant registries,
open vocabulary): a user who moves between three cities, three employers and
three work emails; editor vim -> emacs -> zed; likes then dislikes mangoes; a
goal later done (a goal/did conflict no rule joins); agents inventing
``editor_preference`` beside ``prefers_editor`` and ``avoids`` beside ``likes``
for several subjects; notes that want a predicate ("I use fish as my shell").
``--events N`` adds generated subjects until the collection holds about N
events, through the store's bulk path. Events are built directly (not through
``remember``) so a million of them load in about a minute.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator
from itertools import chain

from recall_engine.instants import NS, parse_instant
from recall_engine.records import Event, make_event
from recall_engine.registry import Definition, RegistryRecord
from recall_engine.registry_files import load_starter
from recall_engine.timeline import Timeline

from .registry_sync import combine, plan_declarations

START = parse_instant("2026-02-01")
END = parse_instant("2026-10-31")
REGISTRY_AT = parse_instant("2026-01-15")
OTHER_COLLECTIONS = {"support": "support", "sales": "sales", "voice": "voice"}


def _t(day: str, hour: int = 12) -> int:
    return parse_instant(day) + hour * 3600 * NS


def _e(subject: str, predicate: str, value, day: str, hour: int = 12, **kw) -> Event:
    kw.setdefault("source", "user_stated")
    return make_event(subject, predicate, value, _t(day, hour), **kw)


def registry_events(names: list[str], operator: str) -> list[Event]:
    defs, _ = combine([load_starter(n) for n in names])
    recs = plan_declarations(Timeline(), defs, operator, open_vocabulary=True)
    return [r.to_event(REGISTRY_AT + i, source="operator") for i, r in enumerate(recs)]


def _auto(name: str, card: str, day: str, description: str = "") -> Event:
    rec = RegistryRecord(op="define", name=name, definition=Definition(name, card, "string", description), auto=True)
    return rec.to_event(_t(day, 0), source="tool_result")


def storylines() -> list[Event]:
    ev: list[Event] = []
    add = ev.append
    # a user who moves, changes jobs and work emails
    for (city, job, mail), day in zip(
        [
            ("Lisbon", "Acme", "sam@acme.example"),
            ("Berlin", "Globex", "sam@globex.example"),
            ("Toronto", "Initech", "sam@initech.example"),
        ],
        ["2026-02-03", "2026-05-10", "2026-09-02"],
        strict=False,
    ):
        add(_e("user", "lives_in", city, day, 9, evidence=f"I live in {city} now"))
        add(_e("user", "works_at", job, day, 10, evidence=f"I just started at {job}"))
        add(_e("user", "email", mail, day, 11, source="tool_result"))
    add(_e("user", "name", "Sam", "2026-02-03", 8))
    # editor vim -> emacs -> zed
    for v, day in [("vim", "2026-09-01"), ("emacs", "2026-09-20"), ("zed", "2026-10-05")]:
        add(_e("user", "prefers_editor", v, day, 14, kind="preference", evidence=f"I'm using {v} these days"))
    # likes then dislikes mangoes
    add(_e("user", "likes", "mangoes", "2026-03-01", kind="preference"))
    add(_e("user", "likes", "hiking", "2026-03-01", 13, kind="preference"))
    add(_e("user", "dislikes", "mangoes", "2026-06-12", kind="preference", evidence="I can't stand mangoes anymore"))
    # a goal later done, with nothing joining them
    add(_e("user", "goal", "run a marathon", "2026-02-10"))
    add(_e("user", "goal", "learn piano", "2026-02-10", 13))
    add(_e("user", "did", "run a marathon", "2026-10-12", evidence="I finished the Toronto marathon!"))
    for tech, day in [("python", "2026-02-20"), ("rust", "2026-04-02"), ("postgresql", "2026-06-01")]:
        add(_e("user", "uses_technology", tech, day))
    add(_e("user", "note", "I use fish as my shell", "2026-03-05", source="agent_inferred", confidence=0.5))
    add(_e("user", "note", "Prefers answers with code first", "2026-03-06", source="agent_inferred", confidence=0.5))

    # agents inventing predicates: editor_preference beside prefers_editor, avoids beside likes
    add(_auto("editor_preference", "single", "2026-04-01", "The editor someone prefers"))
    add(_auto("avoids", "multi", "2026-04-02", "Things someone stays away from"))
    people = {
        "alice": ("helix", "cilantro", "zsh"),
        "bob": ("vim", "coffee", "fish"),
        "carol": ("vscode", "spicy food", "bash"),
        "dan": ("emacs", "crowds", "nushell"),
    }
    for i, (who, (editor, thing, shell)) in enumerate(people.items()):
        d = f"2026-0{4 + i % 4}-1{i}"
        add(_e(who, "name", who.title(), "2026-02-05", 9 + i))
        if who in ("alice", "bob"):
            add(_e(who, "editor_preference", editor, d, 10, source="agent_inferred", confidence=0.8))
        else:
            add(_e(who, "prefers_editor", editor, d, 10, kind="preference"))
        if who != "dan":
            add(_e(who, "likes", thing, "2026-03-1" + str(i), 11, kind="preference"))
            add(_e(who, "avoids", thing, f"2026-07-1{i}", 11, source="agent_inferred", confidence=0.7))
        text = f"I use {shell} as my shell" if who != "dan" else f"my shell is {shell}"
        add(_e(who, "note", text, f"2026-05-0{i + 1}", 15, source="agent_inferred", confidence=0.5))
    return ev


_CITIES = [
    "Lisbon",
    "Berlin",
    "Toronto",
    "Austin",
    "Osaka",
    "Nairobi",
    "Lima",
    "Oslo",
    "Seoul",
    "Dublin",
    "Porto",
    "Cairo",
]
_COMPANIES = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Stark", "Wayne", "Tyrell", "Cyberdyne", "Soylent"]
_EDITORS = ["vim", "emacs", "zed", "helix", "vscode", "neovim", "sublime", "nano"]
_TECH = [
    "python",
    "rust",
    "go",
    "typescript",
    "postgresql",
    "redis",
    "kafka",
    "docker",
    "kubernetes",
    "react",
    "django",
    "numpy",
]
_THINGS = [
    "mangoes",
    "coffee",
    "jazz",
    "hiking",
    "chess",
    "sushi",
    "running",
    "podcasts",
    "cycling",
    "tea",
    "poetry",
    "opera",
]
_POOLS = {
    "lives_in": _CITIES,
    "works_at": _COMPANIES,
    "prefers_editor": _EDITORS,
    "uses_technology": _TECH,
    "likes": _THINGS,
    "dislikes": _THINGS,
    "goal": ["run a marathon", "learn piano", "write a book", "visit Japan"],
    "did": ["run a marathon", "learn piano", "write a book", "visit Japan"],
    "prefers_language": ["python", "rust", "go", "typescript"],
}


def generated(target: int, seed: int, defs: dict[str, Definition]) -> Iterator[Event]:
    """About ``target`` events over generated subjects, each pair with a plausible history."""
    rng = random.Random(seed)
    preds = sorted(n for n, d in defs.items() if n != "note")
    span = END - START
    made = 0
    n = 0
    while made < target:
        n += 1
        subject = f"person-{n:06d}"
        for p in rng.sample(preds, min(len(preds), rng.randint(4, 10))):
            d = defs[p]
            steps = rng.randint(1, 8) if d.cardinality == "single" else rng.randint(1, 6)
            times = sorted(rng.randrange(span) for _ in range(steps))
            for k, dt in enumerate(times):
                v = _value(rng, p, d, k)
                if d.cardinality == "multi" and k and rng.random() < 0.15:
                    yield make_event(subject, p, v, START + dt + k, retraction=True, source="user_stated")
                else:
                    yield make_event(
                        subject,
                        p,
                        v,
                        START + dt + k,
                        source=rng.choice(("user_stated", "agent_inferred", "tool_result")),
                        confidence=rng.choice((1.0, 0.9, 0.8)),
                    )
                made += 1
                if made >= target:
                    return


def _value(rng: random.Random, p: str, d: Definition, k: int):
    vt = d.value_type or "string"
    if vt == "enum":
        return rng.choice(d.allowed)
    if vt == "number":
        return rng.randrange(1, 500) * 100
    if vt == "boolean":
        return rng.random() < 0.5
    if vt == "date":
        return f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    pool = _POOLS.get(p)
    if pool:
        return rng.choice(pool)
    if vt == "ref":
        return f"person-{rng.randint(1, 999):06d}"
    return f"{p.replace('_', ' ')} {rng.randint(1, 40)}"


def _append(store, events: Iterable[Event], progress: Callable[[int], None] | None) -> int:
    """Every event in one transaction: an interrupted or failed seeding leaves the
    collection empty, so `demo` can simply be run again (a half-grown demo would read
    as seeded and never grow)."""
    bulk = getattr(store, "append_many", None)
    if bulk is not None:
        return bulk(events, progress=(lambda read, written: progress(read)) if progress else None, atomic=True)
    batch = list(events)
    store.append(batch)
    if progress:
        progress(len(batch))
    return len(batch)


def is_seeded(store) -> bool:
    """Does this collection already hold the demo's storylines (their ids are fixed)?"""
    first = storylines()[0]
    return bool(store.events_by_id([first.id]))


def build_demo(
    backend,
    collection: str = "memories",
    *,
    events: int | None = None,
    seed: int = 7,
    operator: str = "demo",
    progress: Callable[[int], None] | None = None,
) -> dict:
    """Seed ``collection`` (and small support, sales and voice collections) with the demo history."""
    store = backend.store(collection)
    reg = registry_events(["coding", "personal-assistant"], operator)
    base = [*reg, *storylines()]
    total = len(base)
    if events and events > total:
        defs, _ = combine([load_starter(n) for n in ["coding", "personal-assistant"]])
        _append(store, chain(base, generated(events - total, seed, defs)), progress)
        total = store.count()
    else:
        store.append(base)
    names = [collection]
    for coll, starter in OTHER_COLLECTIONS.items():
        if coll == collection:
            continue
        other = backend.store(coll)
        if other.count() == 0:
            other.append([*registry_events([starter], operator), *_other_storyline(starter)])
        names.append(coll)
    return {"collections": names, "events": total}


def _other_storyline(starter: str) -> list[Event]:
    if starter == "support":
        return [
            _e("acme-corp", "open_issue", "login fails with SSO", "2026-03-02"),
            _e("acme-corp", "sentiment", "frustrated", "2026-03-02", 13),
            _e("acme-corp", "resolved_issue", "login fails with SSO", "2026-03-09"),
            _e("acme-corp", "sentiment", "positive", "2026-03-09", 13),
        ]
    if starter == "sales":
        return [
            _e("globex", "deal_stage", s, d)
            for s, d in [
                ("lead", "2026-02-10"),
                ("qualified", "2026-03-15"),
                ("proposal", "2026-05-01"),
                ("won", "2026-07-20"),
            ]
        ]
    return [
        _e("caller-42", "reason_for_calling", "reschedule appointment", "2026-06-01"),
        _e("caller-42", "consent_to_record", True, "2026-06-01", 13),
    ]


MAX_DEMO_EVENTS = 50_000_000


def seed_demo(
    backend,
    store,
    collection: str,
    *,
    events: int | None = None,
    seed: int = 7,
    operator: str = "demo",
    progress: Callable[[int], None] | None = None,
) -> dict:
    """The `demo` command's rules, for any front end: seed an empty collection; on one that
    already holds the demo add nothing and say so (``already_seeded``); refuse any other."""
    from recall_engine.errors import InvalidInput

    if events is not None and not (0 <= events <= MAX_DEMO_EVENTS):
        raise InvalidInput(f"--events must be between 0 and {MAX_DEMO_EVENTS:,}, got {events}")
    if is_seeded(store):
        return {"collections": [collection], "events": store.count(), "already_seeded": True}
    if store.count() > 0:
        raise InvalidInput(
            f"collection {collection!r} already holds {store.count()} event(s); "
            "the demo seeds an empty collection (choose another with --collection or --store)"
        )
    return build_demo(backend, collection, events=events, seed=seed, operator=operator, progress=progress)
