"""ProvenanceSpanProcessor.on_start: the wrapped processors get the live span and the parent context
the SDK gave, and a fault (in one of them or in the exporter-leak check) is logged by type, never
raised into the application and never stops the other processors.
"""

from __future__ import annotations

import logging

from opentelemetry import trace
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_provenance as op


class _RecordsStarts(SpanProcessor):
    """Exports nothing (safe beside the wrapper): keeps what ``on_start`` was called with."""

    def __init__(self) -> None:
        self.starts: list[tuple[object, object]] = []

    def on_start(self, span, parent_context=None) -> None:
        self.starts.append((span, parent_context))


class _FailsOnStart(SpanProcessor):
    def on_start(self, span, parent_context=None) -> None:
        raise RuntimeError("secret-on-start")


class _ExporterAttributeFails(SpanProcessor):
    """A processor beside the wrapper whose ``exporter`` attribute raises when read: the leak check
    (which looks for that attribute) fails on it."""

    @property
    def exporter(self):
        raise RuntimeError("secret-exporter")


def _messages(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name.startswith("otel_provenance")]


def test_wrapped_processors_get_the_live_span_and_the_parent_context_the_sdk_gave():
    """``on_start`` is forwarded with the very objects the SDK passes to a processor registered
    directly on the provider: the live span and the parent context given to ``start_span``."""
    inside, beside = _RecordsStarts(), _RecordsStarts()
    provider = TracerProvider()
    provider.add_span_processor(op.ProvenanceSpanProcessor(inside))
    provider.add_span_processor(beside)
    tracer = provider.get_tracer("on-start")
    with tracer.start_as_current_span("parent") as parent:
        parent_context = trace.set_span_in_context(parent)
        child = tracer.start_span("child", context=parent_context)
        child.end()
    assert len(inside.starts) == len(beside.starts) == 2
    for (got_span, got_context), (sdk_span, sdk_context) in zip(inside.starts, beside.starts, strict=True):
        assert got_span is sdk_span
        assert got_context is sdk_context
    assert inside.starts[1] == (child, parent_context)
    assert inside.starts[1][1] is parent_context


def test_a_wrapped_processor_failing_on_start_is_logged_by_type_and_the_next_still_starts(caplog):
    """The log names the failing processor's class and the error's type, never its message."""
    after = _RecordsStarts()
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(
        op.ProvenanceSpanProcessor(_FailsOnStart(), after, SimpleSpanProcessor(exporter))
    )
    with caplog.at_level(logging.ERROR), provider.get_tracer("t").start_as_current_span("s") as span:
        pass
    assert _messages(caplog) == ["otel-provenance: _FailsOnStart.on_start failed with RuntimeError"]
    assert [started for started, _ in after.starts] == [span]
    assert [s.name for s in exporter.get_finished_spans()] == ["s"]


def test_a_failing_leak_check_is_logged_by_type_and_the_span_still_starts_and_exports(caplog):
    """A processor beside the wrapper that breaks the leak check must not break the application's
    span: the fault is logged once as "leak check", and the wrapped processors still run."""
    inside = _RecordsStarts()
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(op.ProvenanceSpanProcessor(inside, SimpleSpanProcessor(exporter)))
    provider.add_span_processor(_ExporterAttributeFails())
    tracer = provider.get_tracer("t")
    with caplog.at_level(logging.ERROR):
        with tracer.start_as_current_span("first") as first:
            pass
        with tracer.start_as_current_span("second"):
            pass
    assert _messages(caplog) == ["otel-provenance: leak check failed with RuntimeError"]
    assert inside.starts[0][0] is first
    assert [s.name for s in exporter.get_finished_spans()] == ["first", "second"]
