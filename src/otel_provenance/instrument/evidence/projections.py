"""Normalisation of observed values and the named projections that may match an argument to them.

Every value is normalised the same way when it is remembered and when it is compared, so ``./app.py``
and ``app.py`` cannot differ by accident. A match that is not byte-equal is reported through the names
below (``agent.arg.<name>.projection``); several steps join with ``+`` in pipeline order. Each one is
chosen so it cannot turn a guess into "observed" (docs/provenance.md gives the argument for each):

``exact``            byte-equal text of the same kind (text vs number).
``nfc``              Unicode canonical equivalence (NFC): the same characters, encoded differently.
``canonical_json``   JSON text that parses to the same object/array (key order, whitespace).
``url_normalised``   RFC 3986 equivalence: case of scheme and host, default port, empty path == ``/``.
``path_normalised``  ``.`` segments, repeated and trailing slashes removed; ``..`` is never resolved.
``number_as_text``   an integer or float and its decimal text (``42`` and ``"42"``).
``path_join``        ``root/entry``: entry observed in one tool result, root from the arguments of that
                     same tool call (a listing's root) or a root-naming field of that same result.
``git_sha_prefix``   a prefix of >= 7 hex digits of an observed 40- or 64-digit hex object id.
``number_normalised``  the same decimal written with a currency sign, thousands commas and a decimal
                     point, or trailing zeros (``1250`` and ``$1,250.00``; :mod:`.textforms`).
``datetime_normalised``  the same date, or the same instant, written in another recognised form
                     (``2026-05-10T14:00:00`` and ``May 10, 2026 at 2 pm``; :mod:`.textforms`).
``result_key``       a string key of a result dict that is data, not a field name (an e-mail address).
``in_text``          the value written inside a longer text of a result, on token boundaries.
``id_alias``         a value under the short-value floor matched by field name, where the argument is
                     ``<thing>_id`` (or a list ``<thing>_ids``) and the field is ``id`` (:mod:`.classify`).
``embedded``         only ever ``untrusted``: a text that carries, as a token, a destination (an e-mail
                     address, a URL, an IBAN) found only in untrusted results (:mod:`.classify`).
``structure``        a dict/list/set argument every leaf (and every mapping key) of which is observed
                     (see :mod:`.classify`).
``decimal``          a ``Decimal`` (an argument a framework coerced, or a result value) compared as its
                     exact decimal number: ``Decimal("12.50")`` and ``12.5``.
``uuid_normalised``  a UUID written in upper case and in lower case (RFC 9562: hex digits are
                     case-insensitive).
``object_attribute`` a value held in a public attribute of a plain object a tool returned (its
                     ``__dict__``: ``subprocess.CompletedProcess``, ``SimpleNamespace``).
``bytes_text``       a value in a ``bytes`` result read as UTF-8 (strict): a subprocess's stdout.

:func:`echo_key` is not a projection: it is the lossy form the echo rule compares with (a result
value derived from an unsourced argument by case, surrounding space, path or zero-padding changes is
not evidence), with :func:`echo_compact` (the same value grouped otherwise: an IBAN with or without
its spaces). They only ever withhold evidence, so they can be as lossy as they like.
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
import enum
import json
import math
import posixpath
import re
import types
import unicodedata
import uuid
from pathlib import PurePath
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from .textforms import NUMBER_KEY, number_form

EXACT = "exact"
NFC = "nfc"
CANONICAL_JSON = "canonical_json"
URL_NORMALISED = "url_normalised"
PATH_NORMALISED = "path_normalised"
NUMBER_AS_TEXT = "number_as_text"
PATH_JOIN = "path_join"
GIT_SHA_PREFIX = "git_sha_prefix"
NUMBER_NORMALISED = "number_normalised"
DATETIME_NORMALISED = "datetime_normalised"
RESULT_KEY = "result_key"
IN_TEXT = "in_text"
ID_ALIAS = "id_alias"
EMBEDDED = "embedded"
CASEFOLD = "casefold"  # the user's own words (the request, the inputs) in another letter case
DERIVED = "derived"  # a date, a time or an amount re-computed from sourced operands (:mod:`.derived`)
STRUCTURE = "structure"
DECIMAL = "decimal"
UUID_NORMALISED = "uuid_normalised"
OBJECT_ATTRIBUTE = "object_attribute"
BYTES_TEXT = "bytes_text"

PROJECTIONS = (
    STRUCTURE,
    EXACT,
    OBJECT_ATTRIBUTE,
    BYTES_TEXT,
    NFC,
    CANONICAL_JSON,
    URL_NORMALISED,
    PATH_NORMALISED,
    UUID_NORMALISED,
    NUMBER_AS_TEXT,
    DECIMAL,
    NUMBER_NORMALISED,
    DATETIME_NORMALISED,
    PATH_JOIN,
    GIT_SHA_PREFIX,
    RESULT_KEY,
    CASEFOLD,
    IN_TEXT,
    ID_ALIAS,
    EMBEDDED,
    DERIVED,
)

MAX_TEXT_LENGTH = 8192  # longer leaves are not remembered and longer arguments are not looked up
MIN_SHA_PREFIX = 7
_FULL_SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_SHA_PREFIX = re.compile(r"[0-9a-fA-F]{7,64}")
_DEFAULT_PORTS = {"http": "80", "https": "443", "ws": "80", "wss": "443", "ftp": "21"}
_SLASHES = re.compile(r"/{2,}")
_UUID = re.compile(r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}")
UUID_LENGTH = 36

TEXT = 0
NUMBER = 1


def model_fields(value: Any) -> tuple[str, ...] | None:
    """Field names of a pydantic model instance (v2, or v1's API), else ``None``.

    Duck-typed so pydantic stays optional: a model is a structure of fields, classified and
    remembered field by field like a dataclass, not an opaque object.
    """
    if isinstance(value, type):
        return None
    cls = type(value)
    fields = getattr(cls, "model_fields", None)
    if isinstance(fields, dict) and callable(getattr(value, "model_dump", None)):
        return tuple(fields)
    fields = cls.__dict__.get("__fields__") if hasattr(cls, "__fields_set__") else None
    if isinstance(fields, dict) and callable(getattr(value, "dict", None)):
        return tuple(fields)
    return None


def model_extra(value: Any) -> dict[str, Any] | None:
    """The extra fields of a pydantic model that allows them (``extra="allow"``), else ``None``.

    The body receives them like declared fields, but their names were chosen by whoever built the
    model — a model's caller, the model's JSON — so they are a mapping, keys included, not a schema.
    Call only for a value :func:`model_fields` recognised.
    """
    extra = getattr(value, "__pydantic_extra__", None)  # v2
    if isinstance(extra, dict):
        return extra or None
    declared = type(value).__dict__.get("__fields__")  # v1: extras live in __dict__ beside fields
    attributes = getattr(value, "__dict__", None)
    if isinstance(declared, dict) and isinstance(attributes, dict):
        return {k: v for k, v in attributes.items() if k not in declared} or None
    return None


_NOT_PLAIN = (type, types.ModuleType, BaseException)


def object_fields(value: Any) -> dict[str, Any] | None:
    """The public attributes of a plain object (its ``__dict__``, names not starting with ``_``), or
    ``None`` for anything else: classes, modules, functions and other callables, exceptions, objects
    without a ``__dict__``.

    A tool that returns ``subprocess.CompletedProcess`` or a ``SimpleNamespace`` returns its data in
    those attributes, as a dataclass does in its fields (projection ``object_attribute``). Private
    attributes are an object's machinery (caches, handles), not what the tool returned.
    """
    if isinstance(value, _NOT_PLAIN) or callable(value):
        return None
    try:
        attributes = object.__getattribute__(value, "__dict__")
    except Exception:
        return None
    if type(attributes) is not dict:
        return None
    public = {k: v for k, v in attributes.items() if type(k) is str and not k.startswith("_")}
    return public or None


def decimal_text(value: _decimal.Decimal) -> str:
    """A finite ``Decimal`` as the text an equal ``int`` or ``float`` has: ``Decimal("12.50")`` ->
    ``12.5``, ``Decimal("1E+2")`` -> ``100``. Values too large to write out keep their own form."""
    if abs(value.adjusted()) > 64:
        return str(value)
    plain = value.normalize()
    if plain == plain.to_integral_value():
        return str(int(plain))
    return format(plain, "f")


def leaf_text(value: Any) -> tuple[str, int] | None:
    """``(text, kind)`` of a scalar leaf before normalisation, or None if it can never be evidence.

    Booleans and None are not evidence (they are observed by chance everywhere), nor are NaN/inf,
    bytes or arbitrary objects (no stable text form).
    """
    t = type(value)
    if t is str:
        return value, TEXT
    if t is bool or value is None:
        return None
    if t is int:
        return str(value), NUMBER
    if t is float:
        if not math.isfinite(value):
            return None
        return (str(int(value)) if value.is_integer() and abs(value) < 2**53 else repr(value)), NUMBER
    if isinstance(value, str):
        return str.__str__(value), TEXT
    if isinstance(value, enum.Enum):
        return leaf_text(value.value)
    if isinstance(value, int) and not isinstance(value, bool):
        return int.__repr__(value), NUMBER
    if isinstance(value, _decimal.Decimal):  # a framework coerced a number: compared as the number
        return (decimal_text(value), NUMBER) if value.is_finite() else None
    if isinstance(value, PurePath | uuid.UUID):
        return str(value), TEXT
    if isinstance(value, _dt.date | _dt.time):
        return value.isoformat(), TEXT
    return None


def normalise(text: str) -> str:
    """The normalised form used as the ledger's index key (see module docstring)."""
    if text.isascii() and not text.startswith((".", "{", "[")):
        if "/" not in text:
            if len(text) == UUID_LENGTH and not text.islower():  # maybe an upper-case UUID
                return normalise_steps(text)[0]
            return text
        if "//" not in text and "/./" not in text and not text.endswith(("/", "/.")):
            return text  # a plain path (or text with a slash): path normalisation would not change it
    return normalise_steps(text)[0]


def normalise_steps(text: str) -> tuple[str, tuple[str, ...]]:
    """Normalised form and the names of the steps that changed it, in pipeline order."""
    steps: list[str] = []
    if len(text) > MAX_TEXT_LENGTH:
        return text, ()
    if not text.isascii() and not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
        steps.append(NFC)
    if len(text) == UUID_LENGTH and _UUID.fullmatch(text):
        lowered = text.lower()
        if lowered != text:
            steps.append(UUID_NORMALISED)
        return (lowered if lowered != text else text), tuple(steps)
    head = text[:1]
    if head in ("{", "["):
        canon = _canonical_json(text)
        if canon is not None and canon != text:
            text = canon
            steps.append(CANONICAL_JSON)
    elif "://" in text:
        canon = _normalise_url(text)
        if canon != text:
            text = canon
            steps.append(URL_NORMALISED)
    elif "/" in text or head == ".":
        canon = _normalise_path(text)
        if canon != text:
            text = canon
            steps.append(PATH_NORMALISED)
    return text, tuple(steps)


_ZERO_PADDING = re.compile(r"(?<![0-9A-Za-z.,])0+(?=[0-9])")
_QUOTES = "\"'`\u201c\u201d\u2018\u2019"
MAX_ECHO_SPLITS = 32


def echo_key(text: str) -> str:
    """The lossy form the echo rule compares: a result value whose key equals an unsourced argument's
    was derived from the guess, not found. Normalised (:func:`normalise`), compatibility-folded and
    case-folded, surrounding quotes and space dropped and inner space collapsed, ``..`` and ``.``
    path segments resolved (``os.path.normpath``), leading zeros of digit runs dropped, a number
    written in another form read as its plain decimal. Never used to match: only to withhold."""
    if text.isascii():  # the common shapes, without the general pipeline (same result)
        if text.isdigit():
            return text.lstrip("0") or "0"
        if text.isidentifier():  # a field name, a token: only case and zero-padding can differ
            key = text.lower()
            return _ZERO_PADDING.sub("", key) if "0" in key else key
    key = normalise(text)
    if not key.isascii():
        key = unicodedata.normalize("NFKC", key)
    key = " ".join(key.casefold().split()).strip(_QUOTES)
    if "\\" in key:
        key = key.replace("\\", "/")
    if "/" in key and "://" not in key and " " not in key:
        key = posixpath.normpath(key)
    if "0" in key:
        key = _ZERO_PADDING.sub("", key)
    number = number_form(key) if key[:1].isdigit() or key[:1] in "$€£-" else None
    return number[len(NUMBER_KEY) :] if number is not None else key


_GROUPING = re.compile(r"[\s()-]")
_SEPARATORS = str.maketrans("", "", "-()")  # what groups the digits of a number: not part of it


def echo_compact(text: str) -> str | None:
    """The echo form of a text with its grouping removed, or None when it has none (its
    :func:`echo_key` is that form already): compatibility- and case-folded, without format
    characters (a zero-width space), spaces, ``-``, ``(`` and ``)``. An IBAN, a card or a phone
    number is the same number grouped or not — ``GB33 BUKB 2020 …``, ``GB33-BUKB-2020-…`` and
    ``GB33BUKB2020…`` — so a tool that regroups an unsourced one echoes it (#50)."""
    if text.isascii():
        if _GROUPING.search(text.strip()) is None:
            return None
        key = text
    else:
        key = unicodedata.normalize("NFKC", "".join(c for c in text if unicodedata.category(c) != "Cf"))
    return "".join(key.casefold().split()).strip(_QUOTES).translate(_SEPARATORS)


def is_echo(text: str, keys: frozenset[str]) -> bool:
    """Whether a result value is among the :func:`echo_keys` of a call's unsourced arguments: by its
    :func:`echo_key`, or by its :func:`echo_compact` form."""
    if echo_key(text) in keys:
        return True
    compact = echo_compact(text)
    return compact is not None and compact in keys


def echo_keys(text: str) -> list[str]:
    """:func:`echo_key` of a text and, for a path, of each of its parents and of each tail after a
    ``/`` (``/etc/app/prod.env``: ``/etc``, ``/etc/app``, ``etc/app/prod.env``, ``app/prod.env``,
    ``prod.env``): a tool that splits a guessed path into ``{parent, name}`` echoes it in pieces; and
    its :func:`echo_compact` form."""
    key = echo_key(text)
    keys = [key]
    compact = echo_compact(text)
    if compact is not None and compact != key:
        keys.append(compact)
    if "/" not in key or "://" in key or " " in key:
        return keys
    parts = key.split("/")
    for cut in range(1, min(len(parts), MAX_ECHO_SPLITS)):
        keys.append("/".join(parts[:cut]) or "/")
        keys.append("/".join(parts[cut:]))
    return keys


def is_full_sha(text: str) -> bool:
    return len(text) in (40, 64) and _FULL_SHA.fullmatch(text) is not None


def sha_prefix(text: str) -> str | None:
    """Lower-case text if it could be an abbreviated object id (7..63 hex digits), else None."""
    if MIN_SHA_PREFIX <= len(text) < 64 and _SHA_PREFIX.fullmatch(text):
        return text.lower()
    return None


def looks_like_path(text: str) -> bool:
    return "/" in text and "://" not in text and text[:1] not in ("{", "[")


def combine(*steps: tuple[str, ...] | str) -> str:
    """Projection name from step tuples: ``exact`` if nothing changed, else steps in pipeline order."""
    names: set[str] = set()
    for part in steps:
        names.update((part,) if isinstance(part, str) else part)
    names.discard(EXACT)
    if not names:
        return EXACT
    return "+".join(name for name in PROJECTIONS if name in names)


def _canonical_json(text: str) -> str | None:
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(parsed, dict | list):
        return None
    try:
        return json.dumps(parsed, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (ValueError, TypeError, RecursionError):
        return None


def _normalise_url(text: str) -> str:
    try:
        parts = urlsplit(text)
        scheme = parts.scheme.lower()
        host = parts.hostname  # lower-cased, brackets removed for IPv6
        port = parts.port
    except ValueError:
        return text
    if not scheme or host is None:
        return text
    netloc = parts.netloc.rpartition("@")
    userinfo = netloc[0] + "@" if netloc[1] else ""
    if ":" in host:
        host = f"[{host}]"
    if port is not None and str(port) != _DEFAULT_PORTS.get(scheme):
        host = f"{host}:{port}"
    path = parts.path or ("/" if scheme in _DEFAULT_PORTS else "")
    return urlunsplit((scheme, userinfo + host, path, parts.query, parts.fragment))


def _normalise_path(text: str) -> str:
    """Remove ``.`` segments, repeated and trailing slashes. Never resolves ``..`` (symlinks)."""
    lead = "//" if text.startswith("//") and not text.startswith("///") else ("/" if text[:1] == "/" else "")
    body = _SLASHES.sub("/", text[len(lead) :] if lead else text)
    segments = [seg for seg in body.split("/") if seg not in ("", ".")]
    if not segments:
        return lead or "."
    return lead + "/".join(segments)


__all__ = [
    "BYTES_TEXT",
    "CANONICAL_JSON",
    "DATETIME_NORMALISED",
    "DECIMAL",
    "EMBEDDED",
    "EXACT",
    "GIT_SHA_PREFIX",
    "ID_ALIAS",
    "IN_TEXT",
    "MAX_TEXT_LENGTH",
    "NFC",
    "NUMBER_AS_TEXT",
    "NUMBER_NORMALISED",
    "OBJECT_ATTRIBUTE",
    "PATH_JOIN",
    "PATH_NORMALISED",
    "PROJECTIONS",
    "RESULT_KEY",
    "STRUCTURE",
    "URL_NORMALISED",
    "UUID_NORMALISED",
    "combine",
    "decimal_text",
    "echo_compact",
    "echo_key",
    "echo_keys",
    "is_echo",
    "is_full_sha",
    "leaf_text",
    "looks_like_path",
    "model_extra",
    "model_fields",
    "normalise",
    "normalise_steps",
    "object_fields",
    "sha_prefix",
]
