"""Audit bundles: export, standalone verify, offline replay, import (docs/audit.md).

A bundle holds the complete histories in a scope, the registry and its log, an
explicit as-of instant, the event and fold versions and a checksum. ``verify``
and ``replay`` need no database and no embedder: they read the bundle, check it
in a fixed order (each failure names what failed) and fold it with the pure
core (records, values, registry, timeline, fold). Nothing here imports the
storage path, so a storage bug cannot hide inside a verification.

One module per job: ``load`` (strict JSON, envelope), ``verify``, ``replay``,
``export``, ``importing``, ``digest`` (digests and checksums), ``scope``. Each
format sits behind ``bundle_format.BundleFormat``: ``ours_v2`` (``recall-audit-v2``,
written and read) and ``go_v1`` (the Go engine's ``recall-audit-v1``, read only;
docs/formats.md).
"""

from .bundle_format import MAX_EVENTS, BundleFormat
from .export import build_bundle, encode_bundle, event_json
from .go_v1 import AUDIT_V1, go_timeline
from .importing import import_events
from .load import MAX_INPUT_BYTES, load_bundle
from .ours_v2 import AUDIT_V2, registry_view
from .replay import replay
from .verify import VerifyResult, verify

__all__ = [
    "AUDIT_V1",
    "AUDIT_V2",
    "MAX_EVENTS",
    "MAX_INPUT_BYTES",
    "BundleFormat",
    "VerifyResult",
    "build_bundle",
    "encode_bundle",
    "event_json",
    "go_timeline",
    "import_events",
    "load_bundle",
    "registry_view",
    "replay",
    "verify",
]
