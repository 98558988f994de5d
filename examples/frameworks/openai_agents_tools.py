"""OpenAI Agents SDK: ``@function_tool`` over ``@op.tool``, with a scripted ``Model`` (no network, no key).

    pip install otel-provenance openai-agents
    python examples/frameworks/openai_agents_tools.py [OUTPUT.jsonl]

The scripted model lists the files, deletes one it saw (observed: runs), then one nothing returned
(assumed: blocked before the body runs). The SDK turns the block into a tool error the model reads —
``failure_error_function`` says why, naming the argument and its kind, never its value.
"""

from __future__ import annotations

import json
import sys

import anyio
from _telemetry import FILES, set_up
from agents import Agent, RunConfig, Runner, function_tool
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

import otel_provenance as op

deleted: list[str] = []


@function_tool
@op.tool(side_effect="read")
def list_files(root: str) -> dict:
    """List the files under root."""
    return {"root": root, "files": FILES}


def explain_block(ctx, error: Exception) -> str:
    if isinstance(error, op.ProvenanceError):
        return str(error)  # tool, rule, argument names and kinds — never values
    return "An error occurred while running the tool. Please try again."


@function_tool(failure_error_function=explain_block)
@op.tool(side_effect="write")
async def delete_file(path: str) -> str:
    """Delete one file."""
    deleted.append(path)
    return f"deleted {path}"


class ScriptedModel(Model):
    """Answers each turn with the next scripted tool call, then with a final message."""

    def __init__(self, script) -> None:
        self.script = list(script)

    async def get_response(self, system_instructions, input, *args, **kwargs) -> ModelResponse:
        items = input if isinstance(input, list) else []
        outputs = [i["output"] for i in items if isinstance(i, dict) and "output" in i]
        if outputs:
            print(f"  tool result: {outputs[-1]}")
        if not self.script:
            text = ResponseOutputText(type="output_text", text="done", annotations=[])
            message = ResponseOutputMessage(
                id="msg", type="message", role="assistant", status="completed", content=[text]
            )
            return ModelResponse(output=[message], usage=Usage(), response_id=None)
        name, arguments = self.script.pop(0)
        print(f"model calls {name}({arguments})")
        call_id = f"call_{len(self.script)}"
        call = ResponseFunctionToolCall(
            type="function_call", call_id=call_id, name=name, arguments=json.dumps(arguments), id=call_id
        )
        return ModelResponse(output=[call], usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError


async def main() -> None:
    script = [
        ("list_files", {"root": "."}),
        ("delete_file", {"path": FILES[0]}),  # a path the listing returned: observed
        ("delete_file", {"path": "prod.env"}),  # nothing returned it: assumed, blocked
    ]
    model = ScriptedModel(script)
    agent = Agent(name="cleaner", model=model, tools=[list_files, delete_file])
    with op.run(inputs={"root": "."}):
        # The SDK's own tracing is separate from OpenTelemetry; it is off here because it would upload.
        await Runner.run(agent, "clean up", run_config=RunConfig(tracing_disabled=True))


if __name__ == "__main__":
    provider, output = set_up("openai-agents-example")
    anyio.run(main)
    provider.shutdown()
    print(f"delete_file's body ran for: {deleted}")
    print(f"spans written to {output} (OTLP JSON Lines)")
    sys.exit(0 if deleted == [FILES[0]] else 1)
