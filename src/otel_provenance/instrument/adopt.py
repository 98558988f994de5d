"""One tool call, one ``execute_tool`` span: adopt the span a framework already opened for the call.

Agent frameworks that instrument their tools (PydanticAI's ``Instrumentation``, MCP SDKs, …) open an
``execute_tool`` span around the tool function. If ``@op.tool`` opened another one inside it, every
call would count twice offline (two tool steps, one of them without provenance). The GenAI and MCP
conventions say the inner instrumentation should not create a second span but add its attributes to
the existing one; this module is that rule.

A span is adopted when it is the current span, still recording, an SDK span whose attributes say
``gen_ai.operation.name = execute_tool`` and ``gen_ai.tool.name`` = this tool, and it does not carry
``agent.side_effect`` yet (so it is neither ours nor already adopted — a tool that calls itself gets
its own span). The provenance attributes go onto it (keys the framework already set stay as they
are: its ``gen_ai.tool.call.id`` is the model's call id); the framework keeps ending it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span

from .. import semconv as sc


class AdoptedSpan:
    """A framework's tool span seen through ``@op.tool``: everything delegates except ``end``."""

    __slots__ = ("_span",)

    def __init__(self, span: Span) -> None:
        self._span = span

    def end(self, end_time: int | None = None) -> None:
        """The framework that opened the span ends it."""

    def __getattr__(self, name: str) -> Any:
        return getattr(self._span, name)


def adopt_outer_tool_span(tool_name: str, attributes: Mapping[str, Any]) -> AdoptedSpan | None:
    """The framework's span for this call with ``attributes`` added, or ``None`` to open our own."""
    span = trace.get_current_span()
    if not span.is_recording():
        return None
    existing = getattr(span, "attributes", None)
    if (
        not isinstance(existing, Mapping)
        or existing.get(sc.GEN_AI_OPERATION_NAME) != sc.EXECUTE_TOOL
        or existing.get(sc.GEN_AI_TOOL_NAME) != tool_name
        or sc.SIDE_EFFECT in existing
    ):
        return None
    # The framework's own GenAI keys stay (its gen_ai.tool.call.id is the model's call id).
    span.set_attributes({k: v for k, v in attributes.items() if k not in existing})
    return AdoptedSpan(span)


__all__ = ["AdoptedSpan", "adopt_outer_tool_span"]
