"""Microsoft Agent Framework with its own OpenTelemetry instrumentation, read from the global tracer
provider; a scripted chat client whose function calls the framework's function invocation layer runs."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, ClassVar

from agent_framework import (
    Agent,
    BaseChatClient,
    ChatMiddlewareLayer,
    ChatResponse,
    Content,
    FunctionInvocationLayer,
    Message,
)
from agent_framework.observability import ChatTelemetryLayer, enable_instrumentation
from official import file_provider
from opentelemetry import trace
from refund import ANSWER, TOOLS, Call

USAGE = {"input_token_count": 120, "output_token_count": 20, "total_token_count": 140}


class ScriptedChatClient(
    FunctionInvocationLayer[Any], ChatMiddlewareLayer[Any], ChatTelemetryLayer[Any], BaseChatClient[Any]
):
    """The layers of the framework's own clients over a raw client that makes one scripted function call
    per request, then answers."""

    OTEL_PROVIDER_NAME: ClassVar[str] = "stub"

    def __init__(self, calls: list[Call]) -> None:
        super().__init__()
        self.model = "stub-model"
        self.pending = list(calls)
        self.turn = 0

    async def _respond(self) -> ChatResponse:
        self.turn += 1
        if self.pending:
            name, arguments = self.pending.pop(0)
            content = Content.from_function_call(f"call_{self.turn}", name, arguments=json.dumps(arguments))
            finish = "tool_calls"
        else:
            content, finish = Content.from_text(ANSWER), "stop"
        return ChatResponse(messages=[Message(role="assistant", contents=[content])], model=self.model,
                            response_id=f"resp_{self.turn}", finish_reason=finish,
                            usage_details=USAGE)  # fmt: skip

    def _inner_get_response(self, *, messages, stream, options, **kwargs):
        assert not stream
        return self._respond()


def produce(out: Path, release: str, scripts: list[list[Call]]) -> None:
    provider = file_provider(out, release)
    # The framework traces through the global tracer provider; content capture is opt-in.
    trace.set_tracer_provider(provider)
    enable_instrumentation(enable_sensitive_data=True)
    for calls in scripts:
        agent = Agent(client=ScriptedChatClient(calls), name="refunds", tools=list(TOOLS))
        assert asyncio.run(agent.run("Refund my order, please.")).text == ANSWER
    provider.shutdown()
