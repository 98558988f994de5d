"""Leak paths that a planted one-line bug opened without any test noticing (issue #17).

Each test exports through ``op.ProvenanceSpanProcessor`` with the real SDK and checks the OTLP bytes
the exporter would send for a canary value.
"""

from __future__ import annotations

import secrets

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_provenance as op
from otel_provenance.instrument.spans.redaction import StripOptions


def _exported(resource: Resource | None = None, options: StripOptions | None = None):
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=resource) if resource is not None else TracerProvider()
    provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter), options=options))
    return provider, exporter


def _bytes(exporter: InMemorySpanExporter) -> bytes:
    spans = exporter.get_finished_spans()
    assert spans, "nothing was exported"
    return encode_spans(list(spans)).SerializeToString()


def test_children_of_an_allowed_key_are_still_judged_on_their_own():
    canary = "canary-" + secrets.token_hex(8)
    provider, exporter = _exported(options=StripOptions(allow={"tool.parameters"}))
    with provider.get_tracer("t").start_as_current_span("tool") as span:
        span.set_attribute("tool.parameters", "allowed-schema")
        span.set_attribute("tool.parameters.input.value", canary)  # a content key under the allowed one
    data = _bytes(exporter)
    assert b"allowed-schema" in data  # the allowed key itself is kept
    assert canary.encode() not in data


def test_exception_event_without_an_error_status_loses_its_message_and_stacktrace():
    canary = "canary-" + secrets.token_hex(8)
    provider, exporter = _exported()
    with provider.get_tracer("http").start_as_current_span("GET /accounts") as span:
        try:
            raise ValueError(f"lookup failed for {canary}")
        except ValueError as exc:
            span.record_exception(exc)  # recorded, handled: the span's status stays unset
    data = _bytes(exporter)
    assert canary.encode() not in data
    assert b"exception.message" not in data and b"exception.stacktrace" not in data
    assert b"ValueError" in data  # the type survives


def test_forbidden_key_in_the_resource_of_a_clean_span_is_removed():
    canary = "canary-" + secrets.token_hex(8)
    resource = Resource.create({"service.name": "agent", "input.value": canary})
    provider, exporter = _exported(resource=resource)
    with provider.get_tracer("t").start_as_current_span("plain", attributes={"http.method": "GET"}):
        pass
    data = _bytes(exporter)
    assert canary.encode() not in data
    assert b"agent" in data  # the rest of the resource is kept


def test_forbidden_key_in_the_instrumentation_scope_of_a_clean_span_is_removed():
    canary = "canary-" + secrets.token_hex(8)
    provider, exporter = _exported()
    tracer = provider.get_tracer("scoped", "1.0", attributes={"gen_ai.prompt": canary, "team": "core"})
    with tracer.start_as_current_span("plain", attributes={"http.method": "GET"}):
        pass
    data = _bytes(exporter)
    assert canary.encode() not in data
    assert b"core" in data
