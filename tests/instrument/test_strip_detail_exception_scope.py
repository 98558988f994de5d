"""``StripOptions(exception_scope="genai")``: which spans count as GenAI, and lose exception details.

With the narrower scope, ``exception.message`` / ``exception.stacktrace`` and an error status
description are removed only from spans that carry a GenAI marker: ``gen_ai.operation.name``
(ours and the official conventions), ``openinference.span.kind``, ``traceloop.span.kind``, or one of
this package's ``agent.arg.*`` attributes. Every other span keeps them. The options are deny-list
mode: in the default hybrid mode a span with any AI marker (``gen_ai.system`` too) is judged by the
allow-list, which never keeps an exception message.
"""

from __future__ import annotations

import secrets

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

import otel_provenance as op
from otel_provenance.instrument.spans.redaction import StripOptions


def _export_failing_span(attributes: dict) -> tuple[object, str]:
    """One span with ``attributes`` that records an exception quoting a canary, exported."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(
        op.ProvenanceSpanProcessor(
            SimpleSpanProcessor(exporter), options=StripOptions(exception_scope="genai", mode="denylist")
        )
    )
    canary = "canary-" + secrets.token_hex(6)
    with provider.get_tracer("t").start_as_current_span("work", attributes=attributes) as span:
        error = LookupError(f"no record for {canary}")
        span.record_exception(error)
        span.set_status(Status(StatusCode.ERROR, f"LookupError: {error}"))
    [exported] = exporter.get_finished_spans()
    return exported, canary


@pytest.mark.parametrize(
    "marker",
    [
        {"gen_ai.operation.name": "chat"},
        {"openinference.span.kind": "LLM"},
        {"traceloop.span.kind": "task"},
        {"agent.arg.path.kind": "observed"},
    ],
    ids=["gen_ai", "openinference", "traceloop", "agent.arg"],
)
def test_a_span_with_any_one_genai_marker_loses_exception_details(marker):
    span, canary = _export_failing_span({"http.method": "GET", **marker})
    [event] = span.events
    assert event.attributes["exception.type"] == "LookupError"
    assert "exception.message" not in event.attributes
    assert "exception.stacktrace" not in event.attributes
    assert span.status.description == "LookupError"
    assert canary not in repr(span.to_json())


@pytest.mark.parametrize(
    "attributes",
    [{}, {"http.method": "GET", "agent.argument": "x", "gen_ai.system": "openai"}],
    ids=["no-attributes", "ordinary-attributes"],
)
def test_a_span_without_a_genai_marker_keeps_exception_details(attributes):
    span, canary = _export_failing_span(attributes)
    [event] = span.events
    assert canary in event.attributes["exception.message"]
    assert "exception.stacktrace" in event.attributes
    assert span.status.description == f"LookupError: no record for {canary}"
