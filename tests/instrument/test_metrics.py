"""Tool-call metrics (issue #19): every instrument's values and attributes, from @op.tool calls and
from third-party tool spans, read back through the real SDK's InMemoryMetricReader."""

from __future__ import annotations

import json
import secrets

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader, NumberDataPoint
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_provenance as op
from instrument_helpers import Traced
from interop import require
from otel_provenance import semconv as sc
from otel_provenance.instrument.spans import metrics as tool_metrics

TOOL = sc.GEN_AI_TOOL_NAME
SCOPE = tool_metrics.SCOPE


def collect(reader, scope: str = SCOPE) -> dict[str, dict[frozenset, object]]:
    """metric name -> {frozenset(attributes): value (sums) or data point (histograms)}."""
    out: dict[str, dict[frozenset, object]] = {}
    data = reader.get_metrics_data()
    for rm in data.resource_metrics if data else ():
        for sm in rm.scope_metrics:
            if sm.scope.name != scope:
                continue
            for metric in sm.metrics:
                points = out.setdefault(metric.name, {})
                for point in metric.data.data_points:
                    key = frozenset(point.attributes.items())
                    points[key] = point.value if isinstance(point, NumberDataPoint) else point
    return out


def key(**attributes) -> frozenset:
    return frozenset(attributes.items())


def calls(tool, side_effect, status):
    return key(**{TOOL: tool, sc.SIDE_EFFECT: side_effect, sc.TOOL_STATUS: status})


def test_op_tool_calls_record_every_instrument(reader):
    traced = Traced()
    customer = f"cust-{secrets.token_hex(4)}"
    order = f"ord-{secrets.token_hex(4)}"

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def find_order(customer: str) -> dict:
        return {"order_id": order}

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    def refund(order_id: str) -> str:
        return "done"

    @op.tool(invented=("new_name",), tracer_provider=traced.provider)
    def rename(new_name: str) -> None:
        return None

    @op.tool(tracer_provider=traced.provider)
    def boom(x: str) -> None:
        raise ValueError("no")

    with op.run(inputs={"customer": customer}):
        find_order(customer)  # observed from the run's inputs
        refund(order)  # observed from find_order
        refund(order)  # the same call again: a retry
        with pytest.raises(op.ProvenanceError):
            refund("ord-guessed")  # assumed write: blocked before the body
        rename("fresh-name")  # invented
        with pytest.raises(ValueError):
            boom("literal")  # assumed, no budget on a side-effect-free tool; fails

    m = collect(reader)
    # a full ledger, run verdicts and approvals have tests of their own (test_guard_*.py)
    assert set(m) == set(tool_metrics.INSTRUMENTS) - {
        tool_metrics.LEDGER_FULL,
        tool_metrics.GUARD_RUNS,
        tool_metrics.APPROVALS,
    }
    assert m[tool_metrics.TOOL_CALLS] == {
        calls("find_order", "read", "ok"): 1,
        calls("refund", "write", "ok"): 2,
        calls("refund", "write", "blocked"): 1,
        calls("rename", "none", "ok"): 1,
        calls("boom", "none", "error"): 1,
    }
    kind = tool_metrics.ARG_KIND
    assert m[tool_metrics.TOOL_ARGUMENTS] == {
        key(**{TOOL: "find_order", kind: "observed"}): 1,
        key(**{TOOL: "refund", kind: "observed"}): 2,
        key(**{TOOL: "refund", kind: "assumed"}): 1,
        key(**{TOOL: "rename", kind: "invented"}): 1,
        key(**{TOOL: "boom", kind: "assumed"}): 1,
    }
    assert m[tool_metrics.BUDGET_VIOLATIONS] == {
        key(**{TOOL: "refund", tool_metrics.BUDGET_RULE: "max_assumed"}): 1
    }
    assert m[tool_metrics.TOOL_RETRIES] == {key(**{TOOL: "refund"}): 1}

    durations = m[tool_metrics.TOOL_DURATION]
    # the newest GenAI conventions: no gen_ai.operation.name, gen_ai.tool.type (no agent name: none set)
    execute = {sc.GEN_AI_TOOL_TYPE: "function"}
    expected_counts = {
        key(**execute, **{TOOL: "find_order"}): 1,
        key(**execute, **{TOOL: "refund"}): 2,
        key(**execute, **{TOOL: "refund", sc.ERROR_TYPE: "otel_provenance.errors.ProvenanceError"}): 1,
        key(**execute, **{TOOL: "rename"}): 1,
        key(**execute, **{TOOL: "boom", sc.ERROR_TYPE: "ValueError"}): 1,
    }
    assert {k: p.count for k, p in durations.items()} == expected_counts
    for point in durations.values():
        assert isinstance(point, HistogramDataPoint)
        assert 0 <= point.sum < 5 and tuple(point.explicit_bounds) == tool_metrics.DURATION_BUCKETS
    # the spans agree with the counters
    statuses = sorted(s.attributes[sc.TOOL_STATUS] for s in traced.spans)
    assert statuses == ["blocked", "error", "ok", "ok", "ok", "ok"]


def test_a_full_ledger_is_counted(reader):
    @op.tool(tracer_provider=Traced().provider)
    def listing() -> dict:
        return {"id": f"item-{secrets.token_hex(6)}"}

    @op.tool(tracer_provider=Traced().provider)
    def pick(item: str) -> None:
        return None

    with op.run(ledger_max_entries=2):
        for _ in range(4):  # four results into a ledger of two entries: it evicts
            listing()
        pick("anything")
    m = collect(reader)
    # the third result evicted: the fourth listing call and pick were classified against a full ledger
    assert m[tool_metrics.LEDGER_FULL] == {key(**{TOOL: "listing"}): 1, key(**{TOOL: "pick"}): 1}


def test_generator_and_async_tools_are_counted_once(reader):
    import asyncio

    @op.tool(tracer_provider=Traced().provider)
    def pages():
        yield 1
        yield 2

    @op.tool(tracer_provider=Traced().provider)
    async def fetch() -> int:
        return 1

    assert list(pages()) == [1, 2]
    assert asyncio.run(fetch()) == 1
    m = collect(reader)
    assert m[tool_metrics.TOOL_CALLS] == {calls("pages", "none", "ok"): 1, calls("fetch", "none", "ok"): 1}


def _processor_provider(**kwargs):
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter), **kwargs))
    return provider, exporter


def test_util_genai_tool_span_is_counted_and_keeps_its_own_duration(reader, monkeypatch):
    TelemetryHandler = require("opentelemetry.util.genai.handler").TelemetryHandler
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")
    provider, exporter = _processor_provider(foreign_side_effects={"wire_money": "write"})
    genai_reader = InMemoryMetricReader()
    genai_meters = MeterProvider(metric_readers=[genai_reader])
    handler = TelemetryHandler(tracer_provider=provider, meter_provider=genai_meters)
    with handler.tool("wire_money") as call:
        call.arguments = {"iban": "DE00" + secrets.token_hex(8), "comment": "rent"}
        call.tool_result = {"ok": True}
    [span] = exporter.get_finished_spans()
    assert span.attributes[sc.VIOLATIONS]  # the processor classified it

    m = collect(reader)
    assert m[tool_metrics.TOOL_CALLS] == {calls("wire_money", "write", "ok"): 1}
    assumed = key(**{TOOL: "wire_money", tool_metrics.ARG_KIND: "assumed"})
    assert m[tool_metrics.TOOL_ARGUMENTS] == {assumed: 2}
    assert m[tool_metrics.BUDGET_VIOLATIONS] == {
        key(**{TOOL: "wire_money", tool_metrics.BUDGET_RULE: "max_assumed"}): 1
    }
    assert tool_metrics.TOOL_DURATION not in m  # util-genai records it itself; not twice
    [genai_scope] = _scopes(genai_reader)  # util-genai's own meter, whatever its scope name
    genai = collect(genai_reader, scope=genai_scope)
    [point] = genai[tool_metrics.TOOL_DURATION].values()
    assert point.count == 1 and dict(point.attributes)[TOOL] == "wire_money"
    genai_meters.shutdown()


def _scopes(reader) -> set[str]:
    data = reader.get_metrics_data()
    return {sm.scope.name for rm in data.resource_metrics for sm in rm.scope_metrics} if data else set()


def test_openllmetry_shaped_span_gets_the_duration_from_the_processor(reader):
    provider, _ = _processor_provider()
    tracer = provider.get_tracer("traceloop")
    with tracer.start_as_current_span("search.tool") as span:
        span.set_attribute("traceloop.span.kind", "tool")
        span.set_attribute("traceloop.entity.name", "search")
        span.set_attribute("traceloop.entity.input", json.dumps({"args": ["q"], "kwargs": {}}))
        span.set_attribute("traceloop.entity.output", json.dumps("r"))
    m = collect(reader)
    assert m[tool_metrics.TOOL_CALLS] == {calls("search", "unknown", "ok"): 1}
    assert m[tool_metrics.TOOL_ARGUMENTS] == {key(**{TOOL: "search", tool_metrics.ARG_KIND: "assumed"}): 1}
    [duration] = m[tool_metrics.TOOL_DURATION].values()
    assert duration.count == 1


def test_no_meter_provider_is_a_no_op():
    tool_metrics.use_meter_provider(None)  # the global API provider: a no-op proxy unless one is set

    @op.tool(side_effect="write", tracer_provider=Traced().provider)
    def refund(order_id: str) -> None:
        return None

    with pytest.raises(op.ProvenanceError):
        refund("x")


def test_tool_names_beyond_the_cap_fold_into_other(reader, monkeypatch):
    monkeypatch.setattr(tool_metrics, "_tool_names", set())
    monkeypatch.setattr(tool_metrics, "MAX_TOOL_NAMES", 2)
    for name in ("a", "b", "c", "d"):
        tool_metrics.record_tool_call(name, status="ok", side_effect="none")
    tools = {dict(k)[TOOL]: v for k, v in collect(reader)[tool_metrics.TOOL_CALLS].items()}
    assert tools == {"a": 1, "b": 1, tool_metrics.OTHER_TOOL: 2}


def test_unknown_violation_tags_count_as_other_rule(reader):
    tool_metrics.record_tool_call(
        "t", status="blocked", side_effect="write", violations=("secret_arg=assumed", "max_invented:x")
    )
    rules = {dict(k)[tool_metrics.BUDGET_RULE] for k in collect(reader)[tool_metrics.BUDGET_VIOLATIONS]}
    assert rules == {"other", "max_invented"}


def test_each_calls_duration_is_linked_to_its_own_tool_span():
    """The duration is recorded in the tool span's context, so an SDK with exemplars on (trace-based,
    the default) links the bucket to that span — for a call that returned and for one that raised."""
    from opentelemetry.sdk.metrics._internal.exemplar import TraceBasedExemplarFilter

    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader], exemplar_filter=TraceBasedExemplarFilter())
    tool_metrics.use_meter_provider(provider)
    try:
        traced = Traced()

        @op.tool(tracer_provider=traced.provider)
        def fine(x: str) -> str:
            return "ok"

        @op.tool(tracer_provider=traced.provider)
        def broken(x: str) -> str:
            raise KeyError("missing")

        with op.run(inputs={"x": "a"}):
            fine("a")
            with pytest.raises(KeyError):
                broken("a")
        durations = collect(reader)[tool_metrics.TOOL_DURATION]
    finally:
        tool_metrics.use_meter_provider(None)
        provider.shutdown()
    for name in ("fine", "broken"):
        span = traced.span(name)
        (point,) = [p for k, p in durations.items() if (TOOL, name) in k]
        linked = {(e.trace_id, e.span_id) for e in point.exemplars}
        assert linked == {(span.context.trace_id, span.context.span_id)}, name


def test_each_runs_agent_duration_is_linked_to_its_own_agent_span():
    """`gen_ai.invoke_agent.duration` is recorded in the run's `invoke_agent` span context (by then the
    span has ended and is no longer current), so an SDK with trace-based exemplars links each point to
    that span — for a run that returned and for one that raised."""
    from opentelemetry.sdk.metrics import TraceBasedExemplarFilter

    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader], exemplar_filter=TraceBasedExemplarFilter())
    tool_metrics.use_meter_provider(provider)
    try:
        traced = Traced()
        with op.run(agent_name="fine-agent", tracer_provider=traced.provider):
            pass
        with pytest.raises(KeyError), op.run(agent_name="broken-agent", tracer_provider=traced.provider):
            raise KeyError("order")
        runs = collect(reader)[tool_metrics.AGENT_DURATION]
    finally:
        tool_metrics.use_meter_provider(None)
        provider.shutdown()
    for name in ("fine-agent", "broken-agent"):
        [span] = [s for s in traced.spans if s.name == f"invoke_agent {name}"]
        assert span.context.trace_flags.sampled, name  # the trace-based filter keeps sampled spans only
        [point] = [p for k, p in runs.items() if (sc.GEN_AI_AGENT_NAME, name) in k]
        linked = {(e.trace_id, e.span_id) for e in point.exemplars}
        assert linked == {(span.context.trace_id, span.context.span_id)}, name
