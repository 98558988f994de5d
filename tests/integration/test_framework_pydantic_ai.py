"""PydanticAI: ``Tool`` / ``@agent.tool_plain`` / ``@agent.tool`` over ``@op.tool``, driven offline.

``FunctionModel`` scripts the tool calls; ``TestModel`` (which calls every tool with schema-made
arguments) shows a context tool is not blocked for its ``RunContext``. A blocked call raises
PydanticAI's ``ToolFailed`` (``blocked_error=ToolFailed``): the model gets a failed tool result and the
run goes on. With PydanticAI's own ``Instrumentation``, each call has exactly one ``execute_tool`` span —
PydanticAI's, carrying the provenance attributes — and no argument or result value is exported.
"""

from __future__ import annotations

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent, RunContext, Tool
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.models.instrumented import InstrumentationSettings
from pydantic_ai.models.test import TestModel

import otel_provenance as op
from framework_helpers import Exported, Workspace, assert_provenance


def scripted(*steps):
    """A FunctionModel body: the next scripted tool call per request, then the text "done"."""
    script = list(steps)
    seen: list = []

    def respond(messages, info):
        seen.extend(part for message in messages for part in message.parts)
        if script:
            name, arguments = script.pop(0)
            return ModelResponse(parts=[ToolCallPart(name, arguments, tool_call_id=f"call_{len(script)}")])
        return ModelResponse(parts=[TextPart("done")])

    return FunctionModel(respond), seen


def test_schema_is_the_same_with_and_without_op_tool():
    def lookup(order_id: str, limit: int = 10) -> dict:
        """Look an order up.

        Args:
            order_id: the order
            limit: how many lines
        """
        return {}

    async def alookup(order_id: str, limit: int = 10) -> dict:
        """Look an order up.

        Args:
            order_id: the order
            limit: how many lines
        """
        return {}

    for fn in (lookup, alookup):
        assert Tool(op.tool(side_effect="read")(fn)).tool_def == Tool(fn).tool_def


@pytest.mark.parametrize("instrumented", [False, True], ids=["plain", "pydantic-ai-spans"])
def test_blocked_call_is_a_failed_tool_result_and_the_run_goes_on(instrumented):
    out, ws = Exported(), Workspace()
    model, seen = scripted(
        ("list_files", {"root": "."}),
        ("delete_file", {"path": ws.files[0]}),  # as the model read it from the listing
        ("delete_file", {"path": ws.invented}),
    )
    capabilities = [Instrumentation(settings=InstrumentationSettings(tracer_provider=out.provider))]
    agent = Agent(model, capabilities=capabilities if instrumented else [])

    @agent.tool_plain
    @op.tool(side_effect="read", tracer_provider=out.provider)
    def list_files(root: str) -> dict:
        """List the files under root."""
        return ws.list_files(root)

    @agent.tool_plain
    @op.tool(side_effect="write", blocked_error=ToolFailed, tracer_provider=out.provider)
    async def delete_file(path: str) -> str:
        """Delete one file."""
        return ws.delete(path)

    with op.run(inputs={"root": "."}):
        result = agent.run_sync("clean up")

    assert result.output == "done"
    returns = [p for p in seen if isinstance(p, ToolReturnPart) and p.tool_name == "delete_file"]
    refusal = str(returns[-1].content)
    assert "path=assumed" in refusal and ws.invented not in refusal
    assert_provenance(out, ws)
    if instrumented:  # one execute_tool span per call: PydanticAI's, with the provenance on it
        tool_spans = [s for s in out.spans if s.attributes.get("gen_ai.operation.name") == "execute_tool"]
        assert len(tool_spans) == 3
        assert {s.instrumentation_scope.name for s in tool_spans} == {"pydantic-ai"}
        assert [s.attributes["gen_ai.tool.call.id"] for s in tool_spans] == ["call_2", "call_1", "call_0"]


def test_context_tool_is_not_blocked_for_its_run_context():
    out = Exported()
    agent = Agent(TestModel(call_tools=["archive"]), deps_type=str)
    archived = []

    @agent.tool
    @op.tool(side_effect="write", tracer_provider=out.provider)
    def archive(ctx: RunContext[str], folder: str) -> str:
        """Archive a folder."""
        archived.append(folder)
        return "archived"

    with op.run(inputs={"folder": "a"}):  # TestModel passes "a" for a string argument
        agent.run_sync("archive", deps="tenant-7")
    (span,) = out.tool_spans("archive")
    assert archived == ["a"] and span.attributes["agent.tool.status"] == "ok"
    assert not any(k.startswith("agent.arg.ctx") for k in span.attributes)
