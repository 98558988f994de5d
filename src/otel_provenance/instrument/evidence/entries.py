"""The ledger's entries: what one remembered value says (:class:`Observation`), what a lookup found
(:class:`Match`), the bulk-indexed listing, the echo rule's view of a call's unsourced arguments, and
the bits an entry's kind carries (how the value was read, whether its words are evidence)."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from itertools import islice
from operator import itemgetter
from typing import Any

from . import projections as pj
from . import textforms as tf
from .fieldpaths import MEMO_TEXT, echo_key, echo_targets, safe_segment

MAX_PATH_SPLITS = 32
# Fields of a result that name the directory its entries are relative to (for the path_join projection).
ROOT_FIELDS = frozenset(
    {"root", "path", "dir", "directory", "folder", "cwd", "base", "base_dir", "prefix", "parent"}
)
BULK_MIN = 32  # lists shorter than this take the per-leaf path
MISSING = object()
KEY = 2  # the kind of a remembered dict key (TEXT = 0 and NUMBER = 1 are projections')
# An entry's kind is TEXT, NUMBER or KEY in its low bits; the bits above say how the value was read,
# which a match reports as a projection (a Decimal, a plain object's attribute, bytes read as text).
KIND_BITS = 7
VIA_OBJECT = 1 << 3
VIA_BYTES = 2 << 3
VIA_DECIMAL = 4 << 3
# an entry whose words are not evidence (#44): remembered from a ``values`` source — a whole value
# counts, a value found inside its text is ``untrusted`` (who wrote the text is not known)
UNVOUCHED = 8 << 3
#: The ledger's id of a call whose span records nothing (no span id): a prefix no hex id has.
LOCAL_CALL = "~"
VIA_NAMES = ((VIA_OBJECT, pj.OBJECT_ATTRIBUTE), (VIA_BYTES, pj.BYTES_TEXT), (VIA_DECIMAL, pj.DECIMAL))
HAS_SPACE = re.compile(r"\s").search
# last or first characters of a text whose token differs from the text itself (see textforms.tokens)
TOKEN_EDGES = frozenset(tf.OPENING + tf.CLOSING)
# first characters of a text that may be a date or a number written in another form
FORM_STARTS = frozenset("0123456789$€£")
HAS_DIGIT = re.compile(r"\d").search  # every date and number form has one


class Observation:
    """One remembered leaf: where it came from and its text before normalisation."""

    __slots__ = ("field", "kind", "parent", "span_id", "text", "tool", "via", "vouched")

    def __init__(
        self,
        tool: str,
        span_id: str,
        field: str,
        text: str,
        kind: int,
        via: tuple[str, ...] = (),
        vouched: bool = True,
        parent: tuple | None = None,
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
        # the path of the container that held it, as remembered (None: a list item, a derived value):
        # what a record holding an ``id`` is, is looked up by it (:meth:`.ledger.Ledger.record_words`)
        self.parent = parent

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


class ListSource:
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


NORMALISED_STARTS = frozenset(".{[")


def needs_normalising(values: Any, joined: str) -> bool:
    """Could any element of a flat ASCII string list change under :func:`projections.normalise`?"""
    if not NORMALISED_STARTS.isdisjoint(map(itemgetter(0), values)):
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


class Echo:
    """A call's unsourced arguments as the echo rule sees them (:func:`.fieldpaths.echo_targets`):
    a result leaf whose :func:`~.projections.echo_key` (or compact form) is among ``keys`` — the
    value, a form derived from it, a piece of a path — or a flag among ``flags`` is withheld, not
    remembered (:func:`~.projections.is_echo`)."""

    __slots__ = ("_names", "_withheld", "flags", "kept_names", "keys")

    def __init__(self, keys: frozenset[str], flags: frozenset[tuple[str, bool]]) -> None:
        self.keys = keys
        self.flags = flags
        self._names: bool | None = None
        # withholds(text) for short texts, remembered: a shared echo (:func:`echo_of`) is asked
        # about the same result leaves and field names call after call (#45)
        self._withheld: dict[str, bool] = {}
        #: a mapping's keys -> those it does not withhold (:func:`.remembering._unechoed`)
        self.kept_names: dict[tuple, tuple] = {}

    @property
    def names(self) -> bool:
        """Could a field name (an identifier) be withheld at all? Its echo key would be one."""
        if self._names is None:
            self._names = any(key.isidentifier() for key in self.keys)
        return self._names

    def withholds(self, text: str) -> bool:
        if type(text) is not str:  # a str subclass may compare equal to another text: not remembered
            return self._withholds(text)
        found = self._withheld.get(text)
        if found is None:
            found = self._withholds(text)
            if len(text) <= MEMO_TEXT and len(self._withheld) < _WITHHELD_SIZE:
                self._withheld[text] = found
        return found

    def _withholds(self, text: str) -> bool:
        keys = self.keys  # echo_key remembered for short texts (#45); the compact form too (#50)
        if not keys:
            return False
        if echo_key(text) in keys:
            return True
        compact = pj.echo_compact(text)
        return compact is not None and compact in keys


_WITHHELD_SIZE = 256  # texts remembered per echo
#: The echoes of scalar-only unsourced arguments, by (name, type, value) (at most ECHOES_SIZE).
_ECHOES: dict[tuple, Echo | None] = {}
ECHOES_SIZE = 1024
_INT_BOUND = 2**63
#: :func:`echo_of`'s answer for arguments too big to examine (remember nothing of the result).
TOO_BIG_TO_EXAMINE: Any = object()


def echo_of(unsourced: Mapping[str, Any], limit: int) -> Any:
    """The :class:`Echo` of a call's unsourced arguments, None when they withhold nothing, or
    :data:`TOO_BIG_TO_EXAMINE` (:func:`.fieldpaths.echo_targets` returned None: fail closed).

    Arguments that are all plain scalars (``str`` up to :data:`.fieldpaths.MEMO_TEXT`, ``int`` of
    up to 64 bits, ``bool``, None) under plain ``str`` names — a call's guesses repeat call after
    call (the same reason, offset 0) — share one echo, made once (#45): their targets are a pure
    function of those names and values and never reach ``limit`` (only containers and their items
    count towards it), and the echo's answers are remembered with it. Anything else is worked out
    afresh."""
    key = tuple(
        [
            (name, type(value), value)
            for name, value in unsourced.items()
            if type(name) is str
            and (
                value is None
                or (type(value) is str and len(value) <= MEMO_TEXT)
                or (type(value) is int and -_INT_BOUND < value < _INT_BOUND)
                or type(value) is bool
            )
        ]
    )
    if len(key) != len(unsourced) or not key:
        return _echo(echo_targets(unsourced, limit))
    found = _ECHOES.get(key, MISSING)
    if found is MISSING:
        found = _echo(echo_targets(unsourced, limit))
        if len(_ECHOES) >= ECHOES_SIZE:
            _ECHOES.clear()
        _ECHOES[key] = found
    return found


def _echo(targets: tuple[frozenset[str], frozenset[tuple[str, bool]]] | None) -> Any:
    if targets is None:
        return TOO_BIG_TO_EXAMINE
    return Echo(*targets) if targets[0] or targets[1] else None


CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]").search


def bytes_text(value: Any) -> str | None:
    """``bytes`` a tool returned, read as text when they are UTF-8 text (a subprocess's stdout), not
    binary data: valid UTF-8 (strict) without control characters other than whitespace."""
    if not isinstance(value, bytes | bytearray) or len(value) > 4 * pj.MAX_TEXT_LENGTH:
        return None
    try:
        text = bytes(value).decode("utf-8")
    except UnicodeDecodeError:
        return None
    return None if CONTROL(text) else text


def drop_older_half(bounded: dict) -> None:
    """Drop the older half of a dict that outgrew its bound (dicts keep insertion order)."""
    for old in list(islice(bounded, len(bounded) // 2)):
        del bounded[old]


def via_names(kind: int) -> tuple[str, ...]:
    return tuple(name for bit, name in VIA_NAMES if kind & bit)


_CAMEL_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


@functools.lru_cache(maxsize=1024)
def words_of(name: str) -> frozenset[str]:
    """The lower-case words of a name (``CloudDriveFile``, ``calendar_events``, ``fileIds``), each
    also without a plural ``s`` (``events`` -> ``event``): how a record's kind and an argument's
    ``<thing>_id`` are compared. Cached: every record of a list shares one set (a ledger holds one
    per record with an ``id``)."""
    words = {w.lower() for w in _CAMEL_WORDS.findall(name)}
    return frozenset(words | {w[:-1] for w in words if len(w) > 3 and w.endswith("s")})


def record_words(tool: str, path: tuple, record_type: type) -> frozenset[str]:
    """What a record of ``record_type`` at ``path`` is, by the most specific name known: its class (a
    dataclass, a pydantic model, an object — not a plain dict), else the field that holds it
    (``files.3`` -> ``files``), else the tool that returned it (``list_files``)."""
    if not issubclass(record_type, Mapping):
        return words_of(record_type.__name__)
    for segment in reversed(path):
        if isinstance(segment, str) and segment.isidentifier():
            return words_of(segment)
    return words_of(tool)


__all__ = [
    "KEY",
    "LOCAL_CALL",
    "MAX_PATH_SPLITS",
    "ROOT_FIELDS",
    "Match",
    "Observation",
    "record_words",
    "words_of",
]
