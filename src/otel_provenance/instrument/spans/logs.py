"""``ProvenanceLogRecordProcessor``: the logs-signal twin of :class:`ProvenanceSpanProcessor`.

GenAI instrumentations may send content as log records (``gen_ai.client.inference.operation.details``
and the older per-message events). The SDK hands every processor on a ``LoggerProvider`` the same
mutable record, so this wrapper builds a new record for the processors it wraps:

* a record whose event name is a content event is dropped whole (as span events are) — a shell
  with the body removed would still record that a prompt was sent;
* any other record loses forbidden attribute keys and forbidden keys inside a map body, at any
  depth. Under the deny-list a plain string body is kept: the processor cannot tell a prompt from
  an ordinary log line by its text, only by its keys and event name. Under the allow-list every
  body is removed. In the default ``"hybrid"`` mode a record an AI instrumentation made (a
  ``gen_ai.*`` event name, an AI library's scope or keys, :mod:`.ai_spans`) is judged by the
  allow-list, any other record by the deny-list.

Like the span processor it never raises into the application, and drops a record it failed to clean.

Leak warning: an exporting log processor registered on the same ``LoggerProvider`` *beside* this
wrapper receives every raw record. The SDK gives a log processor no handle on its provider, so the
wrapper looks at the SDK's multi-processor that is calling it (its caller's frame) whenever that
processor tuple changes, and warns once (:class:`ContentLeakWarning`, naming the classes);
:func:`unsafe_log_processors` checks a provider directly.
"""

from __future__ import annotations

import copy
import sys
import threading
from typing import Any

from opentelemetry.sdk._logs import LogRecordProcessor
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor, SimpleLogRecordProcessor

from ..base._sdkcompat import ReadWriteLogRecord, require_current_logs_sdk
from ..base.internal_errors import reraise_own_bug_under_pytest
from .fanout import OnceLog, checked_fanout
from .leaks import warn_leaks
from .redaction import (
    DEFAULT_OPTIONS,
    StripOptions,
    exception_detail_keys,
    has_forbidden_key,
    strip_attributes,
    strip_log_body,
    wrapper_options,
)
from .span_transforms import bounded_attributes

#: Where the older Events API put the event name (before LogRecord.event_name existed).
EVENT_NAME_ATTRIBUTE = "event.name"


def _event_name(record: Any) -> str | None:
    name = getattr(record.log_record, "event_name", None)
    if name:
        return name
    attributes = record.log_record.attributes or {}
    value = attributes.get(EVENT_NAME_ATTRIBUTE)
    return value if isinstance(value, str) else None


def strip_log_record(record: Any, options: StripOptions = DEFAULT_OPTIONS) -> Any:
    """A new record without content, or ``None`` when the record is a content event."""
    name = _event_name(record)
    if name is not None and options.is_content_event(name):
        return None
    source = record.log_record
    shared_options = options  # the Resource and scope are judged by the deny-list in hybrid mode
    scope = record.instrumentation_scope
    options = options.for_item(source.attributes, scope.name if scope is not None else None, (name or "",))
    inner = copy.copy(source)
    inner.body = strip_log_body(source.body, options)
    genai = name is not None and name.startswith("gen_ai.")
    scrub = genai or options.exception_scope == "all"
    drop = exception_detail_keys(source.attributes) if scrub else ()  # as on spans
    attributes = strip_attributes(source.attributes, options, drop=drop)
    dropped = record.dropped_attributes
    resource = record.resource
    if resource is not None and has_forbidden_key(resource.attributes, shared_options):
        from opentelemetry.sdk.resources import Resource

        resource = Resource(strip_attributes(resource.attributes, shared_options), resource.schema_url)
    if scope is not None and has_forbidden_key(scope.attributes, shared_options):
        from opentelemetry.sdk.util.instrumentation import InstrumentationScope

        scope = InstrumentationScope(
            scope.name, scope.version, scope.schema_url, strip_attributes(scope.attributes, shared_options)
        )
    inner.attributes = attributes
    rebuilt = ReadWriteLogRecord(
        log_record=inner,
        resource=resource,
        instrumentation_scope=scope,
        **({} if record.limits is None else {"limits": record.limits}),
    )
    # __post_init__ re-bounds the attributes; keep the SDK's own dropped count, immutable.
    inner.attributes = bounded_attributes(dict(inner.attributes or {}), dropped)
    return rebuilt


def _is_exporting(processor: object) -> bool:
    if isinstance(processor, (BatchLogRecordProcessor, SimpleLogRecordProcessor)):
        return True
    return any(hasattr(processor, name) for name in ("_exporter", "exporter", "log_exporter"))


def _beside(processors: tuple) -> list[str]:
    if not any(isinstance(p, ProvenanceLogRecordProcessor) for p in processors):
        return []
    return [
        type(p).__name__
        for p in processors
        if not isinstance(p, ProvenanceLogRecordProcessor) and _is_exporting(p)
    ]


def unsafe_log_processors(provider: object) -> list[str]:
    """Exporting log processors registered on ``provider`` beside a ProvenanceLogRecordProcessor.

    Reads the SDK's private processor list; ``[]`` where it is not exposed or nothing is wrapped.
    """
    multi = getattr(provider, "_multi_log_record_processor", None)
    processors = getattr(multi, "_log_record_processors", None)
    return _beside(processors) if isinstance(processors, tuple) else []


class _LogLeakGuard:
    """Re-checks the calling multi-processor's tuple only when it changes (the SDK replaces it on add)."""

    def __init__(self) -> None:
        self._seen: int | None = None
        self._lock = threading.Lock()

    def check(self, depth: int) -> None:
        caller = sys._getframe(depth).f_locals.get("self")
        processors = getattr(caller, "_log_record_processors", None)
        if not isinstance(processors, tuple) or id(processors) == self._seen:
            return
        with self._lock:
            self._seen = id(processors)
        names = _beside(processors)
        if names:
            warn_leaks(names, signal="log")


class ProvenanceLogRecordProcessor(LogRecordProcessor):
    """Wraps log-record processors; each receives a rebuilt record with content removed.

    ``logger_provider.add_log_record_processor(
    ProvenanceLogRecordProcessor(BatchLogRecordProcessor(OTLPLogExporter())))``.
    """

    def __init__(self, *downstream: LogRecordProcessor, options: StripOptions | None = None) -> None:
        require_current_logs_sdk("ProvenanceLogRecordProcessor")
        wrapper = "ProvenanceLogRecordProcessor"
        self._log_once = OnceLog()
        hooks = ("on_emit", "shutdown", "force_flush")
        self._fanout = checked_fanout(wrapper, downstream, hooks, "LogRecordProcessor", self._log_once)
        self._options = wrapper_options(wrapper, options)
        self._guard = _LogLeakGuard()

    @property
    def downstream(self) -> tuple[LogRecordProcessor, ...]:
        return self._fanout.processors

    def on_emit(self, log_record: Any) -> None:
        try:
            self._guard.check(2)  # frame 1 is this method; frame 2 the SDK's multi-processor
        except Exception as error:
            reraise_own_bug_under_pytest(error)
            self._log_once("leak check", error)
        try:
            clean = strip_log_record(log_record, self._options)
        except Exception as error:
            reraise_own_bug_under_pytest(error)
            self._log_once("stripping a log record (the record was dropped, not exported)", error)
            return
        if clean is None:
            return
        self._fanout.each("on_emit", clean)

    def emit(self, log_record: Any) -> None:  # the hook's name before SDK 1.35 (abstract there)
        self.on_emit(log_record)

    def enabled(self, **kwargs: Any) -> bool:
        return True

    def shutdown(self) -> None:
        self._fanout.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Flush the wrapped processors within one deadline, shared (:class:`.fanout.SafeFanout`)."""
        return self._fanout.force_flush(timeout_millis)
