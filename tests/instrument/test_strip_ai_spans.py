"""Which spans the default (hybrid) mode judges by the allow-list: those an AI instrumentation made,
recognised by scope name, key namespace or ``gen_ai.*`` event (``instrument/spans/ai_spans.py``) — and an
application's own spans, which keep their keys. Through the real processor and SDK."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_provenance as op
from otel_provenance.instrument.spans.ai_spans import made_by_ai

APP_KEY = {"app.note": "kept on the application's own spans"}


def _exported(scope: str, attributes: dict, event: str | None = None):
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter)))
    with provider.get_tracer(scope).start_as_current_span(
        "work", attributes={**APP_KEY, **attributes}
    ) as span:
        if event:
            span.add_event(event, {"app.step": 1})
    [exported] = exporter.get_finished_spans()
    return exported


@pytest.mark.parametrize(
    ("scope", "attributes", "event"),
    [
        ("pydantic-ai", {}, None),
        ("openinference.instrumentation.langchain", {}, None),
        ("opentelemetry.instrumentation.openai_v2", {}, None),
        ("logfire.openai", {}, None),
        ("langfuse-sdk", {}, None),
        ("haystack", {}, None),
        ("azure.ai.agents", {}, None),
        ("app", {"gen_ai.request.model": "m"}, None),
        ("app", {"llm.model_name": "m"}, None),
        ("app", {"traceloop.entity.name": "t"}, None),
        ("app", {"model_request_parameters": "{}"}, None),
        ("app", {}, "gen_ai.evaluation.result"),
        # the Vercel AI SDK (#50): its tracer's scope is ``ai``, its keys ``ai.*``; either says it
        ("ai", {"operation.name": "ai.generateText checkout", "resource.name": "checkout"}, None),
        ("app", {"ai.operationId": "ai.generateText"}, None),
        ("logfire", {"events": "[]"}, None),  # Logfire's LLM integrations' messages (#50)
    ],
)
def test_a_span_an_ai_library_made_keeps_only_allow_listed_keys(scope, attributes, event):
    span = _exported(scope, attributes, event)
    assert made_by_ai({**APP_KEY, **attributes}, scope, [event] if event else [])
    assert "app.note" not in span.attributes
    assert all(not e.attributes for e in span.events)
    if "gen_ai.request.model" in attributes:
        assert span.attributes["gen_ai.request.model"] == "m"


@pytest.mark.parametrize(
    ("scope", "attributes"),
    [
        ("opentelemetry.instrumentation.requests", {"http.request.method": "GET"}),
        ("opentelemetry.instrumentation.sqlite3", {"db.system": "sqlite"}),
        ("logfire", {"logfire.span_type": "span", "code.function": "handle"}),
        ("myapp.orders", {"order.count": 3}),
        ("mail", {"order.count": 3}),  # ``ai`` is a whole scope name, not a word to find inside one
        ("myapp.orders", {"input.value": "content, removed by the deny-list"}),
    ],
)
def test_an_application_span_keeps_its_own_keys(scope, attributes):
    span = _exported(scope, attributes, "checkpoint")
    assert not made_by_ai({**APP_KEY, **attributes}, scope, ["checkpoint"])
    assert span.attributes["app.note"] == APP_KEY["app.note"]
    assert dict(span.events[0].attributes) == {"app.step": 1}
    assert "input.value" not in span.attributes
