"""The OpenAI Agents SDK instrumented by OpenInference (``OpenAIAgentsInstrumentor``), its own
``OpenAIResponsesModel`` talking to a scripted Responses API over an in-process ``httpx`` transport.
``stub_model`` also serves the logfire producer of the same SDK."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
from agents import Agent, OpenAIResponsesModel, Runner, function_tool
from official import file_provider
from openai import AsyncOpenAI
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
from refund import ANSWER, TOOLS, Call

USAGE = {
    "input_tokens": 120,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": 20,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 140,
}


def _output(turn: int, call: Call | None) -> dict:
    """A Responses API output item: the scripted function call, or the answer once none is left."""
    if call is None:
        text = {"type": "output_text", "text": ANSWER, "annotations": []}
        return {
            "type": "message",
            "id": f"msg_{turn}",
            "role": "assistant",
            "status": "completed",
            "content": [text],
        }
    name, arguments = call
    return {
        "type": "function_call",
        "id": f"fc_{turn}",
        "call_id": f"call_{turn}",
        "name": name,
        "arguments": json.dumps(arguments),
        "status": "completed",
    }


def stub_model(calls: list[Call]) -> OpenAIResponsesModel:
    """The SDK's own Responses model, its client answered in-process: one scripted call per request."""
    pending = list(calls)
    turn = 0

    def respond(request: httpx.Request) -> httpx.Response:
        nonlocal turn
        turn += 1
        item = _output(turn, pending.pop(0) if pending else None)
        body = {
            "id": f"resp_{turn}",
            "object": "response",
            "created_at": 0,
            "model": "stub-model",
            "status": "completed",
            "output": [item],
            "parallel_tool_calls": False,
            "tool_choice": "auto",
            "tools": [],
            "usage": USAGE,
        }
        return httpx.Response(200, json=body)

    client = AsyncOpenAI(
        api_key="stub",
        base_url="http://stub.invalid/v1",
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(respond)),
    )
    return OpenAIResponsesModel("stub-model", openai_client=client)


def produce(out: Path, release: str, scripts: list[list[Call]]) -> None:
    provider = file_provider(out, release)
    # Exclusive by default: the SDK's own exporter to OpenAI's tracing backend is replaced.
    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
    for calls in scripts:
        agent = Agent(name="refunds", model=stub_model(calls), tools=[function_tool(f) for f in TOOLS])
        assert Runner.run_sync(agent, "Refund my order, please.").final_output == ANSWER
    provider.shutdown()
