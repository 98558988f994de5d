"""The wrapper's exporter-leak check at span start, as an operator sees it: a warning (and one log
line) for each new set of exporting processors beside the wrapper, nothing at all for a safe set-up,
and nothing for a span that does not carry the SDK's processor list.
"""

from __future__ import annotations

import logging
import warnings

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanLimits, SpanProcessor, Tracer, TracerProvider, sampling
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

import otel_provenance as op
from otel_provenance.instrument.spans.leaks import ContentLeakWarning


class _RecordsStarts(SpanProcessor):
    """Exports nothing (safe beside the wrapper): keeps the spans ``on_start`` was called with."""

    def __init__(self) -> None:
        self.started: list[object] = []

    def on_start(self, span, parent_context=None) -> None:
        self.started.append(span)


class AuditProcessor(SimpleSpanProcessor):
    """An exporting processor of the application's own."""


def _leak_messages(caught) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, ContentLeakWarning)]


def _package_logs(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name.startswith("otel_provenance")]


def _context() -> SpanContext:
    return SpanContext(
        trace_id=0x1F, span_id=0x2F, is_remote=False, trace_flags=TraceFlags(TraceFlags.SAMPLED)
    )


def test_a_safe_set_up_gives_no_warning_and_no_log_line(caplog):
    """Only exporters inside the wrapper, and a non-exporting processor beside it: not a leak, so
    neither a ContentLeakWarning nor a log line (not even an empty "processor(s)  are registered")."""
    provider = TracerProvider()
    provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(InMemorySpanExporter())))
    provider.add_span_processor(_RecordsStarts())
    tracer = provider.get_tracer("t")
    with warnings.catch_warnings(record=True) as caught, caplog.at_level(logging.DEBUG):
        warnings.simplefilter("always")
        for name in ("a", "b"):
            with tracer.start_as_current_span(name):
                pass
    assert _leak_messages(caught) == []
    assert _package_logs(caplog) == []


def test_an_exporting_processor_added_beside_later_is_warned_about_too(caplog):
    """The wrapper re-checks when the provider's list changes and warns once per set of leaking
    processors (docs/stripping.md): a second exporter added after the first warning is reported,
    and spans that follow with the same set are not warned about again."""
    provider = TracerProvider()
    provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(InMemorySpanExporter())))
    tracer = provider.get_tracer("t")
    with warnings.catch_warnings(record=True) as caught, caplog.at_level(logging.WARNING):
        warnings.simplefilter("always")
        provider.add_span_processor(BatchSpanProcessor(InMemorySpanExporter()))
        for name in ("a", "b"):
            with tracer.start_as_current_span(name):
                pass
        provider.add_span_processor(AuditProcessor(InMemorySpanExporter()))
        for name in ("c", "d"):
            with tracer.start_as_current_span(name):
                pass
    heads = [message.split(" are registered")[0] for message in _leak_messages(caught)]
    assert heads == [
        "otel-provenance: exporting span processor(s) BatchSpanProcessor",
        "otel-provenance: exporting span processor(s) AuditProcessor, BatchSpanProcessor",
    ]
    assert _package_logs(caplog) == _leak_messages(caught)
    provider.shutdown()


def test_a_tracer_built_around_the_wrapper_alone_starts_and_exports_without_a_fault(caplog):
    """A tracer made by hand with the wrapper as its span processor (no provider, so no processor
    list on the span): the check is skipped quietly — no fault logged — and the span is exported."""
    exporter = InMemorySpanExporter()
    wrapper = op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter))
    scope = InstrumentationScope("by-hand")
    tracer = Tracer(
        sampling.ALWAYS_ON, Resource.create({}), wrapper, RandomIdGenerator(), scope, SpanLimits(), scope
    )
    with warnings.catch_warnings(record=True) as caught, caplog.at_level(logging.DEBUG):
        warnings.simplefilter("always")
        for name in ("a", "b"):
            with tracer.start_as_current_span(name):
                pass
    assert [span.name for span in exporter.get_finished_spans()] == ["a", "b"]
    assert _package_logs(caplog) == []
    assert _leak_messages(caught) == []


def test_a_span_of_another_sdk_is_started_without_a_fault(caplog):
    """``on_start`` given a span that is not the SDK's (here the API's ``NonRecordingSpan``) has no
    processor list to check: no fault is logged and the wrapped processors still get the span."""
    inside = _RecordsStarts()
    wrapper = op.ProvenanceSpanProcessor(inside)
    span = NonRecordingSpan(_context())
    with warnings.catch_warnings(record=True) as caught, caplog.at_level(logging.DEBUG):
        warnings.simplefilter("always")
        wrapper.on_start(span)
        wrapper.on_start(span)
    assert inside.started == [span, span]
    assert _package_logs(caplog) == []
    assert _leak_messages(caught) == []
