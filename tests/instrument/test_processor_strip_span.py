"""``strip_span`` and the span ``on_end`` hands on: a clean span is forwarded as the SDK's own object,
provenance added to a clean span is kept, an exception event without a type does not make the span
drop, and the function works with its defaults (no shared cleaner passed).
"""

from __future__ import annotations

import logging

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans as encode_proto
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_provenance as op
from instrument_helpers import fresh_canary
from interop import otlp_json_spans
from otel_provenance.instrument.processor import strip_span
from otel_provenance.instrument.spans.redaction import DEFAULT_OPTIONS


class _Records(SpanProcessor):
    """Exports nothing (safe beside the wrapper): keeps the span objects ``on_end`` was given."""

    def __init__(self) -> None:
        self.ended: list[object] = []

    def on_end(self, span) -> None:
        self.ended.append(span)


def _finished(attributes=None, events=()):
    """One finished SDK span (recorded by a plain provider: nothing stripped yet)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with provider.get_tracer("raw").start_as_current_span("step", attributes=attributes) as span:
        for name, event_attributes in events:
            span.add_event(name, event_attributes)
    [finished] = exporter.get_finished_spans()
    return finished


def test_a_clean_span_is_handed_on_as_the_sdks_own_span_not_a_copy():
    """Nothing to remove: the wrapped processors get the very span object the SDK hands to
    ``on_end`` (what a processor registered beside the wrapper gets), not a rebuilt copy."""
    inside, beside = _Records(), _Records()
    provider = TracerProvider()
    provider.add_span_processor(op.ProvenanceSpanProcessor(inside))
    provider.add_span_processor(beside)
    with provider.get_tracer("t").start_as_current_span("clean", attributes={"app.step": 1}):
        pass
    [ended], [sdk_span] = inside.ended, beside.ended
    assert ended is sdk_span


def test_attributes_added_to_a_clean_span_are_kept():
    """Provenance computed for a span (``extra_attributes``) is added even when the span itself has
    nothing to remove, and the span's own attributes stay."""
    span = _finished({"app.step": 1})
    assert strip_span(span) is span  # clean and nothing added: the span itself
    stripped = strip_span(span, DEFAULT_OPTIONS, extra_attributes={"agent.run.id": "run-1"})
    assert dict(stripped.attributes) == {"app.step": 1, "agent.run.id": "run-1"}


def test_strip_span_with_its_defaults_strips_a_span():
    """Called with only a span (no options, no shared cleaner), a span with content is stripped and
    a clean one comes back as it is; the Resource (with attributes) is checked along the way."""
    canary = fresh_canary()
    dirty = _finished({"app.step": 1, "input.value": canary})
    assert dirty.resource.attributes  # the SDK's default Resource: telemetry.sdk.*, service.name
    stripped = strip_span(dirty)
    assert dict(stripped.attributes) == {"app.step": 1}
    assert stripped.resource == dirty.resource
    assert canary not in stripped.to_json()
    clean = _finished({"app.step": 1})
    assert strip_span(clean) is clean
    assert strip_span(clean, DEFAULT_OPTIONS) is clean


def test_an_exception_event_without_a_type_does_not_drop_the_span(caplog):
    """A span that must be rebuilt (it holds content) and has an ``exception`` event with no
    ``exception.type`` is exported with that event and without the content — not dropped."""
    canary = fresh_canary()
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter)))
    with (
        caplog.at_level(logging.ERROR),
        provider.get_tracer("t").start_as_current_span(
            "step", attributes={"app.step": 1, "input.value": canary}
        ) as span,
    ):
        span.add_event("exception", {"app.note": "no type recorded"})
    [exported] = exporter.get_finished_spans()
    assert dict(exported.attributes) == {"app.step": 1}
    assert [(event.name, dict(event.attributes)) for event in exported.events] == [
        ("exception", {"app.note": "no type recorded"})
    ]
    for blob in (encode_proto([exported]).SerializeToString(), otlp_json_spans([exported])):
        assert canary.encode() not in blob
    assert [r.getMessage() for r in caplog.records if r.name.startswith("otel_provenance")] == []
