"""The attributes of a rebuilt span (and of its events and links) are what the SDK would have kept: all
of them up to the provider's own limits, however many, and as read-only as the SDK's."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace import SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_provenance as op


def _exported(limit: int, count: int):
    exporter = InMemorySpanExporter()
    limits = SpanLimits(max_span_attributes=limit, max_event_attributes=limit, max_link_attributes=limit)
    provider = TracerProvider(span_limits=limits)
    provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter)))
    wide = {f"app.field.{i:03d}": i for i in range(count)}
    with provider.get_tracer("t").start_as_current_span("step") as span:
        span.set_attributes(wide)
        span.set_attribute("input.value", "prompt text")  # content: the span is rebuilt
        span.add_event("checked", {**wide, "input.value": "x"})
    [exported] = exporter.get_finished_spans()
    return exported, wide


def test_a_rebuilt_span_keeps_more_attributes_than_the_sdk_default_of_128_when_its_limits_allow():
    exported, wide = _exported(limit=400, count=300)
    assert dict(exported.attributes) == wide
    assert dict(exported.events[0].attributes) == wide
    assert exported.dropped_attributes == 0


def test_a_rebuilt_span_keeps_the_sdk_count_of_attributes_dropped_at_its_limits():
    exported, _ = _exported(limit=200, count=300)
    assert len(exported.attributes) == 199  # the SDK kept the newest 200, then input.value was removed
    assert exported.dropped_attributes == 101


def test_the_attributes_of_a_rebuilt_span_are_read_only_like_the_sdk_s():
    exported, _ = _exported(limit=400, count=3)
    for attributes in (exported.attributes, exported.events[0].attributes):
        with pytest.raises(TypeError):
            attributes["app.field.000"] = "changed by one exporter, seen by the next"
