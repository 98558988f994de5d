"""Field paths: how a result's keys and an argument's structure are named where they are exported.

A remembered leaf is recorded with its field path (``files.0``, ``user.id``); a passed argument that
is a structure is compared leaf by leaf under its own field names. Keys of a result are part of the
result, so a key that is data — an e-mail address, a file name — is exported as ``*`` (and
caller-chosen argument names by position): nothing here lets a value reach a span.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from itertools import islice
from typing import Any, Final

from . import projections as pj

MAX_DEPTH = 32  # nesting below this is cut, when remembering and when naming leaves


_NAME_LIKE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


def safe_segment(key: Any) -> str:
    """A result key as it may appear in an exported field path: list indexes and identifier-like
    names as they are, anything else — an email, a file name, an id with punctuation — as ``*``.
    Keys of a result are part of the result: a dict keyed by data would otherwise export the data."""
    if isinstance(key, int) and not isinstance(key, bool):
        return str(key)
    text = key if isinstance(key, str) else None
    return text if text is not None and _NAME_LIKE.fullmatch(text) else "*"


def safe_names(values: Mapping[Any, Any], prefix: str) -> dict[str, Any]:
    """Caller-chosen argument names (``**kwargs``, a foreign span's argument JSON) as they may be
    exported: identifier-like names as they are, anything else as ``<prefix>.<position>``."""
    return {
        key if isinstance(key, str) and safe_segment(key) == key else f"{prefix}.{i}": value
        for i, (key, value) in enumerate(values.items())
    }


_PLAIN_SCALARS: Final = frozenset((str, int, float, bool))


def argument_leaves(name: str, value: Any, depth: int = 0) -> list[tuple[str, Any]]:
    """(field name, scalar) pairs of an argument value: itself, or the leaves of a structure."""
    if type(value) in _PLAIN_SCALARS:  # the common case, without the ABC checks below
        return [(name, value)]
    if depth > MAX_DEPTH:
        return []
    if isinstance(value, Mapping):
        items: Any = value.items()
    elif isinstance(value, list | tuple):  # by position, as ``remember`` names a list's flags
        items = enumerate(value)
    elif isinstance(value, set | frozenset):
        items = (("*", item) for item in value)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        items = ((f.name, getattr(value, f.name, None)) for f in dataclasses.fields(value))
    elif (names := pj.model_fields(value)) is not None:
        items = ((f, getattr(value, f, None)) for f in names)
    else:
        return [(name, value)]
    out: list[tuple[str, Any]] = []
    for key, item in islice(items, 4096):
        out.extend(argument_leaves(str(key), item, depth + 1))
    return out


def children(value: Any) -> Any:
    """The (key, item) pairs of a container (mappings, lists, tuples, sets, dataclasses, pydantic
    models), or None for a scalar."""
    if isinstance(value, Mapping):
        return value.items()
    if isinstance(value, list | tuple):
        return enumerate(value)
    if isinstance(value, set | frozenset):
        return (("*", item) for item in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return ((f.name, getattr(value, f.name, None)) for f in dataclasses.fields(value))
    names = pj.model_fields(value)
    if names is not None:
        return ((name, getattr(value, name, None)) for name in names)
    return None


def field_path(path: tuple, key: Any) -> str:
    return ".".join([*map(safe_segment, path), safe_segment(key)])


__all__ = ["MAX_DEPTH", "argument_leaves", "children", "field_path", "safe_names", "safe_segment"]
