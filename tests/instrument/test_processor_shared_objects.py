"""The Resource and the instrumentation scope a span shares with others: a forbidden key in either is
removed from the exported bytes, and everything else about them — the Resource's schema URL, the
scope's name, version and schema URL, their other attributes — is exported unchanged.

Canary values are random: any trace of one in the OTLP protobuf or JSON is a leak.
"""

from __future__ import annotations

import json

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans as encode_proto
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_provenance as op
from instrument_helpers import fresh_canary
from interop import otlp_json_spans

RESOURCE_SCHEMA = "https://opentelemetry.io/schemas/1.21.0"
SCOPE_SCHEMA = "https://opentelemetry.io/schemas/1.26.0"


def _setup(resource: Resource | None = None):
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=resource) if resource is not None else TracerProvider()
    provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter)))
    return provider, exporter


def _assert_absent(canary: str, spans) -> None:
    for blob in (encode_proto(spans).SerializeToString(), otlp_json_spans(spans)):
        assert canary.encode() not in blob, "a canary value leaked into exported bytes"


def test_a_resource_with_a_forbidden_key_keeps_its_schema_url_and_other_attributes():
    canary = fresh_canary()
    resource = Resource({"service.name": "agent", "input.value": canary}, RESOURCE_SCHEMA)
    provider, exporter = _setup(resource)
    tracer = provider.get_tracer("t")
    for name in ("a", "b"):
        with tracer.start_as_current_span(name, attributes={"app.step": 1}):
            pass
    spans = exporter.get_finished_spans()
    _assert_absent(canary, spans)
    [resource_spans] = encode_proto(spans).resource_spans  # both spans under one cleaned Resource
    assert resource_spans.schema_url == RESOURCE_SCHEMA
    assert {kv.key: kv.value.string_value for kv in resource_spans.resource.attributes} == {
        "service.name": "agent"
    }
    [document] = json.loads(otlp_json_spans(spans))["resourceSpans"]
    assert document["schemaUrl"] == RESOURCE_SCHEMA
    assert all(span.resource.schema_url == RESOURCE_SCHEMA for span in spans)


def test_a_scope_with_a_forbidden_key_keeps_its_name_version_schema_url_and_other_attributes():
    canary = fresh_canary()
    provider, exporter = _setup()
    tracer = provider.get_tracer(
        "agent.lib", "2.3.4", schema_url=SCOPE_SCHEMA, attributes={"input.value": canary, "lib.flag": "on"}
    )
    for name in ("a", "b"):
        with tracer.start_as_current_span(name, attributes={"app.step": 1}):
            pass
    spans = exporter.get_finished_spans()
    _assert_absent(canary, spans)
    [resource_spans] = encode_proto(spans).resource_spans
    [scope_spans] = resource_spans.scope_spans  # both spans under one cleaned scope
    assert (scope_spans.scope.name, scope_spans.scope.version, scope_spans.schema_url) == (
        "agent.lib",
        "2.3.4",
        SCOPE_SCHEMA,
    )
    assert {kv.key: kv.value.string_value for kv in scope_spans.scope.attributes} == {"lib.flag": "on"}
    assert len(scope_spans.spans) == 2
    for span in spans:
        scope = span.instrumentation_scope
        assert (scope.name, scope.version, scope.schema_url) == ("agent.lib", "2.3.4", SCOPE_SCHEMA)
