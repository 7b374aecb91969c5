"""audit import admits every event against the target store, as remember checks a statement."""

from __future__ import annotations

import pytest

from recall_admin.audit_io import import_bundle
from recall_engine.audit import build_bundle, encode_bundle
from recall_engine.errors import AuditError
from recall_engine.memory import Memory
from recall_engine.records import make_event
from recall_engine.registry import Definition, RegistryRecord
from tests.memory.conftest import NOW


def _bundle(value_type: str, value) -> bytes:
    rec = RegistryRecord(op="declare", name="deal_value", definition=Definition("deal_value", "single", value_type))
    log = [rec.to_event(NOW - 100)]
    events = [make_event("acme", "deal_value", value, NOW - 50)]
    return encode_bundle(build_bundle(events, log, as_of=NOW))


def test_a_bundle_that_clashes_with_the_store_registry_is_refused_whole(store):
    m = Memory(store, now=lambda: NOW)
    m.append_records(
        [RegistryRecord(op="declare", name="deal_value", definition=Definition("deal_value", "single", "number"))]
    )
    before = store.count()
    with pytest.raises(AuditError) as err:
        import_bundle(m, _bundle("string", "lots"))
    assert str(err.value).startswith("the bundle cannot be imported into this store: bundle event 'm-")
    assert str(err.value).endswith("; nothing was imported")
    assert store.count() == before


def test_a_bundle_that_fits_the_store_imports(store):
    m = Memory(store, now=lambda: NOW)
    assert import_bundle(m, _bundle("number", 5))["imported"] == 2
    assert [b.value for b in m.profile("acme")] == [5]
