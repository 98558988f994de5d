"""MCP: a server that pages its ``tools/list`` — every page is read before a tool's side effect is decided.

A real low-level MCP server (the SDK's ``Server`` with its own ``tools/list`` handler) runs in-process
over the SDK's in-memory transport and lists one tool per page, the next page named by the result's
cursor (``next_cursor`` on mcp 2.x results). A tool annotated read-only on the second page is a read:
an argument the model made up is tagged, not blocked. Were the listing to stop at the first page, the
tool would count as unlisted — a write — and the call would never reach the server.
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
    from mcp.server import Server
except ImportError:  # mcp 1.x: no in-memory transport of this shape
    pytest.skip("needs mcp 2.x's low-level Server and in-memory transport", allow_module_level=True)

READ_ONLY = types.ToolAnnotations.model_validate({"readOnlyHint": True})
SCHEMA = {"type": "object", "properties": {"invoice_id": {"type": "string"}}, "required": ["invoice_id"]}
PAGES = {
    None: (["list_invoices"], "page-2"),
    "page-2": (["archive_invoice"], "page-3"),
    "page-3": (["export_invoice"], None),
}


def paged_server(received: list, cursors: list, pages: dict = PAGES) -> Server:
    async def list_tools(ctx, params):
        cursor = params.cursor if params is not None else None
        cursors.append(cursor)
        names, following = pages[cursor]
        tools = [
            types.Tool(name=name, description=name, input_schema=SCHEMA, annotations=READ_ONLY)
            for name in names
        ]
        return types.ListToolsResult(tools=tools, next_cursor=following)

    async def call_tool(ctx, params):
        received.append((params.name, dict(params.arguments or {})))
        return types.CallToolResult(content=[types.TextContent(type="text", text="done")])

    return Server("paged-billing", on_list_tools=list_tools, on_call_tool=call_tool)


async def scenario(server: Server, provider) -> list:
    results = []
    async with InMemoryTransport(server) as (read, write), ClientSession(read, write) as raw:
        await raw.initialize()
        session = op.provenance_session(raw, tracer_provider=provider)
        with op.run():
            # no listing asked for: the session lists every page itself before deciding
            results.append(await session.call_tool("archive_invoice", {"invoice_id": "INV-9"}))
            results.append(await session.call_tool("export_invoice", {"invoice_id": "INV-8"}))
    return results


def test_a_read_only_tool_on_a_later_page_is_a_read():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter)))
    received: list = []
    cursors: list = []
    results = anyio.run(functools.partial(scenario, paged_server(received, cursors), provider))
    assert not any(getattr(r, "is_error", None) or getattr(r, "isError", None) for r in results)
    assert received == [
        ("archive_invoice", {"invoice_id": "INV-9"}),
        ("export_invoice", {"invoice_id": "INV-8"}),
    ]
    assert cursors == [None, "page-2", "page-3"]  # every page, once
    spans = {s.name: s for s in exporter.get_finished_spans() if s.name.startswith("execute_tool ")}
    for name in ("archive_invoice", "export_invoice"):
        attributes = spans[f"execute_tool {name}"].attributes
        assert (attributes["agent.side_effect"], attributes["agent.tool.status"]) == ("read", "ok")
        assert attributes["agent.arg.invoice_id.kind"] == "assumed"  # tagged, not blocked


def test_a_cursor_that_comes_back_ends_the_listing():
    """A buggy paginator naming a page it already gave: each page is read once, then the listing
    stops (no endless loop); the tools it did list keep their annotations."""
    looping = {None: (["list_invoices"], "page-2"), "page-2": (["archive_invoice"], "page-2")}
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter)))
    received: list = []
    cursors: list = []
    server = paged_server(received, cursors, looping)

    async def flow():
        with anyio.fail_after(30):  # a listing that looped would never return
            async with InMemoryTransport(server) as (read, write), ClientSession(read, write) as raw:
                await raw.initialize()
                session = op.provenance_session(raw, tracer_provider=provider)
                with op.run():
                    return await session.call_tool("archive_invoice", {"invoice_id": "INV-7"})

    result = anyio.run(flow)
    assert not (getattr(result, "is_error", None) or getattr(result, "isError", None))
    assert cursors == [None, "page-2"]
    assert received == [("archive_invoice", {"invoice_id": "INV-7"})]
