"""Registry files: the YAML format, its errors (file:line and field), the starters."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recall_engine.errors import RecallError, RegistryError, RegistryFileError
from recall_engine.registry import NOTE_DEFINITION, Definition, check_registry
from recall_engine.registry_files import (
    RegistryFile,
    load_registry_file,
    load_registry_text,
    load_starter,
    starter_names,
    starter_path,
)

REGISTRIES = Path(__file__).resolve().parents[2] / "registries"
SCHEMA = json.loads((REGISTRIES / "registry.schema.json").read_text())

GOOD = """\
registry: demo
description: A small registry.
predicates:
  prefers_editor:
    cardinality: single
    value_type: string
    description: The editor the user prefers, e.g. "Zed".
  likes:
    cardinality: multi
    excludes: [dislikes]
  dislikes:
    cardinality: multi
    excludes: [likes]
  deal_stage:
    cardinality: single
    value_type: enum
    allowed: [lead, won, lost]
  did:
    cardinality: multi
    historical: true
  favorite_color:
    cardinality: single
    aliases: [colour]
"""


def _header(body: str) -> str:
    return "registry: t\npredicates:\n" + body


# --- a good file --------------------------------------------------------------


def test_a_good_file_loads_in_file_order_with_note_added():
    r = load_registry_text(GOOD, path="demo.yaml")
    assert isinstance(r, RegistryFile)
    assert r.name == "demo"
    assert r.description == "A small registry."
    assert r.path == "demo.yaml"
    assert list(r.definitions) == [
        "prefers_editor",
        "likes",
        "dislikes",
        "deal_stage",
        "did",
        "favorite_color",
        "note",
    ]
    assert r.definitions["prefers_editor"] == Definition(
        "prefers_editor", "single", "string", 'The editor the user prefers, e.g. "Zed".'
    )
    assert r.definitions["likes"].excludes == ("dislikes",)
    assert r.definitions["deal_stage"].allowed == ("lead", "won", "lost")
    assert r.definitions["did"].historical and r.definitions["did"].multi
    assert r.definitions["favorite_color"].aliases == ("colour",)
    assert r.definitions["likes"].value_type == "string"  # the default
    assert r.definitions["note"] == NOTE_DEFINITION
    check_registry(r.definitions)


def test_a_file_and_its_bytes_load_the_same(tmp_path):
    p = tmp_path / "demo.yaml"
    p.write_text(GOOD, encoding="utf-8")
    from_file = load_registry_file(p)
    assert from_file == load_registry_text(GOOD)
    assert from_file.path == str(p)
    assert load_registry_text(b"\xef\xbb\xbf" + GOOD.encode()) == from_file  # a BOM is fine


def test_text_fields_keep_what_was_written():
    # YAML 1.1 reads yes/no/on as booleans and 1.10 as a number; text fields keep the characters.
    r = load_registry_text(
        _header(
            "  answer:\n    cardinality: single\n    value_type: enum\n    allowed: [yes, no, on, 1.0, 1.10, 2026-01-01]\n"
        )
    )
    assert r.definitions["answer"].allowed == ("yes", "no", "on", "1.0", "1.10", "2026-01-01")


def test_empty_values_are_omitted_ones():
    r = load_registry_text(
        "registry: t\ndescription:\npredicates:\n  a:\n    cardinality: multi\n    value_type:\n"
        "    description:\n    allowed:\n    aliases:\n    excludes:\n    historical:\n"
    )
    assert r.description == ""
    assert r.definitions["a"] == Definition("a", "multi", "string")
    assert list(load_registry_text("registry: t\npredicates:\n").definitions) == ["note"]


def test_a_json_file_in_the_same_shape_loads():
    doc = {"registry": "j", "predicates": {"a": {"cardinality": "single", "value_type": "number"}}}
    assert load_registry_text(json.dumps(doc, indent=2)).definitions["a"].value_type == "number"


def test_note_keeps_its_own_description():
    r = load_registry_text(_header("  note:\n    cardinality: multi\n    description: Anything else.\n"))
    assert r.definitions["note"] == Definition("note", "multi", "string", "Anything else.")


def test_excludes_may_name_an_alias():
    r = load_registry_text(
        _header(
            "  a:\n    cardinality: multi\n    aliases: [old_a]\n  b:\n    cardinality: multi\n    excludes: [old_a]\n"
        )
    )
    assert r.definitions["b"].excludes == ("old_a",)


# --- bad files: every message names file:line and the field ---------------------

BAD = [
    # (id, text, line, field, words the problem must contain)
    pytest.param(
        "invalid YAML",
        "registry: t\npredicates:\n  a: [single\n",
        4,
        None,
        "invalid YAML",
        id="invalid-yaml",
    ),
    pytest.param(
        "bad indentation",
        "registry: t\npredicates:\n  a:\n    cardinality: single\n   value_type: string\n",
        5,
        None,
        "invalid YAML",
        id="invalid-yaml-indent",
    ),
    pytest.param("tab", "registry: t\n\tpredicates: {}\n", 2, None, "tabs", id="invalid-yaml-tab"),
    pytest.param("two documents", "registry: t\n---\nregistry: u\n", 2, None, "single document", id="two-documents"),
    pytest.param("NUL", "registry: t\npredicates: {}\n\x00", 3, None, "not allowed", id="control-character"),
    pytest.param("empty", "", 1, None, "empty", id="empty-file"),
    pytest.param("comment only", "# nothing\n", 1, None, "empty", id="comment-only"),
    pytest.param("list", "\n- registry: t\n", 2, None, "not a list", id="top-level-list"),
    pytest.param("text", "coding\n", 1, None, "not text", id="top-level-text"),
    pytest.param(
        "unknown top",
        "registry: t\npredicate:\n  a:\n    cardinality: single\n",
        2,
        "predicate",
        "unknown key",
        id="unknown-top-level-key",
    ),
    pytest.param(
        "go format",
        "prefers_editor:\n  cardinality: single\n",
        1,
        "prefers_editor",
        "Go engine",
        id="go-engine-json-shape",
    ),
    pytest.param("no name", "predicates: {}\n", 1, "registry", "is required", id="registry-missing"),
    pytest.param("null name", "predicates: {}\nregistry:\n", 2, "registry", "is required", id="registry-empty"),
    pytest.param(
        "bad name",
        "registry: My Registry\npredicates: {}\n",
        1,
        "registry",
        "not a registry name",
        id="registry-bad-name",
    ),
    pytest.param(
        "list name",
        "registry: [a]\npredicates: {}\n",
        1,
        "registry",
        "must be text, got a list",
        id="registry-not-text",
    ),
    pytest.param(
        "dup top",
        "registry: t\npredicates: {}\nregistry: u\n",
        3,
        "registry",
        "given twice (first at line 1)",
        id="duplicate-top-level-key",
    ),
    pytest.param(
        "no predicates", "registry: t\ndescription: x\n", 1, "predicates", "is required", id="predicates-missing"
    ),
    pytest.param(
        "predicates list",
        "registry: t\npredicates:\n  - a\n",
        3,
        "predicates",
        "got a list",
        id="predicates-not-a-mapping",
    ),
    pytest.param(
        "description list",
        "registry: t\ndescription: [a]\npredicates: {}\n",
        2,
        "description",
        "must be text",
        id="description-not-text",
    ),
    pytest.param(
        "entry text",
        _header("  a: single\n"),
        3,
        "predicates.a",
        'got text "single"',
        id="entry-not-mapping",
    ),
    pytest.param(
        "entry null",
        _header("  a:\n  b:\n    cardinality: single\n"),
        3,
        "predicates.a",
        "got nothing",
        id="entry-empty",
    ),
    pytest.param(
        "unknown field",
        _header("  a:\n    cardinalty: single\n"),
        4,
        "predicates.a.cardinalty",
        "unknown field; did you mean 'cardinality'?",
        id="unknown-field",
    ),
    pytest.param(
        "unknown field far",
        _header("  a:\n    cardinality: single\n    colour: red\n"),
        5,
        "predicates.a.colour",
        "the fields are cardinality",
        id="unknown-field-no-suggestion",
    ),
    pytest.param(
        "dup field",
        _header("  a:\n    cardinality: single\n    cardinality: multi\n"),
        5,
        "predicates.a.cardinality",
        "given twice (first at line 4)",
        id="duplicate-field",
    ),
    pytest.param(
        "dup predicate",
        _header("  a:\n    cardinality: single\n  b:\n    cardinality: multi\n  a:\n    cardinality: multi\n"),
        7,
        "predicates.a",
        "predicate 'a' is given twice (first at line 3)",
        id="duplicate-predicate",
    ),
    pytest.param(
        "bad predicate name",
        _header("  Prefers-Editor:\n    cardinality: single\n"),
        3,
        "predicates.Prefers-Editor",
        "snake_case",
        id="bad-predicate-name",
    ),
    pytest.param(
        "long predicate name",
        _header(f"  {'a' * 65}:\n    cardinality: single\n"),
        3,
        f"predicates.{'a' * 65}",
        "64 bytes",
        id="predicate-name-too-long",
    ),
    pytest.param(
        "reserved name",
        _header("  registry_change:\n    cardinality: multi\n"),
        3,
        "predicates.registry_change",
        "reserved",
        id="reserved-predicate-name",
    ),
    pytest.param(
        "list key",
        _header("  [a, b]:\n    cardinality: single\n"),
        3,
        "predicates",
        "plain name",
        id="predicate-key-not-text",
    ),
    pytest.param(
        "merge key",
        _header("  a: &base\n    cardinality: single\n  b:\n    <<: *base\n"),
        6,
        "predicates.b",
        "merge keys",
        id="merge-key",
    ),
    pytest.param(
        "no cardinality",
        _header("  a:\n    value_type: string\n"),
        3,
        "predicates.a.cardinality",
        "is required",
        id="cardinality-missing",
    ),
    pytest.param(
        "bad cardinality",
        _header("  a:\n    cardinality: one\n"),
        4,
        "predicates.a.cardinality",
        "'one' is not a cardinality; want single or multi",
        id="cardinality-bad",
    ),
    pytest.param(
        "bad value_type",
        _header("  a:\n    cardinality: single\n    value_type: text\n"),
        5,
        "predicates.a.value_type",
        "'text' is not a value type",
        id="value-type-bad",
    ),
    pytest.param(
        "value_type list",
        _header("  a:\n    cardinality: single\n    value_type: [string]\n"),
        5,
        "predicates.a.value_type",
        "must be text, got a list",
        id="value-type-not-text",
    ),
    pytest.param(
        "historical text",
        _header('  a:\n    cardinality: multi\n    historical: "yes"\n'),
        5,
        "predicates.a.historical",
        'must be true or false, got text "yes"',
        id="historical-not-boolean",
    ),
    pytest.param(
        "historical number",
        _header("  a:\n    cardinality: multi\n    historical: 1\n"),
        5,
        "predicates.a.historical",
        "must be true or false, got the number 1",
        id="historical-number",
    ),
    pytest.param(
        "allowed number",
        _header("  a:\n    cardinality: single\n    value_type: enum\n    allowed: 3\n"),
        6,
        "predicates.a.allowed",
        "must be a list of text, got the number 3",
        id="allowed-not-a-list",
    ),
    pytest.param(
        "allowed nested",
        _header("  a:\n    cardinality: single\n    value_type: enum\n    allowed:\n      - x\n      - [y]\n"),
        8,
        "predicates.a.allowed",
        "one item is a list",
        id="allowed-item-not-text",
    ),
    pytest.param(
        "description mapping",
        _header("  a:\n    cardinality: single\n    description:\n      x: 1\n"),
        6,
        "predicates.a.description",
        "must be text, got a mapping",
        id="description-mapping",
    ),
    pytest.param(
        "custom tag",
        _header("  a:\n    cardinality: !!python/name:os.system single\n"),
        4,
        "predicates.a.cardinality",
        "must be text",
        id="python-tag-is-just-a-wrong-type",
    ),
    pytest.param(
        "enum no allowed",
        _header("  a:\n    cardinality: single\n    value_type: enum\n    description: x\n"),
        5,
        "predicates.a.allowed",
        "an enum must list its allowed values",
        id="enum-without-allowed",
    ),
    pytest.param(
        "enum empty allowed",
        _header("  a:\n    cardinality: single\n    value_type: enum\n    allowed: []\n"),
        6,
        "predicates.a.allowed",
        "an enum must list its allowed values",
        id="enum-with-empty-allowed",
    ),
    pytest.param(
        "allowed non-enum",
        _header("  a:\n    cardinality: single\n    allowed: [x]\n"),
        5,
        "predicates.a.allowed",
        "only an enum lists allowed values, and value_type is 'string'",
        id="allowed-on-non-enum",
    ),
    pytest.param(
        "allowed twice",
        _header(
            "  a:\n    cardinality: single\n    value_type: enum\n    allowed:\n      - Won\n      - lost\n      - won\n"
        ),
        9,
        "predicates.a.allowed",
        "lists 'won' twice",
        id="allowed-value-twice-ignoring-case",
    ),
    pytest.param(
        "allowed padded",
        _header('  a:\n    cardinality: single\n    value_type: enum\n    allowed: [" won"]\n'),
        6,
        "predicates.a.allowed",
        "padded",
        id="allowed-value-padded",
    ),
    pytest.param(
        "historical single",
        _header("  did:\n    cardinality: single\n    historical: true\n"),
        5,
        "predicates.did.historical",
        "must be multi-valued",
        id="historical-single-valued",
    ),
    pytest.param(
        "excludes unknown",
        _header(
            "  likes:\n    cardinality: multi\n    excludes:\n      - dislike\n  dislikes:\n    cardinality: multi\n"
        ),
        6,
        "predicates.likes.excludes",
        "'dislike' is not a predicate of this registry (nor an alias of one); did you mean 'dislikes'?",
        id="excludes-unknown-predicate",
    ),
    pytest.param(
        "excludes self",
        _header("  likes:\n    cardinality: multi\n    excludes: [likes]\n"),
        5,
        "predicates.likes.excludes",
        "cannot exclude itself",
        id="excludes-itself",
    ),
    pytest.param(
        "excludes bad name",
        _header("  likes:\n    cardinality: multi\n    excludes: [Dis-Likes]\n"),
        5,
        "predicates.likes.excludes",
        "not a predicate name",
        id="excludes-bad-name",
    ),
    pytest.param(
        "excludes text",
        _header("  likes:\n    cardinality: multi\n    excludes: dislikes\n"),
        5,
        "predicates.likes.excludes",
        "must be a list of text",
        id="excludes-not-a-list",
    ),
    pytest.param(
        "alias twice",
        _header(
            "  a:\n    cardinality: single\n    aliases: [c]\n  b:\n    cardinality: single\n    aliases:\n      - c\n"
        ),
        9,
        "predicates.b.aliases",
        "alias 'c' is claimed by both 'a' (line 5) and 'b'",
        id="alias-claimed-twice",
    ),
    pytest.param(
        "alias is a predicate",
        _header("  a:\n    cardinality: single\n  b:\n    cardinality: single\n    aliases: [a]\n"),
        7,
        "predicates.b.aliases",
        "'a' is both a predicate (line 3) and an alias of 'b'",
        id="alias-is-a-predicate",
    ),
    pytest.param(
        "alias own name",
        _header("  a:\n    cardinality: single\n    aliases: [a]\n"),
        5,
        "predicates.a.aliases",
        "alias of itself",
        id="alias-of-itself",
    ),
    pytest.param(
        "alias note",
        _header("  a:\n    cardinality: multi\n    aliases: [note]\n"),
        5,
        "predicates.a.aliases",
        "not a usable predicate name",
        id="alias-note",
    ),
    pytest.param(
        "alias listed twice",
        _header("  a:\n    cardinality: multi\n    aliases: [b, b]\n"),
        5,
        "predicates.a.aliases",
        "lists alias 'b' twice",
        id="alias-listed-twice",
    ),
    pytest.param(
        "note single",
        _header("  note:\n    cardinality: single\n"),
        4,
        "predicates.note.cardinality",
        "must be multi-valued string",
        id="note-single-valued",
    ),
    pytest.param(
        "note number",
        _header("  note:\n    cardinality: multi\n    value_type: number\n"),
        5,
        "predicates.note.value_type",
        "must be multi-valued string",
        id="note-number",
    ),
    pytest.param(
        "note excludes",
        _header("  note:\n    cardinality: multi\n    excludes: [a]\n  a:\n    cardinality: multi\n"),
        5,
        "predicates.note.excludes",
        "excludes nothing",
        id="note-excludes",
    ),
]


@pytest.mark.parametrize(("label", "text", "line", "field", "words"), BAD)
def test_a_bad_file_names_file_line_and_field(label, text, line, field, words):
    with pytest.raises(RegistryFileError) as caught:
        load_registry_text(text, path="mine.yaml")
    err = caught.value
    assert (err.path, err.line, err.field) == ("mine.yaml", line, field), str(err)
    prefix = f"mine.yaml:{line}:" + (f" field {field!r}:" if field else "")
    assert str(err).startswith(prefix), str(err)
    assert words in err.problem, str(err)
    assert err.code == "invalid_registry_file"


def test_bytes_that_are_not_utf8_name_their_line():
    with pytest.raises(RegistryFileError) as caught:
        load_registry_text(b"registry: t\npredicates:\n  caf\xe9:\n", path="latin1.yaml")
    assert str(caught.value).startswith("latin1.yaml:3: is not UTF-8")


def test_deep_nesting_is_an_error_not_a_crash():
    with pytest.raises(RegistryFileError, match="invalid YAML"):
        load_registry_text("registry: t\npredicates: " + "[" * 5000)


def test_a_too_large_file_is_refused():
    with pytest.raises(RegistryFileError, match="larger than"):
        load_registry_text("#" * (1024 * 1024 + 1))


def test_unsafe_tags_are_never_constructed():
    # Only nodes are composed: a python tag is an unknown value, never an object.
    with pytest.raises(RegistryFileError, match="got a list tagged tag:yaml.org,2002:python/object/apply:os.system"):
        load_registry_text('registry: !!python/object/apply:os.system ["echo hi"]\npredicates: {}\n')


def test_files_that_cannot_be_read(tmp_path):
    with pytest.raises(RegistryFileError) as caught:
        load_registry_file(tmp_path / "missing.yaml")
    assert str(caught.value) == f"{tmp_path / 'missing.yaml'}: no such file"
    with pytest.raises(RegistryFileError, match="is a folder"):
        load_registry_file(tmp_path)
    with pytest.raises(RegistryFileError, match="cannot be read"):
        load_registry_file("bad\x00name.yaml")


# --- starters -------------------------------------------------------------------

# docs/registry-files.md "Starter registries": every predicate of the Go engine's starters, with its
# cardinality, value type and (for an enum) allowed values. They must all stay.
REFERENCE = {
    "coding": {
        "deployment_target": ("single", "string"),
        "name": ("single", "string"),
        "note": ("multi", "string"),
        "prefers_editor": ("single", "string"),
        "prefers_language": ("single", "string"),
        "prefers_package_manager": ("single", "string"),
        "prefers_response_style": ("single", "string"),
        "prefers_test_framework": ("single", "string"),
        "project_constraint": ("multi", "string"),
        "project_name": ("single", "string"),
        "project_status": ("single", "string"),
        "pronouns": ("single", "string"),
        "repository_url": ("single", "string"),
        "role": ("single", "string"),
        "timezone": ("single", "string"),
        "uses_technology": ("multi", "string"),
    },
    "personal-assistant": {
        "amount": ("single", "string"),
        "date": ("single", "string"),
        "detail": ("multi", "string"),
        "did": ("multi", "string"),
        "dislikes": ("multi", "string"),
        "goal": ("multi", "string"),
        "likes": ("multi", "string"),
        "lives_in": ("single", "string"),
        "name": ("single", "string"),
        "note": ("multi", "string"),
        "owns": ("multi", "string"),
        "plans": ("multi", "string"),
        "relationship": ("multi", "string"),
        "role": ("single", "string"),
        "status": ("single", "string"),
        "works_at": ("single", "string"),
    },
    "support": {
        "account_id": ("single", "string"),
        "company": ("single", "ref"),
        "contact_channel": ("single", "enum", ("email", "phone", "chat", "sms")),
        "escalated_to": ("single", "ref"),
        "name": ("single", "string"),
        "note": ("multi", "string"),
        "open_issue": ("multi", "string"),
        "plan": ("single", "string"),
        "preferred_language": ("single", "string"),
        "promised": ("multi", "string"),
        "renewal_date": ("single", "date"),
        "resolved_issue": ("multi", "string"),
        "sentiment": ("single", "enum", ("positive", "neutral", "frustrated")),
        "timezone": ("single", "string"),
        "uses_product": ("multi", "string"),
    },
    "sales": {
        "budget_confirmed": ("single", "boolean"),
        "champion": ("single", "ref"),
        "close_date": ("single", "date"),
        "competitor": ("multi", "string"),
        "deal_stage": ("single", "enum", ("lead", "qualified", "proposal", "negotiation", "won", "lost")),
        "deal_value": ("single", "number"),
        "decision_maker": ("multi", "ref"),
        "last_contacted": ("single", "date"),
        "name": ("single", "string"),
        "next_step": ("single", "string"),
        "note": ("multi", "string"),
        "objection": ("multi", "string"),
        "pain_point": ("multi", "string"),
        "reports_to": ("single", "ref"),
        "title": ("single", "string"),
        "uses_technology": ("multi", "string"),
        "works_at": ("single", "ref"),
    },
    "voice": {
        "accessibility_need": ("multi", "string"),
        "appointment_time": ("single", "date"),
        "callback_number": ("single", "string"),
        "calling_on_behalf_of": ("single", "ref"),
        "consent_to_record": ("single", "boolean"),
        "name": ("single", "string"),
        "note": ("multi", "string"),
        "open_request": ("multi", "string"),
        "preferred_contact_time": ("single", "string"),
        "preferred_language": ("single", "string"),
        "prefers_response_style": ("single", "string"),
        "pronouns": ("single", "string"),
        "reason_for_calling": ("single", "string"),
        "timezone": ("single", "string"),
    },
}

# Every exclusion the starters declare, so that adding one is a decision a test shows.
EXCLUDES = {
    "coding": {
        "uses_technology": ("avoids_technology",),
        "avoids_technology": ("uses_technology",),
        "completed_task": ("open_task",),
    },
    "personal-assistant": {"likes": ("dislikes",), "dislikes": ("likes",), "gave_away": ("owns",), "sold": ("owns",)},
    "support": {"resolved_issue": ("open_issue",), "fulfilled_promise": ("promised",)},
    "sales": {
        "resolved_objection": ("objection",),
        "uses_technology": ("avoids_technology",),
        "avoids_technology": ("uses_technology",),
    },
    "voice": {"completed_request": ("open_request",)},
}

HISTORICAL = {
    "coding": {"completed_task"},
    "personal-assistant": {"did", "visited", "gave_away", "sold"},
    "support": {"resolved_issue", "fulfilled_promise"},
    "sales": {"resolved_objection"},
    "voice": {"completed_request"},
}


def test_starter_names():
    assert starter_names() == ["coding", "personal-assistant", "sales", "support", "voice"]
    assert sorted(p.stem for p in REGISTRIES.glob("*.yaml")) == starter_names()


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_every_starter_keeps_the_reference_predicates(name):
    r = load_starter(name)
    assert r.name == name
    assert r.description
    for pred, want in REFERENCE[name].items():
        d = r.definitions.get(pred)
        assert d is not None, f"{name} lost {pred}"
        assert (d.cardinality, d.value_type) == want[:2], pred
        if d.value_type == "enum":
            assert d.allowed == want[2], pred
    check_registry(r.definitions)


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_every_starter_definition_is_usable_by_an_agent(name):
    r = load_starter(name)
    for pred, d in r.definitions.items():
        assert len(d.description) >= 20, f"{name}.{pred} needs a description an agent can act on"
        assert d.aliases == (), f"{name}.{pred}: starters have no former names"
    assert {p: d.excludes for p, d in r.definitions.items() if d.excludes} == EXCLUDES[name]
    assert {p for p, d in r.definitions.items() if d.historical} == HISTORICAL[name]
    assert "avoids" not in r.definitions  # the demo uses it as an agent-invented contradiction
    assert r.definitions["note"] == NOTE_DEFINITION  # added, not redefined


def test_starters_agree_on_the_rules_of_the_predicates_they_share():
    # Several starters can be loaded into one store (the demo loads coding and
    # personal-assistant); a shared name must mean the same thing in each. The one
    # exception comes from the Go starters: works_at is text in personal, a ref in sales.
    loaded = {n: load_starter(n).definitions for n in starter_names()}
    clashes = set()
    for a, da in loaded.items():
        for b, db in loaded.items():
            for p in set(da) & set(db):
                if a < b and da[p].rules() != db[p].rules():
                    clashes.add((a, b, p))
    assert clashes == {("personal-assistant", "sales", "works_at")}


def test_personal_assistant_rules_the_demo_relies_on():
    r = load_starter("personal-assistant")
    d = r.definitions
    assert "dislikes" in d["likes"].excludes and "likes" in d["dislikes"].excludes
    assert d["did"].historical and d["did"].multi
    # No rule joins goal and did: the demo shows them side by side ("elsewhere").
    assert not d["did"].excludes and not d["goal"].excludes
    assert d["gave_away"].excludes == ("owns",) and d["sold"].excludes == ("owns",)
    assert (d["email"].cardinality, d["email"].value_type) == ("single", "string")


def test_coding_has_prefers_shell_and_the_demo_can_promote_into_it():
    d = load_starter("coding").definitions["prefers_shell"]
    assert (d.cardinality, d.value_type) == ("single", "string")
    assert "shell" in d.description


def test_dates_and_enums_where_a_value_is_one():
    sales = load_starter("sales").definitions
    support = load_starter("support").definitions
    assert sales["close_date"].value_type == support["renewal_date"].value_type == "date"
    assert sales["deal_stage"].value_type == support["sentiment"].value_type == "enum"


def test_personal_is_the_go_name_of_personal_assistant():
    assert load_starter("personal") == load_starter("personal-assistant")
    assert Path(str(starter_path("personal"))).name == "personal-assistant.yaml"
    assert load_starter(" Coding ") == load_starter("coding")


def test_an_unknown_starter_lists_the_starters():
    with pytest.raises(RegistryError) as caught:
        load_starter("codingg")
    assert str(caught.value) == (
        'no starter registry "codingg"; the starters are: coding, personal-assistant, sales, support, voice'
    )
    assert not isinstance(caught.value, RegistryFileError)


def test_load_starter_takes_a_path(tmp_path):
    p = tmp_path / "mine.yaml"
    p.write_text(GOOD)
    assert load_starter(str(p)).name == "demo"
    assert load_starter(p).name == "demo"
    with pytest.raises(RegistryFileError, match="no such file"):
        load_starter(str(tmp_path / "nope.yaml"))


# --- the JSON Schema -------------------------------------------------------------


def _schema_errors(doc) -> list[str]:
    """Validate with jsonschema (a test dependency)."""
    import jsonschema

    v = jsonschema.Draft202012Validator(SCHEMA)
    return [e.message for e in v.iter_errors(doc)]


def _hand_check(doc) -> list[str]:
    """The parts of the schema that a starter could get wrong, read from the schema itself."""
    errs = []
    top = SCHEMA["properties"]
    if not isinstance(doc, dict):
        return ["not an object"]
    errs += [f"missing {k}" for k in SCHEMA["required"] if k not in doc]
    errs += [f"unknown key {k}" for k in doc if k not in top]
    pred = SCHEMA["$defs"]["predicate"]
    fields = pred["properties"]
    for name, d in (doc.get("predicates") or {}).items():
        if not isinstance(d, dict):
            errs.append(f"{name}: not an object")
            continue
        errs += [f"{name}: missing {k}" for k in pred["required"] if k not in d]
        errs += [f"{name}: unknown field {k}" for k in d if k not in fields]
        if d.get("cardinality") not in fields["cardinality"]["enum"]:
            errs.append(f"{name}: cardinality")
        if d.get("value_type", "string") not in fields["value_type"]["enum"]:
            errs.append(f"{name}: value_type")
        if (d.get("value_type") == "enum") != bool(d.get("allowed")):
            errs.append(f"{name}: allowed")
        if d.get("historical") is True and d.get("cardinality") != "multi":
            errs.append(f"{name}: historical")
    return errs


def test_the_schema_is_a_valid_draft_2020_12_schema():
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    import jsonschema  # a test dependency (pyproject's test extra)

    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("name", starter_names())
def test_the_schema_accepts_every_starter(name):
    doc = yaml.safe_load((REGISTRIES / f"{name}.yaml").read_text())
    assert _schema_errors(doc) == []
    assert _hand_check(doc) == []


@pytest.mark.parametrize(
    "doc",
    [
        {"registry": "t", "predicates": {"a": {"cardinality": "one"}}},
        {"registry": "t", "predicates": {"a": {"cardinality": "single", "cardinalty": "single"}}},
        {"registry": "t", "predicates": {"a": {"cardinality": "single", "value_type": "enum"}}},
        {"registry": "t", "predicates": {"a": {"cardinality": "single", "allowed": ["x"]}}},
        {"registry": "t", "predicates": {"a": {"cardinality": "single", "historical": True}}},
        {"registry": "t", "predicates": {"a": {"cardinality": "multi", "historical": "yes"}}},
        {"registry": "t", "predicates": {"Bad": {"cardinality": "multi"}}},
        {"registry": "t", "predicates": {"note": {"cardinality": "single"}}},
        {"predicates": {}},
    ],
    ids=[
        "cardinality",
        "unknown-field",
        "enum-without-allowed",
        "allowed-on-string",
        "historical-single",
        "historical-text",
        "bad-name",
        "note-single",
        "no-registry",
    ],
)
def test_the_schema_refuses_what_the_loader_refuses(doc):
    with pytest.raises(RegistryFileError):
        load_registry_text(json.dumps(doc))
    assert _schema_errors(doc)


# --- fuzzing: nothing but the engine's errors escapes -----------------------------


def _load_or_engine_error(text) -> RegistryFile | None:
    try:
        r = load_registry_text(text, path="fuzz.yaml")
    except RecallError as e:
        if isinstance(e, RegistryFileError):
            assert str(e).startswith("fuzz.yaml")
        return None
    assert "note" in r.definitions
    check_registry(r.definitions)
    return r


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_fuzz_random_text(text):
    _load_or_engine_error(text)


@settings(max_examples=200, deadline=None)
@given(st.binary())
def test_fuzz_random_bytes(data):
    _load_or_engine_error(data)


_YAML_BITS = st.sampled_from(
    [
        ":",
        "- ",
        "[",
        "]",
        "{",
        "}",
        ",",
        "&a ",
        "*a",
        "<<: *a",
        "!!str ",
        "!!python/none",
        "? ",
        "|",
        ">-",
        "\t",
        "\n",
        "  ",
        '"',
        "'",
        "#",
        "---\n",
        "...",
        "~",
        "null",
        "yes",
        "true",
        "1e9",
        "enum",
        "multi",
        "single",
        "historical: true",
        "excludes: [likes]",
        "aliases: [did]",
        "allowed: []",
        "value_type: enum",
        "note",
        "registry_change",
        "\x00",
        "\ufeff",
        "é",
        "\u2028",
        "%YAML 1.1\n",
        "!foo ",
    ]
)


@st.composite
def _mutated(draw, base: str = GOOD) -> str:
    text = base
    for _ in range(draw(st.integers(1, 5))):
        i = draw(st.integers(0, len(text)))
        j = draw(st.integers(i, min(len(text), i + 12)))
        op = draw(st.sampled_from(["insert", "delete", "replace", "dup-line", "swap-lines"]))
        if op == "insert":
            text = text[:i] + draw(st.one_of(_YAML_BITS, st.text(max_size=4))) + text[i:]
        elif op == "delete":
            text = text[:i] + text[j:]
        elif op == "replace":
            text = text[:i] + draw(_YAML_BITS) + text[j:]
        else:
            lines = text.split("\n")
            a = draw(st.integers(0, len(lines) - 1))
            b = draw(st.integers(0, len(lines) - 1))
            if op == "dup-line":
                lines.insert(b, lines[a])
            else:
                lines[a], lines[b] = lines[b], lines[a]
            text = "\n".join(lines)
    return text


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_mutated())
def test_fuzz_mutations_of_a_valid_file(text):
    _load_or_engine_error(text)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(starter_names()).flatmap(lambda n: _mutated((REGISTRIES / f"{n}.yaml").read_text())))
def test_fuzz_mutations_of_the_starters(text):
    _load_or_engine_error(text)
