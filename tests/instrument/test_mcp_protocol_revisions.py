"""``mcp.session.id`` only where MCP has sessions: never on a session that negotiated revision
2026-07-28 (which has none), even when ``provenance_session(session_id=...)`` gives one; sessions on
earlier revisions (the initialize handshake) keep it. A real ``MCPServer`` in-process, the SDK's
in-memory transport, and the SDK's own negotiation (``initialize`` or ``adopt`` of a discover result).
"""

from __future__ import annotations

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
except ImportError:  # mcp 1.x: no 2026-07-28 revision either
    pytest.skip("needs mcp 2.x (the 2026-07-28 revision)", allow_module_level=True)

READ_ONLY = types.ToolAnnotations.model_validate({"readOnlyHint": True})


def call_once(negotiate: str) -> tuple[str | None, dict]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter)))
    server = MCPServer("billing")
    server.add_tool(lambda customer: {"invoices": []}, name="list_invoices", annotations=READ_ONLY)

    async def flow() -> str | None:
        async with InMemoryTransport(server) as (read, write), ClientSession(read, write) as raw:
            if negotiate == "handshake":
                await raw.initialize()
            else:
                capabilities = types.ServerCapabilities(tools=types.ToolsCapability())
                raw.adopt(types.DiscoverResult(supported_versions=["2026-07-28"], capabilities=capabilities))
            session = op.provenance_session(raw, session_id="session-7f3a", tracer_provider=provider)
            with op.run(inputs={"customer": "acme"}):
                result = await session.call_tool("list_invoices", {"customer": "acme"})
            assert not result.is_error
            return raw.protocol_version

    version = anyio.run(flow)
    (span,) = [s for s in exporter.get_finished_spans() if s.name == "execute_tool list_invoices"]
    return version, dict(span.attributes)


def test_a_2026_07_28_session_carries_no_session_id():
    version, attributes = call_once("discover")
    assert version == "2026-07-28"
    assert attributes["mcp.protocol.version"] == "2026-07-28"
    assert "mcp.session.id" not in attributes
    assert attributes["agent.arg.customer.kind"] == "observed"


def test_a_handshake_session_keeps_its_session_id():
    version, attributes = call_once("handshake")
    assert version is not None and version < "2026-07-28"
    assert attributes["mcp.protocol.version"] == version
    assert attributes["mcp.session.id"] == "session-7f3a"
