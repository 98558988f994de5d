"""LangChain: ``@tool`` / ``StructuredTool`` over ``@op.tool``, driven offline by LangChain's fake chat model.

The agent loop is LangChain's own (``langchain.agents.create_agent``, a LangGraph ``ToolNode``); the model
is ``GenericFakeChatModel`` with scripted tool calls. A blocked call raises LangChain's
``ToolException`` (``blocked_error=ToolException``) and, with ``handle_tool_error=True``, reaches the
model as a ``ToolMessage`` with ``status="error"``.
"""

from __future__ import annotations

import pytest

pytest.importorskip("langchain_core")

import anyio
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import StructuredTool, ToolException, tool
from langchain_core.utils.function_calling import convert_to_openai_tool

import otel_provenance as op
from framework_helpers import Exported, Workspace, assert_provenance


class ScriptedChatModel(GenericFakeChatModel):
    """LangChain's fake chat model; agents bind tools to the model, which a script doesn't need."""

    def bind_tools(self, tools, **kwargs):
        return self


def calls(*steps) -> list[AIMessage]:
    script = [
        AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call_{i}"}])
        for i, (name, args) in enumerate(steps)
    ]
    return [*script, AIMessage("done")]


def test_schema_is_the_same_with_and_without_op_tool():
    def lookup(order_id: str, limit: int = 10) -> dict:
        """Look an order up."""
        return {}

    async def alookup(order_id: str, limit: int = 10) -> dict:
        """Look an order up."""
        return {}

    guarded = op.tool(side_effect="read")
    assert convert_to_openai_tool(tool(guarded(lookup))) == convert_to_openai_tool(tool(lookup))
    assert convert_to_openai_tool(tool(guarded(alookup))) == convert_to_openai_tool(tool(alookup))
    plain = StructuredTool.from_function(coroutine=alookup)
    wrapped = StructuredTool.from_function(coroutine=guarded(alookup))
    assert convert_to_openai_tool(wrapped) == convert_to_openai_tool(plain)


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_blocked_call_is_a_tool_message_error_and_the_agent_goes_on(flavour):
    agents = pytest.importorskip("langchain.agents")
    out, ws = Exported(), Workspace()

    @tool
    @op.tool(side_effect="read", tracer_provider=out.provider)
    def list_files(root: str) -> dict:
        """List the files under root."""
        return ws.list_files(root)

    guard = op.tool(side_effect="write", blocked_error=ToolException, tracer_provider=out.provider)
    if flavour == "sync":

        @tool
        @guard
        def delete_file(path: str) -> str:
            """Delete one file."""
            return ws.delete(path)

        delete_file.handle_tool_error = True  # the @tool decorator takes no such option
    else:

        async def delete_file(path: str) -> str:
            """Delete one file."""
            return ws.delete(path)

        delete_file = StructuredTool.from_function(coroutine=guard(delete_file), handle_tool_error=True)

    model = ScriptedChatModel(
        messages=iter(
            calls(
                ("list_files", {"root": "."}),
                ("delete_file", {"path": ws.files[0]}),  # as the model read it from the listing
                ("delete_file", {"path": ws.invented}),
            )
        )
    )
    agent = agents.create_agent(model, tools=[list_files, delete_file])

    async def main():
        with op.run(inputs={"root": "."}):
            return await agent.ainvoke({"messages": [("user", "clean up")]})

    messages = anyio.run(main)["messages"]
    assert messages[-1].content == "done"
    results = [m for m in messages if isinstance(m, ToolMessage)]
    assert [m.status for m in results] == ["success", "success", "error"]
    assert "path=assumed" in results[-1].content and ws.invented not in results[-1].content
    assert_provenance(out, ws)


def test_without_a_tool_error_type_the_block_is_an_exception_the_caller_sees():
    @tool
    @op.tool(side_effect="write")
    def delete_file(path: str) -> str:
        """Delete one file."""
        return "deleted"

    with op.run(), pytest.raises(op.ProvenanceError):
        delete_file.invoke({"path": "prod.env"})
