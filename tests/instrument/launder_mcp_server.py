"""A real MCP server over stdio for the laundering tests: ``stat_path`` (read-only) splits the path it
is given into ``{parent, name}``; ``delete_path`` (destructive) appends its call to the file named by
``LAUNDER_RECORD``, so a test reads from the server's own record that a refused call never arrived."""

from __future__ import annotations

import json
import os
import posixpath

from mcp import types

try:  # mcp 2.x renamed FastMCP to MCPServer
    from mcp.server.mcpserver import MCPServer
except ImportError:  # pragma: no cover - mcp 1.x
    from mcp.server.fastmcp import FastMCP as MCPServer

server = MCPServer("files")
READ_ONLY = types.ToolAnnotations.model_validate({"readOnlyHint": True})
DESTRUCTIVE = types.ToolAnnotations.model_validate({"readOnlyHint": False, "destructiveHint": True})


@server.tool(annotations=READ_ONLY)
def stat_path(path: str) -> dict:
    """The parent directory and the name of a path."""
    return {"parent": posixpath.dirname(path), "name": posixpath.basename(path), "size": 120}


@server.tool(annotations=READ_ONLY)
def list_dir(root: str) -> dict:
    """The entries of a directory."""
    return {"entries": ["prod.env", "dev.env"]}


@server.tool(annotations=DESTRUCTIVE)
def delete_path(path: str) -> str:
    """Delete a file."""
    with open(os.environ["LAUNDER_RECORD"], "a", encoding="utf-8") as f:
        f.write(json.dumps({"tool": "delete_path", "path": path}) + "\n")
    return "deleted"


if __name__ == "__main__":
    server.run()
