"""Tool-call metrics for MCP calls through ``provenance_session``: a real server over stdio, the same
counters as ``@op.tool`` (a blocked call never reaches the server but is counted)."""

from __future__ import annotations

import pytest

pytest.importorskip("mcp")

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from test_mcp_session import Exported, run, structured

import otel_provenance as op
from otel_provenance.instrument.spans import metrics as tool_metrics


def test_mcp_calls_are_counted(tmp_path):
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    tool_metrics.use_meter_provider(meters)
    out = Exported()

    async def agent(session):
        with op.run(inputs={"customer": "acme"}):
            listed = await session.call_tool("list_invoices", {"customer": "acme"})
            first = structured(listed)["invoices"][0]["id"]
            await session.call_tool("refund_invoice", {"invoice_id": first, "reason": "dup"})
            await session.call_tool("refund_invoice", {"invoice_id": "INV-guessed", "reason": "dup"})

    try:
        run(tmp_path / "received.jsonl", agent, tracer_provider=out.provider)
        data = reader.get_metrics_data()
    finally:
        tool_metrics.use_meter_provider(None)
        meters.shutdown()
    calls = {
        tuple(sorted(p.attributes.items())): p.value
        for rm in data.resource_metrics
        for sm in rm.scope_metrics
        for m in sm.metrics
        if m.name == tool_metrics.TOOL_CALLS
        for p in m.data.data_points
    }
    assert calls == {
        (
            ("agent.side_effect", "read"),
            ("agent.tool.status", "ok"),
            ("gen_ai.tool.name", "list_invoices"),
        ): 1,
        (
            ("agent.side_effect", "write"),
            ("agent.tool.status", "ok"),
            ("gen_ai.tool.name", "refund_invoice"),
        ): 1,
        (
            ("agent.side_effect", "write"),
            ("agent.tool.status", "blocked"),
            ("gen_ai.tool.name", "refund_invoice"),
        ): 1,
    }
