"""A rebuilt span keeps every event that is not content, in order, with its name, time and counts.

Deny-list mode: the content event (``gen_ai.user.message``) would make the default hybrid mode judge
the span by the allow-list, which keeps no custom event keys (tests/instrument/test_strip_default_mode.py).
"""

from __future__ import annotations

from opentelemetry.sdk.trace import SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_provenance as op


def test_events_after_a_removed_content_event_keep_name_time_and_dropped_count():
    exporter = InMemorySpanExporter()
    provider = TracerProvider(span_limits=SpanLimits(max_event_attributes=2))
    provider.add_span_processor(
        op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter), options=op.StripOptions(mode="denylist"))
    )
    with provider.get_tracer("t").start_as_current_span("chat") as span:
        span.set_attribute("input.value", "prompt text")  # content: the span is rebuilt
        span.add_event("started", {"step": 1}, timestamp=1_000)
        span.add_event("gen_ai.user.message", {"content": "hello"}, timestamp=2_000)  # content event
        span.add_event("retried", {"attempt": 2, "input.value": "x", "extra": 3}, timestamp=3_000)
    [exported] = exporter.get_finished_spans()
    assert [(e.name, e.timestamp) for e in exported.events] == [("started", 1_000), ("retried", 3_000)]
    started, retried = exported.events
    assert dict(started.attributes) == {"step": 1}
    assert dict(retried.attributes) == {"extra": 3}  # the SDK evicted "attempt", we removed input.value
    assert (started.dropped_attributes, retried.dropped_attributes) == (0, 1)  # the SDK's own count
    assert "input.value" not in exported.attributes
