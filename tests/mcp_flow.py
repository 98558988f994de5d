"""The MCP flow of docs/mcp.md as a program, for tests that need the MCP SDK's own spans: a real
billing server over stdio, a wrapped ``ClientSession``, ``op.run`` around the agent's calls, the
global tracer provider (the SDK's spans use it) behind ``op.ProvenanceSpanProcessor`` and the
official OTLP JSON file exporter.

    python tests/mcp_flow.py OUT RELEASE {inside,before} {approved,blocked} RUNS

``inside``: the session is opened inside ``op.run`` (docs/mcp.md); ``before``: ``initialize()`` runs
before ``op.run``, as the docs once said, so the handshake is a trace of its own. ``approved`` lists
the invoices and refunds the first one listed; ``blocked`` refunds a guessed id, which is refused.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

sys.path.insert(0, str(Path(__file__).parent))

import otel_provenance as op
from interop import FileSpanExporter
from otel_provenance.instrument.mcp import provenance_session

SERVER = Path(__file__).resolve().parents[1] / "examples" / "mcp_billing" / "billing_server.py"


async def calls(session, scenario: str) -> None:
    listed = await session.call_tool("list_invoices", {"customer": "acme"})
    first = json.loads(listed.content[0].text)["invoices"][0]["id"]
    invoice = first if scenario == "approved" else "INV-9999"
    await session.call_tool("refund_invoice", {"invoice_id": invoice, "reason": "duplicate"})


async def one_run(params: StdioServerParameters, errlog, mode: str, scenario: str) -> None:
    if mode == "inside":
        with op.run(inputs={"customer": "acme"}):
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as raw,
            ):
                await raw.initialize()
                await calls(provenance_session(raw), scenario)
    else:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as raw:
            await raw.initialize()
            session = provenance_session(raw)
            with op.run(inputs={"customer": "acme"}):
                await calls(session, scenario)


def main(out: str, release: str, mode: str, scenario: str, runs: str) -> None:
    provider = TracerProvider(
        resource=Resource.create({"service.name": "billing", "service.version": release})
    )
    provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(FileSpanExporter(out))))
    trace.set_tracer_provider(provider)
    side = Path(out).parent / f".{Path(out).stem}"  # hidden: a directory of traces leaves it out
    record = side.with_suffix(".received")
    params = StdioServerParameters(
        command=sys.executable, args=[str(SERVER)], env={**os.environ, "BILLING_RECORD": str(record)}
    )
    with open(side.with_suffix(".stderr"), "w") as errlog:
        for _ in range(int(runs)):
            anyio.run(one_run, params, errlog, mode, scenario)
    provider.shutdown()


if __name__ == "__main__":
    main(*sys.argv[1:])
