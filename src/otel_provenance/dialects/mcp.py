"""MCP: the MCP conventions' ``mcp.*`` keys (``@op.tool``'s MCP client spans carry them too) and
OpenLLMetry's MCP instrumentation, which records a request's arguments and a response's value."""

from __future__ import annotations

from .dialect import Dialect

DIALECT = Dialect(
    name="mcp",
    content_keys=frozenset({"mcp.request.argument", "mcp.response.value"}),
    key_prefixes=("mcp.",),
)
