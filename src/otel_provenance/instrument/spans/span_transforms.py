"""A finished span as plain data, small named transforms over it, and one rebuild — or none.

The SDK hands ``on_end`` one read-only span shared by every processor, so the span processor never
changes it: it reads the span into a :class:`SpanData` once (references, no copy), runs transforms
that each *replace* a part they change (attributes, events, links, status, resource, scope) and never
mutate one, and builds one new ``ReadableSpan`` from the parts at the end. When no transform replaced
anything, the SDK's own span goes on as it is: "already clean" is not a second judgement made by hand
beside the transforms, it is the transforms having changed nothing. (Logfire's
``exporters/processor_wrapper.py`` is the model.)

The content transforms, in the order they run (:func:`content_transforms`):

* :func:`scrub_exception_details` — on spans the options say (GenAI spans, or all), every event
  (``exception`` or any other name a library chose) loses ``exception.message`` /
  ``exception.stacktrace``; decided on the attributes as they come, with any provenance added,
  before any key is removed;
* :func:`strip_attribute_keys`, :func:`strip_event_content`, :func:`strip_link_keys` — forbidden keys
  go (nested ones too), content events go whole (:mod:`.redaction` decides which);
* :func:`drop_foreign_decision_text` — under the allow-list, a span this package neither made nor
  adopted loses ``gen_ai.security.decision.reason`` and its events' ``gen_ai.security.risk.metadata``:
  free text this package writes only on its own spans (rule names), where a guardrail may quote what
  it matched;
* :func:`cut_status_description` — on those same spans the status description, which may quote an
  argument, is cut to the last exception's type;
* :func:`clean_shared_objects` — the Resource and instrumentation scope, shared by many spans, are
  checked once each and rebuilt only when they hold a forbidden key.

In the default ``"hybrid"`` mode :func:`content_transforms` returns one transform that picks, per
span, the allow-list transforms (a span an AI instrumentation made, :mod:`.ai_spans`) or the
deny-list ones (any other span); the Resource and scope are judged by the deny-list either way.

The span processor puts one more in front: the provenance of other libraries' tool spans
(:mod:`.thirdparty`), computed from the raw arguments before they are removed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

from opentelemetry.attributes import BoundedAttributes
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.util import BoundedList
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, Status

from ... import semconv
from ..base._sdkcompat import validated_attributes
from .allowlist import is_type_name
from .redaction import (
    EXCEPTION_DETAIL_KEYS,
    EXCEPTION_EVENT,
    EXCEPTION_TYPE,
    StripOptions,
    exception_detail_keys,
    has_forbidden_key,
    is_own_key,
    normalised,
    reduced_status_description,
    scrubs_exception_details,
    strip_attributes,
)


class SpanData:
    """The parts of one finished span that transforms may replace, read once from the span."""

    __slots__ = (
        "_original",
        "attributes",
        "events",
        "links",
        "resource",
        "scope",
        "scrub_exceptions",
        "span",
        "status",
    )

    def __init__(self, span: ReadableSpan) -> None:
        self.span = span
        self.attributes: Mapping[str, Any] = plain_attributes(span)
        self.events: Sequence[Event] = span.events
        self.links: Sequence[Link] = span.links
        self.status: Status = span.status
        self.resource: Resource = span.resource
        self.scope: InstrumentationScope | None = span.instrumentation_scope
        #: set by :func:`scrub_exception_details` for :func:`cut_status_description`
        self.scrub_exceptions = False
        self._original = (self.attributes, self.events, self.links, self.status, self.resource, self.scope)

    @property
    def changed(self) -> bool:
        """Whether any transform replaced a part (by identity: a transform never mutates one)."""
        attributes, events, links, status, resource, scope = self._original
        return (
            self.attributes is not attributes
            or self.events is not events
            or self.links is not links
            or self.status is not status
            or self.resource is not resource
            or self.scope is not scope
        )

    def rebuilt(self) -> ReadableSpan:
        """A new ``ReadableSpan`` of these parts; everything else, and the SDK's own dropped counts
        (attributes, events and links dropped at its limits — not a count of ours), as the span had."""
        span = self.span
        return ReadableSpan(
            name=span.name,
            context=span.context,
            parent=span.parent,
            resource=self.resource,
            attributes=bounded_attributes(self.attributes, span.dropped_attributes),
            events=_bounded_list(self.events, span.dropped_events),
            links=_bounded_list(self.links, span.dropped_links),
            kind=span.kind,
            status=self.status,
            start_time=span.start_time,
            end_time=span.end_time,
            instrumentation_scope=self.scope,
        )


SpanTransform = Callable[[SpanData], None]


def transform_span(span: ReadableSpan, transforms: Sequence[SpanTransform]) -> ReadableSpan:
    """``span`` after ``transforms``: rebuilt once if any replaced a part, else ``span`` itself."""
    data = SpanData(span)
    for transform in transforms:
        transform(data)
    return data.rebuilt() if data.changed else span


# --- the transforms --------------------------------------------------------------------------------


def add_attributes(extra: Mapping[str, Any], data: SpanData) -> None:
    """Add ``extra`` (provenance computed from the raw span) to the span's attributes."""
    if extra:
        data.attributes = {**data.attributes, **extra}


def scrub_exception_details(options: StripOptions, data: SpanData) -> None:
    """Decide whether this span's exception details go and, if so, take them off its exception events
    and off the span itself (``exception.message`` / ``exception.stacktrace`` set as span attributes,
    as some libraries record an error) — and take off an ``error.type`` that is a message, not a
    type's name (a library that put ``str(error)`` there, #50: it can quote the call's arguments)."""
    scrub = data.scrub_exceptions = scrubs_exception_details(data.attributes, options)
    if scrub:
        _replace_events(data, _without_exception_details)
        data.attributes = _without(data.attributes, exception_detail_keys(data.attributes))


def strip_attribute_keys(options: StripOptions, data: SpanData) -> None:
    data.attributes = without_forbidden_keys(data.attributes, options)


def strip_event_content(options: StripOptions, data: SpanData) -> None:
    """Content events go whole; any other event loses its forbidden keys."""
    if not data.events:
        return

    def clean(event: Event) -> Event | None:
        if options.is_content_event(event.name):
            return None
        return _with_attributes(event, without_forbidden_keys(_plain(event.attributes), options))

    _replace_events(data, clean)


def strip_link_keys(options: StripOptions, data: SpanData) -> None:
    links = data.links
    if not links:
        return
    cleaned = [_link_without_forbidden_keys(link, options) for link in links]
    if any(new is not old for new, old in zip(cleaned, links, strict=True)):
        data.links = cleaned


#: Keys the allow-list keeps for this package's own decision only (:func:`drop_foreign_decision_text`).
_OWN_DECISION_TEXT = frozenset({semconv.SECURITY_DECISION_REASON, semconv.SECURITY_RISK_METADATA})


def drop_foreign_decision_text(options: StripOptions, data: SpanData) -> None:
    """The allow-list keeps ``gen_ai.security.decision.reason`` and ``gen_ai.security.risk.metadata``
    because this package writes its decision there — rule and argument names. Any other producer's
    free text under those keys (a guardrail explaining its decision by quoting the prompt, the
    argument, the PII it matched) is not held to that: on a span this package neither made nor
    adopted (a framework's tool span it annotates carries its ``agent.side_effect``), both go from the
    span and its events, unless the user named them in ``allow``."""
    scope = data.scope
    if (scope is not None and scope.name == OWN_SCOPE) or semconv.SIDE_EFFECT in (data.attributes or ()):
        return
    gone = _OWN_DECISION_TEXT.difference(options.allow)
    data.attributes = _without(data.attributes, gone)
    _replace_events(data, partial(_event_without, gone))


def cut_status_description(data: SpanData) -> None:
    """On a span whose exception details go, the status description says at most the last exception's
    type (of the events left, else ``error.type``): the SDK writes ``"<Type>: <message>"`` there."""
    status = data.status
    if not data.scrub_exceptions or status.description is None:
        return  # unchanged by reduced_status_description
    description = reduced_status_description(status.description, _exception_types(data), scrub=True)
    if description != status.description:
        data.status = Status(status.status_code, description)


def clean_shared_objects(shared: SharedObjectCleaner, data: SpanData) -> None:
    data.resource = shared.resource(data.resource)
    data.scope = shared.scope(data.scope)


def content_transforms(options: StripOptions, shared: SharedObjectCleaner) -> tuple[SpanTransform, ...]:
    """The transforms that take content out of a span, for ``options``, in the order they must run.

    Hybrid options give one transform that runs the allow-list's transforms on a span an AI
    instrumentation made and the deny-list's on any other (``shared`` judges Resource and scope)."""
    if options.hybrid:
        genai = _fixed_transforms(options.genai_options, shared)
        return (partial(_by_origin, options, genai, _fixed_transforms(options, shared)),)
    return _fixed_transforms(options, shared)


def _by_origin(
    options: StripOptions,
    genai: Sequence[SpanTransform],
    other: Sequence[SpanTransform],
    data: SpanData,
) -> None:
    scope = data.scope.name if data.scope is not None else None
    chosen = options.for_item(data.attributes, scope, (event.name for event in data.events))
    for transform in genai if chosen is not options else other:
        transform(data)


def _fixed_transforms(options: StripOptions, shared: SharedObjectCleaner) -> tuple[SpanTransform, ...]:
    return (
        partial(scrub_exception_details, options),
        partial(strip_attribute_keys, options),
        partial(strip_event_content, options),
        partial(strip_link_keys, options),
        *((partial(drop_foreign_decision_text, options),) if options.allowlist else ()),
        cut_status_description,
        partial(clean_shared_objects, shared),
    )


# --- helpers ---------------------------------------------------------------------------------------


def without_forbidden_keys(attributes: Mapping[str, Any] | None, options: StripOptions) -> Any:
    """``attributes`` itself when nothing in it must go; else a new dict without the forbidden keys, as
    :func:`.redaction.strip_attributes` makes it. (That the check and the removal agree is a property
    test of their own, ``tests/test_strip_redaction.py``.)"""
    if not attributes:
        return attributes
    if options.allowlist:  # the check would be the removal itself (value rules): do it once
        cleaned = strip_attributes(attributes, options)
        return attributes if cleaned == normalised(attributes) else cleaned
    if has_forbidden_key(attributes, options):
        return strip_attributes(attributes, options)
    return attributes


def _without(attributes: Any, keys: frozenset[str]) -> Any:
    """``attributes`` itself when it holds none of ``keys``; else a new dict without them."""
    if not attributes or keys.isdisjoint(attributes):
        return attributes
    return {k: v for k, v in attributes.items() if k not in keys}


def _event_without(keys: frozenset[str], event: Event) -> Event:
    """``event`` itself when it holds none of ``keys``; else a new event without them."""
    attributes = _plain(event.attributes)
    cleaned = _without(attributes, keys)
    return event if cleaned is attributes else _with_attributes(event, cleaned)


_without_exception_details = partial(_event_without, EXCEPTION_DETAIL_KEYS)


def _with_attributes(event: Event, attributes: Any) -> Event:
    if attributes is _plain(event.attributes):
        return event
    return Event(event.name, bounded_attributes(attributes, event.dropped_attributes), event.timestamp)


def _link_without_forbidden_keys(link: Link, options: StripOptions) -> Link:
    attributes = _plain(link.attributes)
    cleaned = without_forbidden_keys(attributes, options)
    if cleaned is attributes:
        return link
    return Link(link.context, bounded_attributes(cleaned, link.dropped_attributes))


def _replace_events(data: SpanData, clean: Callable[[Event], Event | None]) -> None:
    """Put ``clean(event)`` in each event's place (``None``: drop it) — only if one changed."""
    events = data.events
    if not events:
        return
    cleaned = [clean(event) for event in events]
    if any(new is not old for new, old in zip(cleaned, events, strict=True)):
        data.events = [event for event in cleaned if event is not None]


def _exception_types(data: SpanData) -> list[str]:
    types = []
    for event in data.events:
        if event.name == EXCEPTION_EVENT:
            kind = (event.attributes or {}).get(EXCEPTION_TYPE)
            if isinstance(kind, str):
                types.append(kind)
    if not types and isinstance((data.attributes or {}).get(semconv.ERROR_TYPE), str):
        types.append(data.attributes[semconv.ERROR_TYPE])
    return types


class SharedObjectCleaner:
    """Resources and scopes are shared by many spans: check each once, rebuild only if needed."""

    def __init__(self, options: StripOptions) -> None:
        self._options = options
        self._resources: dict[int, tuple[Resource, Resource]] = {}
        self._scopes: dict[int, tuple[InstrumentationScope, InstrumentationScope]] = {}

    def resource(self, resource: Resource) -> Resource:
        hit = self._resources.get(id(resource))
        if hit is not None and hit[0] is resource:
            return hit[1]
        clean = resource
        if has_forbidden_key(resource.attributes, self._options):
            clean = Resource(strip_attributes(resource.attributes, self._options), resource.schema_url)
        if len(self._resources) > 64:
            self._resources.clear()
        self._resources[id(resource)] = (resource, clean)
        return clean

    def unchanged(self, span: ReadableSpan) -> bool:
        """Whether the span's Resource and scope hold nothing to remove (each checked once, cached)."""
        return self.resource(span.resource) is span.resource and self.scope(span.instrumentation_scope) is (
            span.instrumentation_scope
        )

    def scope(self, scope: InstrumentationScope | None) -> InstrumentationScope | None:
        if scope is None:
            return None
        hit = self._scopes.get(id(scope))
        if hit is not None and hit[0] is scope:
            return hit[1]
        clean = scope
        if has_forbidden_key(scope.attributes, self._options):
            attributes = strip_attributes(scope.attributes, self._options)
            clean = InstrumentationScope(scope.name, scope.version, scope.schema_url, attributes)
        if len(self._scopes) > 256:
            self._scopes.clear()
        self._scopes[id(scope)] = (scope, clean)
        return clean


#: The scope of the spans this package makes (``toolspec._SCOPE``, ``runscope``).
OWN_SCOPE = "otel_provenance"
#: Keys of this package's own spans besides its ``agent.*`` vocabulary: identifiers and its decision.
OWN_KEYS = frozenset(
    {
        semconv.GEN_AI_OPERATION_NAME,
        semconv.GEN_AI_TOOL_NAME,
        semconv.GEN_AI_TOOL_CALL_ID,
        semconv.GEN_AI_TOOL_TYPE,
        semconv.GEN_AI_AGENT_NAME,
        semconv.ERROR_TYPE,
        semconv.SECURITY_DECISION_TYPE,
        semconv.SECURITY_DECISION_REASON,
        semconv.SECURITY_TARGET_TYPE,
        semconv.SECURITY_TARGET_ID,
        semconv.SECURITY_POLICY_ID,
        semconv.GUARDIAN_NAME,
    }
)
_OWN_EVENT_KEYS = {
    semconv.SECURITY_FINDING_EVENT: frozenset(
        {
            semconv.SECURITY_RISK_CATEGORY,
            semconv.SECURITY_RISK_SEVERITY,
            semconv.SECURITY_POLICY_ID,
            semconv.SECURITY_RISK_METADATA,
        }
    ),
    EXCEPTION_EVENT: frozenset({EXCEPTION_TYPE}),
}


_KNOWN_OWN: set[str] = set(OWN_KEYS)  # own keys seen, each no longer than _KNOWN_LENGTH
_KNOWN_LENGTH = 256  # the default StripOptions.max_key_length


def holds_only_its_own(span: ReadableSpan, options: StripOptions) -> bool:
    """Whether ``span`` is a tool span this package made that holds only what the package set: its
    ``agent.*`` vocabulary, the call's identifiers, its decision, its finding and exception-type
    events, a status naming an exception type — nothing the tool's body added, nothing the options
    forbid by a name the user gave. Such a span needs no stripping walk (#45): every key it holds
    is one the package wrote knowing it carries no value."""
    scope = span.instrumentation_scope
    if scope is None or scope.name != OWN_SCOPE or options.custom_forbidden or span.links:
        return False
    attributes = plain_attributes(span)
    if options.max_key_length < _KNOWN_LENGTH or not all(map(_KNOWN_OWN.__contains__, attributes)):
        longest = options.max_key_length
        for key in attributes:
            if len(key) > longest or not (key in OWN_KEYS or is_own_key(key)):
                return False  # a key the body set (``agent.input``): the stripping judges it
            if len(_KNOWN_OWN) < 4096 and len(key) <= _KNOWN_LENGTH:
                _KNOWN_OWN.add(key)  # argument names repeat call after call: judged once each
    for event in span.events:
        allowed = _OWN_EVENT_KEYS.get(event.name)
        if allowed is None or not allowed.issuperset(_plain(event.attributes) or ()):
            return False
    error_type = attributes.get(semconv.ERROR_TYPE)
    if error_type is not None and not is_type_name(error_type):
        return False  # the body put a message there: the exception scrub takes it off
    description = span.status.description
    return description is None or (isinstance(error_type, str) and error_type.endswith(description))


def bounded_attributes(attributes: Mapping[str, Any], dropped: int) -> BoundedAttributes:
    """Immutable attributes that keep the SDK's own limit-dropped count (not a count of ours); the
    values are a finished span's, already validated by the SDK (:func:`.validated_attributes`)."""
    return validated_attributes(attributes, dropped)


def _bounded_list(items: Sequence[Any], dropped: int) -> BoundedList:
    bounded = BoundedList.from_seq(None, items)
    bounded.dropped = dropped
    return bounded


def _plain(attributes: Any) -> Any:
    """The plain ``dict`` inside the SDK's ``BoundedAttributes`` (or ``attributes`` as given).

    Iterating a ``BoundedAttributes`` — or the read-only proxy ``ReadableSpan.attributes`` wraps
    around it — goes through the ``Mapping`` ABC, one Python-level ``__getitem__`` per item; a
    finished span's attributes no longer change, so the dict underneath is read directly.
    """
    inner = getattr(attributes, "_dict", None)
    return inner if type(inner) is dict and isinstance(attributes, BoundedAttributes) else attributes


def plain_attributes(span: ReadableSpan) -> Any:
    """A finished span's attributes as the plain ``dict`` under the SDK's read-only proxy (:func:`_plain`),
    for reading only: looked up in C, not through the ``Mapping`` ABC one Python call per key."""
    own = getattr(span, "_attributes", None)  # what ReadableSpan.attributes wraps in a read-only proxy
    if isinstance(own, BoundedAttributes):
        return _plain(own)
    return span.attributes


__all__ = [
    "SharedObjectCleaner",
    "SpanData",
    "SpanTransform",
    "add_attributes",
    "bounded_attributes",
    "clean_shared_objects",
    "content_transforms",
    "cut_status_description",
    "plain_attributes",
    "scrub_exception_details",
    "strip_attribute_keys",
    "strip_event_content",
    "strip_link_keys",
    "transform_span",
    "without_forbidden_keys",
]
