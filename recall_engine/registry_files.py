"""Registry files: a named registry written as YAML, and the starter registries.

The format is described in ``docs/registry-files.md``::

    registry: coding
    description: Predicates for a coding assistant.
    predicates:
      prefers_editor:
        cardinality: single
        value_type: string
        description: The editor the user prefers ...

Every problem is a :class:`~recall_engine.errors.RegistryFileError` whose message
starts with ``file:line`` and names the field it comes from (for example
``predicates.prefers_editor.cardinality``). The file is composed into YAML nodes
with PyYAML's safe loader and never constructed into arbitrary objects, so every
line number comes from the node that holds the problem, duplicate keys are seen
(PyYAML's own loader silently keeps the last one), and no input can run code.

The rules are those of :func:`recall_engine.registry.check_definition` and
:func:`~recall_engine.registry.check_registry`, checked field by field so that an
error points at the line that holds it; the finished registry is checked once more
by ``check_registry`` itself.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from .errors import RegistryError, RegistryFileError
from .registry import CARDINALITIES, NOTE_DEFINITION, Definition, check_registry
from .text import MAX_PREDICATE_BYTES, NOTE, PREDICATE_RE, RESERVED_PREDICATES, simple_lower
from .values import VALUE_TYPES

__all__ = [
    "MAX_REGISTRY_FILE_BYTES",
    "PREDICATE_FIELDS",
    "STARTER_ALIASES",
    "STARTER_NAMES",
    "TOP_LEVEL_KEYS",
    "RegistryFile",
    "load_registry_file",
    "load_registry_text",
    "load_starter",
    "starter_names",
    "starter_path",
]

# A registry file is a handful of definitions; anything this large is a mistake.
MAX_REGISTRY_FILE_BYTES = 1024 * 1024
# YAML aliases (*name) repeat a node without repeating its text, so a small file can
# stand for an enormous document ("billion laughs"). The document as read, aliases
# expanded, may hold at most this many nodes and this much text (docs/registry-files.md).
MAX_EXPANDED_NODES = 100_000
MAX_EXPANDED_BYTES = 2 * MAX_REGISTRY_FILE_BYTES

TOP_LEVEL_KEYS = ("registry", "description", "predicates")
PREDICATE_FIELDS = ("cardinality", "value_type", "description", "allowed", "aliases", "excludes", "historical")

STARTER_NAMES = ("coding", "personal-assistant", "sales", "support", "voice")
# Names the Go engine's users know.
STARTER_ALIASES = {"personal": "personal-assistant"}

_REGISTRY_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_MAX_REGISTRY_NAME = 64

_TAG = "tag:yaml.org,2002:"
# Plain scalars the safe resolver reads as something other than text. In a field
# that holds text they are taken as written: `allowed: [yes, no]` lists "yes" and
# "no", not two booleans, and `allowed: [1.0, 1.10]` two distinct values.
_TEXT_TAGS = frozenset(_TAG + t for t in ("str", "int", "float", "bool", "timestamp"))
_NULL_TAG = _TAG + "null"
_BOOL_TAG = _TAG + "bool"
_MERGE_TAG = _TAG + "merge"
_TRUE = frozenset({"yes", "true", "on"})


@dataclass(frozen=True)
class RegistryFile:
    """A named registry read from a file; ``definitions`` always includes ``note``."""

    name: str
    description: str
    definitions: dict[str, Definition]
    path: str = field(default="", compare=False)

    def names(self) -> list[str]:
        """The predicate names, in the order the file lists them (``note`` last if added)."""
        return list(self.definitions)


# --- public entry points ----------------------------------------------------


def load_registry_file(path: str | os.PathLike[str]) -> RegistryFile:
    """Read and validate a registry file; every problem names ``file:line`` and field."""
    shown = os.fspath(path)
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_REGISTRY_FILE_BYTES + 1)
    except FileNotFoundError:
        raise RegistryFileError(shown, None, None, "no such file") from None
    except IsADirectoryError:
        raise RegistryFileError(shown, None, None, "is a folder, not a registry file") from None
    except OSError as e:
        raise RegistryFileError(shown, None, None, f"cannot be read: {e.strerror or e}") from None
    except ValueError as e:  # a path with a NUL byte in it
        raise RegistryFileError(shown, None, None, f"cannot be read: {e}") from None
    return load_registry_text(data, path=shown)


def load_registry_text(text: str | bytes, path: str = "<text>") -> RegistryFile:
    """Validate registry-file text (UTF-8 when given bytes); ``path`` is used in messages."""
    if isinstance(text, (bytes, bytearray, memoryview)):
        raw = bytes(text)
        if len(raw) > MAX_REGISTRY_FILE_BYTES:
            raise RegistryFileError(path, None, None, f"is larger than {MAX_REGISTRY_FILE_BYTES} bytes")
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            line = raw.count(b"\n", 0, e.start) + 1
            raise RegistryFileError(
                path, line, None, f"is not UTF-8 text (byte 0x{raw[e.start]:02x} at offset {e.start})"
            ) from None
    elif not isinstance(text, str):
        raise RegistryFileError(path, None, None, f"registry text must be str or bytes, got {type(text).__name__}")
    elif len(text) > MAX_REGISTRY_FILE_BYTES:
        raise RegistryFileError(path, None, None, f"is larger than {MAX_REGISTRY_FILE_BYTES} bytes")
    return _Reader(path, text).read()


def starter_names() -> list[str]:
    """The starter registries shipped with the engine."""
    return list(STARTER_NAMES)


def starter_path(name: str):
    """Where a starter's file is (a ``Traversable``); RegistryError for an unknown name."""
    canonical = _starter_name(name)
    if canonical is None:
        raise _unknown_starter(name)
    return _starters_dir().joinpath(f"{canonical}.yaml")


def load_starter(name_or_path: str | os.PathLike[str]) -> RegistryFile:
    """A starter registry by name (``personal`` also names personal-assistant), or a file.

    A starter name wins over a file of the same name in the working folder; anything
    that contains a path separator or ends in .yaml/.yml/.json, or names an existing
    file, is read as a file.
    """
    if not isinstance(name_or_path, str):
        return load_registry_file(name_or_path)
    canonical = _starter_name(name_or_path)
    if canonical is not None:
        ref = _starters_dir().joinpath(f"{canonical}.yaml")
        try:
            data = ref.read_bytes()
        except OSError as e:
            raise RegistryFileError(
                str(ref), None, None, f"starter registry cannot be read: {e.strerror or e}"
            ) from None
        return load_registry_text(data, path=str(ref))
    if _looks_like_path(name_or_path):
        return load_registry_file(name_or_path)
    raise _unknown_starter(name_or_path)


def _unknown_starter(name: str) -> RegistryError:
    return RegistryError(
        f"no starter registry {json.dumps(name, ensure_ascii=False)}; the starters are: {', '.join(STARTER_NAMES)}"
    )


def _starter_name(name: str) -> str | None:
    key = simple_lower(name.strip())
    key = STARTER_ALIASES.get(key, key)
    return key if key in STARTER_NAMES else None


def _looks_like_path(s: str) -> bool:
    if "/" in s or os.sep in s or (os.altsep and os.altsep in s):
        return True
    if s.lower().endswith((".yaml", ".yml", ".json")):
        return True
    try:
        return Path(s).is_file()
    except (OSError, ValueError):
        return False


def _starters_dir():
    """The folder of starter files: the package ``recall_engine.starters`` when it is
    installed (pyproject maps it onto ``registries/``), else ``registries/`` of a checkout."""
    try:
        d = resources.files("recall_engine.starters")
        if d.joinpath("coding.yaml").is_file():
            return d
    except (ModuleNotFoundError, TypeError, OSError):
        pass
    return Path(__file__).resolve().parent.parent / "registries"


# --- the reader ---------------------------------------------------------------


def _kind(node: Node | None) -> str:
    """How a node reads in a message: 'a list', 'a mapping', 'text "x"', 'the number 3'."""
    if node is None:
        return "nothing"
    if isinstance(node, MappingNode):
        return "a mapping" if node.tag == _TAG + "map" else f"a mapping tagged {node.tag}"
    if isinstance(node, SequenceNode):
        return "a list" if node.tag == _TAG + "seq" else f"a list tagged {node.tag}"
    if isinstance(node, ScalarNode):
        tag = node.tag
        shown = node.value if len(node.value) <= 40 else node.value[:37] + "..."
        if tag == _NULL_TAG:
            return "nothing"
        if tag == _BOOL_TAG:
            return f"the boolean {shown}"
        if tag in (_TAG + "int", _TAG + "float"):
            return f"the number {shown}"
        if tag == _TAG + "timestamp":
            return f"the date {shown}"
        if tag == _TAG + "str":
            return f"text {json.dumps(shown, ensure_ascii=False)}"
        return f"a value tagged {tag}"
    return type(node).__name__  # pragma: no cover - the composer makes only these three


def _line(node: Node) -> int:
    return node.start_mark.line + 1


def _is_null(node: Node) -> bool:
    return isinstance(node, ScalarNode) and node.tag == _NULL_TAG


class _Reader:
    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text

    # errors

    def fail(self, node: Node | int | None, fld: str | None, problem: str) -> RegistryFileError:
        line = node if isinstance(node, int) or node is None else _line(node)
        return RegistryFileError(self.path, line, fld, problem)

    # YAML

    def compose(self) -> Node | None:
        try:
            return yaml.compose(self.text, Loader=yaml.SafeLoader)
        except yaml.MarkedYAMLError as e:
            mark = e.problem_mark or e.context_mark
            line = mark.line + 1 if mark is not None else None
            context = e.context or ""
            if context and e.context_mark is not None and e.context_mark.line + 1 != line:
                context += f" (line {e.context_mark.line + 1})"
            parts = [p for p in (context, e.problem) if p]
            if "'\\t'" in (e.problem or ""):
                parts.append("indent with spaces: YAML does not allow tabs there")
            raise self.fail(line, None, "invalid YAML: " + (", ".join(parts) or "cannot be parsed")) from None
        except yaml.reader.ReaderError as e:
            pos = e.position if isinstance(e.position, int) else 0
            line = self.text.count("\n", 0, pos) + 1
            ch = e.character
            what = f"#x{ch:04x}" if isinstance(ch, int) else repr(ch)
            raise self.fail(line, None, f"invalid YAML: the character {what} is not allowed in a YAML file") from None
        except yaml.YAMLError as e:  # pragma: no cover - every PyYAML error is one of the above
            raise self.fail(None, None, f"invalid YAML: {e}") from None
        except RecursionError:
            raise self.fail(None, None, "invalid YAML: nested too deeply") from None

    def check_expansion(self, root: Node) -> None:
        """Refuse a document whose aliases expand it past the bounds, before anything reads it.

        Only a node met again (through an alias) counts toward ``MAX_EXPANDED_NODES``: the
        nodes written out are bounded by the file's size, and a large file without an alias
        is not an alias attack."""
        repeats = size = 0
        seen: set[int] = set()
        stack = [root]
        while stack:
            node = stack.pop()
            if id(node) in seen:
                repeats += 1
            else:
                seen.add(id(node))
            if isinstance(node, ScalarNode):
                size += len(node.value)
            elif isinstance(node, SequenceNode):
                stack.extend(node.value)
            elif isinstance(node, MappingNode):
                for k, v in node.value:
                    stack.append(k)
                    stack.append(v)
            if repeats > MAX_EXPANDED_NODES or size > MAX_EXPANDED_BYTES:
                raise self.fail(
                    None,
                    None,
                    f"YAML aliases expand the file past {MAX_EXPANDED_NODES} nodes or {MAX_EXPANDED_BYTES} bytes of "
                    "text; write the fields out instead of repeating them through aliases",
                )

    def entries(self, node: MappingNode, where: str | None) -> Iterator[tuple[str, Node, Node]]:
        """(key text, key node, value node) of a mapping; refuses duplicate, merge and non-text keys."""
        seen: dict[str, int] = {}
        for key, value in node.value:
            sub = f"{where}." if where else ""
            if not isinstance(key, ScalarNode) or (key.tag not in _TEXT_TAGS and key.tag != _MERGE_TAG):
                raise self.fail(key, where, f"a key must be a plain name, got {_kind(key)}")
            if key.tag == _MERGE_TAG:
                raise self.fail(key, where, "YAML merge keys (<<) are not supported; write the fields out")
            name = key.value
            if name in seen:
                what = "predicate" if where == "predicates" else "key"
                raise self.fail(key, sub + name, f"{what} {name!r} is given twice (first at line {seen[name]})")
            seen[name] = _line(key)
            yield name, key, value

    def text_of(self, node: Node, fld: str, what: str = "text") -> str | None:
        """A text field: a scalar taken as written; None when empty (null)."""
        if _is_null(node):
            return None
        if not isinstance(node, ScalarNode) or node.tag not in _TEXT_TAGS:
            raise self.fail(node, fld, f"must be {what}, got {_kind(node)}")
        return node.value

    def bool_of(self, node: Node, fld: str) -> bool | None:
        if _is_null(node):
            return None
        if not isinstance(node, ScalarNode) or node.tag != _BOOL_TAG:
            raise self.fail(node, fld, f"must be true or false, got {_kind(node)}")
        return node.value.lower() in _TRUE

    def list_of(self, node: Node, fld: str) -> list[tuple[str, Node]]:
        """A list of text: [(item, item node)]; empty when null."""
        if _is_null(node):
            return []
        if not isinstance(node, SequenceNode):
            raise self.fail(node, fld, f"must be a list of text, got {_kind(node)}")
        out = []
        for item in node.value:
            if not isinstance(item, ScalarNode) or item.tag not in _TEXT_TAGS:
                raise self.fail(item, fld, f"must be a list of text; one item is {_kind(item)}")
            out.append((item.value, item))
        return out

    # the file

    def read(self) -> RegistryFile:
        root = self.compose()
        if root is None:
            raise self.fail(1, None, "the file is empty; a registry file needs `registry:` and `predicates:`")
        self.check_expansion(root)
        if not isinstance(root, MappingNode):
            raise self.fail(
                root,
                None,
                f"a registry file is a mapping with the keys registry, description and predicates, not {_kind(root)}",
            )
        fields: dict[str, tuple[Node, Node]] = {}
        for key, knode, vnode in self.entries(root, None):
            if key not in TOP_LEVEL_KEYS:
                hint = ""
                if isinstance(vnode, MappingNode) and any(
                    isinstance(k, ScalarNode) and k.value == "cardinality" for k, _ in vnode.value
                ):
                    hint = (
                        " (this looks like a predicate at the top level, as in the Go engine's JSON registries:"
                        " put predicates under `predicates:` and name the registry with `registry:`)"
                    )
                raise self.fail(
                    knode, key, f"unknown key; a registry file has registry, description and predicates{hint}"
                )
            fields[key] = (knode, vnode)

        if "registry" not in fields:
            raise self.fail(root, "registry", "is required: the registry's name, e.g. `registry: coding`")
        name = self.text_of(fields["registry"][1], "registry")
        if not name or not name.strip():
            raise self.fail(
                fields["registry"][1], "registry", "is required: the registry's name, e.g. `registry: coding`"
            )
        name = name.strip()
        if not _REGISTRY_NAME_RE.match(name) or len(name) > _MAX_REGISTRY_NAME:
            raise self.fail(
                fields["registry"][1],
                "registry",
                f"{name!r} is not a registry name: use lower-case letters, digits, '-', '_' or '.',"
                f" starting with a letter or digit, at most {_MAX_REGISTRY_NAME} characters",
            )
        description = ""
        if "description" in fields:
            description = (self.text_of(fields["description"][1], "description") or "").strip()
        if "predicates" not in fields:
            raise self.fail(root, "predicates", "is required: a mapping of predicate names to their definitions")
        pnode = fields["predicates"][1]
        if _is_null(pnode):
            entries: list[tuple[str, Node, Node]] = []
        elif not isinstance(pnode, MappingNode):
            raise self.fail(
                pnode, "predicates", f"must be a mapping of predicate names to definitions, got {_kind(pnode)}"
            )
        else:
            entries = list(self.entries(pnode, "predicates"))

        defs: dict[str, Definition] = {}
        sources: dict[str, _Source] = {}
        for pname, knode, vnode in entries:
            self.check_name(pname, knode)
            src = self.definition(pname, knode, vnode)
            defs[pname] = src.definition
            sources[pname] = src
        self.check_across(defs, sources)
        if NOTE not in defs:
            defs[NOTE] = NOTE_DEFINITION
        try:  # every rule above is check_registry's; this keeps the two from drifting apart
            check_registry(defs, where="registry")
        except RegistryError as e:
            raise self.fail(pnode, "predicates", e.message) from None
        return RegistryFile(name=name, description=description, definitions=defs, path=self.path)

    def check_name(self, name: str, knode: Node) -> None:
        fld = f"predicates.{name}"
        if not PREDICATE_RE.match(name) or len(name.encode()) > MAX_PREDICATE_BYTES:
            raise self.fail(
                knode,
                fld,
                f"{name!r} is not a usable predicate name: use snake_case (a-z, 0-9 and _, starting with a letter),"
                f" at most {MAX_PREDICATE_BYTES} bytes",
            )
        if name in RESERVED_PREDICATES:
            raise self.fail(knode, fld, f"{name!r} is reserved for the engine's own records")

    def definition(self, name: str, knode: Node, vnode: Node) -> _Source:
        base = f"predicates.{name}"
        if not isinstance(vnode, MappingNode):
            raise self.fail(
                vnode if not _is_null(vnode) else knode,
                base,
                f"must be a mapping of fields (cardinality, value_type, description, ...), got {_kind(vnode)}",
            )
        nodes: dict[str, Node] = {}
        for fname, fknode, fvnode in self.entries(vnode, base):
            if fname not in PREDICATE_FIELDS:
                close = difflib.get_close_matches(fname, PREDICATE_FIELDS, n=1, cutoff=0.75)
                hint = f"did you mean {close[0]!r}? The" if close else "the"
                raise self.fail(
                    fknode, f"{base}.{fname}", f"unknown field; {hint} fields are {', '.join(PREDICATE_FIELDS)}"
                )
            nodes[fname] = fvnode
        src = _Source(knode, nodes)

        def fld(f: str) -> str:
            return f"{base}.{f}"

        card = self.text_of(nodes["cardinality"], fld("cardinality")) if "cardinality" in nodes else None
        if card is None:
            raise self.fail(nodes.get("cardinality", knode), fld("cardinality"), "is required: single or multi")
        if card not in CARDINALITIES:
            raise self.fail(
                nodes["cardinality"], fld("cardinality"), f"{card!r} is not a cardinality; want single or multi"
            )

        vtype = self.text_of(nodes["value_type"], fld("value_type")) if "value_type" in nodes else None
        if not vtype:  # omitted, empty or "": a string, as in the Go engine
            vtype = "string"
        if vtype not in VALUE_TYPES:
            raise self.fail(
                nodes["value_type"],
                fld("value_type"),
                f"{vtype!r} is not a value type; want string, number, boolean, enum, date, or ref",
            )

        desc = self.text_of(nodes["description"], fld("description")) if "description" in nodes else None
        desc = (desc or "").strip()

        allowed = self.list_of(nodes["allowed"], fld("allowed")) if "allowed" in nodes else []
        if vtype == "enum" and not allowed:
            where = nodes.get("allowed", nodes["value_type"])
            raise self.fail(where, fld("allowed"), "an enum must list its allowed values, e.g. `allowed: [low, high]`")
        if vtype != "enum" and allowed:
            raise self.fail(
                nodes["allowed"],
                fld("allowed"),
                f"only an enum lists allowed values, and value_type is {vtype!r}; set `value_type: enum` or remove allowed",
            )
        seen: dict[str, str] = {}
        for value, item in allowed:
            if not value or value != value.strip():
                raise self.fail(item, fld("allowed"), "an allowed value must not be empty or padded with spaces")
            low = simple_lower(value)
            if low in seen:
                raise self.fail(
                    item,
                    fld("allowed"),
                    f"lists {value!r} twice (allowed values are compared ignoring case, like stored values)",
                )
            seen[low] = value

        aliases = self.list_of(nodes["aliases"], fld("aliases")) if "aliases" in nodes else []
        listed: set[str] = set()
        for alias, item in aliases:
            if not PREDICATE_RE.match(alias) or alias in RESERVED_PREDICATES or alias == NOTE:
                raise self.fail(item, fld("aliases"), f"alias {alias!r} is not a usable predicate name")
            if alias == name:
                raise self.fail(item, fld("aliases"), f"{name!r} cannot be an alias of itself")
            if alias in listed:
                raise self.fail(item, fld("aliases"), f"lists alias {alias!r} twice")
            listed.add(alias)

        excludes = self.list_of(nodes["excludes"], fld("excludes")) if "excludes" in nodes else []
        listed = set()
        for other, item in excludes:
            if not PREDICATE_RE.match(other):
                raise self.fail(item, fld("excludes"), f"{other!r} is not a predicate name")
            if other == name:
                raise self.fail(item, fld("excludes"), f"{name!r} cannot exclude itself")
            if other in listed:
                raise self.fail(item, fld("excludes"), f"lists {other!r} twice")
            listed.add(other)

        historical = self.bool_of(nodes["historical"], fld("historical")) if "historical" in nodes else None
        if historical and card != "multi":
            raise self.fail(
                nodes["historical"],
                fld("historical"),
                "a historical predicate must be multi-valued (things that happened accumulate); set `cardinality: multi`",
            )

        if name == NOTE:
            problem = "note is reserved for statements no other predicate fits and must be multi-valued string"
            if card != "multi":
                raise self.fail(nodes["cardinality"], fld("cardinality"), problem)
            if vtype != "string":
                raise self.fail(nodes["value_type"], fld("value_type"), problem)
            if historical:
                raise self.fail(nodes["historical"], fld("historical"), problem + ", not historical")
            if excludes:
                raise self.fail(nodes["excludes"], fld("excludes"), problem + ", and excludes nothing")

        src.aliases = aliases
        src.excludes = excludes
        src.definition = Definition(
            name=name,
            cardinality=card,
            value_type=vtype,
            description=desc,
            allowed=tuple(v for v, _ in allowed),
            aliases=tuple(a for a, _ in aliases),
            excludes=tuple(x for x, _ in excludes),
            historical=bool(historical),
        )
        return src

    def check_across(self, defs: dict[str, Definition], sources: dict[str, _Source]) -> None:
        """Aliases unique and not predicates; excludes name a predicate of this file or an alias."""
        claimed: dict[str, tuple[str, Node]] = {}
        for name, src in sources.items():
            for alias, item in src.aliases:
                fld = f"predicates.{name}.aliases"
                if alias in defs:
                    raise self.fail(
                        item,
                        fld,
                        f"{alias!r} is both a predicate (line {_line(sources[alias].key)}) and an alias of {name!r};"
                        " remove the old entry to rename it",
                    )
                if alias in claimed:
                    first, fnode = claimed[alias]
                    raise self.fail(
                        item, fld, f"alias {alias!r} is claimed by both {first!r} (line {_line(fnode)}) and {name!r}"
                    )
                claimed[alias] = (name, item)
        known = set(defs) | set(claimed) | {NOTE}
        for name, src in sources.items():
            for other, item in src.excludes:
                if other not in known:
                    close = difflib.get_close_matches(other, sorted(known), n=1, cutoff=0.8)
                    hint = f"; did you mean {close[0]!r}?" if close else ""
                    raise self.fail(
                        item,
                        f"predicates.{name}.excludes",
                        f"{other!r} is not a predicate of this registry (nor an alias of one){hint}",
                    )


class _Source:
    """Where one definition came from, to point at the line of a cross-definition problem."""

    __slots__ = ("key", "nodes", "aliases", "excludes", "definition")

    def __init__(self, key: Node, nodes: dict[str, Node]) -> None:
        self.key = key
        self.nodes = nodes
        self.aliases: list[tuple[str, Node]] = []
        self.excludes: list[tuple[str, Node]] = []
        self.definition: Definition = NOTE_DEFINITION
