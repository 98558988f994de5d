"""``op.run(provider_name=..., conversation_id=...)``: the ``invoke_agent`` span carries
``gen_ai.provider.name`` and ``gen_ai.conversation.id`` as the GenAI conventions ask of an agent span,
through ``op.ProvenanceSpanProcessor`` in both stripping modes; neither is set when not given, and a
wrong value is refused naming the option."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_provenance as op


def exported_run(strip: op.StripOptions | None = None, **options) -> dict:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    processor = op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter), options=strip)
    provider.add_span_processor(processor)
    with op.run(agent_name="support", tracer_provider=provider, **options):
        pass
    (span,) = exporter.get_finished_spans()
    assert span.name == "invoke_agent support"
    return dict(span.attributes)


@pytest.mark.parametrize("mode", ["default", "allowlist"])
def test_provider_and_conversation_are_on_the_agent_span(mode):
    strip = op.StripOptions(mode="allowlist") if mode == "allowlist" else None
    attributes = exported_run(strip, provider_name="gcp.gemini", conversation_id="conv-42")
    assert attributes["gen_ai.provider.name"] == "gcp.gemini"
    assert attributes["gen_ai.conversation.id"] == "conv-42"
    assert attributes["gen_ai.operation.name"] == "invoke_agent"


def test_neither_is_set_when_not_given():
    attributes = exported_run()
    assert "gen_ai.provider.name" not in attributes and "gen_ai.conversation.id" not in attributes


@pytest.mark.parametrize("option", ["provider_name", "conversation_id"])
@pytest.mark.parametrize("value", ["", 42])
def test_a_wrong_value_is_refused_naming_the_option(option, value):
    with pytest.raises(op.ConfigurationError, match=rf"op.run\({option}=...\)"):
        op.run(**{option: value})
