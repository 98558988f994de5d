"""OpenAI Agents SDK: ``@function_tool`` over ``@op.tool``, driven offline by a scripted ``Model``.

The schema the SDK generates is the same with and without ``@op.tool``; sync and async tools run; a
blocked call reaches the model as the SDK's tool error (a ``function_call_output``) and the run goes on.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("agents")

import anyio
from agents import Agent, RunConfig, RunContextWrapper, Runner, function_tool
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

import otel_provenance as op
from framework_helpers import Exported, Workspace, assert_provenance


class ScriptedModel(Model):
    """A ``Model`` that answers with the next scripted tool call, then with the text "done"."""

    def __init__(self, script) -> None:
        self.script = list(script)
        self.inputs: list = []

    async def get_response(self, system_instructions, input, *args, **kwargs) -> ModelResponse:
        self.inputs.append(input)
        if self.script:
            name, arguments = self.script.pop(0)
            call_id = f"call_{len(self.inputs)}"
            item = ResponseFunctionToolCall(
                type="function_call", call_id=call_id, name=name, arguments=json.dumps(arguments), id=call_id
            )
        else:
            text = ResponseOutputText(type="output_text", text="done", annotations=[])
            item = ResponseOutputMessage(
                id="msg", type="message", role="assistant", status="completed", content=[text]
            )
        return ModelResponse(output=[item], usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError("the tests run the agent without streaming")

    def outputs(self) -> list[str]:
        last = self.inputs[-1] if self.inputs else []
        return [i["output"] for i in last if isinstance(i, dict) and i.get("type") == "function_call_output"]


def blocked_message(ctx, error: Exception) -> str:
    """A failure_error_function that tells the model why (names and kinds only), else the SDK default."""
    if isinstance(error, op.ProvenanceError):
        return str(error)
    return "An error occurred while running the tool. Please try again."


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
        plain, wrapped = function_tool(fn), function_tool(op.tool(side_effect="read")(fn))
        assert wrapped.params_json_schema == plain.params_json_schema
        assert (wrapped.name, wrapped.description) == (plain.name, plain.description)


def test_blocked_call_is_a_tool_error_and_the_run_goes_on():
    out, ws = Exported(), Workspace()

    @function_tool
    @op.tool(side_effect="read", tracer_provider=out.provider)
    def list_files(root: str) -> dict:
        """List the files under root."""
        return ws.list_files(root)

    @function_tool(failure_error_function=blocked_message)
    @op.tool(side_effect="write", tracer_provider=out.provider)
    async def delete_file(path: str) -> str:
        """Delete one file."""
        return ws.delete(path)

    model = ScriptedModel(
        [
            ("list_files", {"root": "."}),
            ("delete_file", {"path": ws.files[0]}),  # as the model read it from the listing
            ("delete_file", {"path": ws.invented}),
        ]
    )
    agent = Agent(name="cleaner", model=model, tools=[list_files, delete_file])

    async def main():
        with op.run(inputs={"root": "."}):
            return await Runner.run(agent, "clean up", run_config=RunConfig(tracing_disabled=True))

    result = anyio.run(main)
    assert result.final_output == "done"
    refusal = model.outputs()[-1]
    assert "path=assumed" in refusal and ws.invented not in refusal
    assert_provenance(out, ws)


def test_context_tool_is_not_blocked_for_its_run_context():
    out = Exported()
    archived = []

    @function_tool
    @op.tool(side_effect="write", tracer_provider=out.provider)
    def archive(ctx: RunContextWrapper, folder: str) -> str:
        """Archive a folder."""
        archived.append(folder)
        return "archived"

    agent = Agent(name="archiver", model=ScriptedModel([("archive", {"folder": "2026"})]), tools=[archive])

    async def main():
        with op.run(inputs={"folder": "2026"}):
            return await Runner.run(agent, "archive", run_config=RunConfig(tracing_disabled=True))

    assert anyio.run(main).final_output == "done"
    (span,) = out.tool_spans("archive")
    assert archived == ["2026"] and span.attributes["agent.tool.status"] == "ok"
    assert not any(k.startswith("agent.arg.ctx") for k in span.attributes)
