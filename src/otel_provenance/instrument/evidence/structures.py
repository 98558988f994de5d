"""The structure of an argument: its scalar leaves with their field names, its mapping keys, and the
canonical text a non-scalar argument is digested by — one bounded walk, shared by classification and
delegation."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from . import projections as pj

STRUCTURE = pj.STRUCTURE
MAX_STRUCTURE_LEAVES = 256
MAX_STRUCTURE_DEPTH = 16
_NONE_TEXT = "\x00null"
_TRUE_TEXT = "\x00true"
_FALSE_TEXT = "\x00false"
_ID_FIELDS = frozenset({"id", "id_"})
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+").findall


TOO_BIG: list = []


def structure_leaves(value: Any) -> list[tuple[str | None, Any, str]] | None:
    """:func:`_structure_leaves` of a value, or None when it is too big or too deep to examine."""
    leaves = structure_walk(value)
    return None if leaves is TOO_BIG else leaves


def structure_walk(value: Any, root: str = "") -> list[tuple[str | None, Any, str]]:
    """Scalar leaves of a dict/list/tuple/set/dataclass/pydantic model as (own field name, value, name
    of the list it is an item of — ``root`` for the argument itself — or ""), then its mapping keys
    as (None, key, ""); [] if not a structure."""
    leaves: list[tuple[str | None, Any, str]] = []
    keys: list[tuple[str | None, Any, str]] = []
    stack: list[tuple[str, Any, int, str]] = [(root, value, 0, "")]
    seen: set[int] = set()
    while stack:
        name, item, depth, container = stack.pop()
        children = children_of(item)
        if children is None:
            if item is not value:
                leaves.append((name, item, container))
                if len(leaves) + len(keys) > MAX_STRUCTURE_LEAVES:
                    return TOO_BIG
            continue
        if depth >= MAX_STRUCTURE_DEPTH or id(item) in seen:
            return TOO_BIG
        seen.add(id(item))
        keys.extend((None, k, "") for k in _data_keys(item))
        holder = name if isinstance(item, list | tuple | set | frozenset) else ""
        stack.extend((str(k), v, depth + 1, holder) for k, v in reversed(children))
    if len(leaves) + len(keys) > MAX_STRUCTURE_LEAVES:
        return TOO_BIG
    return leaves + keys


def children_of(item: Any) -> list[tuple[Any, Any]] | None:
    if isinstance(item, Mapping):
        return list(item.items())
    if isinstance(item, list | tuple):
        return list(enumerate(item))
    if isinstance(item, set | frozenset):  # members have no position: named ``*``, in a stable order
        return [("*", member) for member in _ordered(item)]
    if dataclasses.is_dataclass(item) and not isinstance(item, type):
        return [(f.name, getattr(item, f.name, None)) for f in dataclasses.fields(item)]
    names = pj.model_fields(item)
    if names is not None:  # a pydantic model: its fields, like a dataclass's, and its extra fields
        fields = [(name, getattr(item, name, None)) for name in names]
        extra = pj.model_extra(item)
        return fields + list(extra.items()) if extra else fields
    return None


def _data_keys(item: Any) -> Iterable[Any]:
    """The keys of a structure that are values, not a declared schema: a mapping's keys, the names
    of a pydantic model's extra fields (``extra="allow"``)."""
    if isinstance(item, Mapping):
        return item.keys()
    if pj.model_fields(item) is not None:
        return pj.model_extra(item) or ()
    return ()


def _ordered(members: set | frozenset) -> list[Any]:
    """A set's members in an order that does not depend on the process's hash seed."""
    try:
        return sorted(members, key=lambda m: (type(m).__name__, _sort_text(m)))
    except Exception:  # members that cannot be compared or shown: their own order
        return list(members)


def _sort_text(member: Any) -> str:
    found = pj.leaf_text(member)
    return found[0] if found is not None else repr(member)


def digest_text(value: Any, leaves: list[tuple[str, Any, str]]) -> str:
    """Text digested for a non-scalar argument: canonical JSON of its normalised leaves."""
    if value is None:
        return _NONE_TEXT
    if value is True:
        return _TRUE_TEXT
    if value is False:
        return _FALSE_TEXT
    if isinstance(value, bytes | bytearray) and len(value) <= 1 << 20:
        return "\x00bytes:" + value.hex()
    if leaves is TOO_BIG or children_of(value) is None:
        return f"\x00object:{type(value).__qualname__}:{id(value)}"
    return json.dumps(_normalised_tree(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _normalised_tree(value: Any) -> Any:
    children = children_of(value)
    if children is None:
        if isinstance(value, bytes | bytearray):  # by content, as a bytes argument (not "opaque")
            return digest_text(value, [])
        found = pj.leaf_text(value)
        if found is None:
            return None if value is None else bool(value) if isinstance(value, bool) else "\x00opaque"
        return pj.normalise(found[0]) if found[1] == pj.TEXT else found[0]
    if isinstance(value, list | tuple | set | frozenset):
        return [_normalised_tree(v) for _, v in children]
    return {str(k): _normalised_tree(v) for k, v in children}


__all__ = [
    "MAX_STRUCTURE_DEPTH",
    "MAX_STRUCTURE_LEAVES",
    "TOO_BIG",
    "children_of",
    "digest_text",
    "structure_leaves",
    "structure_walk",
]
