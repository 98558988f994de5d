"""PydanticAI with its own instrumentation (``Agent.instrument_all``), a ``FunctionModel`` as the model."""

from __future__ import annotations

from pathlib import Path

from official import file_provider
from pydantic_ai import Agent, Tool
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.models.instrumented import InstrumentationSettings
from refund import ANSWER, TOOLS, Call


def _model(calls: list[Call]) -> FunctionModel:
    """One scripted tool call per model request, then the answer."""
    pending = list(calls)

    def respond(messages, info):
        if pending:
            name, arguments = pending.pop(0)
            return ModelResponse(parts=[ToolCallPart(name, arguments, tool_call_id=f"call_{len(pending)}")])
        return ModelResponse(parts=[TextPart(ANSWER)])

    return FunctionModel(respond)


def produce(out: Path, release: str, scripts: list[list[Call]]) -> None:
    provider = file_provider(out, release)
    Agent.instrument_all(InstrumentationSettings(tracer_provider=provider))
    for calls in scripts:
        agent = Agent(_model(calls), name="refunds", tools=[Tool(f) for f in TOOLS])
        assert agent.run_sync("Refund my order, please.").output == ANSWER
    provider.shutdown()
