"""A real MCP server over stdio for the MCP integration tests and example: one read-only tool, two writes.

Every ``tools/call`` the server receives is appended, as one JSON line, to the file named by the
``BILLING_RECORD`` environment variable, so a test can prove a blocked call never reached it.
"""

from __future__ import annotations

import json
import os

from mcp import types

try:  # mcp 2.x renamed FastMCP to MCPServer
    from mcp.server.mcpserver import MCPServer
except ImportError:  # pragma: no cover - mcp 1.x
    from mcp.server.fastmcp import FastMCP as MCPServer

server = MCPServer("billing")
INVOICES = {"acme": [{"id": "INV-4521", "amount": 120}, {"id": "INV-4522", "amount": 75}]}


def record(tool: str, arguments: dict) -> None:
    path = os.environ.get("BILLING_RECORD")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"tool": tool, "arguments": arguments}) + "\n")


READ_ONLY = types.ToolAnnotations.model_validate({"readOnlyHint": True})
DESTRUCTIVE = types.ToolAnnotations.model_validate({"readOnlyHint": False, "destructiveHint": True})


@server.tool(annotations=READ_ONLY)
def list_invoices(customer: str) -> dict:
    """The customer's open invoices."""
    record("list_invoices", {"customer": customer})
    return {"customer": customer, "invoices": INVOICES.get(customer, [])}


@server.tool(annotations=DESTRUCTIVE)
def refund_invoice(invoice_id: str, reason: str) -> dict:
    """Refund an invoice in full."""
    record("refund_invoice", {"invoice_id": invoice_id, "reason": reason})
    return {"refunded": invoice_id, "status": "done"}


@server.tool()
def tag_invoice(invoice_id: str, label: str) -> str:
    """Label an invoice (no annotations: counts as a write)."""
    record("tag_invoice", {"invoice_id": invoice_id, "label": label})
    return "tagged"


if __name__ == "__main__":
    server.run()
