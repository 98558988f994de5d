"""PydanticAI: ``@agent.tool_plain`` over ``@op.tool``, scripted with PydanticAI's ``FunctionModel``.

    pip install otel-provenance pydantic-ai-slim
    python examples/frameworks/pydantic_ai_tools.py [OUTPUT.jsonl]

The scripted model lists the files, deletes one it saw (observed: runs), then one nothing returned
(assumed: blocked before the body runs). ``blocked_error=ToolFailed`` makes the block PydanticAI's
failed tool result, which the model reads. PydanticAI's own ``Instrumentation`` is on: each tool call
still has one ``execute_tool`` span — PydanticAI's — carrying the provenance attributes.
"""

from __future__ import annotations

import sys

from _telemetry import FILES, set_up
from pydantic_ai import Agent
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import FunctionModel

import otel_provenance as op

deleted: list[str] = []
SCRIPT = [
    ("list_files", {"root": "."}),
    ("delete_file", {"path": FILES[0]}),  # a path the listing returned: observed
    ("delete_file", {"path": "prod.env"}),  # nothing returned it: assumed, blocked
]


def scripted_model(messages, info) -> ModelResponse:
    for part in messages[-1].parts:
        if isinstance(part, ToolReturnPart):
            print(f"{part.tool_name} -> {part.content}")
    if SCRIPT:
        name, arguments = SCRIPT.pop(0)
        return ModelResponse(parts=[ToolCallPart(name, arguments, tool_call_id=f"call_{len(SCRIPT)}")])
    return ModelResponse(parts=[TextPart("done")])


agent = Agent(FunctionModel(scripted_model), capabilities=[Instrumentation()])  # global tracer provider


@agent.tool_plain
@op.tool(side_effect="read")
def list_files(root: str) -> dict:
    """List the files under root."""
    return {"root": root, "files": FILES}


@agent.tool_plain
@op.tool(side_effect="write", blocked_error=ToolFailed)
async def delete_file(path: str) -> str:
    """Delete one file."""
    deleted.append(path)
    return f"deleted {path}"


if __name__ == "__main__":
    provider, output = set_up("pydantic-ai-example")
    with op.run(inputs={"root": "."}):
        agent.run_sync("clean up")
    provider.shutdown()
    print(f"delete_file's body ran for: {deleted}")
    print(f"spans written to {output} (OTLP JSON Lines)")
    sys.exit(0 if deleted == [FILES[0]] else 1)
