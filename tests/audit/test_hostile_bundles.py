"""Bundles written by hand or by another tool: a registry text field given as null is
read as empty (a JSON null leaves a Go string empty), never an internal error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recall_engine.audit import verify
from recall_engine.errors import AuditError

FIXTURE = Path(__file__).parent / "fixtures" / "audit-v1.json"


def _content_digest(bundle: dict) -> str:
    try:
        return verify(json.dumps(bundle)).digest
    except AuditError as e:  # "... but its content digests to "sha256:..."": the digest of what it holds
        assert "digest mismatch" in e.message, e.message
        return e.message.rsplit('"', 2)[-2]


@pytest.mark.parametrize("field", ["description", "value_type"])
def test_a_null_registry_text_field_digests_as_an_empty_one(field):
    bundle = json.loads(FIXTURE.read_text())
    entry = bundle["registry"]["prefers_editor"]
    entry[field] = ""
    empty = _content_digest(bundle)
    entry[field] = None
    assert _content_digest(bundle) == empty
    bundle["digest"] = empty
    assert verify(json.dumps(bundle)).digest == empty  # and such a bundle verifies
