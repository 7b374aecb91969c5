"""The registry timeline: names (canonical, stored names), rules as of an instant,
exclusions, promotions, the records that govern a predicate, the digest, and the
decoding of registry records (ours and the Go engine's, docs/registry.md "Records")."""

from __future__ import annotations

import json
import random

import pytest

from recall_engine.errors import RegistryError
from recall_engine.records import REGISTRY_PREDICATE, REGISTRY_SUBJECT, make_event
from recall_engine.registry import NOTE_DEFINITION, Definition, Promotion, RegistryRecord, decode_record
from recall_engine.timeline import LoggedRecord, Timeline

from .helpers import D, declare, define, merge, note, promote, redefine, split, timeline


def go_record(obj: dict, when="01-01"):
    """A registry event as the Go engine writes it: compact JSON, source tool_result."""
    return make_event(
        REGISTRY_SUBJECT, REGISTRY_PREDICATE, json.dumps(obj, separators=(",", ":")), D(when), source="tool_result"
    )


# --- names -------------------------------------------------------------------------


def test_canonical_through_renames_merges_and_chains() -> None:
    tl = timeline(
        declare("editor", "01-01"),
        declare("favorite_editor", "02-01", aliases=("editor",)),
        define("editor_favorite", "03-01"),
        merge("editor_favorite", "favorite_editor", "04-01"),
        declare("ide", "01-01"),
        merge("ide", "editor_favorite", "05-01"),
    )
    assert tl.canonical("editor") == "favorite_editor"
    assert tl.canonical("editor_favorite") == "favorite_editor"
    assert tl.canonical("ide") == "favorite_editor"  # through the merged name
    assert tl.canonical("unknown_name") == "unknown_name"
    assert tl.stored_names("editor") == ["favorite_editor", "editor", "editor_favorite", "ide"]
    assert tl.renamed_names() == {"editor": "favorite_editor"}
    assert tl.merged_names() == {"editor_favorite": "favorite_editor", "ide": "editor_favorite"}
    assert tl.is_merged("ide") and tl.merged_into("ide") == "editor_favorite" and tl.merged_into("editor") is None
    assert set(tl.predicates()) == {"favorite_editor", "note"}
    assert tl.knows("ide") and not tl.knows("nothing")
    assert tl.definition("editor").name == "favorite_editor"
    assert tl.own_definition("editor_favorite").name == "editor_favorite"


def test_a_later_definition_takes_a_renamed_name_back() -> None:
    tl = timeline(
        declare("editor", "01-01"), declare("favorite_editor", "02-01", aliases=("editor",)), declare("editor", "03-01")
    )
    assert tl.canonical("editor") == "editor"
    assert set(tl.predicates()) == {"editor", "favorite_editor", "note"}


def test_split_ends_a_merge_and_a_later_merge_starts_again() -> None:
    reg = [declare("a", "01-01"), declare("b", "01-01"), merge("a", "b", "02-01"), split("a", "03-01")]
    assert timeline(*reg).canonical("a") == "a"
    assert timeline(*reg, merge("a", "b", "04-01")).canonical("a") == "b"


def test_first_effective_merge_of_a_name_wins() -> None:
    tl = timeline(
        declare("a", "01-01"),
        declare("b", "01-01"),
        declare("c", "01-01"),
        merge("a", "b", "02-01"),
        merge("a", "c", "03-01"),
    )
    assert tl.canonical("a") == "b"


def test_names_resolve_through_the_whole_log() -> None:
    """There is no as-of for names: a merge recorded later already reads for the past."""
    tl = timeline(declare("a", "01-01"), declare("b", "01-01"), merge("a", "b", "12-01"))
    assert tl.canonical("a") == "b"


# --- rules as of an instant ---------------------------------------------------------


def test_rule_as_of_an_instant() -> None:
    tl = timeline(declare("p", "03-01"), redefine("p", "06-01", "multi"), redefine("p", "09-01"))
    assert tl.rule("p", D("01-01")).cardinality == "single"  # the first definition governs older events
    assert not tl.multi_at("p", D("05-31"))
    assert tl.multi_at("p", D("06-01")) and tl.multi_at("p", D("08-31"))  # from its instant on
    assert not tl.multi_at("p", D("09-01"))


def test_retroactive_rule_covers_the_past_until_a_later_ordinary_one() -> None:
    tl = timeline(declare("p", "03-01"), redefine("p", "06-01", "multi", retroactive=True), redefine("p", "09-01"))
    assert tl.multi_at("p", D("01-01")) and tl.multi_at("p", D("08-31"))
    assert not tl.multi_at("p", D("09-01"))


def test_cardinality_is_fixed_when_a_retroactive_rule_covers_every_change() -> None:
    """The fold's plain paths read ``fixed_multi``: it must answer what ``multi_at`` answers at every instant."""
    retro = timeline(declare("p", "03-01"), redefine("p", "06-01", "multi", retroactive=True))
    assert retro.fixed_multi("p") is True and all(retro.multi_at("p", D(d)) for d in ("01-01", "06-01", "12-31"))
    again = timeline(declare("p", "03-01", "multi"), redefine("p", "06-01", retroactive=True), redefine("p", "07-01"))
    assert again.fixed_multi("p") is False  # a later ordinary rule with the same cardinality changes nothing
    changed = timeline(declare("p", "03-01"), redefine("p", "06-01", "multi", retroactive=True), redefine("p", "09-01"))
    assert changed.fixed_multi("p") is None  # multi, then single from 09-01
    assert timeline(declare("p", "03-01"), redefine("p", "06-01", "multi")).fixed_multi("p") is None


def test_rule_of_unknown_and_note() -> None:
    tl = timeline()
    assert tl.rule("anything", D("01-01")) is None and not tl.multi_at("anything", D("01-01"))
    assert tl.rule("note", D("01-01")) == NOTE_DEFINITION and tl.multi_at("note", 0)
    assert set(tl.predicates()) == {"note"}


def test_first_define_wins_and_the_later_one_is_marked_ignored() -> None:
    tl = timeline(define("p", "01-01", "single"), define("p", "02-01", "multi"), redefine("p", "03-01", "multi"))
    assert [r.ignored for r in tl.log] == [False, True, False]
    assert not tl.multi_at("p", D("02-15")) and tl.multi_at("p", D("03-01"))


def test_historical_at_and_excludes_at() -> None:
    log = (
        declare("did", "01-01", "multi", historical=True),
        declare("goal", "01-01", "multi"),
        redefine("goal", "06-01", "multi", excludes=("did",)),
    )
    tl = timeline(*log)
    assert tl.historical_at("did", D("01-01")) and not tl.historical_at("goal", D("01-01"))
    assert tl.excluders("did") == {"goal"} and tl.excluders("goal") == set()
    assert tl.excluded_by("goal") == {"did"} and tl.excluded_by("did") == set()
    # the registry as it stands at the read: a rule added later covers the old log
    assert tl.excludes_at("goal", "did", D("05-31")) and tl.excludes_at("goal", "did", D("06-01"))
    # a recall-fold-v4 bundle keeps the rules it was written under: as of the excluding event
    v4 = Timeline(log, fold_version="recall-fold-v4")
    assert not v4.excludes_at("goal", "did", D("05-31")) and v4.excludes_at("goal", "did", D("06-01"))


@pytest.mark.parametrize(
    "log, excluders",
    [
        pytest.param([redefine("dislikes", "06-01", "multi")], set(), id="removed: no longer excludes"),
        pytest.param([redefine("dislikes", "06-01", "multi", excludes=("likes",))], {"dislikes"}, id="kept"),
        pytest.param([merge("dislikes", "likes", "06-01")], set(), id="merged away: its own rules do not apply"),
    ],
)
def test_excluders_are_read_from_the_latest_definition(log, excluders) -> None:
    tl = timeline(declare("likes", "01-01", "multi"), declare("dislikes", "01-01", "multi", excludes=("likes",)), *log)
    assert tl.excluders("likes") == excluders
    assert tl.excludes_at("dislikes", "likes", D("02-01")) == bool(excluders)


def test_historical_is_read_as_the_registry_stands_now() -> None:
    log = (declare("did", "01-01", "multi"), redefine("did", "06-01", "multi", historical=True))
    assert timeline(*log).historical_at("did", D("02-01"))
    assert not Timeline(log, fold_version="recall-fold-v4").historical_at("did", D("02-01"))


def test_excluders_follow_names_at_read_time() -> None:
    tl = timeline(
        declare("likes", "01-01", "multi"),
        declare("enjoys", "01-01", "multi"),
        declare("dislikes", "01-01", "multi", excludes=("likes",)),
        merge("likes", "enjoys", "06-01"),
    )
    assert tl.excluders("enjoys") == {"dislikes"}
    assert tl.excludes_at("dislikes", "enjoys", D("02-01"))


def test_rules_of_a_rename_join_the_new_owner() -> None:
    tl = timeline(declare("food", "01-01", "multi"), declare("likes_food", "06-01", "single", aliases=("food",)))
    assert tl.multi_at("likes_food", D("03-01")) and not tl.multi_at("likes_food", D("06-01"))


# --- promotions ----------------------------------------------------------------------


def test_promotions_and_promoting_back() -> None:
    n1, n2 = note("peanuts are bad for me", "09-01"), note("bob likes tea", "09-02", subject="bob")
    tl = timeline(declare("allergy", "01-01", "multi"), promote("allergy", "10-01", (n1, "peanuts"), (n2, "tea")))
    target, prom, rec_id = tl.promotion(n1.id)
    assert (target, prom) == ("allergy", Promotion(n1.id, "user", "peanuts")) and rec_id == tl.log[-1].event_id
    assert tl.promoted_note_ids() == {n1.id, n2.id}
    assert tl.promotions_into("allergy", "bob") == [Promotion(n2.id, "bob", "tea")]
    assert len(tl.promotions_into("allergy")) == 2
    back = tl.with_records(
        [
            LoggedRecord(
                D("10-05"), "m-back", RegistryRecord("promote", "note", notes=(Promotion(n1.id, "user", n1.value),))
            )
        ]
    )
    assert back.promotion(n1.id) is None and back.promoted_note_ids() == {n2.id}
    assert tl.promotion(n1.id) is not None  # previews never change the timeline they came from


def test_promotion_into_a_merged_name_reads_as_its_owner() -> None:
    n = note("I write go", "09-01")
    tl = timeline(
        declare("languages", "01-01", "multi"),
        define("langs", "02-01", "multi"),
        promote("langs", "03-01", (n, "go")),
        merge("langs", "languages", "04-01"),
    )
    assert tl.promotion(n.id)[0] == "languages"


# --- governing records (explain) -----------------------------------------------------------


def test_governing_lists_the_records_that_decide_oldest_first() -> None:
    n = note("I can't stand kiwis", "09-01")
    reg = [
        declare("likes", "01-01", "multi"),
        declare("shell", "01-02"),
        declare("dislikes", "01-03", "multi"),
        redefine("dislikes", "02-01", "multi", excludes=("likes",)),
        define("enjoys", "03-01", "multi"),
        merge("enjoys", "likes", "04-01"),
        promote("likes", "05-01", (n, "kiwis")),
        define("likes", "06-01", "single"),
    ]
    random.Random(1).shuffle(reg)
    tl = Timeline(reg)
    got = [(r.record.op, r.record.name) for r in tl.governing("enjoys")]
    assert got == [
        ("declare", "likes"),
        ("redefine", "dislikes"),
        ("define", "enjoys"),
        ("merge", "enjoys"),
        ("promote", "likes"),
    ]
    assert [r.at for r in tl.governing("likes")] == sorted(r.at for r in tl.governing("likes"))


# --- digest and construction ------------------------------------------------------------


def test_digest_depends_on_the_log_not_its_order() -> None:
    reg = [declare("a", "01-01"), redefine("a", "02-01", "multi"), merge("b", "a", "03-01")]
    d = Timeline(reg).digest
    assert d.startswith("sha256:") and len(d) == len("sha256:") + 64
    assert Timeline(list(reversed(reg))).digest == d
    assert Timeline(reg + reg[:1]).digest == d  # an event twice is one record
    assert Timeline(reg[:2]).digest != d
    assert Timeline().digest != d


def test_timeline_from_records_equals_timeline_from_events() -> None:
    reg = [declare("a", "01-01"), define("a", "01-02", "multi"), merge("b", "a", "03-01")]
    a = Timeline(reg)
    b = Timeline(records=[LoggedRecord(e.observed_at, e.id, decode_record(e)) for e in reversed(reg)])
    assert a.digest == b.digest and [r.ignored for r in a.log] == [r.ignored for r in b.log] == [False, True, False]


def test_equal_id_records_read_the_same_whatever_the_input_order() -> None:
    # ids lower-case the record's JSON, so these two records share an id
    a = RegistryRecord("declare", "p", definition=Definition("p", description="A Thing")).to_event(D("01-01"))
    b = RegistryRecord("declare", "p", definition=Definition("p", description="a thing")).to_event(D("01-01"))
    assert a.id == b.id and a.value != b.value
    assert Timeline([a, b]).definition("p") == Timeline([b, a]).definition("p")


# --- record decoding --------------------------------------------------------------------------


def test_go_merge_record() -> None:
    e = go_record(
        {
            "name": "editor_favorite",
            "alias_of": "favorite_editor",
            "cardinality": "",
            "value_type": "",
            "description": "",
        }
    )
    assert e.value == (
        '{"name":"editor_favorite","alias_of":"favorite_editor","cardinality":"","value_type":"","description":""}'
    )
    rec = decode_record(e)
    assert (rec.op, rec.name, rec.into, rec.definition) == ("merge", "editor_favorite", "favorite_editor", None)


def test_go_definition_records() -> None:
    auto = decode_record(
        go_record(
            {
                "name": "favorite_editor",
                "auto": True,
                "cardinality": "single",
                "value_type": "",
                "description": "The editor",
            }
        )
    )
    assert (auto.op, auto.auto, auto.definition.cardinality, auto.definition.description) == (
        "define",
        True,
        "single",
        "The editor",
    )
    retro = decode_record(
        go_record(
            {"name": "allergy", "retroactive": True, "cardinality": "multi", "value_type": "string", "description": ""}
        )
    )
    assert (retro.op, retro.retroactive, retro.definition.cardinality) == ("redefine", True, "multi")
    plain = decode_record(
        go_record(
            {
                "name": "stage",
                "cardinality": "single",
                "value_type": "enum",
                "description": "",
                "allowed": ["Won", "Lost"],
                "aliases": ["deal_stage"],
            }
        )
    )
    assert (plain.op, plain.definition.allowed, plain.definition.aliases) == (
        "declare",
        ("Won", "Lost"),
        ("deal_stage",),
    )


def test_go_log_folds_like_the_reference() -> None:
    """TestMatchedNameFoldsWithItsOwner, as a timeline: define, merge, then split."""
    log = [
        go_record(
            {"name": "favorite_editor", "auto": True, "cardinality": "single", "value_type": "", "description": "x"},
            "01-01",
        ),
        go_record(
            {"name": "favorite_editor", "auto": True, "cardinality": "multi", "value_type": "", "description": "x"},
            "01-02",
        ),
        go_record(
            {
                "name": "editor_favorite",
                "alias_of": "favorite_editor",
                "cardinality": "",
                "value_type": "",
                "description": "",
            },
            "01-03",
        ),
    ]
    tl = Timeline(log)
    assert tl.canonical("editor_favorite") == "favorite_editor" and [r.ignored for r in tl.log] == [False, True, False]
    assert not tl.multi_at("favorite_editor", D("06-01"))
    rules = tl.governing("favorite_editor")
    assert [(r.record.op, r.record.name) for r in rules] == [
        ("define", "favorite_editor"),
        ("merge", "editor_favorite"),
    ]


def _reg_event(value, **kw):
    return make_event(
        kw.pop("subject", REGISTRY_SUBJECT), kw.pop("predicate", REGISTRY_PREDICATE), value, D("01-01"), **kw
    )


GOOD_DEF = {"cardinality": "single", "value_type": "string", "description": ""}
BAD_RECORDS = [
    (_reg_event('{"op":"declare"}', subject="user"), "is not a registry record"),
    (_reg_event('{"op":"declare"}', predicate="note"), "is not a registry record"),
    (_reg_event('{"op":"declare"}', retraction=True), "is not a registry record"),
    (_reg_event(5), "does not hold a record"),
    (_reg_event("{not json"), "does not hold valid JSON"),
    (_reg_event("[1, 2]"), "does not hold a record"),
    (_reg_event('{"op":"declare","definition":{}}'), "names no usable predicate"),
    (_reg_event('{"op":"declare","name":"Bad Name","definition":{}}'), "names no usable predicate"),
    (_reg_event('{"op":"declare","name":"registry_change","definition":{}}'), "names no usable predicate"),
    (_reg_event('{"op":"rename","name":"a"}'), "has unknown op 'rename'"),
    (
        _reg_event(json.dumps({"op": "declare", "name": "a", "definition": GOOD_DEF, "colour": 1})),
        "unknown field 'colour'",
    ),
    (_reg_event('{"op":"declare","name":"a"}'), "declare needs a definition"),
    (_reg_event('{"op":"split","name":"a","definition":"single"}'), "split needs a definition"),
    (
        _reg_event(json.dumps({"op": "declare", "name": "a", "definition": {"cardinality": "many"}})),
        "'a' has cardinality 'many', want single or multi",
    ),
    (
        _reg_event(json.dumps({"op": "declare", "name": "a", "definition": GOOD_DEF | {"size": 1}})),
        "unknown field 'size'",
    ),
    (
        _reg_event(json.dumps({"op": "declare", "name": "a", "definition": GOOD_DEF | {"historical": True}})),
        "'a' is historical and must be multi-valued",
    ),
    (
        _reg_event(json.dumps({"op": "declare", "name": "a", "definition": GOOD_DEF | {"historical": "yes"}})),
        "historical must be true or false",
    ),
    (
        _reg_event(json.dumps({"op": "declare", "name": "a", "definition": GOOD_DEF | {"excludes": ["a"]}})),
        "'a' cannot exclude itself",
    ),
    (
        _reg_event(json.dumps({"op": "declare", "name": "a", "definition": GOOD_DEF | {"aliases": "b"}})),
        "aliases must be a list of strings",
    ),
    (
        _reg_event(json.dumps({"op": "declare", "name": "a", "definition": GOOD_DEF | {"value_type": "colour"}})),
        "has value_type 'colour'",
    ),
    (
        _reg_event(json.dumps({"op": "declare", "name": "a", "definition": GOOD_DEF | {"value_type": "enum"}})),
        "is an enum and must list its allowed values",
    ),
    (_reg_event('{"op":"merge","name":"a","into":"a"}'), "cannot merge 'a' into 'a'"),
    (_reg_event('{"op":"merge","name":"a"}'), "cannot merge 'a' into ''"),
    (_reg_event('{"op":"merge","name":"note","into":"a"}'), "cannot merge 'note' into 'a'"),
    (_reg_event('{"op":"merge","name":"a","into":"Bad"}'), "cannot merge 'a' into 'Bad'"),
    (_reg_event('{"op":"promote","name":"a"}'), "promote needs a list of notes"),
    (_reg_event('{"op":"promote","name":"a","notes":[]}'), "promote needs a list of notes"),
    (
        _reg_event('{"op":"promote","name":"a","notes":[{"event_id":"m-1","subject":"u"}]}'),
        "a promoted note needs event_id, subject and value",
    ),
    (
        _reg_event('{"op":"promote","name":"a","notes":[{"event_id":"m-1","subject":"u","value":null}]}'),
        "a promoted note needs event_id, subject and value",
    ),
    (
        _reg_event('{"op":"promote","name":"a","notes":[{"event_id":1,"subject":"u","value":"x"}]}'),
        "a promoted note needs event_id, subject and value",
    ),
    (
        _reg_event(json.dumps({"op": "declare", "name": "a", "definition": GOOD_DEF, "operator": 5})),
        "operator must be text",
    ),
    (_reg_event('{"op":"merge","name":"a","into":"b","score":true}'), "score must be a number"),
    (
        _reg_event('{"name":"a","alias_of":"a","cardinality":"","value_type":"","description":""}'),
        "cannot merge 'a' into 'a'",
    ),
    (_reg_event('{"name":"a","cardinality":"","value_type":"","description":""}'), "has cardinality ''"),
    (
        _reg_event('{"name":"a","cardinality":"single","value_type":"","description":"","excludes":["b"]}'),
        "unknown field 'excludes'",
    ),
]


@pytest.mark.parametrize("event,message", BAD_RECORDS, ids=[m for _, m in BAD_RECORDS])
def test_bad_records_raise_registry_error_with_a_message(event, message) -> None:
    with pytest.raises(RegistryError) as err:
        decode_record(event)
    assert message in str(err.value)
    assert f"registry event {event.id!r}" in str(err.value)
    with pytest.raises(RegistryError):
        Timeline([declare("ok", "01-01"), event])  # one bad record fails the whole log


def test_our_records_round_trip() -> None:
    recs = [
        RegistryRecord(
            "declare",
            "a",
            definition=Definition("a", "multi", "enum", "d", allowed=("X", "y"), aliases=("old",), excludes=("b",)),
        ),
        RegistryRecord(
            "redefine",
            "a",
            definition=Definition("a", "multi", historical=True),
            retroactive=True,
            operator="ops",
            reason="fix",
            plan="plan-1",
        ),
        RegistryRecord("merge", "b", into="a", score=0.93, auto=True),
        RegistryRecord("promote", "a", notes=(Promotion("m-1", "user", 3),)),
    ]
    for rec in recs:
        assert decode_record(rec.to_event(D("01-01"))) == rec
