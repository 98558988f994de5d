"""``ProvenanceSpanProcessor``: hands the processors it wraps a copy of each span without content.

The SDK gives ``on_end`` one read-only span that every processor on the provider shares, and since
1.43 ``_on_ending`` cannot change it either. So this wrapper copies each finished span into plain
data, runs the pure helpers of :mod:`.redaction` over it (and, for tool spans made by other GenAI
libraries, :mod:`.thirdparty` classification first), builds a **new** ``ReadableSpan`` and passes
only that to the wrapped processors. The original span is never forwarded to ``on_end``.

Safe set-up: put every exporting processor *inside* the wrapper. An exporting processor added to
the provider *beside* the wrapper still receives the raw span; the wrapper looks at its provider's
processors whenever that list changes and warns once (:class:`ContentLeakWarning`).

Nothing here raises into the application. If stripping a span fails, the span is dropped — not
exported raw — and one log line names the failure's type (never a value).
"""

from __future__ import annotations

import logging
import threading
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from opentelemetry.attributes import BoundedAttributes
from opentelemetry.context import Context
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan, Span, SpanProcessor
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.util import BoundedList
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, Status

from .. import semconv
from ..errors import ConfigurationError
from .fanout import OnceLog, SafeFanout
from .redaction import (
    DEFAULT_OPTIONS,
    EXCEPTION_DETAIL_KEYS,
    EXCEPTION_EVENT,
    EXCEPTION_TYPE,
    StripOptions,
    has_forbidden_key,
    reduced_status_description,
    scrubs_exception_details,
    strip_attributes,
    strip_event_attributes,
)

_logger = logging.getLogger(__name__)


class ContentLeakWarning(UserWarning):
    """An exporting processor sits beside a ProvenanceSpanProcessor and receives raw spans."""


# --- rebuilding a span ----------------------------------------------------------------------------


def bounded_attributes(attributes: Mapping[str, Any], dropped: int) -> BoundedAttributes:
    """Immutable attributes that keep the SDK's own limit-dropped count (not a count of ours)."""
    bounded = BoundedAttributes(maxlen=None, attributes=attributes, immutable=True)
    bounded.dropped = dropped
    return bounded


def _bounded_list(items: Sequence[Any], dropped: int) -> BoundedList:
    bounded = BoundedList.from_seq(None, items)
    bounded.dropped = dropped
    return bounded


class _SharedObjectCleaner:
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


def strip_span(
    span: ReadableSpan,
    options: StripOptions = DEFAULT_OPTIONS,
    *,
    extra_attributes: Mapping[str, Any] | None = None,
    shared: _SharedObjectCleaner | None = None,
) -> ReadableSpan:
    """A new ``ReadableSpan`` equal to ``span`` minus every forbidden key, event and detail.

    ``extra_attributes`` (provenance computed from the raw span) are added before stripping.
    """
    shared = shared or _SharedObjectCleaner(options)
    if not extra_attributes and _already_clean(span, options, shared):
        return span  # nothing to remove: forward the SDK's own span, no copy
    raw = dict(span.attributes or {})
    if extra_attributes:
        raw.update(extra_attributes)
    scrub = scrubs_exception_details(raw, options)
    attributes = strip_attributes(raw, options)

    events: list[Event] = []
    exception_types: list[str] = []
    for event in span.events:
        cleaned = strip_event_attributes(event.name, event.attributes, options, scrub_exception=scrub)
        if cleaned is None:
            continue
        if event.name == EXCEPTION_EVENT and isinstance(cleaned.get(EXCEPTION_TYPE), str):
            exception_types.append(cleaned[EXCEPTION_TYPE])
        events.append(
            Event(event.name, bounded_attributes(cleaned, event.dropped_attributes), event.timestamp)
        )
    if not exception_types and isinstance(attributes.get(semconv.ERROR_TYPE), str):
        exception_types.append(attributes[semconv.ERROR_TYPE])

    links = [
        Link(
            link.context,
            bounded_attributes(strip_attributes(link.attributes, options), link.dropped_attributes),
        )
        for link in span.links
    ]

    status = span.status
    description = reduced_status_description(status.description, exception_types, scrub=scrub)
    if description != status.description:
        status = Status(status.status_code, description)

    return ReadableSpan(
        name=span.name,
        context=span.context,
        parent=span.parent,
        resource=shared.resource(span.resource),
        attributes=bounded_attributes(attributes, span.dropped_attributes),
        events=_bounded_list(events, span.dropped_events),
        links=_bounded_list(links, span.dropped_links),
        kind=span.kind,
        status=status,
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=shared.scope(span.instrumentation_scope),
    )


def _plain(attributes: Any) -> Any:
    """The plain ``dict`` inside the SDK's ``BoundedAttributes`` (or ``attributes`` as given).

    Iterating a ``BoundedAttributes`` — or the read-only proxy ``ReadableSpan.attributes`` wraps
    around it — goes through the ``Mapping`` ABC, one Python-level ``__getitem__`` per item; a
    finished span's attributes no longer change, so the dict underneath is read directly.
    """
    inner = getattr(attributes, "_dict", None)
    return inner if type(inner) is dict and isinstance(attributes, BoundedAttributes) else attributes


def _span_attributes(span: ReadableSpan) -> Any:
    own = getattr(span, "_attributes", None)  # what ReadableSpan.attributes wraps in a read-only proxy
    if isinstance(own, BoundedAttributes):
        return _plain(own)
    return span.attributes


def _already_clean(span: ReadableSpan, options: StripOptions, shared: _SharedObjectCleaner) -> bool:
    """True when stripping would change nothing: the common case for spans made by ``@op.tool``,
    which never carry content. Checks the same things ``strip_span`` removes, without copying."""
    attributes = _span_attributes(span)
    if has_forbidden_key(attributes, options):
        return False
    scrub = scrubs_exception_details(attributes, options)
    exception_types: list[str] = []
    for event in span.events:
        if options.is_content_event(event.name) or has_forbidden_key(_plain(event.attributes), options):
            return False
        if event.name == EXCEPTION_EVENT:
            event_attributes = event.attributes or {}
            if scrub and any(key in event_attributes for key in EXCEPTION_DETAIL_KEYS):
                return False
            if isinstance(event_attributes.get(EXCEPTION_TYPE), str):
                exception_types.append(event_attributes[EXCEPTION_TYPE])
    for link in span.links:
        if has_forbidden_key(_plain(link.attributes), options):
            return False
    if not exception_types and attributes and isinstance(attributes.get(semconv.ERROR_TYPE), str):
        exception_types.append(attributes[semconv.ERROR_TYPE])
    description = span.status.description
    if reduced_status_description(description, exception_types, scrub=scrub) != description:
        return False
    return shared.resource(span.resource) is span.resource and (
        shared.scope(span.instrumentation_scope) is span.instrumentation_scope
    )


# --- leak guard -----------------------------------------------------------------------------------


def _is_exporting(processor: object) -> bool:
    if isinstance(processor, (BatchSpanProcessor, SimpleSpanProcessor)):
        return True
    return any(hasattr(processor, name) for name in ("span_exporter", "_exporter", "exporter"))


def processors_beside(processors: Iterable[object]) -> list[str]:
    """Class names of exporting processors in ``processors`` that are not wrapped by us."""
    return [
        type(p).__name__
        for p in processors
        if not isinstance(p, ProvenanceSpanProcessor) and _is_exporting(p)
    ]


def unsafe_processors(provider: object) -> list[str]:
    """Exporting processors registered on ``provider`` beside (not inside) a ProvenanceSpanProcessor.

    Reads the SDK's private processor list; returns ``[]`` where the SDK does not expose it, or when
    no ProvenanceSpanProcessor is registered (then nothing is being stripped on purpose).
    """
    multi = getattr(provider, "_active_span_processor", None)
    processors = tuple(getattr(multi, "_span_processors", ()) or ())
    if not any(isinstance(p, ProvenanceSpanProcessor) for p in processors):
        return []
    return processors_beside(processors)


_WARNED: set[tuple[str, ...]] = set()  # (signal, processor class names...)
_WARNED_LOCK = threading.Lock()


def warn_leaks(names: Sequence[str], *, signal: str = "span") -> None:
    """Warn (log + ``ContentLeakWarning``) once per process for each set of leaking processors:
    ``op.configure`` checks at set-up and the wrapper again at its first span (or log record)."""
    key = (signal, *sorted(set(names)))
    with _WARNED_LOCK:
        if key in _WARNED:
            return
        _WARNED.add(key)
    wrapper, provider, items = (
        ("ProvenanceSpanProcessor", "TracerProvider.add_span_processor", "spans")
        if signal == "span"
        else ("ProvenanceLogRecordProcessor", "LoggerProvider.add_log_record_processor", "log records")
    )
    message = (
        f"otel-provenance: exporting {signal} processor(s) "
        + ", ".join(sorted(set(names)))
        + f" are registered beside {wrapper} and receive {items} with content; "
        f"pass them to {wrapper}(...) instead of {provider}"
    )
    _logger.warning(message)
    warnings.warn(message, ContentLeakWarning, stacklevel=3)


class _LeakGuard:
    """Re-checks a provider's processor tuple only when it changes (the SDK replaces it on add)."""

    def __init__(self) -> None:
        self._seen: dict[int, int] = {}
        self._lock = threading.Lock()

    def check(self, span: Span) -> None:
        multi = getattr(span, "_span_processor", None)
        processors = getattr(multi, "_span_processors", None)
        if processors is None or self._seen.get(id(multi)) == id(processors):
            return
        with self._lock:
            if len(self._seen) > 64:
                self._seen.clear()
            self._seen[id(multi)] = id(processors)
            names = processors_beside(processors)
            if not names:
                return
        warn_leaks(names)  # once per process for each set of leaking processors


# --- the processor ---------------------------------------------------------------------------------


class ProvenanceSpanProcessor(SpanProcessor):
    """Wraps exporting processors; each receives a rebuilt span with forbidden content removed.

    ``ProvenanceSpanProcessor(BatchSpanProcessor(OTLPSpanExporter()), options=StripOptions(...))``.
    Tool spans from other GenAI instrumentations are classified against the run's ledger before
    their raw arguments are removed (``classify_foreign_tools=False`` turns that off);
    ``foreign_side_effects`` / ``foreign_budgets`` (by tool name) give those tools the budget rules
    of ``@op.tool`` — violations are tagged, never blocked (see :mod:`.thirdparty`).
    ``foreign_argument_names`` (tool name -> parameter names) lets those names be exported; other
    names from a foreign span's argument JSON are exported by position (``arguments.0`` …).
    """

    def __init__(
        self,
        *downstream: SpanProcessor,
        options: StripOptions | None = None,
        classify_foreign_tools: bool = True,
        foreign_side_effects: Mapping[str, str] | None = None,
        foreign_budgets: Mapping[str, Any] | None = None,
        foreign_argument_names: Mapping[str, Any] | None = None,
    ) -> None:
        for i, processor in enumerate(downstream):
            if not all(callable(getattr(processor, m, None)) for m in ("on_start", "on_end", "shutdown")):
                raise ConfigurationError(
                    f"ProvenanceSpanProcessor: downstream[{i}] ({type(processor).__name__}) "
                    "is not a SpanProcessor"
                )
        if options is not None and not isinstance(options, StripOptions):
            raise ConfigurationError("ProvenanceSpanProcessor: options must be a StripOptions")
        self._log = OnceLog()
        self._fanout = SafeFanout(downstream, self._log)
        self._options = options or DEFAULT_OPTIONS
        self._shared = _SharedObjectCleaner(self._options)
        self._guard = _LeakGuard()
        self._classifier = None
        if classify_foreign_tools:
            from .thirdparty import ForeignToolClassifier

            self._classifier = ForeignToolClassifier(
                side_effects=foreign_side_effects,
                budgets=foreign_budgets,
                argument_names=foreign_argument_names,
            )

    @property
    def downstream(self) -> tuple[SpanProcessor, ...]:
        return self._fanout.processors

    @property
    def options(self) -> StripOptions:
        return self._options

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        try:
            self._guard.check(span)
        except Exception as error:
            self._log("leak check", error)
        self._fanout.each("on_start", span, parent_context=parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        extra: Mapping[str, Any] | None = None
        if self._classifier is not None:
            try:
                extra = self._classifier.provenance(span)
            except Exception as error:  # classification is best effort; removal is not
                self._log("classifying a tool span from another instrumentation", error)
        try:
            clean = strip_span(span, self._options, extra_attributes=extra, shared=self._shared)
        except Exception as error:
            self._log("stripping a span (the span was dropped, not exported)", error)
            return
        self._fanout.each("on_end", clean)

    def shutdown(self) -> None:
        self._fanout.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Flush the wrapped processors within one deadline, shared (:class:`.fanout.SafeFanout`)."""
        return self._fanout.force_flush(timeout_millis)
