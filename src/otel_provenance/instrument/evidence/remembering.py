"""How the ledger remembers a result: the walks over results (every leaf, the fields an untrusted tool
names as the system's, or all but the fields an outsider writes), listings indexed in bulk, what a
record with an ``id`` is, the field names results used, and the eviction that keeps it bounded."""

from __future__ import annotations

import dataclasses
import decimal
from collections.abc import Mapping
from itertools import chain, islice
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from . import projections as pj
from .entries import (
    BULK_MIN,
    FORM_STARTS,
    KEY,
    MISSING,
    NORMALISED_STARTS,
    UNVOUCHED,
    VIA_BYTES,
    VIA_DECIMAL,
    VIA_OBJECT,
    Echo,
    ListSource,
    Observation,
    bytes_text,
    drop_older_half,
    needs_normalising,
    record_words,
)
from .fieldpaths import MAX_DEPTH, children

if TYPE_CHECKING:
    from .ledger import Ledger


class Remembering:
    """The writing half of :class:`.ledger.Ledger` (a mixin: the state is the ledger's)."""

    def _walk(
        self,
        tool: str,
        span_id: str,
        value: Any,
        path: tuple,
        depth: int,
        room: int,
        echo: Echo | None = None,
        via: int = 0,
    ) -> int:
        """Index ``value``; returns the remaining room. Scalars inside containers are handled inline.

        Every container visited costs one unit of room, so a cyclic or self-referencing result is cut
        off by the room (and by ``MAX_DEPTH``) instead of needing a visited set on the hot path.
        ``echo``: the leaves it withholds are passed over. ``via``: how this part was read (bits).
        """
        if depth > MAX_DEPTH or room <= 0:
            return room
        t = type(value)
        keyed = False  # a mapping: its string keys that are data are values too (result_key)
        names: Any = None  # the field names this container gives its items
        if t is dict:
            items: Any = value.items()
            keyed = True
            names = value  # its keys (iterated, tested with ``in``), without making a keys view
        elif t is list or t is tuple:
            if (
                echo is None
                and not via & ~UNVOUCHED
                and len(value) >= BULK_MIN
                and len(value) < room
                and self._bulk(tool, span_id, value, path, not via)
            ):
                return room - len(value) - 1  # as the per-leaf path charges it: the list, then each item
            items = enumerate(value)
        elif t is str or t is int or t is float or t is bool or value is None:
            return room - self._leaf(tool, span_id, value, path[:-1], path[-1] if path else "", echo, via)
        elif isinstance(value, Mapping):
            items = value.items()
            keyed = True
            names = value.keys()
        elif t is set or t is frozenset:
            items = (("*", item) for item in value)
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            names = [f.name for f in dataclasses.fields(value)]
            items = ((name, getattr(value, name, MISSING)) for name in names)
        elif (fields := pj.model_fields(value)) is not None:  # a pydantic model: field by field
            items = ((name, getattr(value, name, MISSING)) for name in fields)
            names = fields
            extra = pj.model_extra(value)
            if extra:  # extra="allow": named by whoever built the model, so keys are data too
                items = chain(items, extra.items())
                names = (*fields, *extra)
                keyed = True
        elif pj.leaf_text(value) is None and (attributes := pj.object_fields(value)) is not None:
            items = attributes.items()  # a plain object: its public attributes, like fields
            names = attributes.keys()
            via |= VIA_OBJECT
        else:
            return room - self._leaf(tool, span_id, value, path[:-1], path[-1] if path else "", echo, via)
        room -= 1
        noted = self._noted  # names this walk noted (all identifiers): the common key, passed over
        if names is not None:
            if echo is not None:  # the names it withholds are not noted
                self._note_names(value.keys() if names is value else names, (tool, span_id, path), echo)
            elif not keyed and not noted.issuperset(names):  # fields: a dataclass's, a model's
                self._names.update(dict.fromkeys(names, (tool, span_id, path)))
                noted.update(name for name in names if type(name) is str and name.isidentifier())
            if "id" in names or "id_" in names:
                self._note_record(span_id, path, value)
        index = self._index
        normalise = pj.normalise
        text_kind = pj.TEXT | via
        number_kind = pj.NUMBER | via
        max_len = pj.MAX_TEXT_LENGTH
        uuid_length = pj.UUID_LENGTH
        for key, item in items:
            if keyed and key not in noted:  # a mapping key this walk has not seen
                if echo is None:  # (with an echo, its names were noted above)
                    self._names[key] = (tool, span_id, path)
                if type(key) is str and key.isidentifier():
                    if echo is None:  # a field name: noted once per walk, at its first container
                        noted.add(key)
                elif type(key) is str and 0 < len(key) <= max_len:  # a key that is data: a value too
                    norm = normalise(key)
                    if echo is None or not echo.withholds(norm):
                        index[norm] = (tool, span_id, path, key, None if norm is key else key, KEY | via)
                    room -= 1
            ti = type(item)
            if ti is str:
                size = len(item)
                if not 0 < size <= max_len:
                    continue
                if (
                    item.isascii()
                    and "/" not in item
                    and item[0] not in NORMALISED_STARTS
                    and size != uuid_length
                ):
                    # the common case, inlined: normalise() would return it unchanged
                    if echo is None or not echo.withholds(item):
                        index[item] = (tool, span_id, path, key, None, text_kind)
                        if size >= 40 and pj.is_full_sha(item):
                            self._shas.setdefault(item[:7], []).append(item)
                else:
                    norm = normalise(item)
                    if echo is None or not echo.withholds(norm):
                        index[norm] = (tool, span_id, path, key, None if norm is item else item, text_kind)
                        if len(norm) >= 40 and pj.is_full_sha(norm):
                            self._shas.setdefault(norm[:7], []).append(norm)
                room -= 1
            elif ti is int:
                text = str(item)
                if echo is None or not echo.withholds(text):
                    index[text] = (tool, span_id, path, key, None, number_kind)
                room -= 1
            elif ti is float:  # pj.leaf_text's float rule, inlined (a price, a total)
                if item - item == 0.0:  # finite: NaN and the infinities are never evidence
                    text = str(int(item)) if item.is_integer() and abs(item) < 2**53 else repr(item)
                    if echo is None or not echo.withholds(text):
                        index[text] = (tool, span_id, path, key, None, number_kind)
                    room -= 1
            elif ti is bool:
                flag = (str(key), item)
                if echo is None or flag not in echo.flags:
                    self._flags[flag] = (tool, span_id, path, key)
            elif item is None or item is MISSING:
                continue
            else:
                room = self._walk(tool, span_id, item, (*path, key), depth + 1, room, echo, via)
            if room <= 0:
                break
        return room

    def _note_record(self, span_id: str, path: tuple, record: Any) -> None:
        """Remember that the container at ``path`` is a record with an ``id`` and its type; what it is
        (a file, an event: :func:`.entries.record_words`) is worked out when one of its ids is looked
        up, so that its id sources only the id of the same kind of thing (``file_id``)."""
        self._records[(span_id, path)] = type(record)

    def record_words(self, observation: Observation) -> frozenset[str]:
        """What the record holding an ``id`` observation is (``{"file"}``, ``{"calendar", "event"}``),
        empty when unknown; asked of the ledger that remembered it, and of the enclosing runs'."""
        if observation.parent is None:
            return frozenset()
        key = (observation.span_id, observation.parent)
        ledger: Ledger | None = self
        while ledger is not None:
            for source in (ledger, ledger._untrusted):
                if source is not None and (record_type := source._records.get(key)) is not None:
                    return record_words(observation.tool, observation.parent, record_type)
            ledger = ledger.parent
        return frozenset()

    def _note_names(self, names: Any, entry: tuple, echo: Echo | None) -> None:
        """Remember the field names a result used (a mapping key given as an argument may be one);
        never the names an unsourced argument gave it."""
        if echo is not None:
            names = _unechoed(names, echo)
        self._names.update(dict.fromkeys(names, entry))

    def _leaf(
        self,
        tool: str,
        span_id: str,
        value: Any,
        parent: tuple,
        key: Any,
        echo: Echo | None = None,
        via: int = 0,
    ) -> int:
        """Index one scalar (bytes read as UTF-8 text); returns how many entries it added (0 or 1)."""
        found = pj.leaf_text(value)
        if found is None:
            text = bytes_text(value)
            if text is None:
                return 0
            found = text, pj.TEXT
            via |= VIA_BYTES
        elif isinstance(value, decimal.Decimal):
            via |= VIA_DECIMAL
        text, kind = found
        if not text or len(text) > pj.MAX_TEXT_LENGTH:
            return 0
        norm = pj.normalise(text)
        if echo is not None and echo.withholds(norm):
            return 1
        self._index[norm] = (tool, span_id, parent, key, None if norm == text else text, kind | via)
        if kind == pj.TEXT and pj.is_full_sha(norm):
            self._shas.setdefault(norm[:7], []).append(norm)
        return 1

    def _walk_fields(
        self,
        tool: str,
        span_id: str,
        value: Any,
        path: tuple,
        depth: int,
        room: int,
        fields: frozenset[str],
        echo: Echo | None = None,
        via: int = 0,
    ) -> int:
        """Index only the fields named in ``fields`` (and all they hold), wherever they are in ``value``:
        the system-set fields of an untrusted result."""
        if depth > MAX_DEPTH or room <= 0:
            return room
        items = children(value)
        if items is None:
            return room
        room -= 1
        for key, item in items:
            if type(key) is str and key in fields:
                if children(item) is None:
                    room -= self._leaf(tool, span_id, item, path, key, echo, via)
                else:
                    room = self._walk(tool, span_id, item, (*path, key), depth + 1, room, echo, via)
            else:
                room = self._walk_fields(
                    tool, span_id, item, (*path, key), depth + 1, room, fields, echo, via
                )
            if room <= 0:
                break
        return room

    def _walk_split(
        self,
        tool: str,
        span_id: str,
        value: Any,
        path: tuple,
        depth: int,
        room: int,
        fields: frozenset[str],
        outsiders: list[tuple[tuple, Any]],
        echo: Echo | None,
        via: int,
    ) -> int:
        """Index ``value`` but the fields named in ``fields`` (wherever they are), which are collected in
        ``outsiders`` as ``(path, value)`` for the untrusted ledger: the fields an outsider writes in
        records the system made (``untrusted_fields``)."""
        if depth > MAX_DEPTH or room <= 0:
            return room
        items = children(value)
        if items is None:
            return room - self._leaf(tool, span_id, value, path[:-1], path[-1] if path else "", echo, via)
        room -= 1
        kept = []
        keyed = isinstance(value, Mapping)
        for key, item in items:
            if type(key) is str and key in fields:
                outsiders.append(((*path, key), item))
                continue
            kept.append(key)
            if keyed and type(key) is str and not key.isidentifier() and 0 < len(key) <= pj.MAX_TEXT_LENGTH:
                norm = pj.normalise(key)  # a key that is data (an address a file is shared with)
                if echo is None or not echo.withholds(norm):
                    self._index[norm] = (tool, span_id, path, key, None if norm is key else key, KEY | via)
                room -= 1
            if type(item) is bool:
                flag = (str(key), item)
                if echo is None or flag not in echo.flags:
                    self._flags[flag] = (tool, span_id, path, key)
                continue
            room = self._walk_split(
                tool, span_id, item, (*path, key), depth + 1, room, fields, outsiders, echo, via
            )
            if room <= 0:
                break
        if not isinstance(value, list | tuple | set | frozenset):
            self._note_names(kept, (tool, span_id, path), echo)
            if "id" in kept or "id_" in kept:
                self._note_record(span_id, path, value)
        return room

    def _bulk(self, tool: str, span_id: str, values: Any, path: tuple, vouched: bool = True) -> bool:
        """Index a flat list of plain ASCII strings that need no normalisation in one C-level pass."""
        try:
            joined = "\x00".join(values)
        except TypeError:
            return False
        if not joined.isascii() or " " in joined or "\n" in joined or "\t" in joined or "\r" in joined:
            # sentences, lines: per leaf, so the text index reads them
            return False
        try:
            if needs_normalising(values, joined):
                return False
        except IndexError:  # an empty string in the list: per-leaf path (it skips empties)
            return False
        if not FORM_STARTS.isdisjoint(map(itemgetter(0), values)):
            return False  # dates or numbers written as text: per leaf, so the text index reads them
        longest = max(map(len, values))
        if longest > pj.MAX_TEXT_LENGTH or (
            longest >= pj.UUID_LENGTH and not {pj.UUID_LENGTH, 40, 64}.isdisjoint(map(len, values))
        ):
            return False  # over-long values, possible UUIDs or object ids (prefix index): per-leaf path
        source = ListSource(tool, span_id, path, tuple(values), vouched)
        self._index.update(dict.fromkeys(values, source))
        return True

    def _remember_call(self, span_id: str, arguments: Mapping[str, Any]) -> None:
        """Keep the call's plain-string arguments (normalised only if a path join ever needs them)."""
        texts = tuple(v for v in arguments.values() if type(v) is str and 0 < len(v) <= pj.MAX_TEXT_LENGTH)
        if texts:
            self._calls[span_id] = texts
            if len(self._calls) > max(16, self.max_entries // 10):
                drop_older_half(self._calls)

    def _evict(self) -> None:
        """Drop the oldest entries down to 3/4 of the bound, rebuilding the index compactly.

        A dict never shrinks when keys are deleted, so deleting in place would keep the table sized
        for the largest result ever seen; copying the survivors keeps memory flat at the bound. Doing it
        a quarter at a time keeps the copy amortised O(1) per remembered leaf.
        """
        keep = self.max_entries - self.max_entries // 4
        excess = len(self._index) - keep
        if excess <= 0:
            return
        index = self._index = dict(islice(self._index.items(), excess, None))
        self.evicted += excess
        self._scanned = max(0, self._scanned - excess)
        self._operands_scanned = max(0, self._operands_scanned - excess)
        self._shas = {p: kept for p, shas in self._shas.items() if (kept := [s for s in shas if s in index])}
        if self._records:  # what a record is matters only while its span has entries here
            spans = {entry[1] for entry in index.values() if type(entry) is tuple}
            self._records = {key: words for key, words in self._records.items() if key[0] in spans}


_DICT_KEYS = type({}.keys())
_MEMO_NAMES = 32  # a mapping with up to this many keys has its kept names remembered by its echo


def _unechoed(names: Any, echo: Echo) -> Any:
    """``names`` less those ``echo`` withholds. A mapping's keys are a pure function of the echo
    away from what is kept, and a result's field names repeat call after call: for a shared echo
    (:func:`.entries.echo_of`) the answer is remembered with it (#45)."""
    key = tuple(names) if type(names) is _DICT_KEYS and len(names) <= _MEMO_NAMES else None
    if key is not None and not all(type(name) is str for name in key):
        key = None  # 1 == True == 1.0: only plain str names are remembered by equality
    if key is not None and (kept := echo.kept_names.get(key)) is not None:
        return kept
    if echo.names or not _identifiers(names):
        unechoed = []
        for name in names:
            if type(name) is str and name.isascii() and name.isidentifier():
                if echo.names and echo.withholds(name):
                    continue
            elif (found := pj.leaf_text(name)) is not None and echo.withholds(found[0]):
                continue
            unechoed.append(name)
        names = unechoed
    if key is not None and len(echo.kept_names) < _MEMO_NAMES:
        echo.kept_names[key] = tuple(names)
    return names


def _identifiers(names: Any) -> bool:
    """Whether every name is a plain ASCII identifier: the echo key of one is an identifier too, so
    an echo with no identifier among its keys (:attr:`.entries.Echo.names`) withholds none of them."""
    try:
        joined = "".join(names)
    except TypeError:  # a key that is not a string
        return False
    return joined.isascii() and all(map(str.isidentifier, names))


__all__ = ["Remembering"]
