"""One tool call, one ``execute_tool`` span: adopt the span a framework already opened for the call.

Agent frameworks that instrument their tools (PydanticAI's ``Instrumentation``, MCP SDKs, …) open an
``execute_tool`` span around the tool function. If ``@op.tool`` opened another one inside it, every
call would count twice offline (two tool steps, one of them without provenance). The GenAI and MCP
conventions say the inner instrumentation should not create a second span but add its attributes to
the existing one; this module is that rule.

A span is adopted when it is the current span, still recording, an SDK span whose attributes say
``gen_ai.operation.name = execute_tool`` and ``gen_ai.tool.name`` = this tool — or, for a framework
that sets its attributes only when the span ends (Google ADK), one that carries neither key yet and is
named ``execute_tool {tool}`` as the conventions name it — and it does not carry ``agent.side_effect``
yet (so it is neither ours nor already adopted — a tool that calls itself gets its own span). The
provenance attributes go onto it (keys the framework already set stay as they are: its
``gen_ai.tool.call.id`` is the model's call id); the framework keeps ending it.

**The model's call id.** ``gen_ai.tool.call.id`` joins a tool span to the model's request for it. When
the framework knows that id, the call uses it instead of inventing one: the id a framework adapter
announced for this tool with :func:`announce_framework_call` (ADK's ``function_call_id``), or the
``gen_ai.tool.call.id`` already on the span to be adopted (Strands' ``toolUseId``, PydanticAI's).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span

from ... import semconv as sc


class AdoptedSpan:
    """A framework's tool span seen through ``@op.tool``: everything delegates except ``end``."""

    __slots__ = ("_span",)

    def __init__(self, span: Span) -> None:
        self._span = span

    def end(self, end_time: int | None = None) -> None:
        """The framework that opened the span ends it."""

    def __getattr__(self, name: str) -> Any:
        return getattr(self._span, name)


#: (tool name, the framework's call id) of the tool call a framework adapter is about to run.
_FRAMEWORK_CALL: ContextVar[tuple[str, str] | None] = ContextVar(
    "otel_provenance_framework_call", default=None
)


def announce_framework_call(tool_name: str, call_id: Any) -> None:
    """Until :func:`end_framework_call`, a call of ``tool_name`` takes ``call_id`` (the model's id for
    it) as its ``gen_ai.tool.call.id``: for a framework whose hooks run before and after the tool
    (ADK's callbacks). A missing or non-string id announces nothing."""
    _FRAMEWORK_CALL.set((tool_name, call_id) if isinstance(call_id, str) and call_id else None)


def end_framework_call() -> None:
    _FRAMEWORK_CALL.set(None)


def framework_call_id(tool_name: str) -> str | None:
    """The framework's id for this call of ``tool_name``: announced by an adapter, else the one on the
    framework span that will be adopted; ``None`` when the framework has none."""
    announced = _FRAMEWORK_CALL.get()
    if announced is not None and announced[0] == tool_name:
        return announced[1]
    span = _adoptable(tool_name)
    call_id = span.attributes.get(sc.GEN_AI_TOOL_CALL_ID) if span is not None else None
    return call_id if isinstance(call_id, str) and call_id else None


def _adoptable(tool_name: str) -> Any:
    """The current span if it is a framework's span for this call of ``tool_name``, else ``None``."""
    span = trace.get_current_span()
    if not span.is_recording():
        return None
    existing = getattr(span, "attributes", None)
    if not isinstance(existing, Mapping):
        return None
    operation = existing.get(sc.GEN_AI_OPERATION_NAME)
    if operation is not None and operation != sc.EXECUTE_TOOL:
        return None  # another operation (the run's own invoke_agent span): asked first, it is the usual
    if sc.SIDE_EFFECT in existing:
        return None
    named = existing.get(sc.GEN_AI_TOOL_NAME)
    if operation == sc.EXECUTE_TOOL and named == tool_name:
        return span
    if operation is None and named is None and getattr(span, "name", None) == sc.TOOL_SPAN_PREFIX + tool_name:
        return span  # named by the conventions, attributes still to come (ADK sets them at the end)
    return None


def adopt_outer_tool_span(tool_name: str, attributes: Mapping[str, Any]) -> AdoptedSpan | None:
    """The framework's span for this call with ``attributes`` added, or ``None`` to open our own."""
    span = _adoptable(tool_name)
    if span is None:
        return None
    existing = span.attributes
    # The framework's own GenAI keys stay (its gen_ai.tool.call.id is the model's call id).
    span.set_attributes({k: v for k, v in attributes.items() if k not in existing})
    return AdoptedSpan(span)


__all__ = [
    "AdoptedSpan",
    "adopt_outer_tool_span",
    "announce_framework_call",
    "end_framework_call",
    "framework_call_id",
]
