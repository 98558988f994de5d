"""The newest GenAI conventions' names on our spans and metrics (#35).

* ``gen_ai.execute_tool.duration`` carries ``gen_ai.tool.name``, ``gen_ai.tool.type`` and, when the run
  has one, ``gen_ai.agent.name`` — and no ``gen_ai.operation.name``;
* ``gen_ai.agent.name`` is on every tool span of a run that has an agent name (``@op.tool`` spans and
  third-party tool spans the processor classifies), not only on the run's root.

Real SDK: a TracerProvider with an in-memory exporter, a MeterProvider with an in-memory reader.
"""

from __future__ import annotations

import json

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from test_metrics import collect, key

import otel_provenance as op
from instrument_helpers import Traced
from otel_provenance import semconv as sc
from otel_provenance.instrument.spans import metrics as tool_metrics


def test_tool_spans_carry_the_runs_agent_name(reader):
    traced = Traced()

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def find_order(customer: str) -> dict:
        return {"order": "ord-1"}

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    def refund(order: str) -> str:
        return "done"

    with op.run(inputs={"customer": "cust-1"}, agent_name="refund-agent", tracer_provider=traced.provider):
        find_order("cust-1")
        with pytest.raises(op.ProvenanceError):
            refund("ord-guessed")  # blocked: its span carries the agent name too
    find_order("cust-1")  # outside any run: no agent name

    root = next(s for s in traced.spans if s.name == "invoke_agent refund-agent")
    assert root.attributes[sc.GEN_AI_AGENT_NAME] == "refund-agent"
    in_run = [s for s in traced.spans if s.name.startswith("execute_tool") and sc.RUN_ID in s.attributes]
    assert len(in_run) == 2
    assert all(s.attributes[sc.GEN_AI_AGENT_NAME] == "refund-agent" for s in in_run)
    outside = traced.span("find_order", -1)
    assert sc.RUN_ID not in outside.attributes and sc.GEN_AI_AGENT_NAME not in outside.attributes

    durations = collect(reader)[tool_metrics.TOOL_DURATION]
    assert {k: p.count for k, p in durations.items()} == {
        key(**{sc.GEN_AI_TOOL_NAME: "find_order", sc.GEN_AI_TOOL_TYPE: "function"}): 1,
        key(
            **{
                sc.GEN_AI_TOOL_NAME: "find_order",
                sc.GEN_AI_TOOL_TYPE: "function",
                sc.GEN_AI_AGENT_NAME: "refund-agent",
            }
        ): 1,
        key(
            **{
                sc.GEN_AI_TOOL_NAME: "refund",
                sc.GEN_AI_TOOL_TYPE: "function",
                sc.GEN_AI_AGENT_NAME: "refund-agent",
                sc.ERROR_TYPE: "otel_provenance.errors.ProvenanceError",
            }
        ): 1,
    }
    assert not any(dict(k).get(sc.GEN_AI_OPERATION_NAME) for k in durations)


def test_third_party_tool_span_in_a_named_run_gets_the_agent_name(reader):
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter)))
    tracer = provider.get_tracer("openinference-like")
    with op.run(agent_name="support-agent", tracer_provider=provider):
        tracer.start_span(
            "lookup",
            attributes={
                "openinference.span.kind": "TOOL",
                "tool.name": "lookup",
                "input.value": json.dumps({"q": "x"}),
                sc.GEN_AI_TOOL_TYPE: "function",
            },
        ).end()
    (tool_span,) = [s for s in exporter.get_finished_spans() if s.name == "lookup"]
    assert tool_span.attributes[sc.GEN_AI_AGENT_NAME] == "support-agent"
    durations = collect(reader)[tool_metrics.TOOL_DURATION]
    assert set(durations) == {
        key(
            **{
                sc.GEN_AI_TOOL_NAME: "lookup",
                sc.GEN_AI_TOOL_TYPE: "function",
                sc.GEN_AI_AGENT_NAME: "support-agent",
            }
        )
    }


def test_agent_names_beyond_the_cap_fold_into_other(reader, monkeypatch):
    monkeypatch.setattr(tool_metrics, "_agent_names", set())
    monkeypatch.setattr(tool_metrics, "MAX_AGENT_NAMES", 2)
    for name in ("a", "b", "c"):
        tool_metrics.record_tool_call("t", status="ok", side_effect="none", duration=0.1, agent_name=name)
    agents = sorted(dict(k)[sc.GEN_AI_AGENT_NAME] for k in collect(reader)[tool_metrics.TOOL_DURATION])
    assert agents == ["_other", "a", "b"]


def test_each_run_that_opens_its_agent_span_records_gen_ai_invoke_agent_duration(reader):
    """`gen_ai.invoke_agent.duration` (#48), as opentelemetry-util-genai records it for its agents:
    one point per op.run that opened its `invoke_agent` span — the agent's name when it has one,
    `error.type` when the run raised, util-genai's buckets, in seconds (unit `s`, as the tool
    duration's; the counters in UCUM annotations) — and none for a run that nested under the
    caller's span (its agent span is the caller's to measure)."""
    traced = Traced()

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def lookup(order: str) -> dict:
        return {"status": "shipped"}

    with op.run(inputs={"order": "o-1"}, agent_name="refund-agent", tracer_provider=traced.provider):
        lookup("o-1")
    with pytest.raises(KeyError), op.run(agent_name="refund-agent", tracer_provider=traced.provider):
        raise KeyError("order")
    with op.run(tracer_provider=traced.provider):  # no agent name
        pass
    caller = traced.provider.get_tracer("app").start_as_current_span("caller")
    with caller, op.run(agent_name="nested", tracer_provider=traced.provider):  # under the caller's span
        lookup("o-1")
    with op.run(agent_name="no-root", root_span=False, tracer_provider=traced.provider):
        pass

    runs = collect(reader)[tool_metrics.AGENT_DURATION]
    assert {k: p.count for k, p in runs.items()} == {
        key(**{sc.GEN_AI_AGENT_NAME: "refund-agent"}): 1,
        key(**{sc.GEN_AI_AGENT_NAME: "refund-agent", sc.ERROR_TYPE: "KeyError"}): 1,
        key(): 1,
    }
    point = runs[key(**{sc.GEN_AI_AGENT_NAME: "refund-agent"})]
    assert tuple(point.explicit_bounds) == tool_metrics.AGENT_DURATION_BUCKETS
    root = next(s for s in traced.spans if s.name == "invoke_agent refund-agent")
    assert 0 <= point.sum <= (root.end_time - root.start_time) / 1e9 + 0.5  # seconds, around the span
    metrics = [
        metric
        for rm in reader.get_metrics_data().resource_metrics
        for sm in rm.scope_metrics
        if sm.scope.name == tool_metrics.SCOPE
        for metric in sm.metrics
    ]
    units = {metric.name: metric.unit for metric in metrics}
    # every instrument says what it counts (a dashboard shows it beside the name)
    assert {metric.name for metric in metrics if not metric.description} == set()
    assert units[tool_metrics.TOOL_DURATION] == "s"
    assert units[tool_metrics.AGENT_DURATION] == "s"
    assert units[tool_metrics.TOOL_CALLS] == "{call}"
    assert units[tool_metrics.TOOL_ARGUMENTS] == "{argument}"
