"""ProvenanceSpanProcessor's fast path: a span whose attributes are clean is forwarded as it is only
when its events, links and status description are clean too.

Each span here has clean span attributes, so only the check of the part under test stands between
the content and the exporter. Canary values are random: any trace of one in the exported span is a
leak.
"""

from __future__ import annotations

from opentelemetry.sdk.trace import Event, ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Link, Status, StatusCode

import otel_provenance as op
from instrument_helpers import fresh_canary, span_context


def _setup():
    exporter = InMemorySpanExporter()
    processor = op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter))
    provider = TracerProvider()
    provider.add_span_processor(processor)
    return processor, provider.get_tracer("fast-path"), exporter


def test_a_content_event_is_dropped_from_a_span_with_clean_attributes():
    """A content event goes whole, even when none of its own keys is a forbidden one."""
    _processor, tracer, exporter = _setup()
    canary = fresh_canary()
    with tracer.start_as_current_span("chat", attributes={"app.step": 1}) as span:
        span.add_event("gen_ai.user.message", {"note": canary})
        span.add_event("app.checkpoint", {"n": 1})
    [exported] = exporter.get_finished_spans()
    assert [event.name for event in exported.events] == ["app.checkpoint"]
    assert canary not in exported.to_json()


def test_a_forbidden_event_key_is_removed_from_a_span_with_clean_attributes():
    _processor, tracer, exporter = _setup()
    canary = fresh_canary()
    with tracer.start_as_current_span("step", attributes={"app.step": 1}) as span:
        span.add_event("app.checkpoint", {"input.value": canary, "n": 1})
    [exported] = exporter.get_finished_spans()
    [event] = exported.events
    assert dict(event.attributes) == {"n": 1}
    assert canary not in exported.to_json()


def test_a_forbidden_link_key_is_removed_from_a_span_with_clean_attributes():
    _processor, tracer, exporter = _setup()
    canary = fresh_canary()
    links = [Link(span_context(remote=True), {"input.value": canary, "app.peer": "queue"})]
    with tracer.start_as_current_span("step", attributes={"app.step": 1}, links=links):
        pass
    [exported] = exporter.get_finished_spans()
    [link] = exported.links
    assert dict(link.attributes) == {"app.peer": "queue"}
    assert canary not in exported.to_json()


def test_a_clean_span_with_clean_links_is_exported_with_its_links():
    """Checking a link's attributes must not fail (and drop the span) when there is nothing to remove."""
    _processor, tracer, exporter = _setup()
    other = span_context(remote=True)
    links = [Link(other, {"app.peer": "queue"}), Link(other)]
    with tracer.start_as_current_span("step", attributes={"app.step": 1}, links=links):
        pass
    [exported] = exporter.get_finished_spans()
    assert [dict(link.attributes) for link in exported.links] == [{"app.peer": "queue"}, {}]
    assert all(link.context == other for link in exported.links)


def test_a_status_description_repeating_error_type_is_cut_to_the_recorded_exception_type():
    """With an exception event on the span, its type (not ``error.type``) is what the status
    description may say: a description that only repeats ``error.type`` is replaced."""
    _processor, tracer, exporter = _setup()
    with tracer.start_as_current_span("call", attributes={"error.type": "TimeoutError"}) as span:
        span.add_event("exception", {"exception.type": "ValueError"})
        span.set_status(Status(StatusCode.ERROR, "TimeoutError"))
    [exported] = exporter.get_finished_spans()
    assert exported.status.status_code is StatusCode.ERROR
    assert exported.status.description == "ValueError"
    assert dict(exported.attributes) == {"error.type": "TimeoutError"}


def test_a_span_built_by_hand_with_plain_dict_event_and_link_attributes_is_stripped():
    """``on_end`` accepts any ``ReadableSpan``; one built by hand (say, by code that replays spans
    from another source) holds plain dicts where the SDK holds ``BoundedAttributes``. Its content is
    removed all the same, and the span is exported, not dropped."""
    processor, _tracer, exporter = _setup()
    in_event, in_link = fresh_canary(), fresh_canary()
    context = span_context(remote=True)
    span = ReadableSpan(
        name="replayed",
        context=context,
        attributes={"app.step": 1},
        events=[Event("app.checkpoint", {"input.value": in_event, "n": 1}, timestamp=1)],
        links=[Link(span_context(remote=True), {"output.value": in_link, "app.peer": "queue"})],
        start_time=1,
        end_time=2,
    )
    processor.on_end(span)
    [exported] = exporter.get_finished_spans()
    assert exported.context == context
    assert dict(exported.attributes) == {"app.step": 1}
    assert [dict(event.attributes) for event in exported.events] == [{"n": 1}]
    assert [dict(link.attributes) for link in exported.links] == [{"app.peer": "queue"}]
    text = exported.to_json()
    assert in_event not in text and in_link not in text
