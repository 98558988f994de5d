"""LangChain: ``@tool`` over ``@op.tool`` in a ``create_agent`` loop with LangChain's fake chat model.

    pip install otel-provenance langchain
    python examples/frameworks/langchain_tools.py [OUTPUT.jsonl]

The scripted model lists the files, deletes one it saw (observed: runs), then one nothing returned
(assumed: blocked before the body runs). ``blocked_error=ToolException`` plus ``handle_tool_error``
turn the block into LangChain's tool error: a ``ToolMessage`` with ``status="error"`` the model reads.
"""

from __future__ import annotations

import sys

from _telemetry import FILES, set_up
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import ToolException, tool

import otel_provenance as op

deleted: list[str] = []


@tool
@op.tool(side_effect="read")
def list_files(root: str) -> dict:
    """List the files under root."""
    return {"root": root, "files": FILES}


@tool
@op.tool(side_effect="write", blocked_error=ToolException)
def delete_file(path: str) -> str:
    """Delete one file."""
    deleted.append(path)
    return f"deleted {path}"


delete_file.handle_tool_error = True  # a ToolException becomes an error ToolMessage, not a crash


class ScriptedChatModel(GenericFakeChatModel):
    """LangChain's fake chat model; the scripted answers need no tool binding."""

    def bind_tools(self, tools, **kwargs):
        return self


def main() -> None:
    script = [
        ("list_files", {"root": "."}),
        ("delete_file", {"path": FILES[0]}),  # a path the listing returned: observed
        ("delete_file", {"path": "prod.env"}),  # nothing returned it: assumed, blocked
    ]
    answers = [
        AIMessage("", tool_calls=[{"name": n, "args": a, "id": f"call_{i}"}])
        for i, (n, a) in enumerate(script)
    ]
    agent = create_agent(
        ScriptedChatModel(messages=iter([*answers, AIMessage("done")])), tools=[list_files, delete_file]
    )
    with op.run(inputs={"root": "."}):
        state = agent.invoke({"messages": [("user", "clean up")]})
    for message in state["messages"]:
        if isinstance(message, ToolMessage):
            print(f"{message.name} -> [{message.status}] {message.content}")


if __name__ == "__main__":
    provider, output = set_up("langchain-example")
    main()
    provider.shutdown()
    print(f"delete_file's body ran for: {deleted}")
    print(f"spans written to {output} (OTLP JSON Lines)")
    sys.exit(0 if deleted == [FILES[0]] else 1)
