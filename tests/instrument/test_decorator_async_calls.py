"""@op.tool on ``async def``: the span is current while the body runs, an error is recorded by type."""

from __future__ import annotations

import asyncio

import pytest
from opentelemetry import trace
from opentelemetry.trace import StatusCode

import otel_provenance as op
from instrument_helpers import Traced


def test_async_tool_span_is_current_in_the_body_and_nested_tools_are_its_children():
    traced = Traced()
    inside = []

    @op.tool(tracer_provider=traced.provider)
    async def inner(n: int) -> int:
        return n

    @op.tool(tracer_provider=traced.provider)
    async def outer(n: int) -> int:
        inside.append(trace.get_current_span().get_span_context().span_id)
        return await inner(n)

    assert asyncio.run(outer(3)) == 3
    outer_span, inner_span = traced.span("outer"), traced.span("inner")
    assert inside == [outer_span.context.span_id]
    assert inner_span.parent is not None and inner_span.parent.span_id == outer_span.context.span_id


def test_async_tool_error_is_recorded_by_type_only():
    traced = Traced()

    @op.tool(tracer_provider=traced.provider)
    async def fetch(url: str) -> str:
        raise ConnectionError(f"cannot reach {url}")

    with pytest.raises(ConnectionError):
        asyncio.run(fetch("https://internal.example/secret-5512"))
    span = traced.span("fetch")
    assert span.attributes["agent.tool.status"] == "error"
    assert span.attributes["error.type"] == "ConnectionError"
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == "ConnectionError"
    [event] = span.events
    assert dict(event.attributes) == {"exception.type": "ConnectionError"}
