"""``@op.tool(blocked_error=...)``: a blocked call raises the framework's tool-error type instead of
``ProvenanceError`` — same message, chained to the ProvenanceError, span recorded as blocked."""

from __future__ import annotations

import asyncio

import pytest

import otel_provenance as op
from instrument_helpers import Traced


class FrameworkToolError(Exception):
    """Stands for LangChain's ToolException / PydanticAI's ToolFailed: built from one message."""


def test_blocked_call_raises_the_given_type_chained_to_the_provenance_error():
    t = Traced()
    ran = []

    @op.tool(side_effect="write", blocked_error=FrameworkToolError, tracer_provider=t.provider)
    async def refund(order_id: str) -> None:
        ran.append(order_id)

    with op.run(), pytest.raises(FrameworkToolError) as caught:
        asyncio.run(refund("A-123456"))
    assert ran == []
    assert isinstance(caught.value.__cause__, op.ProvenanceError)
    assert str(caught.value) == str(caught.value.__cause__)
    assert "order_id=assumed" in str(caught.value) and "A-123456" not in str(caught.value)
    span = t.span("refund")
    assert span.attributes["agent.tool.status"] == "blocked"
    assert span.attributes["error.type"] == "otel_provenance.errors.ProvenanceError"


def test_blocked_error_must_be_an_exception_class():
    for wrong in ("ToolException", FrameworkToolError("x"), BaseException):
        with pytest.raises(op.ConfigurationError, match="blocked_error"):

            @op.tool(side_effect="write", blocked_error=wrong)
            def refund(order_id: str) -> None: ...
