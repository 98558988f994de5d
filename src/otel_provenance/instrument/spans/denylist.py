"""The default deny-list: keys that hold content in what current agent stacks write, and the matcher.

The names come from the producers' rows (:mod:`otel_provenance.dialects`: one module per library,
named after who writes the keys); docs/stripping.md records the survey (library, version, keys). A
name covers its flattened and nested sub-keys because it is matched as a run of whole dot-separated
parts anywhere in a key path; a part ``*`` matches any one part. Names live in a trie over their parts
(:func:`name_trie`), so :func:`contains_name` is linear in a key's length.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from ... import dialects

#: Keys that hold content, from every producer's row (:mod:`otel_provenance.dialects`); each row's
#: module names the library and version its keys come from (docs/stripping.md has the survey).
DEFAULT_FORBIDDEN_KEYS: Final = dialects.CONTENT_KEYS

#: Events whose whole payload is content; they are dropped entirely (span events and log records).
DEFAULT_CONTENT_EVENTS: Final = dialects.CONTENT_EVENTS


WILDCARD: Final = "*"
_END: Final = None  # trie key marking the end of a name (parts are strings, never None)


def name_trie(names: Iterable[str]) -> dict:
    """Names as a trie over their dot-separated parts; ``_END`` marks where a name ends."""
    root: dict = {}
    for name in names:
        node = root
        for part in name.split("."):
            node = node.setdefault(part, {})
        node[_END] = True
    return root


def contains_name(parts: Sequence[str], trie: dict) -> tuple[bool, int]:
    """Whether a name occurs in ``parts`` as a run of whole parts, and the trie steps it took.

    From each start part the walk follows at most the longest name's length of trie edges (plus its
    wildcard branches), so the cost is linear in ``len(parts)``: no sub-range is built or hashed.
    """
    steps = 0
    count = len(parts)
    for start in range(count):
        frontier = (trie,)
        index = start
        while frontier and index < count:
            part = parts[index]
            following = []
            for node in frontier:
                for child in (node.get(part), node.get(WILDCARD)):
                    steps += 1
                    if child is None:
                        continue
                    if _END in child:
                        return True, steps
                    following.append(child)
            frontier = tuple(following)
            index += 1
    return False, steps
