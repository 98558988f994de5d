"""The run-scoped ledger: every non-empty leaf that tools of one run returned, indexed by normalised value.

``remember`` walks a result (dicts, lists, tuples, sets, dataclasses) and stores each scalar leaf under
its normalised text (see :mod:`.projections`) with the tool, the field path (``files.0``) and the span id
of the tool span. No digest is computed here: digests are made only for values used as arguments, so
remembering a large listing costs a dict insertion per leaf. A flat list of plain strings (the typical
listing) is indexed in bulk with C-level operations; its field paths are resolved only on a match.

Echoes do not launder. A value a tool returns that equals one of the *unsourced* (assumed, invented
or untrusted) arguments of that same call keeps the argument's kind: ``remember(..., unsourced=...)``
leaves the ledger as it was for those values, so ``lookup(account)`` returning
``{"account": account, "valid": False}`` does not turn an assumed account into an observed one.
"Equals" is compared by :func:`~.projections.echo_key` — a form derived from the guess (case, space,
``normpath``, zero-padding, a number's other form) or a piece of a guessed path is an echo too — over
the whole argument up to the ledger's bound (:func:`.fieldpaths.echo_targets`; an argument past it
leaves nothing of the result remembered). Each call's echo keys are kept (``_echo_spans``) so that a
match reached any other way — inside a text, joined from a path's pieces — in that call's result is
refused at lookup. An echo of an *observed* argument is remembered as usual (it was evidence already).

A nested ``op.run`` gives its ledger the enclosing run's as ``parent``: lookups that miss locally
ask the parent, so values observed by the enclosing run count inside the nested one (not the
other way round: what the nested run observes stays in its own ledger).

Trust. Results of a tool declared ``trust="untrusted"`` (e-mail bodies, web pages, another agent's
free text) go to a second ledger of their own (``remember(..., trust=...)``, :mod:`.trust`), except
the records the tool vouches for (``trusted_records``) and the fields it names as set by the system
rather than the content's author (``trusted_fields``: an ``id``, a ``date``). A lookup asks every
trusted source first — this ledger, then its parents — and only then the untrusted ones, and marks
what it found there (``Match.trusted``): a value found in both a trusted and an untrusted result is
observed from the trusted one.

Beyond equal values (and the projections of :mod:`.projections`), a lookup that misses finds a value
written inside a longer text on token boundaries (``in_text``), a date or number written in another
form (``datetime_normalised``, ``number_normalised``) — :mod:`.textindex`, built lazily — and a
string key of a result dict that is data rather than a field name (an e-mail address, a file name:
``result_key``). The field names of results are kept too (``match_name``): a mapping key of an
argument is evidence when a result used it as a field name.

The ledger is bounded: past ``max_entries`` the oldest entries are dropped (down to three quarters of
the bound, so the cost stays amortised O(1)) and ``full`` turns true, which tool spans report as
``agent.ledger.full``.
Lookups are O(1) in the size of the ledger (dict probes; a path join probes once per ``/``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import decimal
import re
import threading
from collections.abc import Mapping
from itertools import chain, islice
from operator import itemgetter
from typing import Any

from ..semconv import SOURCE_INPUT
from . import derived as dv
from . import projections as pj
from . import textforms as tf
from .fieldpaths import MAX_DEPTH, children, echo_targets, field_path, safe_names, safe_segment
from .textindex import TextIndex
from .trust import TRUSTED, VALUES, SourceTrust

MAX_PATH_SPLITS = 32
# Fields of a result that name the directory its entries are relative to (for the path_join projection).
ROOT_FIELDS = frozenset(
    {"root", "path", "dir", "directory", "folder", "cwd", "base", "base_dir", "prefix", "parent"}
)
_BULK_MIN = 32  # lists shorter than this take the per-leaf path
_MISSING = object()
KEY = 2  # the kind of a remembered dict key (TEXT = 0 and NUMBER = 1 are projections')
# An entry's kind is TEXT, NUMBER or KEY in its low bits; the bits above say how the value was read,
# which a match reports as a projection (a Decimal, a plain object's attribute, bytes read as text).
_KIND = 7
_VIA_OBJECT = 1 << 3
_VIA_BYTES = 2 << 3
_VIA_DECIMAL = 4 << 3
# an entry whose words are not evidence (#44): remembered from a ``values`` source — a whole value
# counts, a value found inside its text is ``untrusted`` (who wrote the text is not known)
_UNVOUCHED = 8 << 3
#: The ledger's id of a call whose span records nothing (no span id): a prefix no hex id has.
LOCAL_CALL = "~"
_VIA_NAMES = ((_VIA_OBJECT, pj.OBJECT_ATTRIBUTE), (_VIA_BYTES, pj.BYTES_TEXT), (_VIA_DECIMAL, pj.DECIMAL))
_SPACE = re.compile(r"\s").search
# last or first characters of a text whose token differs from the text itself (see textforms.tokens)
_TOKEN_EDGES = frozenset(tf.OPENING + tf.CLOSING)
# first characters of a text that may be a date or a number written in another form
_FORM_STARTS = frozenset("0123456789$€£")
_HAS_DIGIT = re.compile(r"\d").search  # every date and number form has one


class Observation:
    """One remembered leaf: where it came from and its text before normalisation."""

    __slots__ = ("field", "kind", "span_id", "text", "tool", "via", "vouched")

    def __init__(
        self,
        tool: str,
        span_id: str,
        field: str,
        text: str,
        kind: int,
        via: tuple[str, ...] = (),
        vouched: bool = True,
    ) -> None:
        self.tool = tool
        self.span_id = span_id
        self.field = field
        self.text = text
        self.kind = kind
        self.via = via  # projections naming how the value was read from the result
        # its source is trusted word for word (the request, the inputs, a ``trusted`` tool, a vouched
        # record), not only as whole values: the name-based matches of short values need that
        self.vouched = vouched

    @property
    def field_name(self) -> str:
        """Last segment of the field path (``files.0`` -> ``0``, ``user.id`` -> ``id``)."""
        return self.field.rpartition(".")[2]


class Match:
    """A lookup hit: the observation, the projection that matched it (``exact`` if byte-equal), and
    whether the source is trusted (False: found only in results of tools declared untrusted)."""

    __slots__ = ("observation", "projection", "trusted")

    def __init__(self, observation: Observation, projection: str, trusted: bool = True) -> None:
        self.observation = observation
        self.projection = projection
        self.trusted = trusted

    @property
    def by_field(self) -> bool:
        """Whether the observation's field name describes the matched value itself (not so for a
        value found inside a text): only then may a short value match by field name."""
        return pj.IN_TEXT not in self.projection


class _ListSource:
    """A bulk-indexed flat list of plain strings; the position of a value is resolved on demand."""

    __slots__ = ("items", "path", "positions", "prefix", "span_id", "tool", "vouched")

    def __init__(
        self, tool: str, span_id: str, path: tuple, items: tuple[str, ...], vouched: bool = True
    ) -> None:
        self.tool = tool
        self.span_id = span_id
        self.path = path
        self.items = items
        self.vouched = vouched
        self.positions: dict[str, int] | None = None
        self.prefix = ""  # the exported form of ``path`` plus ".", made with ``positions``

    def observation(self, key: str) -> Observation:
        positions = self.positions
        if positions is None:
            positions = self.positions = {value: index for index, value in enumerate(self.items)}
            self.prefix = "".join(safe_segment(part) + "." for part in self.path)
        position = positions.get(key)
        field = self.prefix + (str(position) if position is not None else "*")
        return Observation(self.tool, self.span_id, field, key, pj.TEXT, vouched=self.vouched)


_NORMALISED_STARTS = frozenset(".{[")


def _needs_normalising(values: Any, joined: str) -> bool:
    """Could any element of a flat ASCII string list change under :func:`projections.normalise`?"""
    if not _NORMALISED_STARTS.isdisjoint(map(itemgetter(0), values)):
        return True
    if "/" not in joined:
        return False
    return (
        joined.endswith("/")
        or "//" in joined
        or "/./" in joined
        or "/\x00" in joined
        or "/.\x00" in joined
        or (joined.endswith("/."))
    )


class _Echo:
    """A call's unsourced arguments as the echo rule sees them (:func:`.fieldpaths.echo_targets`):
    a result leaf whose :func:`~.projections.echo_key` (or compact form) is among ``keys`` — the
    value, a form derived from it, a piece of a path — or a flag among ``flags`` is withheld, not
    remembered (:func:`~.projections.is_echo`)."""

    __slots__ = ("_names", "flags", "keys")

    def __init__(self, keys: frozenset[str], flags: frozenset[tuple[str, bool]]) -> None:
        self.keys = keys
        self.flags = flags
        self._names: bool | None = None

    @property
    def names(self) -> bool:
        """Could a field name (an identifier) be withheld at all? Its echo key would be one."""
        if self._names is None:
            self._names = any(key.isidentifier() for key in self.keys)
        return self._names

    def withholds(self, text: str) -> bool:
        return bool(self.keys) and pj.is_echo(text, self.keys)


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]").search


def _bytes_text(value: Any) -> str | None:
    """``bytes`` a tool returned, read as text when they are UTF-8 text (a subprocess's stdout), not
    binary data: valid UTF-8 (strict) without control characters other than whitespace."""
    if not isinstance(value, bytes | bytearray) or len(value) > 4 * pj.MAX_TEXT_LENGTH:
        return None
    try:
        text = bytes(value).decode("utf-8")
    except UnicodeDecodeError:
        return None
    return None if _CONTROL(text) else text


def _drop_older_half(bounded: dict) -> None:
    """Drop the older half of a dict that outgrew its bound (dicts keep insertion order)."""
    for old in list(islice(bounded, len(bounded) // 2)):
        del bounded[old]


def _via_names(kind: int) -> tuple[str, ...]:
    return tuple(name for bit, name in _VIA_NAMES if kind & bit)


_CAMEL_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def words_of(name: str) -> frozenset[str]:
    """The lower-case words of a name (``CloudDriveFile``, ``calendar_events``, ``fileIds``), each
    also without a plural ``s`` (``events`` -> ``event``): how a record's kind and an argument's
    ``<thing>_id`` are compared."""
    words = {w.lower() for w in _CAMEL_WORDS.findall(name)}
    return frozenset(words | {w[:-1] for w in words if len(w) > 3 and w.endswith("s")})


def record_words(tool: str, path: tuple, record: Any) -> frozenset[str]:
    """What a record is, by the most specific name known: its class (a dataclass, a pydantic model, an
    object — not a plain dict), else the field that holds it (``files.3`` -> ``files``), else the
    tool that returned it (``list_files``)."""
    if not isinstance(record, Mapping):
        return words_of(type(record).__name__)
    for segment in reversed(path):
        if isinstance(segment, str) and segment.isidentifier():
            return words_of(segment)
    return words_of(tool)


class Ledger:
    """What one run has observed. Safe to share between the threads of one run."""

    def __init__(self, max_entries: int | None = None) -> None:
        if max_entries is None:
            from .settings import get_settings

            max_entries = get_settings().ledger_max_entries
        if isinstance(max_entries, bool) or not isinstance(max_entries, int) or max_entries < 1:
            from ..errors import ConfigurationError

            raise ConfigurationError("ledger max_entries: must be an integer >= 1")
        self.max_entries = max_entries
        self.evicted = 0
        self._index: dict[str, Any] = {}  # normalised text -> entry tuple | _ListSource
        self._shas: dict[str, list[str]] = {}  # first 7 hex digits -> full object ids
        self._calls: dict[str, tuple[str, ...]] = {}  # span id -> string arguments of that call
        self._attempts: dict[tuple, int] = {}
        self._flags: dict[tuple[str, bool], tuple] = {}  # (field name, bool) -> (tool, span, path, key)
        self._names: dict[Any, tuple] = {}  # field name of a result -> (tool, span, path)
        # (span id, field path of a record with an ``id``) -> what the record is (:func:`record_words`)
        self._records: dict[tuple[str, str], frozenset[str]] = {}
        self._echo_spans: dict[str, frozenset[str]] = {}  # span id -> echo keys of its unsourced arguments
        self._lock = threading.Lock()
        self._texts = TextIndex(max_entries)  # tokens and date/number forms, read lazily
        self._scanned = 0  # how many main-index entries (in insertion order) the text index has read
        self._untrusted: Ledger | None = None  # results of tools declared untrusted
        self._unvouched = False  # whether a result whose words are not evidence was remembered
        self._outsider = False  # this is a run's ledger of untrusted results
        self._users_words = False  # the run's request or inputs were remembered here
        # span ids of calls the user directed (an argument from the request or inputs, or delegated):
        # what they returned may be acted on (#44, :mod:`.derived`, delegation); shared with _untrusted.
        # Each with the destinations its result holds, (form, token) — None: too big to know (#50)
        self._directed: dict[str, frozenset[tuple[str, str]] | None] = {}
        self._operands = dv.Operands()  # what derived values may be computed from, read lazily
        self._operands_scanned = 0
        self.parent: Ledger | None = None  # the enclosing run's ledger (nested op.run), read-only here

    # -- state ----------------------------------------------------------------------------------------
    @property
    def full(self) -> bool:
        """True once entries were evicted: a value missing now may have been observed earlier."""
        return self.evicted > 0 or (self._untrusted is not None and self._untrusted.evicted > 0)

    @property
    def has_untrusted(self) -> bool:
        """Whether this run or an enclosing one has remembered anything a value may be ``untrusted``
        by: a result of an untrusted tool, or a text whose words are not evidence."""
        ledger: Ledger | None = self
        while ledger is not None:
            if ledger._untrusted is not None or ledger._unvouched:
                return True
            ledger = ledger.parent
        return False

    def untrusted(self) -> Ledger:
        """The ledger of this run's untrusted results (made on first use)."""
        ledger = self._untrusted
        if ledger is None:
            with self._lock:
                ledger = self._untrusted
                if ledger is None:
                    ledger = Ledger(self.max_entries)
                    ledger._outsider = True
                    ledger._directed = self._directed
                    self._untrusted = ledger
        return ledger

    def __len__(self) -> int:
        return len(self._index)

    # -- writing --------------------------------------------------------------------------------------
    def remember(
        self,
        tool: str,
        result: Any,
        span_id: str,
        *,
        field_prefix: tuple = (),
        call_arguments: Mapping[str, Any] | None = None,
        unsourced: Mapping[str, Any] | None = None,
        trust: SourceTrust = VALUES,
    ) -> None:
        """Index every non-empty scalar leaf of ``result``. Never raises for odd values.

        ``call_arguments`` (the arguments of the call that produced ``result``) enable the ``path_join``
        projection: a listing's root argument joined with one of its entries. ``unsourced`` (name ->
        value of the call's unsourced arguments: not observed): echoes of these values — equal, or
        derived by case, space, path or zero-padding changes, or a piece of a path — are not evidence;
        when they are too big to examine, nothing of the result is. ``trust`` (:mod:`.trust`): at
        ``values`` (the default) the words inside the result's texts are not evidence of their own
        (found only there, a value is ``untrusted``); at ``trusted`` they are. An untrusted
        ``trust``: the result goes to the untrusted ledger, but for the records it vouches for and
        the fields it names (by their own name, anywhere), which stay here: a vouched record as
        ``trusted`` (the user or the system wrote it), a named field at ``values``. Fields named
        ``untrusted_fields`` go to the untrusted ledger, whatever the level.
        """
        if tool == SOURCE_INPUT:
            self._users_words = True
        echo = None
        if unsourced:
            targets = echo_targets(unsourced, self.max_entries)
            if targets is None:
                return  # any part of the result may echo an argument too big to examine: fail closed
            if targets[0] or targets[1]:
                echo = _Echo(*targets)
        self._remember(tool, result, span_id, field_prefix, call_arguments, echo, trust)

    def _remember(
        self,
        tool: str,
        result: Any,
        span_id: str,
        field_prefix: tuple,
        call_arguments: Mapping[str, Any] | None,
        echo: _Echo | None,
        trust: SourceTrust,
    ) -> None:
        if not trust.trusted:
            if trust.records is not None:
                for prefix, record, vouched in trust.records_of(result, field_prefix):
                    self._remember(
                        tool,
                        record,
                        span_id,
                        prefix,
                        call_arguments,
                        echo,
                        TRUSTED if vouched else trust._replace(records=None),
                    )
                return
            self.untrusted()._remember(tool, result, span_id, field_prefix, call_arguments, echo, TRUSTED)
            if not trust.fields:
                return
        # the words of a ``values`` source are not evidence; those of the fields an untrusted tool
        # names as the system's (``trusted_fields``: an id, a date) are: the application vouched
        via = 0 if trust.words or not trust.trusted else _UNVOUCHED
        if via:
            self._unvouched = True
        outsiders: list[tuple[tuple, Any]] = []
        with self._lock:
            before = len(self._index)
            room = self.max_entries
            if echo is not None and echo.keys:
                self._echo_spans[span_id] = echo.keys
                if len(self._echo_spans) > self.max_entries:
                    _drop_older_half(self._echo_spans)
            with contextlib.suppress(Exception):  # an exotic container: keep what was indexed
                if not trust.trusted:
                    room = self._walk_fields(
                        tool, span_id, result, field_prefix, 0, room, trust.fields, echo, via
                    )
                elif trust.untrusted_fields:
                    room = self._walk_split(
                        tool,
                        span_id,
                        result,
                        field_prefix,
                        0,
                        room,
                        trust.untrusted_fields,
                        outsiders,
                        echo,
                        via,
                    )
                else:
                    room = self._walk(tool, span_id, result, field_prefix, 0, room, echo, via)
            added = len(self._index) != before or room < self.max_entries - 1
            if added and call_arguments:
                self._remember_call(span_id, call_arguments)
            if len(self._index) > self.max_entries:
                self._evict()
            if len(self._flags) > self.max_entries:
                _drop_older_half(self._flags)
                self.evicted += 1
            if len(self._names) > self.max_entries:  # a name lost makes a mapping key unsourced: fails closed
                _drop_older_half(self._names)
        if outsiders:  # fields an outsider writes, in records the system made: the untrusted ledger's
            untrusted = self.untrusted()
            for path, item in outsiders:
                untrusted._remember(tool, item, span_id, path, call_arguments, echo, TRUSTED)

    def next_attempt(self, tool: str, signature: tuple) -> int:
        """0 on the first call of ``tool`` with these argument digests in this run, then 1, 2, ..."""
        key = (tool, signature)
        with self._lock:
            attempt = self._attempts.get(key, 0)
            self._attempts[key] = attempt + 1
            if len(self._attempts) > self.max_entries:
                _drop_older_half(self._attempts)
        return attempt

    def _walk(
        self,
        tool: str,
        span_id: str,
        value: Any,
        path: tuple,
        depth: int,
        room: int,
        echo: _Echo | None = None,
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
            names = value.keys()
        elif t is list or t is tuple:
            if (
                echo is None
                and not via & ~_UNVOUCHED
                and len(value) >= _BULK_MIN
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
            items = ((name, getattr(value, name, _MISSING)) for name in names)
        elif (fields := pj.model_fields(value)) is not None:  # a pydantic model: field by field
            items = ((name, getattr(value, name, _MISSING)) for name in fields)
            names = fields
            extra = pj.model_extra(value)
            if extra:  # extra="allow": named by whoever built the model, so keys are data too
                items = chain(items, extra.items())
                names = (*fields, *extra)
                keyed = True
        elif pj.leaf_text(value) is None and (attributes := pj.object_fields(value)) is not None:
            items = attributes.items()  # a plain object: its public attributes, like fields
            names = attributes.keys()
            via |= _VIA_OBJECT
        else:
            return room - self._leaf(tool, span_id, value, path[:-1], path[-1] if path else "", echo, via)
        room -= 1
        if names is not None:
            self._note_names(names, (tool, span_id, path), echo)
            if "id" in names or "id_" in names:
                self._note_record(tool, span_id, path, value)
        index = self._index
        normalise = pj.normalise
        text_kind = pj.TEXT | via
        number_kind = pj.NUMBER | via
        max_len = pj.MAX_TEXT_LENGTH
        uuid_length = pj.UUID_LENGTH
        for key, item in items:
            if keyed and type(key) is str and not key.isidentifier() and 0 < len(key) <= max_len:
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
                    and item[0] not in _NORMALISED_STARTS
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
            elif item is None or item is _MISSING:
                continue
            else:
                room = self._walk(tool, span_id, item, (*path, key), depth + 1, room, echo, via)
            if room <= 0:
                break
        return room

    def _note_record(self, tool: str, span_id: str, path: tuple, record: Any) -> None:
        """Remember what a record with an ``id`` is (a file, an event), so that its id sources only
        the id of the same kind of thing (``file_id``: :meth:`record_words`)."""
        self._records[(span_id, ".".join(map(safe_segment, path)))] = record_words(tool, path, record)
        if len(self._records) > self.max_entries:
            _drop_older_half(self._records)

    def record_words(self, observation: Observation) -> frozenset[str]:
        """What the record holding an ``id`` observation is (``{"file"}``, ``{"calendar", "event"}``),
        empty when unknown; asked of the ledger that remembered it, and of the enclosing runs'."""
        key = (observation.span_id, observation.field.rpartition(".")[0])
        ledger: Ledger | None = self
        while ledger is not None:
            for source in (ledger, ledger._untrusted):
                if source is not None and (words := source._records.get(key)) is not None:
                    return words
            ledger = ledger.parent
        return frozenset()

    def _note_names(self, names: Any, entry: tuple, echo: _Echo | None) -> None:
        """Remember the field names a result used (a mapping key given as an argument may be one);
        never the names an unsourced argument gave it."""
        if echo is not None:
            kept = []
            for name in names:
                if type(name) is str and name.isascii() and name.isidentifier():
                    if echo.names and echo.withholds(name):
                        continue
                elif (found := pj.leaf_text(name)) is not None and echo.withholds(found[0]):
                    continue
                kept.append(name)
            names = kept
        self._names.update(dict.fromkeys(names, entry))

    def _leaf(
        self,
        tool: str,
        span_id: str,
        value: Any,
        parent: tuple,
        key: Any,
        echo: _Echo | None = None,
        via: int = 0,
    ) -> int:
        """Index one scalar (bytes read as UTF-8 text); returns how many entries it added (0 or 1)."""
        found = pj.leaf_text(value)
        if found is None:
            text = _bytes_text(value)
            if text is None:
                return 0
            found = text, pj.TEXT
            via |= _VIA_BYTES
        elif isinstance(value, decimal.Decimal):
            via |= _VIA_DECIMAL
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
        echo: _Echo | None = None,
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
        echo: _Echo | None,
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
                self._note_record(tool, span_id, path, value)
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
            if _needs_normalising(values, joined):
                return False
        except IndexError:  # an empty string in the list: per-leaf path (it skips empties)
            return False
        if not _FORM_STARTS.isdisjoint(map(itemgetter(0), values)):
            return False  # dates or numbers written as text: per leaf, so the text index reads them
        longest = max(map(len, values))
        if longest > pj.MAX_TEXT_LENGTH or (
            longest >= pj.UUID_LENGTH and not {pj.UUID_LENGTH, 40, 64}.isdisjoint(map(len, values))
        ):
            return False  # over-long values, possible UUIDs or object ids (prefix index): per-leaf path
        source = _ListSource(tool, span_id, path, tuple(values), vouched)
        self._index.update(dict.fromkeys(values, source))
        return True

    def _remember_call(self, span_id: str, arguments: Mapping[str, Any]) -> None:
        """Keep the call's plain-string arguments (normalised only if a path join ever needs them)."""
        texts = tuple(v for v in arguments.values() if type(v) is str and 0 < len(v) <= pj.MAX_TEXT_LENGTH)
        if texts:
            self._calls[span_id] = texts
            if len(self._calls) > max(16, self.max_entries // 10):
                _drop_older_half(self._calls)

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

    # -- reading --------------------------------------------------------------------------------------
    def observation(self, key: str) -> Observation | None:
        """The observation stored under a normalised text, or None."""
        entry = self._index.get(key)
        if entry is None:
            return None
        if type(entry) is _ListSource:
            return entry.observation(key)
        tool, span_id, parent, leaf_key, text, kind = entry
        field = field_path(parent, leaf_key)
        if kind <= _KIND:
            return Observation(tool, span_id, field, key if text is None else text, kind)
        text = key if text is None else text
        return Observation(tool, span_id, field, text, kind & _KIND, _via_names(kind), not kind & _UNVOUCHED)

    def flag(self, name: str, value: bool) -> Observation | None:
        """A boolean observed in a field called ``name`` (booleans are evidence only by field name)."""
        entry = self._flags.get((name, value))
        if entry is None:
            return self.parent.flag(name, value) if self.parent is not None else None
        tool, span_id, parent, key = entry
        return Observation(tool, span_id, field_path(parent, key), "true" if value else "false", pj.TEXT)

    def match_flag(self, name: str, value: bool) -> Match | None:
        """:meth:`flag` through the trusted sources, then the untrusted ones (``Match.trusted``)."""
        found = self.flag(name, value)
        if found is not None:
            return Match(found, pj.EXACT)
        ledger: Ledger | None = self
        while ledger is not None:
            if ledger._untrusted is not None and (found := ledger._untrusted.flag(name, value)) is not None:
                return Match(found, pj.EXACT, trusted=False)
            ledger = ledger.parent
        return None

    def name(self, name: Any) -> Observation | None:
        """A field name some result (or the inputs) used: a mapping key of an argument may be one."""
        entry = self._names.get(name)
        if entry is None:
            return self.parent.name(name) if self.parent is not None else None
        tool, span_id, parent = entry
        return Observation(tool, span_id, field_path(parent, name), str(name), pj.TEXT)

    def match_name(self, name: Any) -> Match | None:
        """:meth:`name` through the trusted sources, then the untrusted ones (``Match.trusted``)."""
        try:
            found = self.name(name)
        except TypeError:  # an unhashable key
            return None
        if found is not None:
            return Match(found, pj.EXACT)
        ledger: Ledger | None = self
        while ledger is not None:
            if ledger._untrusted is not None and (found := ledger._untrusted.name(name)) is not None:
                return Match(found, pj.EXACT, trusted=False)
            ledger = ledger.parent
        return None

    def lookup(self, text: str, kind: int = pj.TEXT) -> Match | None:
        """Match an argument's text against everything observed; ``kind`` is TEXT or NUMBER.

        Trusted sources first: this ledger, then the enclosing runs' (``parent``); only then the
        untrusted results of each, in the same order — a match there has ``trusted=False``. A value
        found in this ledger only inside a text whose words are not evidence (a ``values`` source)
        is ``trusted=False`` too, and comes after every trusted match. A match
        in the result of a call that had the argument (or a form of it) among its unsourced arguments
        is an echo, whatever the route — inside a text, joined from a path's pieces — and no match.
        """
        ledger: Ledger | None = self
        unvouched: Match | None = None  # found only inside a text whose words are not evidence
        while ledger is not None:
            if (found := ledger._lookup(text, kind)) is not None and not ledger._echoed(text, found):
                if found.trusted:
                    return found
                unvouched = unvouched or found
            ledger = ledger.parent
        if unvouched is not None:
            return unvouched
        ledger = self
        while ledger is not None:
            untrusted = ledger._untrusted
            if (
                untrusted is not None
                and (found := untrusted._lookup(text, kind)) is not None
                and not untrusted._echoed(text, found)
            ):
                found.trusted = False
                return found
            ledger = ledger.parent
        return None

    def _echoed(self, text: str, found: Match) -> bool:
        """Whether ``text`` echoes an unsourced argument of the call whose result ``found`` is in."""
        spans = self._echo_spans
        if not spans:
            return False
        keys = spans.get(found.observation.span_id)
        return keys is not None and pj.is_echo(text, keys)

    def _lookup(self, text: str, kind: int) -> Match | None:
        if not text or len(text) > pj.MAX_TEXT_LENGTH:
            return None
        key = pj.normalise(text)
        steps = () if key is text else pj.normalise_steps(text)[1]
        found = self.observation(key)
        if found is not None:
            how = "" if found.kind == kind else pj.RESULT_KEY if found.kind == KEY else pj.NUMBER_AS_TEXT
            if found.text == text:
                projection = pj.combine(how or pj.EXACT, found.via) if found.via else how or pj.EXACT
            else:
                projection = pj.combine(steps, pj.normalise_steps(found.text)[1], how or (), found.via)
            return Match(found, projection)
        if kind == pj.TEXT:
            prefix = pj.sha_prefix(key)
            if prefix is not None:
                for full in reversed(self._shas.get(prefix[:7], ())):
                    if full.startswith(prefix) and (hit := self.observation(full)) is not None:
                        return Match(hit, pj.combine(steps, pj.GIT_SHA_PREFIX))
            if pj.looks_like_path(key) and (joined := self._join(key, steps)) is not None:
                return joined
        number = tf.number_form(text) if not text.isdigit() and _HAS_DIGIT(text) else None
        if number is not None:  # a number written in another form, remembered as a number
            plain = number[len(tf.NUMBER_KEY) :]
            if plain != text and (hit := self.observation(plain)) is not None:
                return Match(hit, pj.combine(pj.NUMBER_NORMALISED, hit.via))
        if self._texts.empty and self._scanned >= len(self._index):
            return None  # no text of this ledger holds tokens or forms: nothing more to look at
        with self._lock:
            return self._in_texts(text, kind)

    def _in_texts(self, text: str, kind: int) -> Match | None:
        """The second index (:mod:`.textindex`): a number or a date written in another form, then a
        value written inside a longer text, on token boundaries."""
        self._read_new_texts()
        if self._texts.empty:
            return None
        resolve = self._text_of
        number = tf.number_form(text) if _HAS_DIGIT(text) else None
        if number is not None and (form := self._texts.find_form(number, resolve)) is not None:
            return self._form_match(form, pj.NUMBER_NORMALISED)
        if kind == pj.TEXT and _HAS_DIGIT(text):
            dates = tf.date_forms(text)
            if dates and (form := self._texts.find_form(dates[-1], resolve)) is not None:
                return self._form_match(form, pj.DATETIME_NORMALISED)
        found = self._texts.find_in_text(text, resolve)
        if found is None:
            return None
        hit = self.observation(found[0])
        if hit is None:  # pragma: no cover - resolve() saw the key a moment ago, under the lock
            return None
        number = () if kind == pj.TEXT else pj.NUMBER_AS_TEXT
        return Match(hit, pj.combine(pj.IN_TEXT, found[1], number, hit.via), found[2])

    def _form_match(self, form: tuple[str, bool, bool], projection: str) -> Match | None:
        hit = self.observation(form[0])
        if hit is None:  # pragma: no cover - find_form() resolved the key a moment ago, under the lock
            return None
        # a whole value in another form counts at ``values``; written inside an unvouched text, not
        return Match(hit, pj.combine(projection, pj.IN_TEXT if form[1] else (), hit.via), form[2])

    def _read_new_texts(self) -> None:
        """Hand the text index the texts remembered since it last read (the main index keeps its
        insertion order): sentences, and texts that start with a digit or a currency sign."""
        index = self._index
        if self._scanned >= len(index):
            return
        add = self._texts.add
        edges = _TOKEN_EDGES
        for key, entry in islice(index.items(), self._scanned, None):
            if type(entry) is tuple and entry[5] & _KIND != pj.NUMBER:
                text = key if entry[4] is None else entry[4]
                if (
                    text[0] in _FORM_STARTS
                    or text[0] in edges
                    or text[-1] in edges
                    or "=" in text
                    or _SPACE(text)
                ):
                    add(key, text, not entry[5] & _UNVOUCHED, entry[0] == SOURCE_INPUT)
        self._scanned = len(index)

    def said_by_user(self, text: str) -> Match | None:
        """``text`` as the user wrote it, inside the run's request or inputs (in any letter case), at
        any length: the user's own words are no chance match (this run's, or an enclosing one's)."""
        ledger: Ledger | None = self
        while ledger is not None:
            if not ledger._users_words:  # no request or inputs text: nothing to search
                ledger = ledger.parent
                continue
            with ledger._lock:
                ledger._read_new_texts()
                found = ledger._texts.find_in_users_words(text, ledger._text_of)
                hit = ledger.observation(found[0]) if found is not None else None
            if found is not None and hit is not None:
                return Match(hit, pj.combine(pj.IN_TEXT, found[1]))
            ledger = ledger.parent
        return None

    # -- directed calls and derived values ----------------------------------------------------------
    def direct(self, span_id: str, returned: frozenset[tuple[str, str]] | None = None) -> None:
        """Mark a call the user directed: one of its arguments came from the run's request or inputs
        (``read_file("bill.txt")`` for "pay the bill in bill.txt"), or was delegated in turn.
        ``returned``: the destinations its result holds (:func:`.delegation.destinations_returned`;
        a generator's items add theirs), None when they are not known — then none of them is unique."""
        if span_id:
            with self._lock:
                directed = self._directed
                if span_id in directed:
                    known = directed[span_id]
                    returned = None if known is None or returned is None else known | returned
                directed[span_id] = returned
                if len(directed) > self.max_entries:
                    directed.clear()  # fail closed: nothing is delegated any more

    def returned_destinations(self, span_id: str) -> frozenset[tuple[str, str]] | None:
        """The destinations a directed call returned, as :meth:`direct` was told (None: unknown)."""
        ledger: Ledger | None = self
        while ledger is not None:
            if span_id in ledger._directed:
                return ledger._directed[span_id]
            ledger = ledger.parent
        return None

    def directed(self, span_id: str) -> bool:
        """Whether the call with this span id was directed by the user, in this run or an enclosing one."""
        ledger: Ledger | None = self
        while ledger is not None:
            if span_id in ledger._directed:
                return True
            ledger = ledger.parent
        return False

    def derive(self, text: str, kind: int) -> Match | None:
        """A date, a time or an amount computed from what the run sourced (:mod:`.derived`): the
        operand it was derived from, projection ``derived``; or None."""
        dates = tf.date_forms(text) if kind == pj.TEXT and _HAS_DIGIT(text) else ()
        if not dates and kind != pj.NUMBER:  # an amount is a number; a text of digits is an id
            return None
        sources: list[Ledger] = []
        ledger: Ledger | None = self
        while ledger is not None:
            sources.extend(s for s in (ledger, ledger._untrusted) if s is not None)
            ledger = ledger.parent
        for source in sources:
            with source._lock:
                source._read_operands()
        parts = [s._operands for s in sources if s._operands.any_for(bool(dates))]
        if not parts or (not dates and not any(p.request_numbers or p.percents for p in parts)):
            return None  # nothing to compute it from (an amount needs a number of the user's)
        operands = dv.Operands.merged(parts)  # a duration here, a time there
        key = dv.derive_date(text, operands) if dates else dv.derive_number(text, operands)
        if key is None:
            return None
        for source in sources:  # the operand's own ledger: keys are unique to the ledger that made them
            hit = source.observation(key)
            if hit is not None:
                # computed from an outsider's words (a directed call's result): as untrusted as they are
                whole = bool(tf.date_forms(hit.text)) or tf.number_form(hit.text) is not None
                entry = source._index.get(key)
                unvouched = type(entry) is tuple and bool(entry[5] & _UNVOUCHED) and not whole
                return Match(hit, pj.combine(dv.DERIVED, hit.via), not (source._outsider or unvouched))
        return None

    def _read_operands(self) -> None:
        """Hand :attr:`_operands` what was remembered since it last read: whole dates and numbers of
        trusted sources; the dates, numbers, durations and percentages written in texts whose words
        are evidence — and in what directed calls returned (the user named that source)."""
        index = self._index
        if self._operands_scanned >= len(index):
            return
        operands, outsider, directed = self._operands, self._outsider, self._directed
        moments: dict[tuple, str] = {}  # (span id, record path) -> its first date-and-time
        for key, entry in islice(index.items(), self._operands_scanned, None):
            if type(entry) is not tuple:
                continue
            tool, span_id, parent, _, raw, kind = entry
            users = tool == SOURCE_INPUT or span_id in directed
            if outsider and not users:
                continue
            text = key if raw is None else raw
            if len(text) >= 16 and text[4:5] == "-" and _HAS_DIGIT(text[:1]):  # an event's start, end
                first = moments.setdefault((span_id, parent), text)
                if first is not text:
                    operands.add_length(first, text)
            if kind & _KIND == pj.NUMBER:
                with contextlib.suppress(decimal.InvalidOperation):
                    operands.add_number(key, decimal.Decimal(text), request=users)
            elif (not kind & _UNVOUCHED and not outsider) or users:  # its words are evidence
                if _HAS_DIGIT(text) or _SPACE(text):
                    operands.add_text(key, text, request=users)
            elif _HAS_DIGIT(text):  # a whole value only
                operands.add_value(key, text)
        self._operands_scanned = len(index)

    def _text_of(self, key: str) -> str | None:
        """The text a main-index key was remembered from, if it is still there as a text."""
        entry = self._index.get(key)
        if type(entry) is not tuple or entry[5] & _KIND == pj.NUMBER:
            return None
        return key if entry[4] is None else entry[4]

    def _join(self, key: str, steps: tuple[str, ...]) -> Match | None:
        start = 0  # an absolute path's first cut is at 0: root "/" (a listing of the filesystem root)
        for _ in range(MAX_PATH_SPLITS):
            cut = key.find("/", start)
            if cut < 0:
                return None
            start = cut + 1
            head, tail = key[:cut] or "/", key[cut + 1 :]
            entry = self.observation(tail) if tail else None
            if entry is None:
                continue
            head_entry = self._index.get(head)
            if (
                type(head_entry) is tuple
                and head_entry[1] == entry.span_id
                and str(head_entry[3]) in ROOT_FIELDS
            ):
                return Match(entry, pj.combine(steps, pj.PATH_JOIN))
            if any(pj.normalise(text) == head for text in self._calls.get(entry.span_id, ())):
                return Match(entry, pj.combine(steps, pj.PATH_JOIN))
        return None


__all__ = ["MAX_DEPTH", "Ledger", "Match", "Observation", "safe_names", "safe_segment"]
