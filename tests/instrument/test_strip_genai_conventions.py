"""The newest GenAI conventions' keys (#35): memory content is removed, content-free keys are kept.

Through the public API (``ProvenanceSpanProcessor`` on a real SDK provider), checked in the exported
bytes: OTLP JSON and OTLP protobuf (``tests/canary.py``).
"""

from __future__ import annotations

import json

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_provenance as op
from canary import assert_absent, canary, exported_bytes
from otel_provenance.instrument.spans.redaction import StripOptions

#: The content-free keys the GenAI conventions added in semantic-conventions v1.41.1 or after it, with a value
#: that fits each one's rule; the allow-list mode keeps them.
NEWER_CONTENT_FREE = {
    "gen_ai.agent.version": "2025-05-01",
    "gen_ai.workflow.name": "customer_support_pipeline",
    "gen_ai.conversation.compacted": True,
    "gen_ai.request.stream": True,
    "gen_ai.request.reasoning.level": "high",
    "gen_ai.request.previous_response.id": "resp_123",
    "gen_ai.request.stream_cursor": "evt_42",
    "gen_ai.response.status": "completed",
    "gen_ai.response.time_to_first_chunk": 0.5,
    "gen_ai.retrieval.top_k": 5,
    "gen_ai.memory.store.id": "store-1",
    "gen_ai.memory.record.id": "rec-9",
    "gen_ai.memory.record.count": 3,
    "gen_ai.usage.reasoning.output_tokens": 50,
    "gen_ai.usage.cache_write.input_tokens": 25,
    "gen_ai.usage.text.input_tokens": 100,
    "gen_ai.usage.text.output_tokens": 80,
    "gen_ai.usage.text.cache_read.input_tokens": 40,
    "gen_ai.usage.image.input_tokens": 200,
    "gen_ai.usage.image.output_tokens": 0,
    "gen_ai.usage.image.cache_read.input_tokens": 0,
    "gen_ai.usage.audio.input_tokens": 10,
    "gen_ai.usage.audio.output_tokens": 11,
    "gen_ai.usage.audio.cache_read.input_tokens": 1,
}


def _export(options: StripOptions | None, attributes: dict, events: dict | None = None):
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    inner = SimpleSpanProcessor(exporter)
    provider.add_span_processor(
        inner if options is None else op.ProvenanceSpanProcessor(inner, options=options)
    )
    span = provider.get_tracer("memory").start_span("search_memory store-1", attributes=attributes)
    if events:
        span.add_event("memory.result", events)
    span.end()
    return exporter.get_finished_spans()


def _memory_span(values: list[str]) -> tuple[dict, dict]:
    def c() -> str:
        values.append(canary())
        return values[-1]

    attributes = {
        "gen_ai.operation.name": "search_memory",
        "gen_ai.memory.store.id": "store-1",
        "gen_ai.memory.query.text": c(),
        "gen_ai.memory.records": json.dumps([{"id": "rec-9", "content": c(), "score": 0.9}]),
        # flattened forms some instrumentations write
        "gen_ai.memory.records.0.content": c(),
        "gen_ai.memory.query.text.0": c(),
    }
    events = {"gen_ai.memory.records": [c(), c()], "gen_ai.memory.query.text": c()}
    return attributes, events


@pytest.mark.parametrize("mode", ["denylist", "allowlist"])
def test_memory_canaries_never_reach_exported_bytes(mode):
    control: list[str] = []
    attributes, events = _memory_span(control)
    blobs = exported_bytes(_export(None, attributes, events))
    assert all(any(v.encode() in blob for blob in blobs) for v in control), "control: canaries are seen"

    values: list[str] = []
    attributes, events = _memory_span(values)
    spans = _export(StripOptions(mode=mode), attributes, events)
    assert_absent(values, exported_bytes(spans))
    kept = dict(spans[0].attributes)
    assert kept["gen_ai.memory.store.id"] == "store-1"
    assert kept["gen_ai.operation.name"] == "search_memory"
    assert not any(key.startswith(("gen_ai.memory.query", "gen_ai.memory.records")) for key in kept)


def test_memory_canaries_never_reach_the_default_configure_file(tmp_path):
    path = tmp_path / "spans.jsonl"
    provider = op.configure(exporter="file", file=str(path), metrics=False, set_global=False, batch=False)
    values: list[str] = []
    attributes, events = _memory_span(values)
    span = provider.get_tracer("memory").start_span("search_memory", attributes=attributes)
    span.add_event("memory.result", events)
    span.end()
    provider.shutdown()
    data = path.read_bytes()
    assert b"gen_ai.memory.store.id" in data
    assert_absent(values, [data])


def test_allowlist_keeps_the_newer_content_free_genai_keys():
    spans = _export(StripOptions(mode="allowlist"), dict(NEWER_CONTENT_FREE))
    assert dict(spans[0].attributes) == NEWER_CONTENT_FREE


def test_allowlist_value_rules_apply_to_the_newer_keys():
    text = canary() + "\nsecond line"
    spans = _export(
        StripOptions(mode="allowlist"),
        {
            "gen_ai.memory.record.count": "three records",  # a number key with text
            "gen_ai.request.stream": "yes",  # a flag key with text
            "gen_ai.workflow.name": text,  # not a single-line identifier
            "gen_ai.agent.description": canary(),  # free text: not on the list
            "gen_ai.request.stop_sequences": [canary()],  # user text: not on the list
        },
    )
    assert dict(spans[0].attributes) == {}
