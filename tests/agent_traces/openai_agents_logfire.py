"""The OpenAI Agents SDK instrumented by logfire (``logfire.instrument_openai_agents``), sending nothing to
Logfire: its spans reach the file through the official exporter, added as an extra span processor."""

from __future__ import annotations

from pathlib import Path

import logfire
from agents import Agent, Runner, function_tool, set_trace_processors
from official import SERVICE, file_processor
from openai_agents_openinference import stub_model
from refund import ANSWER, TOOLS, Call


def produce(out: Path, release: str, scripts: list[list[Call]]) -> None:
    logfire.configure(
        send_to_logfire=False,
        console=False,
        metrics=False,
        service_name=SERVICE,
        service_version=release,
        additional_span_processors=[file_processor(out)],
    )
    # logfire wraps the SDK's trace provider and keeps its processors: drop the one exporting to OpenAI.
    set_trace_processors([])
    logfire.instrument_openai_agents()
    for calls in scripts:
        agent = Agent(name="refunds", model=stub_model(calls), tools=[function_tool(f) for f in TOOLS])
        assert Runner.run_sync(agent, "Refund my order, please.").final_output == ANSWER
    logfire.shutdown()
