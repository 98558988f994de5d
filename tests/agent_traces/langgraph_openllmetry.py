"""A LangGraph agent from ``langchain.agents.create_agent`` instrumented by OpenLLMetry
(``LangchainInstrumentor``), LangChain's ``GenericFakeChatModel`` with scripted tool calls as the model."""

from __future__ import annotations

from pathlib import Path

import langchain.agents
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import StructuredTool
from official import file_provider
from opentelemetry.instrumentation.langchain import LangchainInstrumentor
from refund import ANSWER, TOOLS, Call


class ScriptedChatModel(GenericFakeChatModel):
    """LangChain's fake chat model; the agent binds the tools to it, which a script doesn't need."""

    def bind_tools(self, tools, **kwargs):
        return self


def scripted_model(scripts: list[list[Call]]) -> ScriptedChatModel:
    """One scripted tool call per model turn, then the answer, run after run."""
    turns = [
        message
        for calls in scripts
        for message in [
            *(AIMessage("", tool_calls=[{"name": name, "args": arguments, "id": f"call_{i}"}])
              for i, (name, arguments) in enumerate(calls, start=1)),
            AIMessage(ANSWER),
        ]
    ]  # fmt: skip
    return ScriptedChatModel(messages=iter(turns))


def refund_agent(scripts: list[list[Call]]):
    """Built once, as an application would: one agent invoked for every run."""
    tools = [StructuredTool.from_function(f) for f in TOOLS]
    return langchain.agents.create_agent(scripted_model(scripts), tools=tools, name="refunds")


def produce(out: Path, release: str, scripts: list[list[Call]]) -> None:
    provider = file_provider(out, release)
    LangchainInstrumentor().instrument(tracer_provider=provider)
    # Built after instrumenting (``create_agent`` looked up on its module, which the instrumentor
    # patches): building writes a trace of its own, one ``create_agent refunds`` span.
    agent = refund_agent(scripts)
    for _ in scripts:
        result = agent.invoke({"messages": [("user", "Refund my order, please.")]})
        assert result["messages"][-1].content == ANSWER
    provider.shutdown()
