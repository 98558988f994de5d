"""Errors raised in ordinary child spans inside a tool quote its arguments: they must not leave.

Found by review: with exception details stripped only on spans that *look* GenAI, an HTTP client's
span under a tool (or a chat span whose `gen_ai.operation.name` the 128-attribute limit evicted)
exported `exception.message`, the stack trace and a status description quoting the argument.
"""

from __future__ import annotations

import secrets

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import otel_provenance as op
from interop import FileSpanExporter


def _provider(path):
    provider = TracerProvider()
    provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(FileSpanExporter(path))))
    return provider


def test_child_span_errors_inside_a_tool_do_not_carry_the_argument(tmp_path):
    path = tmp_path / "spans.jsonl"
    provider = _provider(path)
    tracer = provider.get_tracer("http-client")
    iban = "DE89" + secrets.token_hex(8)

    @op.tool(side_effect="read", tracer_provider=provider)
    def lookup_account(iban: str) -> dict:
        with tracer.start_as_current_span("GET /accounts"):  # an ordinary client span
            raise ValueError(f"lookup failed for {iban}")

    with op.run(inputs={"iban": iban}), pytest.raises(ValueError):
        lookup_account(iban=iban)
    provider.shutdown()
    data = path.read_text()
    assert iban not in data
    assert "exception.message" not in data and "exception.stacktrace" not in data
    assert '"exception.type"' in data and "ValueError" in data


def test_a_genai_span_whose_marker_was_evicted_still_loses_exception_details(tmp_path):
    path = tmp_path / "spans.jsonl"
    provider = _provider(path)
    secret = "prompt-" + secrets.token_hex(8)
    tracer = provider.get_tracer("chat")
    with (
        pytest.raises(RuntimeError),
        tracer.start_as_current_span("chat", attributes={"gen_ai.operation.name": "chat"}) as span,
    ):
        for i in range(140):  # evicts gen_ai.operation.name (the oldest key)
            span.set_attribute(f"gen_ai.prompt.{i}.content", secret)
        raise RuntimeError(f"model refused: {secret}")
    provider.shutdown()
    data = path.read_text()
    assert secret not in data
    assert "RuntimeError" in data
