"""One tool call, one execute_tool span: ``@op.tool`` adopts the span an outer instrumentation opened
for the same tool call (plain OTel API here, as any framework would open it) and opens its own otherwise."""

from __future__ import annotations

import pytest

import otel_provenance as op
from instrument_helpers import Traced


def framework_span(t: Traced, tool: str, **own: str):
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool,
        "gen_ai.tool.call.id": "m1",
        **own,
    }
    tracer = t.provider.get_tracer("framework")
    return tracer.start_as_current_span(f"execute_tool {tool}", attributes=attributes)


def tool_spans(t: Traced):
    return [s for s in t.spans if s.attributes.get("gen_ai.operation.name") == "execute_tool"]


def test_the_framework_span_for_the_same_tool_is_adopted():
    t = Traced()

    @op.tool(side_effect="read", tracer_provider=t.provider)
    def lookup(order_id: str) -> dict:
        return {"order_id": order_id}

    with op.run(inputs={"order_id": "A-1"}), framework_span(t, "lookup"):
        lookup("A-1")
    (span,) = tool_spans(t)
    assert span.instrumentation_scope.name == "framework"
    assert span.attributes["agent.arg.order_id.kind"] == "observed"
    assert span.attributes["agent.tool.status"] == "ok"
    assert span.attributes["gen_ai.tool.call.id"] == "m1"  # the framework's call id is kept
    assert "agent.tool.call.id" not in span.attributes  # and no id of the package's own beside it


def test_the_frameworks_own_agent_name_and_tool_type_stay_on_the_adopted_span():
    """#50: adopting adds the package's keys; the framework's GenAI keys are the framework's — its
    agent (a sub-agent's name, not the run's) and its tool type — not only its call id."""
    t = Traced()

    @op.tool(side_effect="read", tracer_provider=t.provider)  # gen_ai.tool.type "function" of its own
    def lookup(order_id: str) -> dict:
        return {"order_id": order_id}

    own = {"gen_ai.agent.name": "billing-sub-agent", "gen_ai.tool.type": "extension"}
    with op.run(inputs={"order_id": "A-1"}, agent_name="support"), framework_span(t, "lookup", **own):
        lookup("A-1")
    (span,) = tool_spans(t)
    assert span.attributes["gen_ai.agent.name"] == "billing-sub-agent"
    assert span.attributes["gen_ai.tool.type"] == "extension"
    assert span.attributes["agent.arg.order_id.kind"] == "observed"  # the package's keys were added


def test_a_blocked_call_marks_the_adopted_span_and_the_framework_ends_it():
    t = Traced()

    @op.tool(side_effect="write", tracer_provider=t.provider)
    def refund(order_id: str) -> None:
        raise AssertionError("a blocked body never runs")

    with op.run(), framework_span(t, "refund"), pytest.raises(op.ProvenanceError):
        refund("A-9")
    (span,) = tool_spans(t)
    assert span.attributes["agent.tool.status"] == "blocked"
    assert span.end_time is not None


def test_another_tool_or_a_tool_calling_itself_gets_its_own_span():
    t = Traced()

    @op.tool(side_effect="read", tracer_provider=t.provider)
    def walk(depth: int) -> int:
        return walk(depth - 1) + 1 if depth else 0

    with op.run(inputs={"depth": 1}), framework_span(t, "other"):
        walk(1)
    names = sorted(s.instrumentation_scope.name for s in tool_spans(t))
    assert names == ["framework", "otel_provenance", "otel_provenance"]
