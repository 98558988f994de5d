"""Which telemetry keys carry content, and pure functions that remove them.

Content means prompts, model output (including reasoning), tool arguments, tool results, tool
definitions and retrieved documents. It is *removed*: the key is gone, and nothing records that it
was there — no marker, no hash, no count. Everything here is a pure function over plain data plus
one immutable :class:`StripOptions`; the span and log processors copy SDK objects into plain data,
call these, and rebuild.

How a key is matched. A key path is the attribute key, extended by ``.<inner key>`` for each level
of a nested map value. It is forbidden when

* a forbidden *name* appears in it as a run of whole dot-separated components — so
  ``input.value`` also catches the flattened ``input.value.0`` and ``llm.input_messages`` catches
  ``llm.input_messages.0.message.content`` and a nested ``{"request": {"input.value": …}}``;
* or it starts with a forbidden *prefix* (plain string prefix, no dot rule);
* or a forbidden *pattern* (``re.search``) matches it;

and it is not explicitly allowed back (exact key path). A name part ``*`` matches any one part
(``crewai.*.result``). Names are kept in a trie over the parts, so deciding a key costs time linear
in its number of parts (times the longest name), and decisions are memoised; a key path longer than
``max_key_length`` characters is forbidden without looking further (no instrumentation names a
key that long, and an attacker-made one must not stall the caller's thread).

With ``mode="allowlist"`` the decision inverts: only this package's ``agent.*`` keys, the keys in
:mod:`.allowlist` (with their value rules) and user-named ``allow`` keys leave; see that module.
``mode="hybrid"`` (the default, :data:`DEFAULT_STRIP_MODE`) uses the allow-list for every span and
log record an AI instrumentation made (:mod:`.ai_spans`) and the deny-list elsewhere, so it does not
depend on the deny-list keeping up with every library's new key names, while an application's own
non-content keys on its other spans are kept. A hybrid :class:`StripOptions` itself decides as the
deny-list does (resources, scopes, non-AI spans); :attr:`StripOptions.genai_options` is its
allow-list twin for AI spans and records.

This package's own provenance vocabulary
(``agent.arg.*`` and the other ``agent.*`` names in :mod:`otel_provenance.semconv`) holds no values
by construction and is never matched, so an argument that happens to be called ``prompt`` keeps its
provenance attributes.

``gen_ai.tool.description`` (and OpenInference's ``tool.description`` / ``tool.parameters``) is in
the default set: a tool's description is part of the tool definitions the model is prompted with,
which the GenAI conventions treat as opt-in content (``gen_ai.tool.definitions``). Allow it back
with ``StripOptions(allow={"gen_ai.tool.description"})`` if your descriptions are not sensitive.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from ... import dialects, semconv
from ...errors import ConfigurationError
from .ai_spans import made_by_ai
from .allowlist import DROP, clean_value, is_allowed_key, is_type_name
from .denylist import (  # noqa: F401  (re-exported: the default set's public home stays here too)
    DEFAULT_CONTENT_EVENTS,
    DEFAULT_FORBIDDEN_KEYS,
    WILDCARD,
    contains_name,
    name_trie,
)

EXCEPTION_EVENT: Final = "exception"
EXCEPTION_TYPE: Final = "exception.type"
#: Removed from the events of spans whose exception details go (any event name): both can quote
#: argument values.
EXCEPTION_DETAIL_KEYS: Final = frozenset({"exception.message", "exception.stacktrace"})
_DETAILS_AND_TYPE: Final = EXCEPTION_DETAIL_KEYS | {semconv.ERROR_TYPE}


def exception_detail_keys(attributes: Mapping[str, Any] | None) -> frozenset[str]:
    """The keys a span's or log record's exception details go by: ``exception.message`` and
    ``exception.stacktrace``, and ``error.type`` when it holds a message, not a type's name (a
    library that put ``str(error)`` there, #50: it can quote the call's arguments)."""
    error_type = attributes.get(semconv.ERROR_TYPE) if attributes else None
    return EXCEPTION_DETAIL_KEYS if error_type is None or is_type_name(error_type) else _DETAILS_AND_TYPE


#: Deeper nesting than this is not walked; the whole attribute is removed instead (safe default).
MAX_DEPTH: Final = 32
#: A key path longer than this (characters) is forbidden without being matched.
MAX_KEY_LENGTH: Final = 1024

_OWN_KEYS: Final = frozenset(
    value
    for name, value in vars(semconv).items()
    if name.isupper() and isinstance(value, str)
    if value.startswith("agent.")
)
_CACHE_LIMIT: Final = 8192

ExceptionScope = Literal["genai", "all"]
StripMode = Literal["hybrid", "denylist", "allowlist"]
STRIP_MODES: Final = ("hybrid", "denylist", "allowlist")
#: The default mode: the one line to change (docs/stripping.md has the measurement behind it).
DEFAULT_STRIP_MODE: Final[StripMode] = "hybrid"


@functools.lru_cache(maxsize=_CACHE_LIMIT)  # the same few keys on every span
def is_own_key(key: str) -> bool:
    return key in _OWN_KEYS or semconv.split_arg_attr(key) is not None


def _tuple_of_str(values: Iterable[str] | str, what: str) -> tuple[str, ...]:
    if isinstance(values, str):
        raise ConfigurationError(f"StripOptions.{what}: expected a collection of strings, got one string")
    out = tuple(values)
    for i, value in enumerate(out):
        if not isinstance(value, str) or not value:
            raise ConfigurationError(f"StripOptions.{what}[{i}]: expected a non-empty string")
    return out


@dataclass(frozen=True, eq=False)
class StripOptions:
    """What to remove, beyond (or instead of) the defaults. Immutable; share one across threads.

    ``keys`` add forbidden names (each also covers its flattened and nested sub-keys), ``prefixes``
    add plain string prefixes, ``patterns`` add regular expressions (``re.search``), ``allow``
    keeps exact key paths that would otherwise be removed, ``content_events`` add event names
    dropped whole. ``exception_scope`` says which spans lose ``exception.message`` /
    ``exception.stacktrace`` and get their error status description cut to the exception type:
    ``"all"`` (default) or ``"genai"`` (only spans that still carry a GenAI marker). The default is
    ``"all"`` because an error inside a tool is usually raised in an ordinary child span (an HTTP
    client's, a database driver's) whose message quotes the arguments, and because the SDK's
    attribute limit can evict the very marker that makes a span look like GenAI.
    ``defaults=False`` starts from an empty forbidden set (for tests and special deployments).
    ``mode="hybrid"`` (the default) judges spans and records made by an AI instrumentation by the
    allow-list and the others by the deny-list; ``mode="denylist"`` judges everything by the
    deny-list. ``mode="allowlist"`` keeps only known content-free keys (:mod:`.allowlist`) plus ``allow``;
    ``keys``, ``prefixes`` and ``patterns`` still forbid, and the default names still judge what
    lies *under* an ``allow`` key. ``max_key_length``: longer key paths are forbidden outright.
    """

    keys: Iterable[str] = ()
    prefixes: Iterable[str] = ()
    patterns: Iterable[str] = ()
    allow: Iterable[str] = ()
    content_events: Iterable[str] = ()
    exception_scope: ExceptionScope = "all"
    defaults: bool = True
    mode: StripMode = DEFAULT_STRIP_MODE
    max_key_length: int = MAX_KEY_LENGTH
    _names: dict = field(init=False, repr=False)
    _genai: StripOptions | None = field(init=False, repr=False)
    _compiled: tuple[re.Pattern[str], ...] = field(init=False, repr=False)
    _cache: dict[str, bool] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        keys = _tuple_of_str(self.keys, "keys")
        set_ = object.__setattr__
        set_(self, "keys", frozenset(keys))
        set_(self, "prefixes", _tuple_of_str(self.prefixes, "prefixes"))
        set_(self, "allow", frozenset(_tuple_of_str(self.allow, "allow")))
        events = frozenset(_tuple_of_str(self.content_events, "content_events"))
        set_(self, "content_events", (DEFAULT_CONTENT_EVENTS | events) if self.defaults else events)
        patterns = _tuple_of_str(self.patterns, "patterns")
        compiled = []
        for i, pattern in enumerate(patterns):
            try:
                compiled.append(re.compile(pattern))
            except re.error as exc:
                raise ConfigurationError(
                    f"StripOptions.patterns[{i}]: invalid regular expression ({exc})"
                ) from None
        set_(self, "patterns", patterns)
        set_(self, "_compiled", tuple(compiled))
        if self.exception_scope not in ("genai", "all"):
            raise ConfigurationError("StripOptions.exception_scope: expected 'genai' or 'all'")
        if self.mode not in STRIP_MODES:
            raise ConfigurationError(f"StripOptions.mode: expected one of {', '.join(STRIP_MODES)}")
        if (
            isinstance(self.max_key_length, bool)
            or not isinstance(self.max_key_length, int)
            or self.max_key_length < 1
        ):
            raise ConfigurationError("StripOptions.max_key_length: expected an integer >= 1")
        names = (DEFAULT_FORBIDDEN_KEYS | self.keys) if self.defaults else self.keys
        set_(self, "_names", name_trie(names))
        set_(self, "_cache", {})
        genai = None
        if self.mode == "hybrid":
            genai = StripOptions(
                keys=keys,
                prefixes=self.prefixes,
                patterns=patterns,
                allow=self.allow,
                content_events=events,
                exception_scope=self.exception_scope,
                defaults=self.defaults,
                mode="allowlist",
                max_key_length=self.max_key_length,
            )
        set_(self, "_genai", genai)

    @property
    def custom_forbidden(self) -> bool:
        """Whether the user forbade names of their own (``keys``, ``prefixes``, ``patterns``)."""
        return bool(self.keys or self.prefixes or self.patterns)

    @property
    def allowlist(self) -> bool:
        return self.mode == "allowlist"

    @property
    def hybrid(self) -> bool:
        return self.mode == "hybrid"

    @property
    def genai_options(self) -> StripOptions:
        """The options for a span or record an AI instrumentation made: the allow-list twin in hybrid
        mode, else these options themselves."""
        return self._genai if self._genai is not None else self

    def for_item(
        self, attributes: Mapping[str, Any] | None, scope_name: str | None, event_names: Iterable[str] = ()
    ) -> StripOptions:
        """The options that judge one span or log record (:mod:`.ai_spans` decides what AI made)."""
        if self._genai is not None and made_by_ai(attributes, scope_name, event_names):
            return self._genai
        return self

    def is_forbidden(self, path: str) -> bool:
        """True when the key path ``path`` must not leave the process."""
        cached = self._cache.get(path)
        if cached is None:
            cached = self._decide(path)
            if len(self._cache) >= _CACHE_LIMIT:
                self._cache.clear()
            self._cache[path] = cached
        return cached

    def decide(self, path: str) -> tuple[bool, int]:
        """Uncached decision for ``path`` and the trie steps it took (for tests and benchmarks)."""
        if path in self.allow:
            return False, 0
        if len(path) > self.max_key_length:
            return True, 0
        if is_own_key(path):
            return False, 0
        # Below an allowed key, judge only the part under it (its children can still be content).
        below_allowed = False
        for allowed in self.allow:
            if path.startswith(allowed + "."):
                path, below_allowed = path[len(allowed) + 1 :], True
                break
        if self.allowlist and not below_allowed and not is_allowed_key(path):
            return True, 0
        if any(path.startswith(prefix) for prefix in self.prefixes):
            return True, 0
        if any(pattern.search(path) for pattern in self._compiled):
            return True, 0
        return contains_name(path.split("."), self._names)

    def _decide(self, path: str) -> bool:
        return self.decide(path)[0]

    def is_content_event(self, name: str) -> bool:
        return name in self.content_events


# --- pure helpers over plain data --------------------------------------------------------------------


class _TooDeep(Exception):
    pass


#: Returned for a map or array that had content and is empty once it is removed: an empty shell
#: where content used to be would still record that there was some, so the shell goes too.
_GONE: Final = object()


_SCALARS: Final = frozenset((str, int, float, bool, bytes))


def _strip(value: Any, path: str, options: StripOptions, depth: int) -> Any:
    if type(value) in _SCALARS:  # the common case, without the slow ABC isinstance checks below
        return value
    if depth > MAX_DEPTH:
        raise _TooDeep
    if isinstance(value, Mapping):
        out = {}
        for key, inner in value.items():
            inner_path = f"{path}.{key}" if path else str(key)
            if inner_path not in options.allow and (
                options.is_forbidden(inner_path) or (not options.allowlist and options.is_forbidden(str(key)))
            ):
                continue
            cleaned = _strip(inner, inner_path, options, depth + 1)
            if cleaned is not _GONE:
                out[key] = cleaned
        return _GONE if value and not out else out
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes, bytearray)):
        items = tuple(_strip(item, path, options, depth + 1) for item in value)
        kept = tuple(item for item in items if item is not _GONE)
        return _GONE if items and not kept else kept
    return value


def strip_value(value: Any, path: str, options: StripOptions) -> Any:
    """``value`` with forbidden nested keys removed (maps at any depth, maps inside arrays).

    Returns :data:`_GONE` when nothing but content was in it; raises ``_TooDeep`` past
    :data:`MAX_DEPTH`.
    """
    return _strip(value, path, options, 0)


def strip_attributes(
    attributes: Mapping[str, Any] | None, options: StripOptions, *, drop: Iterable[str] = ()
) -> dict[str, Any]:
    """A new dict without forbidden keys (and without the keys in ``drop``), nested maps cleaned."""
    out: dict[str, Any] = {}
    if not attributes:
        return out
    dropped = frozenset(drop)
    allowlist = options.allowlist
    identity = dialects.identity_keys(attributes) if allowlist else ()
    for key, value in attributes.items():
        if key in dropped or (key not in identity and options.is_forbidden(key)):
            continue
        if key in identity:
            value = clean_value(semconv.GEN_AI_TOOL_NAME, value)  # an identifier, never a paragraph
            if value is DROP:
                continue
        elif allowlist and key not in options.allow and not is_own_key(key):
            value = clean_value(key, value)  # a known key keeps only a value of its kind
            if value is DROP:
                continue
        try:
            cleaned = strip_value(value, key, options)
        except _TooDeep:
            continue  # cannot prove it clean: remove it
        if cleaned is not _GONE:
            out[key] = cleaned
    return out


def is_genai_span(attributes: Mapping[str, Any] | None) -> bool:
    """Made by a GenAI instrumentation: ours, or a producer that marks its spans' kind
    (:func:`otel_provenance.dialects.is_genai_span`: the conventions, OpenInference, OpenLLMetry)."""
    if not attributes:
        return False
    return dialects.is_genai_span(attributes) or any(
        semconv.split_arg_attr(key) is not None for key in attributes
    )


def scrubs_exception_details(attributes: Mapping[str, Any] | None, options: StripOptions) -> bool:
    return options.allowlist or options.exception_scope == "all" or is_genai_span(attributes)


def strip_event_attributes(
    name: str, attributes: Mapping[str, Any] | None, options: StripOptions, *, scrub_exception: bool
) -> dict[str, Any] | None:
    """Cleaned event attributes, or ``None`` when the whole event is content and must go."""
    if options.is_content_event(name):
        return None
    # in every event, not only ``exception``: libraries record errors in events of their own names
    drop = EXCEPTION_DETAIL_KEYS if scrub_exception else ()
    return strip_attributes(attributes, options, drop=drop)


def reduced_status_description(
    description: str | None, exception_types: Sequence[str], *, scrub: bool
) -> str | None:
    """Status description that cannot quote an argument: the last exception's type, or nothing.

    The SDK writes ``"<Type>: <message>"`` when a span records an escaping exception, and libraries
    pass ``str(error)``; either may quote the arguments the tool was called with.
    """
    if not scrub:
        return description
    if not description:
        return None
    if any(description in (kind, kind.rpartition(".")[2]) for kind in exception_types):
        return description  # already just a type name (e.g. set by @op.tool)
    return exception_types[-1] if exception_types else None


def strip_log_body(body: Any, options: StripOptions) -> Any:
    """Log body without forbidden keys; a body nested too deep to check is removed (``None``).

    In allow-list mode every body is removed: a body is free text or a map of free keys.
    """
    if options.allowlist:
        return None
    try:
        cleaned = strip_value(body, "", options)
    except _TooDeep:
        return None
    return None if cleaned is _GONE else cleaned


def has_forbidden_key(attributes: Mapping[str, Any] | None, options: StripOptions) -> bool:
    """Fast check used to skip rebuilding shared objects (resource, scope) that are already clean."""
    if not attributes:
        return False
    if options.allowlist:  # value rules may reduce a value: compare the cleaned copy
        return strip_attributes(attributes, options) != normalised(attributes)
    cache, decide = options._cache, options.is_forbidden  # hot path: one dict lookup per known key
    for key, value in attributes.items():
        forbidden = cache.get(key)
        if forbidden is None:
            forbidden = decide(key)
        if forbidden:
            return True
        if type(value) not in _SCALARS and isinstance(value, (Mapping, list, tuple)):
            if type(value) is tuple and _scalars_only(value):
                continue  # what the SDK makes of a list attribute: no key inside, nothing to strip
            try:
                if strip_value(value, key, options) != _normalised(value):
                    return True
            except _TooDeep:
                return True
    return False


def _scalars_only(values: tuple) -> bool:
    """Every item a plain scalar (``str``/``int``/``float``/``bool``/``bytes``) or ``None``."""
    scalars = _SCALARS
    return all(type(item) in scalars or item is None for item in values)


def _normalised(value: Any) -> Any:
    if type(value) in _SCALARS:  # the common case, without the slow ABC isinstance checks below
        return value
    if isinstance(value, Mapping):
        return {key: _normalised(inner) for key, inner in value.items()}
    if isinstance(value, (list, tuple)):
        return tuple(_normalised(item) for item in value)
    return value


def normalised(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """``attributes`` as :func:`strip_attributes` would return them if it removed nothing (lists as
    tuples, maps as dicts): comparing the two tells whether anything was removed or reduced."""
    return {key: _normalised(value) for key, value in attributes.items()}


DEFAULT_OPTIONS: Final = StripOptions()


def wrapper_options(wrapper: str, options: StripOptions | None) -> StripOptions:
    """A processor wrapper's ``options=`` (:data:`DEFAULT_OPTIONS` when ``None``), or its error."""
    if options is not None and not isinstance(options, StripOptions):
        raise ConfigurationError(f"{wrapper}: options must be a StripOptions")
    return options or DEFAULT_OPTIONS
