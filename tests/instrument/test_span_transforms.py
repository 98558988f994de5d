"""The span-transform path (``instrument/spans/span_transforms.py``) against a full rebuild.

The processor forwards the SDK's own span when no transform changed anything, and each transform
checks before it copies. The reference below is the other way to strip a span: rebuild every part,
unconditionally, straight from the pure rules of :mod:`.redaction` (the processor's path before the
transforms). On any span and any options the two must agree: the same content, and the original
span handed on exactly when the full rebuild would have changed nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.attributes import BoundedAttributes
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, SpanContext, Status, StatusCode, TraceFlags

from otel_provenance import semconv
from otel_provenance.instrument.processor import strip_span
from otel_provenance.instrument.spans.allowlist import is_type_name
from otel_provenance.instrument.spans.redaction import (
    DEFAULT_CONTENT_EVENTS,
    EXCEPTION_DETAIL_KEYS,
    EXCEPTION_EVENT,
    EXCEPTION_TYPE,
    StripOptions,
    reduced_status_description,
    scrubs_exception_details,
    strip_attributes,
    strip_event_attributes,
)

OPTIONS = (
    StripOptions(),  # hybrid: the allow-list on spans an AI library made, the deny-list elsewhere
    StripOptions(mode="denylist"),
    StripOptions(exception_scope="genai"),
    StripOptions(exception_scope="genai", mode="denylist"),
    StripOptions(mode="allowlist"),
    StripOptions(prefixes=("app.secret",), keys={"note"}, allow={"input.value"}),
    StripOptions(exception_scope="genai", prefixes=("gen_ai.",)),  # may strip the GenAI marker itself
)

_KEYS = [
    "input.value",
    "gen_ai.prompt",
    "gen_ai.tool.call.arguments",
    "app.secret.token",
    "note",
    "app.step",
    "app.meta",
    "http.request.method",
    "url.full",
    "gen_ai.operation.name",
    "gen_ai.tool.name",
    "openinference.span.kind",
    "agent.arg.path.kind",
    "error.type",
    "exception.type",
    "exception.message",
    "exception.stacktrace",
]
_TYPES = ["ValueError", "app.errors.Timeout", "Timeout"]
_leaves = st.one_of(
    st.sampled_from(["v", "https://u:p@host:8443/p?q=1", *_TYPES]),
    st.integers(-3, 3),
    st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False, width=16),
)
_scalar_tuples = st.lists(st.one_of(_leaves, st.none()), max_size=3).map(tuple)
_nested = st.recursive(
    _leaves,
    lambda inner: st.one_of(
        st.dictionaries(st.sampled_from([*_KEYS, "secret", "a"]), inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
    ),
    max_leaves=6,
)
_attributes = st.dictionaries(st.sampled_from(_KEYS), st.one_of(_leaves, _scalar_tuples, _nested), max_size=6)
# the keys the status rule reads, drawn often enough to meet each other on one span
_error_type = st.fixed_dictionaries({}, optional={"error.type": st.sampled_from(_TYPES)})
_exception = st.fixed_dictionaries(
    {}, optional={"exception.type": st.sampled_from(_TYPES), "exception.message": st.just("secret detail")}
)


def _as_the_sdk_holds(attributes: dict) -> BoundedAttributes:
    """Attributes as the installed SDK keeps them on a span: older SDKs (1.33) drop a mapping value
    that newer ones keep, and a span the SDK made never holds what its own attributes refuse."""
    return BoundedAttributes(maxlen=None, attributes=attributes, immutable=True)


_span_attributes = st.tuples(_attributes, _error_type).map(
    lambda parts: _as_the_sdk_holds({**parts[0], **parts[1]})
)
_event_attributes = st.tuples(_attributes, _exception).map(
    lambda parts: _as_the_sdk_holds({**parts[0], **parts[1]})
)
_event_names = st.sampled_from(
    [EXCEPTION_EVENT, EXCEPTION_EVENT, "app.checkpoint", *sorted(DEFAULT_CONTENT_EVENTS)[:2]]
)
_events = st.lists(
    st.builds(Event, _event_names, st.one_of(st.none(), _event_attributes), st.integers(1, 9)), max_size=3
)
_context = SpanContext(0x1F, 0x2F, is_remote=True, trace_flags=TraceFlags(TraceFlags.SAMPLED))
_links = st.lists(
    st.builds(Link, st.just(_context), st.one_of(st.none(), _attributes.map(_as_the_sdk_holds))), max_size=2
)
_descriptions = st.one_of(st.none(), st.sampled_from(["", "boom: secret", *_TYPES, "Timeout: x"]))
_statuses = st.one_of(
    st.just(Status(StatusCode.UNSET)),
    st.just(Status(StatusCode.OK)),
    st.builds(Status, st.just(StatusCode.ERROR), _descriptions),
)
_flat = st.dictionaries(
    st.sampled_from(["service.name", "input.value", "app.step"]), st.sampled_from(["s", "t"])
)
_resources = st.builds(Resource, _flat, st.sampled_from([None, "https://opentelemetry.io/schemas/1.21.0"]))
_scopes = st.one_of(
    st.none(), st.builds(InstrumentationScope, st.just("lib"), st.just("1.0"), st.none(), _flat)
)


@st.composite
def spans(draw) -> ReadableSpan:
    return ReadableSpan(
        name="step",
        context=SpanContext(0x1F, 0x3F, is_remote=False, trace_flags=TraceFlags(TraceFlags.SAMPLED)),
        attributes=draw(_span_attributes),
        events=draw(_events),
        links=draw(_links),
        status=draw(_statuses),
        resource=draw(_resources),
        instrumentation_scope=draw(_scopes),
        start_time=1,
        end_time=2,
    )


def full_rebuild(span: ReadableSpan, options: StripOptions, extra: Mapping[str, Any] | None) -> ReadableSpan:
    """Every part rebuilt from the pure rules, whether or not it holds anything to remove. The span's
    own parts by the options for its origin (hybrid mode), the shared Resource and scope by ``options``."""
    raw = dict(span.attributes or {})
    raw.update(extra or {})
    shared = options
    scope_name = span.instrumentation_scope.name if span.instrumentation_scope is not None else None
    options = options.for_item(raw, scope_name, [event.name for event in span.events])
    scrub = scrubs_exception_details(raw, options)
    # exception details go from the span's own attributes too (a library may record them there)
    attributes = strip_attributes(raw, options, drop=EXCEPTION_DETAIL_KEYS if scrub else ())
    if scrub and not is_type_name(attributes.get(semconv.ERROR_TYPE, "")):  # a message there goes (#50)
        attributes = {k: v for k, v in attributes.items() if k != semconv.ERROR_TYPE}
    events, exception_types = [], []
    for event in span.events:
        cleaned = strip_event_attributes(event.name, event.attributes, options, scrub_exception=scrub)
        if cleaned is None:
            continue
        if event.name == EXCEPTION_EVENT and isinstance(cleaned.get(EXCEPTION_TYPE), str):
            exception_types.append(cleaned[EXCEPTION_TYPE])
        events.append(Event(event.name, cleaned, event.timestamp))
    if not exception_types and isinstance(attributes.get(semconv.ERROR_TYPE), str):
        exception_types.append(attributes[semconv.ERROR_TYPE])
    status = span.status
    status = Status(
        status.status_code, reduced_status_description(status.description, exception_types, scrub=scrub)
    )
    scope = span.instrumentation_scope
    if scope is not None:
        scope = InstrumentationScope(
            scope.name, scope.version, scope.schema_url, strip_attributes(scope.attributes, shared)
        )
    return ReadableSpan(
        name=span.name,
        context=span.context,
        attributes=attributes,
        events=events,
        links=[Link(link.context, strip_attributes(link.attributes, options)) for link in span.links],
        status=status,
        resource=Resource(strip_attributes(span.resource.attributes, shared), span.resource.schema_url),
        instrumentation_scope=scope,
        start_time=span.start_time,
        end_time=span.end_time,
    )


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _plain(inner) for key, inner in value.items()}
    if isinstance(value, list | tuple):
        return tuple(_plain(item) for item in value)
    return value


def content(span: ReadableSpan) -> tuple:
    """What an exporter reads of a span (attributes without the difference of list and tuple)."""
    scope = span.instrumentation_scope
    return (
        span.name,
        _plain(span.attributes or {}),
        [(e.name, _plain(e.attributes or {}), e.timestamp) for e in span.events],
        [(link.context, _plain(link.attributes or {})) for link in span.links],
        (span.status.status_code, span.status.description),
        (_plain(span.resource.attributes), span.resource.schema_url),
        None
        if scope is None
        else (scope.name, scope.version, scope.schema_url, _plain(scope.attributes or {})),
    )


@settings(max_examples=400, deadline=None)
@given(spans(), st.sampled_from(OPTIONS), st.sampled_from([None, {}, {"agent.arg.path.kind": "assumed"}]))
def test_the_transforms_agree_with_a_full_rebuild_and_forward_the_span_exactly_when_it_is_clean(
    span, options, extra
):
    stripped = strip_span(span, options, extra_attributes=extra)
    reference = full_rebuild(span, options, extra)
    assert content(stripped) == content(reference)
    assert (stripped is span) == (content(reference) == content(span))
