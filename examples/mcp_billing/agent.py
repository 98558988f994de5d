"""MCP with provenance: a scripted agent calls a real MCP server (a subprocess over stdio).

    pip install "otel-provenance[mcp]"
    python examples/mcp_billing/agent.py [OUTPUT.jsonl]

The server, ``billing_server.py`` beside this file, declares ``list_invoices`` read-only and
``refund_invoice`` destructive by MCP tool annotations. The wrapped session reads those annotations
once: ``refund_invoice`` is a write tool, so every argument must come from somewhere. The agent first
refunds an invoice id that ``list_invoices`` returned (observed: the call runs), then an id nothing
returned (assumed: refused before the request is sent; the agent gets an MCP tool error and goes on).
No network, no model: the tool sequence is scripted, as a model's tool calls would arrive.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import otel_provenance as op
from otel_provenance import JsonLinesSpanExporter, provenance_session

SERVER = Path(__file__).resolve().with_name("billing_server.py")


async def agent(session) -> list[str]:
    """The scripted tool calls; returns what the agent saw for each."""
    seen = []
    listed = await session.call_tool("list_invoices", {"customer": "acme"})
    invoices = json.loads(listed.content[0].text)["invoices"]  # the text block holds the JSON
    seen.append(f"list_invoices -> {len(invoices)} invoice(s)")
    first = invoices[0]["id"]
    refund = await session.call_tool("refund_invoice", {"invoice_id": first, "reason": "duplicate"})
    seen.append(f"refund_invoice(<invoices.0.id>) -> {refund.content[0].text}")
    guess = await session.call_tool("refund_invoice", {"invoice_id": "INV-9999", "reason": "duplicate"})
    seen.append(f"refund_invoice(<a guessed id>) -> {guess.content[0].text}")
    return seen


async def main(output: Path, record: Path) -> list[str]:
    params = StdioServerParameters(
        command=sys.executable, args=[str(SERVER)], env={**os.environ, "BILLING_RECORD": str(record)}
    )
    # The run first (it opens the "invoke_agent billing" root span), the session inside it: the MCP
    # SDK's handshake spans then belong to the run's trace instead of a trace of their own.
    with op.run(inputs={"customer": "acme"}, agent_name="billing"):
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await agent(provenance_session(session))  # the one call that adds provenance


if __name__ == "__main__":
    out_dir = Path(tempfile.mkdtemp(prefix="otel-provenance-mcp-"))
    output = Path(sys.argv[1]) if len(sys.argv) > 1 else out_dir / "spans.jsonl"
    record = out_dir / "server-received.jsonl"
    provider = TracerProvider(resource=Resource.create({"service.name": "billing-agent"}))
    # The safe set-up: the exporting processor goes *inside* the stripping processor.
    provider.add_span_processor(
        op.ProvenanceSpanProcessor(SimpleSpanProcessor(JsonLinesSpanExporter(output)))
    )
    trace.set_tracer_provider(provider)
    for line in anyio.run(main, output, record):
        print(line)
    provider.shutdown()
    received = [json.loads(line)["tool"] for line in record.read_text().splitlines()]
    print(f"the server received: {', '.join(received)}")
    print(f"spans written to {output} (OTLP JSON Lines)")
    sys.exit(0 if received == ["list_invoices", "refund_invoice"] else 1)
