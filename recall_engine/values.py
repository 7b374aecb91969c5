"""Value identity and the value types of the registry."""

from __future__ import annotations

import math
import re

from .errors import InvalidInput
from .instants import format_rfc3339, parse_instant
from .text import check_text, normalize_subject, simple_lower

Value = str | float | int | bool

VALUE_TYPES = ("string", "number", "boolean", "enum", "date", "ref")
# The class of what is stored; a predicate may never change it (that is a new predicate).
STORAGE_CLASS = {
    "": "string",
    "string": "string",
    "enum": "string",
    "date": "string",
    "ref": "string",
    "number": "number",
    "boolean": "boolean",
}

_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def format_number(f: float | int) -> str:
    """Shortest round-trip decimal with no exponent (Go FormatFloat(f, 'f', -1, 64))."""
    f = float(f)
    if f == 0:
        return "-0" if math.copysign(1.0, f) < 0 else "0"
    r = repr(f)
    if "e" not in r and "E" not in r:
        return r[:-2] if r.endswith(".0") else r
    mantissa, exp = r.split("e")
    exp_i = int(exp)
    neg = mantissa.startswith("-")
    digits = mantissa.lstrip("-").replace(".", "")
    point = (mantissa.lstrip("-").find(".") if "." in mantissa else len(mantissa.lstrip("-"))) + exp_i
    if point <= 0:
        s = "0." + "0" * (-point) + digits
    elif point >= len(digits):
        s = digits + "0" * (point - len(digits))
    else:
        s = digits[:point] + "." + digits[point:]
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return ("-" if neg else "") + s


_STR_KEYS: dict[str, str] = {}


def value_key(value: object) -> str:
    """Identity of a value: case-insensitive for strings, exact for numbers and booleans."""
    if type(value) is str:
        k = _STR_KEYS.get(value)  # the fold asks for the same few values again and again
        if k is None:
            if len(_STR_KEYS) > 100_000:
                _STR_KEYS.clear()
            k = _STR_KEYS[value] = "s:" + simple_lower(value)
        return k
    if value is None:
        return ""
    if isinstance(value, bool):
        return "b:true" if value else "b:false"
    if isinstance(value, (int, float)):
        return "n:" + format_number(value)
    if isinstance(value, str):
        return "s:" + simple_lower(value)
    raise InvalidInput(f"value must be a string, number, or boolean, got {describe(value)}")


def storage_class_of(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return "string"


def describe(value: object) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return f"boolean {'true' if value else 'false'}"
    if isinstance(value, (int, float)):
        return f"number {format_number(value)}"
    if isinstance(value, str):
        return f"string {value!r}"
    return type(value).__name__


def value_text(value: object) -> str:
    """How a value reads in a sentence or a table."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return format_number(value)
    return "" if value is None else str(value)


def normalize_value(predicate: str, value_type: str, allowed: tuple[str, ...], value: object) -> Value:
    """Check a written value against its predicate's type; return the stored form."""
    vt = value_type or "string"
    if vt == "number":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InvalidInput(f"{predicate} expects a number value, got {describe(value)}")
        if not math.isfinite(float(value)):
            raise InvalidInput(f"{predicate} expects a finite number value")
        f = float(value)
        return int(f) if f.is_integer() and abs(f) < 2**53 else f
    if vt == "boolean":
        if not isinstance(value, bool):
            raise InvalidInput(f"{predicate} expects a boolean value, got {describe(value)}")
        return value
    article = "an" if vt == "enum" else "a"
    if not isinstance(value, str):
        raise InvalidInput(f"{predicate} expects {article} {vt} value, got {describe(value)}")
    s = value.strip()
    if not s:
        raise InvalidInput(f"{predicate}: value must not be empty")
    check_text(s, "note" if predicate == "note" else "value")
    if not s.isascii():
        try:
            s.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidInput(f"{predicate}: value must be valid UTF-8 text") from None
    if vt == "enum":
        low = simple_lower(s)
        for a in allowed:
            if simple_lower(a) == low:
                return a
        raise InvalidInput(f"{predicate} expects one of: {', '.join(allowed)}; got {s!r}")
    if vt == "date":
        if _DAY.match(s):
            try:
                parse_instant(s)
            except InvalidInput:
                pass
            else:
                return s
        elif "T" in s.upper():
            try:
                return format_rfc3339(parse_instant(s.upper()))
            except InvalidInput:
                pass
        raise InvalidInput(f"{predicate} expects a date such as 2026-10-01 or an RFC3339 time, got {s!r}")
    if vt == "ref":
        return normalize_subject(s)
    return s


# A plain decimal: no thousands separators ("1,2,3" is not 123), no underscores
# ("1_000"), no inf/nan, no hex; ASCII digits only (\d would take any Unicode digit).
_NUMBER = re.compile(r"^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
_TRUE = ("true", "yes", "1", "t", "y")
_FALSE = ("false", "no", "0", "f", "n")


def underflows(literal: str, f: float) -> bool:
    """Whether the number ``literal`` read as ``f`` is one too small for a float (``1e-400``
    reads as 0): refused as one too large is, since either would store what was never said."""
    return f == 0 and re.search(r"[1-9]", re.split(r"[eE]", literal)[0]) is not None


def parse_number(text: str) -> float | None:
    """A plain decimal number as typed by a person, or None when the text is not one."""
    t = text.strip()
    if not _NUMBER.match(t):
        return None
    f = float(t)
    return f if math.isfinite(f) and not underflows(t, f) else None


def parse_cli_value(value_type: str, text: str) -> Value:
    """Turn typed text into the predicate's type before normalising it (docs/records.md, "Values").

    The one strict reading of typed values, whatever the backend. Text that is not
    of the type is returned unchanged, so ``normalize_value`` reports it by type.
    """
    vt = value_type or "string"
    if vt == "number":
        f = parse_number(text)
        return text if f is None else f
    if vt == "boolean":
        low = text.strip().lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        return text
    return text


def conforms_to_class(value: object, value_type: str) -> bool:
    """On read a stored value is only checked against its storage class."""
    return storage_class_of(value) == STORAGE_CLASS.get(value_type or "string", "string")
