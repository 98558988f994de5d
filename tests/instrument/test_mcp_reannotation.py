"""MCP annotations are re-read on every listing: a tool listed read-only, then re-annotated as a write,
is gated as a write from the next listing on (#36: a cached "read" spec let the write out ungated).

A real MCP server (the SDK's ``MCPServer``) runs in-process over the SDK's in-memory transport; the
test re-registers its tool with other annotations between two listings, as a server that changes its
tools does, and reads "reached the server" from what the tool's body recorded.
"""

from __future__ import annotations

import functools

import pytest

pytest.importorskip("mcp")

import anyio
from mcp import ClientSession, types
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_provenance as op

try:
    from mcp.client._memory import InMemoryTransport
    from mcp.server.mcpserver import MCPServer
except ImportError:  # mcp 1.x has neither
    pytest.skip("needs mcp 2.x's MCPServer and in-memory transport", allow_module_level=True)

READ_ONLY = types.ToolAnnotations.model_validate({"readOnlyHint": True})
DESTRUCTIVE = types.ToolAnnotations.model_validate({"readOnlyHint": False, "destructiveHint": True})


def billing_server(received: list) -> MCPServer:
    server = MCPServer("billing")

    def archive_invoice(invoice_id: str) -> str:
        """Archive an invoice."""
        received.append(invoice_id)
        return "archived"

    server.add_tool(archive_invoice, annotations=READ_ONLY)
    return server


def reannotate(server: MCPServer, received: list, annotations) -> None:
    server.remove_tool("archive_invoice")
    fresh = billing_server(received)._tool_manager.get_tool("archive_invoice")
    server.add_tool(fresh.fn, annotations=annotations)


def spans_of(exporter: InMemorySpanExporter) -> list:
    return [s for s in exporter.get_finished_spans() if s.name == "execute_tool archive_invoice"]


async def scenario(server: MCPServer, received: list, provider) -> list:
    results = []
    async with InMemoryTransport(server) as (read, write), ClientSession(read, write) as raw:
        await raw.initialize()
        session = op.provenance_session(raw, tracer_provider=provider)
        with op.run():
            await session.list_tools()  # read-only: a guessed id is only tagged
            results.append(await session.call_tool("archive_invoice", {"invoice_id": "INV-1"}))
            reannotate(server, received, DESTRUCTIVE)
            await session.list_tools()  # the new annotations: a write
            results.append(await session.call_tool("archive_invoice", {"invoice_id": "INV-2"}))
    return results


def test_a_tool_re_annotated_as_a_write_is_gated_as_a_write():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter)))
    received: list = []
    server = billing_server(received)
    first, second = anyio.run(functools.partial(scenario, server, received, provider))
    assert not (getattr(first, "is_error", None) or getattr(first, "isError", None))
    assert getattr(second, "is_error", None) or getattr(second, "isError", None)
    assert "invoice_id=assumed" in second.content[0].text
    assert received == ["INV-1"]  # the write never reached the server
    read, write = spans_of(exporter)
    assert (read.attributes["agent.side_effect"], read.attributes["agent.tool.status"]) == ("read", "ok")
    assert (write.attributes["agent.side_effect"], write.attributes["agent.tool.status"]) == (
        "write",
        "blocked",
    )


def test_a_re_annotation_back_to_read_only_is_read_too():
    """Re-reading works both ways: the spec follows the latest listing, not the first."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter)))
    received: list = []
    server = billing_server(received)
    reannotate(server, received, DESTRUCTIVE)

    async def flow():
        async with InMemoryTransport(server) as (read, write), ClientSession(read, write) as raw:
            await raw.initialize()
            session = op.provenance_session(raw, tracer_provider=provider)
            with op.run():
                await session.list_tools()
                blocked = await session.call_tool("archive_invoice", {"invoice_id": "INV-1"})
                reannotate(server, received, READ_ONLY)
                await session.list_tools()
                ran = await session.call_tool("archive_invoice", {"invoice_id": "INV-2"})
        return blocked, ran

    blocked, ran = anyio.run(flow)
    assert blocked.is_error and not ran.is_error
    assert received == ["INV-2"]
    assert [s.attributes["agent.side_effect"] for s in spans_of(exporter)] == ["write", "read"]
