"""A LangGraph agent from ``langchain.agents.create_agent`` instrumented by OpenInference
(``LangChainInstrumentor``); the agent and its scripted ``GenericFakeChatModel`` are the OpenLLMetry
producer's."""

from __future__ import annotations

from pathlib import Path

from langgraph_openllmetry import refund_agent
from official import file_provider
from openinference.instrumentation.langchain import LangChainInstrumentor
from refund import ANSWER, Call


def produce(out: Path, release: str, scripts: list[list[Call]]) -> None:
    provider = file_provider(out, release)
    LangChainInstrumentor().instrument(tracer_provider=provider)
    agent = refund_agent(scripts)  # built once, as an application would, and invoked for every run
    for _ in scripts:
        result = agent.invoke({"messages": [("user", "Refund my order, please.")]})
        assert result["messages"][-1].content == ANSWER
    provider.shutdown()
