"""Bearer keys for `serve`: created, listed and revoked as append-only events.

Keys live in the reserved collection ``recall.keys`` of the same store, as events of
the subject ``recall:keys``: ``key_created`` (id, namespace, sha-256 of the key,
expiry, read-only) and ``key_revoked`` (id). Only the hash is stored; the key itself
is shown once. A key is revoked as soon as any revocation of it exists, so no later
event can bring it back. Each namespace (``team:agent-1``) maps to its own collection
(``team.agent-1``); the key decides the namespace, nothing a caller sends does.
Servers keep no state of their own: each request re-reads the key events appended
since the last one it saw, so several servers on one PostgreSQL agree (docs/agents.md).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from recall_engine import clock
from recall_engine.errors import InvalidInput, NotFound, RecallError
from recall_engine.instants import STORED_INSTANTS, format_rfc3339
from recall_engine.records import make_event
from recall_engine.storage.base import Backend, Store

SYSTEM_COLLECTION = "recall.keys"
KEY_SUBJECT = "recall:keys"
CREATED = "key_created"
REVOKED = "key_revoked"
KEY_PREFIX = "rcl_"
DEFAULT_EXPIRES = "720h"
MAX_VERIFIED = 10_000  # tokens remembered as checked; the map starts over past it

_NAMESPACE = re.compile(r"^[a-z0-9][a-z0-9_-]*(?::[a-z0-9][a-z0-9_-]*)*$")
_KEY = re.compile(r"^rcl_([0-9a-f]{12})_[A-Za-z0-9_-]{16,}$")
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")
_UNIT_NS = {"ms": 10**6, "s": 10**9, "m": 60 * 10**9, "h": 3600 * 10**9, "d": 86400 * 10**9}
MAX_EXPIRES_NS = 36500 * _UNIT_NS["d"]


class Unauthorized(RecallError):
    code = "unauthorized"


def check_namespace(namespace: str) -> str:
    """A namespace: lower-case segments joined by ':' (``team:agent-1``), at most 63 characters."""
    ns = namespace.strip() if isinstance(namespace, str) else ""
    if not _NAMESPACE.match(ns) or len(ns) > 63:
        raise InvalidInput(
            f"namespace must be lower-case letters, digits, '_' or '-', in segments joined by ':' "
            f"(for example team:agent-1), at most 63 characters; got {namespace!r}"
        )
    if ns.split(":")[0].startswith("recall"):
        raise InvalidInput(f"namespace {ns!r} is reserved: names starting with 'recall' belong to the engine")
    return ns


def collection_for(namespace: str) -> str:
    """The collection a namespace reads and writes: ':' becomes '.', which a namespace never holds."""
    return check_namespace(namespace).replace(":", ".")


def parse_duration(text: str) -> int | None:
    """``168h``, ``30d``, ``90m``, ``1h30m`` as nanoseconds; ``never`` as None."""
    t = (text or "").strip().lower()
    if t == "never":
        return None
    pos, total = 0, 0.0
    for m in _DURATION.finditer(t):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _UNIT_NS[m.group(2)]
        pos = m.end()
    if not t or pos != len(t) or total <= 0:
        raise InvalidInput(f"--expires takes a duration such as 168h, 30d or 1h30m, or never; got {text!r}")
    if total > MAX_EXPIRES_NS:  # a key dated past the instants a store holds broke `key list` for good
        raise InvalidInput(
            f"--expires is at most 36500d (100 years); for a key that never expires give never; got {text!r}"
        )
    return int(total)


def key_hash(key: str) -> str:
    return "sha256:" + hashlib.sha256(key.encode("utf-8")).hexdigest()


@dataclass
class Key:
    id: str
    namespace: str
    hash: str
    created: int
    expires: int | None
    read_only: bool
    revoked: int | None = None  # when it was first revoked

    @property
    def collection(self) -> str:
        return collection_for(self.namespace)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "namespace": self.namespace,
            "collection": self.collection,
            "created": format_rfc3339(self.created),
            "expires": format_rfc3339(self.expires) if self.expires is not None else None,
            "read_only": self.read_only,
            "revoked": self.revoked is not None,
            "revoked_at": format_rfc3339(self.revoked) if self.revoked is not None else None,
        }


class KeyRing:
    """The keys of one store, read from its event log and cached up to a watermark."""

    def __init__(self, backend: Backend, *, now: Callable[[], int] = clock.now_ns) -> None:
        self.backend = backend
        self.now = now
        self._store: Store | None = None
        self._keys: dict[str, Key] = {}
        self._revoked: dict[str, int] = {}
        self._position = 0
        self._lock = threading.Lock()
        self._verified: dict[str, Key] = {}  # tokens whose hash matched, and their key

    def _system(self, create: bool) -> Store | None:
        if self._store is None:
            try:
                self._store = self.backend.store(SYSTEM_COLLECTION, create=create)
            except NotFound:
                return None
        return self._store

    def refresh(self) -> None:
        """Read the key events appended since the last refresh (one query when there are none)."""
        store = self._system(create=False)
        if store is None:
            return
        with self._lock:
            pos = store.position()
            if pos == self._position:
                return
            for e in store.all_events(after_position=self._position):
                if e.subject != KEY_SUBJECT or e.retraction or not isinstance(e.value, str):
                    continue
                try:
                    rec = json.loads(e.value)
                    kid = str(rec["id"])
                    if e.predicate == CREATED:
                        expires = rec.get("expires")
                        if not (expires is None or (type(expires) is int and expires in STORED_INSTANTS)):
                            raise TypeError("expires")
                        key = Key(
                            id=kid,
                            namespace=check_namespace(rec["namespace"]),
                            hash=str(rec["hash"]),
                            created=e.observed_at,
                            expires=rec.get("expires"),
                            read_only=bool(rec.get("read_only")),
                        )
                        self._keys.setdefault(kid, key)
                    elif e.predicate == REVOKED:
                        first = self._revoked.get(kid)
                        self._revoked[kid] = e.observed_at if first is None else min(first, e.observed_at)
                except (ValueError, KeyError, TypeError, InvalidInput):
                    continue  # a record no key command wrote grants nothing
            for kid, at in self._revoked.items():
                if kid in self._keys:
                    self._keys[kid].revoked = at
            self._position = max(self._position, pos)

    def keys(self) -> list[Key]:
        self.refresh()
        return sorted(self._keys.values(), key=lambda k: (k.created, k.id))

    def create(self, namespace: str, *, expires_in: int | None, read_only: bool = False) -> tuple[str, Key]:
        ns = check_namespace(namespace)
        store = self._system(create=True)
        assert store is not None
        kid = secrets.token_hex(6)
        key = f"{KEY_PREFIX}{kid}_{secrets.token_urlsafe(24)}"
        at = self.now()
        expires = at + expires_in if expires_in is not None else None
        rec = {"id": kid, "namespace": ns, "hash": key_hash(key), "expires": expires, "read_only": bool(read_only)}
        store.append([make_event(KEY_SUBJECT, CREATED, json.dumps(rec, sort_keys=True), at, source="operator")])
        self.refresh()
        return key, self._keys[kid]

    def revoke(self, key_id: str) -> Key:
        self.refresh()
        k = self._keys.get((key_id or "").strip())
        if k is None:
            raise NotFound(f"no key with id {key_id!r}; `recall-admin key list` shows the keys")
        if k.revoked is None:
            store = self._system(create=True)
            assert store is not None
            value = json.dumps({"id": k.id}, sort_keys=True)
            store.append([make_event(KEY_SUBJECT, REVOKED, value, self.now(), source="operator")])
            self.refresh()
        return k

    def authenticate(self, header: str | None) -> Key:
        """The key an ``Authorization: Bearer ...`` header carries, if it may be used now."""
        scheme, _, token = (header or "").strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise Unauthorized("missing bearer key: send the header `Authorization: Bearer rcl_...`")
        self.refresh()  # a revocation or a new key appended anywhere counts from this request on
        k = self._verified.get(token)
        if k is None:
            m = _KEY.match(token)
            k = self._keys.get(m.group(1)) if m else None
            if k is None or not hmac.compare_digest(k.hash, key_hash(token)):
                raise Unauthorized("the key is not valid")
            if len(self._verified) >= MAX_VERIFIED:
                self._verified.clear()
            # the hash is checked once per token; revocation and expiry below, every time
            self._verified[token] = k
        if k.revoked is not None:
            raise Unauthorized(f"the key {k.id} was revoked at {format_rfc3339(k.revoked)}")
        if k.expires is not None and self.now() >= k.expires:
            raise Unauthorized(f"the key {k.id} expired at {format_rfc3339(k.expires)}")
        return k
