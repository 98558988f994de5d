"""Field paths: how a result's keys and an argument's structure are named where they are exported.

A remembered leaf is recorded with its field path (``files.0``, ``user.id``); a passed argument that
is a structure is compared leaf by leaf under its own field names. Keys of a result are part of the
result, so a key that is data — an e-mail address, a file name — is exported as ``*`` (and
caller-chosen argument names by position): nothing here lets a value reach a span. The echo rule's
view of a call's unsourced arguments (:func:`echo_targets`) is here too, walking them as the ledger
walks a result.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from itertools import chain
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


class CallerName(str):
    """An argument name the caller chose (a ``**kwargs`` key), not a parameter the function declares.

    Classified like any argument, but never exempt by the default allow-list: a ``**kwargs`` entry
    named ``body`` is not the free-text parameter ``body``. ``key`` is the caller's own key when it
    did not look like an identifier and the name is positional (``kwargs.0``): that key is data the
    body receives, and is classified as a value."""

    __slots__ = ("key",)

    def __new__(cls, name: str, key: Any = None) -> CallerName:
        made = super().__new__(cls, name)
        made.key = key
        return made


def caller_names(values: Mapping[Any, Any], prefix: str) -> dict[str, Any]:
    """:func:`safe_names`, each name a :class:`CallerName` (with the caller's key when it is not the
    name)."""
    return {
        CallerName(name, None if name == key else key): value
        for (name, value), key in zip(safe_names(values, prefix).items(), values, strict=True)
    }


def children(value: Any) -> Any:
    """The (key, item) pairs of a container (mappings, lists, tuples, sets, dataclasses, pydantic
    models with their extra fields, plain objects' public attributes), or None for a scalar."""
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
        declared = ((name, getattr(value, name, None)) for name in names)
        extra = pj.model_extra(value)
        return chain(declared, extra.items()) if extra else declared
    if pj.leaf_text(value) is not None:
        return None
    attributes = pj.object_fields(value)
    return attributes.items() if attributes is not None else None


def _texts_of(value: Any) -> str | None:
    """The text a scalar is remembered and compared by (bytes read as UTF-8, leniently: the echo
    rule may withhold more, never less), or None."""
    found = pj.leaf_text(value)
    if found is not None:
        return found[0]
    if isinstance(value, bytes | bytearray) and len(value) <= pj.MAX_TEXT_LENGTH * 4:
        return bytes(value).decode("utf-8", "replace")
    return None


#: Texts up to this long have their echo keys remembered, at most MEMO_SIZE of each (then started again).
MEMO_TEXT: Final = 128
MEMO_SIZE: Final = 4096
_ECHO_KEY: dict[str, str] = {}
_ECHO_KEYS: dict[str, tuple[str, ...]] = {}


def echo_key(text: str) -> str:
    """:func:`~.projections.echo_key`, remembered for short texts (#45): a result's values and a call's
    guesses repeat call after call (``utf-8``, ``ok``, the same reason), and the key is a pure
    function of the text."""
    key = _ECHO_KEY.get(text)
    if key is None:
        key = pj.echo_key(text)
        if len(text) <= MEMO_TEXT:
            if len(_ECHO_KEY) >= MEMO_SIZE:
                _ECHO_KEY.clear()
            _ECHO_KEY[text] = key
    return key


def echo_keys(text: str) -> tuple[str, ...]:
    """:func:`~.projections.echo_keys`, remembered like :func:`echo_key`."""
    keys = _ECHO_KEYS.get(text)
    if keys is None:
        keys = tuple(pj.echo_keys(text))
        if len(text) <= MEMO_TEXT:
            if len(_ECHO_KEYS) >= MEMO_SIZE:
                _ECHO_KEYS.clear()
            _ECHO_KEYS[text] = keys
    return keys


def echo_targets(
    unsourced: Mapping[str, Any], limit: int
) -> tuple[frozenset[str], frozenset[tuple[str, bool]]] | None:
    """What a result must not be credited with: the :func:`~.projections.echo_keys` of every scalar
    and every mapping key held by the call's unsourced arguments, and their flags (own field name,
    value). ``None`` when the arguments hold more than ``limit`` containers and items together.

    Walked to any depth (cycles once), unlike a result: a tool may return a part of an argument
    from deep inside it, where the ledger — which walks the *result* ``MAX_DEPTH`` levels down —
    would remember it. ``limit`` is the ledger's own bound, and an argument bigger than that is
    not examined in part: the caller then remembers nothing of the result (fail closed).
    """
    keys: set[str] = set()
    flags: set[tuple[str, bool]] = set()
    stack: list[tuple[str, Any]] = [(str(name), value) for name, value in unsourced.items()]
    for name in unsourced:  # a ``**kwargs`` key that is data (``roles.0``) was passed as much as its value
        if isinstance(name, CallerName) and (text := _texts_of(name.key)):
            keys.update(echo_keys(text))
    seen: set[int] = set()
    room = limit
    while stack:
        name, value = stack.pop()
        kind = type(value)
        if kind is bool:
            flags.add((name, value))
            continue
        if kind is int:
            keys.add(int.__repr__(value))
            continue
        if kind is str:
            if value and len(value) <= pj.MAX_TEXT_LENGTH:
                keys.update(echo_keys(value))
            continue
        items = children(value) if value is not None else None
        if items is None:
            text = _texts_of(value) if value is not None else None
            if text and len(text) <= pj.MAX_TEXT_LENGTH:
                keys.update(echo_keys(text))
            continue
        if id(value) in seen:
            continue
        seen.add(id(value))
        room -= 1
        keyed = isinstance(value, Mapping)
        if not keyed and pj.model_fields(value) is not None:  # extra fields' names were chosen, not declared
            for name in pj.model_extra(value) or ():
                keys.update(echo_keys(name))
        for key, item in items:
            room -= 1
            if room < 0:
                return None
            if keyed and (text := _texts_of(key)) and len(text) <= pj.MAX_TEXT_LENGTH:
                keys.update(echo_keys(text))
            stack.append((str(key), item))
    return frozenset(keys), frozenset(flags)


def field_path(path: tuple, key: Any) -> str:
    return ".".join([*map(safe_segment, path), safe_segment(key)])


__all__ = [
    "MAX_DEPTH",
    "CallerName",
    "caller_names",
    "children",
    "echo_key",
    "echo_keys",
    "echo_targets",
    "field_path",
    "safe_names",
    "safe_segment",
]
