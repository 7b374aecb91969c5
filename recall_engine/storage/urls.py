"""Store URLs: which backend a URL names, and how a URL may be shown.

Credentials never appear in output, logs or error messages: every message
that quotes a URL passes it through ``display_url`` first.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ..errors import InvalidInput

APP_NAME = "recall-admin"
DEFAULT_FILE = "recall.db"

ACCEPTED_FORMS = (
    "nothing (the default SQLite file in the user data folder), "
    "a file path, sqlite:///PATH (sqlite:////ABSOLUTE/PATH), "
    "or postgresql://USER@HOST/DATABASE (postgres:// also works)"
)

_SECRET_PARAMS = frozenset({"password", "pass", "passwd", "pwd", "sslpassword", "secret", "token"})
# user:password@ inside anything that looks like a URL, even an unparseable one
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^:/@?#\s]*):(?P<pw>[^@/?#\s]*)@")
# key=value secrets in a query string or a libpq keyword string
_KV_SECRET = re.compile(
    r"(?P<key>\b(?:{})\s*=\s*)(?P<val>'(?:[^'\\]|\\.)*'|[^\s&;]*)".format("|".join(sorted(_SECRET_PARAMS))),
    re.IGNORECASE,
)
# a libpq keyword/value connection string ("host=db user=ana password=...")
_LIBPQ_KV = re.compile(r"^\s*(host|hostaddr|dbname|user|password|port|service)\s*=", re.IGNORECASE)


def display_url(url: str | None) -> str:
    """The URL with any password replaced by ``***``, safe to print or log."""
    if url is None or url == "":
        return "(default)"
    text = str(url)
    try:
        parts = urlsplit(text)
    except ValueError:
        parts = None
    if parts is not None and parts.scheme and "://" in text:
        netloc, query, changed = parts.netloc, parts.query, False
        if "@" in netloc:
            userinfo, _, hostport = netloc.rpartition("@")
            user, sep, _pw = userinfo.partition(":")
            if sep:
                netloc, changed = f"{user}:***@{hostport}", True
        elif hidden_port(netloc):  # "user:password" with the "@" left out reads as host:port
            netloc, changed = f"{netloc.rpartition(':')[0]}:***", True
        if query:
            pairs = parse_qsl(query, keep_blank_values=True)
            if any(k.lower() in _SECRET_PARAMS for k, _ in pairs):
                query = urlencode([(k, "***" if k.lower() in _SECRET_PARAMS else v) for k, v in pairs], safe="*/:")
                changed = True
        if changed:  # rebuild only when something is hidden: the rest reads as it was written
            text = urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    # belt and braces for whatever the parser did not see
    text = _USERINFO.sub(lambda m: f"{m['scheme']}{m['user']}:***@", text)
    return _KV_SECRET.sub(lambda m: f"{m['key']}***", text)


def hidden_port(netloc: str) -> str:
    """The "port" of a netloc without "@" when it is not a number: most likely a password."""
    if "@" in netloc or netloc.endswith("]"):
        return ""
    _, sep, port = netloc.rpartition(":")
    return port if sep and port and not all(p.isdigit() for p in port.split(",")) else ""


@dataclass(frozen=True)
class StoreLocation:
    kind: str  # "sqlite" or "postgres"
    target: str  # a filesystem path for SQLite, the URL itself for PostgreSQL


def default_sqlite_path() -> Path:
    import platformdirs

    folder = Path(platformdirs.user_data_dir(APP_NAME))
    folder.mkdir(parents=True, exist_ok=True)
    return folder / DEFAULT_FILE


def parse_store_url(url: str | None) -> StoreLocation:
    """Say which backend a URL names; refuse anything else with the accepted forms."""
    if url is None or (isinstance(url, str) and url.strip() == ""):
        return StoreLocation("sqlite", str(default_sqlite_path()))
    if not isinstance(url, str):
        raise InvalidInput(f"store URL must be text, got {type(url).__name__}; accepted: {ACCEPTED_FORMS}")
    text = url.strip()
    low = text.lower()
    if low.startswith(("postgresql://", "postgres://", "postgresql+psycopg://")):
        try:
            netloc = urlsplit(text).netloc
        except ValueError:
            netloc = ""
        if hidden_port(netloc):
            raise InvalidInput(
                f"store URL {display_url(text)!r} has a port that is not a number (a password without the '@' "
                "after it?); write postgresql://USER:PASSWORD@HOST/DATABASE"
            )
        return StoreLocation("postgres", text)
    if low.startswith("sqlite:"):
        if not low.startswith("sqlite:///"):
            raise InvalidInput(
                f"store URL {display_url(text)!r} has no path; write sqlite:///relative/path "
                f"or sqlite:////absolute/path; accepted: {ACCEPTED_FORMS}"
            )
        rest = text[len("sqlite:///") :]
        rest, query_sep, _query = rest.partition("?")
        if query_sep:  # dropped silently, "?mode=ro" would open the store writable
            raise InvalidInput(
                f"store URL {display_url(text)!r} has a query (?...), which a SQLite store URL does not "
                "take: for a read-only store give --read-only; a file name with '?' in it goes as a plain path"
            )
        if not rest or rest == ":memory:":
            raise InvalidInput(
                f"store URL {display_url(text)!r} names no file (an in-memory store is not supported); "
                f"accepted: {ACCEPTED_FORMS}"
            )
        return StoreLocation("sqlite", _path(rest))
    if "://" in text:
        scheme = text.split("://", 1)[0]
        raise InvalidInput(
            f"unsupported store URL {display_url(text)!r} (scheme {scheme!r}); accepted: {ACCEPTED_FORMS}"
        )
    if _LIBPQ_KV.match(text):
        raise InvalidInput(
            f"{display_url(text)!r} looks like a PostgreSQL keyword connection string; "
            f"write it as postgresql://USER@HOST/DATABASE; accepted: {ACCEPTED_FORMS}"
        )
    return StoreLocation("sqlite", _path(text))


def _path(raw: str) -> str:
    return os.path.abspath(os.path.expanduser(raw))
