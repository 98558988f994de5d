"""YAML text → plain data (dict, list, str, int, bool, None), remembering the node each value came from.

JSON Schema validates plain data and reports errors by path (``rules/0/select``); a contract error must
name the line and column. So the composed node tree is walked once, and every value's node (and every
mapping key's node) is recorded under its path: ``Located.error(path, problem)`` turns any later
problem — the schema's or the DSL's own — into ``file:line:column: path: problem``.

The walk also makes the checks JSON Schema cannot express, because they are about the YAML text and
are lost once it is data: duplicate keys (PyYAML keeps the last), floats (not exact: ``0.1`` is not the
number the author meant), keys that are not strings, tags outside the core schema, integers beyond
2^63−1 (judged from the text first, so no huge integer is ever built), nesting deeper than any
contract and aliases that multiply the data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ...errors import ContractError
from ...policy_law import format_path  # how a contract error names a place: rules[0].select
from .rational import MAX_MAGNITUDE

Path = tuple[str | int, ...]
"""Where a value is in the document: mapping keys and list indexes from the root."""

_STR: Final = "tag:yaml.org,2002:str"
_INT: Final = "tag:yaml.org,2002:int"
_BOOL: Final = "tag:yaml.org,2002:bool"
_FLOAT: Final = "tag:yaml.org,2002:float"
_NULL: Final = "tag:yaml.org,2002:null"

_MAX_INT_TEXT: Final = 64  # longer integer text is out of range whatever its digits (no huge-int parsing)
_LOADER: Final = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's composer where PyYAML was built with it (its wheels are): a tenth of the pure-Python one's
time, the same node tree (node classes, resolved tags, marks), so every later check is unchanged."""
MAX_DEPTH: Final = 32
"""Levels of nesting a contract may have. A valid one has eight (root, rules, a rule, families, a
family, edges, an edge, a value); deeper data is a mistake or an attack on the parser, and stopping
here keeps every later recursive walk (the validator's included) far from Python's recursion limit."""
MAX_REPEATS: Final = 10_000
"""Values that aliases may repeat in all. An anchor reused for a selector repeats a handful; aliases
of aliases of lists ("billion laughs") repeat exponentially many, and would exhaust memory before the
schema could refuse them (the written-out data is what the validator reads)."""


@dataclass(frozen=True, slots=True)
class Located:
    """A contract document as plain data, with the YAML node of each value and of each mapping key."""

    data: Any
    source: str
    values: dict[Path, Node]
    keys: dict[Path, Node]

    def node(self, path: Path) -> Node:
        """The node of the value at ``path`` (of its nearest recorded container, should there be none)."""
        while path not in self.values:
            path = path[:-1]
        return self.values[path]

    def error(self, path: Path, problem: str, at: Node | None = None) -> ContractError:
        """``problem`` about the value at ``path``, located at ``at`` (default: that value's node)."""
        return located_error(self.source, path, problem, at or self.node(path))


def located_error(source: str, path: Path, problem: str, node: Node) -> ContractError:
    where = format_path(path)
    mark = node.start_mark
    return ContractError(source, f"{where}: {problem}" if where else problem, mark.line + 1, mark.column + 1)


def load_located(text: str, source: str) -> Located:
    """Compose ``text`` and convert it; every YAML-level problem is a ``ContractError`` naming ``source``."""
    walker = _Walker(source)
    data = walker.convert(_compose(text, source), (), 1)
    return Located(data, source, walker.values, walker.keys)


def _compose(text: str, source: str) -> Node:
    try:
        root = yaml.compose(text, Loader=_LOADER)
    except yaml.YAMLError:
        root = _compose_slowly(text, source)  # libyaml's words are terser: say what PyYAML says
    if root is None:
        raise ContractError(source, "the contract is empty", 1, 1)
    return root


def _compose_slowly(text: str, source: str) -> Node | None:
    """The pure-Python composer, for a text libyaml refused: the same place, PyYAML's fuller message
    (``found undefined alias 'y'``, not ``found undefined alias``), whichever composer the host has."""
    try:
        return yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (None, None)
        raise ContractError(source, f"not valid YAML: {exc.problem or exc.context}", line, col) from None
    except yaml.YAMLError as exc:
        raise ContractError(source, f"not valid YAML: {exc.__class__.__name__}") from None


class _Walker:
    """One pass over the node tree in document order; the first YAML-level problem is raised."""

    def __init__(self, source: str) -> None:
        self._source = source
        self._constructor = yaml.SafeLoader("")  # only its scalar constructors are used
        self.values: dict[Path, Node] = {}
        self.keys: dict[Path, Node] = {}
        self._seen: set[Node] = set()  # nodes converted once: meeting one again is an alias's repeat
        self._repeats = 0

    def _error(self, node: Node, path: Path, problem: str) -> ContractError:
        return located_error(self._source, path, problem, node)

    def convert(self, node: Node, path: Path, depth: int) -> Any:
        if depth > MAX_DEPTH:
            problem = f"nested too deeply to be a contract (more than {MAX_DEPTH} levels)"
            raise self._error(node, path[:1], problem)  # at the deep node; the path only says under what
        if node in self._seen:
            self._repeats += 1
            if self._repeats > MAX_REPEATS:
                raise self._error(node, path[:1], f"aliases repeat more than {MAX_REPEATS} values")
        self._seen.add(node)
        self.values[path] = node
        if isinstance(node, MappingNode):
            return self._mapping(node, path, depth)
        if isinstance(node, SequenceNode):
            return [self.convert(item, (*path, i), depth + 1) for i, item in enumerate(node.value)]
        return self._scalar(node, path)

    def _mapping(self, node: MappingNode, path: Path, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, ScalarNode) or key_node.tag != _STR:
                raise self._error(key_node, path, "mapping keys must be strings")
            key = key_node.value
            if key in out:
                raise self._error(key_node, path, f"duplicate key {key!r}")
            self.keys[(*path, key)] = key_node
            out[key] = self.convert(value_node, (*path, key), depth + 1)
        return out

    def _scalar(self, node: Node, path: Path) -> Any:
        if node.tag == _FLOAT:
            raise self._error(
                node,
                path,
                f"{node.value} is a floating-point number, which is not exact; "
                'write an integer or a string like "1/20" or "0.05"',
            )
        if node.tag not in (_STR, _INT, _BOOL, _NULL):
            raise self._error(node, path, f"unsupported YAML tag {node.tag}")
        if node.tag == _INT and len(node.value) > _MAX_INT_TEXT:
            raise self._error(node, path, f"integer out of range (at most {MAX_MAGNITUDE})")
        value = self._constructor.construct_object(node, deep=True)
        if node.tag == _INT and abs(value) > MAX_MAGNITUDE:
            raise self._error(node, path, f"integer out of range (at most {MAX_MAGNITUDE})")
        return value
