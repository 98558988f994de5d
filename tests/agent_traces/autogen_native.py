"""Microsoft AutoGen AgentChat with its own OpenTelemetry spans, read from the global tracer provider;
``ReplayChatCompletionClient`` (autogen-ext) as the model, replaying one scripted tool call per model
request, then the answer.

Three shapes of one refund task, each a module of this folder (``autogen_team``, ``autogen_single``,
``autogen_team_iterations``):

- **the default team**: a ``RoundRobinGroupChat`` of two ``AssistantAgent``\\ s at their default
  ``max_tool_iterations=1``, sharing the model. Each agent turn makes one tool call, and the runtime
  processes every message in a trace of its own, joined to the one that sent it only by a span link:
  one run is a dozen traces, four to five of them holding agent work;
- **a single agent**: ``AssistantAgent.run`` with ``max_tool_iterations=10`` — one trace per run;
- **a team whose agent iterates**: a ``RoundRobinGroupChat`` of one agent with ``max_tool_iterations=10``.

The tools are the plain ``def`` functions of ``refund.py``: AutoGen runs them on the event loop's
thread pool, wrapped in its ``execute_tool`` span (``gen_ai.tool.call.id`` is the model's call id).
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.conditions import MaxMessageTermination, TextMentionTermination
from autogen_agentchat.teams import RoundRobinGroupChat
from autogen_core import EVENT_LOGGER_NAME, FunctionCall
from autogen_core.models import CreateResult, ModelFamily, ModelInfo, RequestUsage
from autogen_ext.models.replay import ReplayChatCompletionClient
from official import file_provider
from opentelemetry import trace
from refund import ANSWER, TOOLS, Call

STOP = "TERMINATE"
MODEL = ModelInfo(
    vision=False,
    function_calling=True,
    json_output=False,
    family=ModelFamily.UNKNOWN,
    structured_output=False,
)
USAGE = RequestUsage(prompt_tokens=120, completion_tokens=20)
TASK = "Refund my order, please."


def model(calls: list[Call]) -> ReplayChatCompletionClient:
    """One scripted tool call per model request, then the answer (which ends a team's chat)."""
    replies: list[CreateResult] = [
        CreateResult(
            finish_reason="function_calls",
            content=[FunctionCall(id=f"call_{i}", name=name, arguments=json.dumps(arguments))],
            usage=USAGE,
            cached=False,
        )
        for i, (name, arguments) in enumerate(calls)
    ]
    replies.append(CreateResult(finish_reason="stop", content=f"{ANSWER} {STOP}", usage=USAGE, cached=False))
    return ReplayChatCompletionClient(replies, model_info=MODEL)


def agent(name: str, client: ReplayChatCompletionClient, iterations: int = 1) -> AssistantAgent:
    return AssistantAgent(name, model_client=client, tools=list(TOOLS), max_tool_iterations=iterations)


def team(agents: list[AssistantAgent]) -> RoundRobinGroupChat:
    return RoundRobinGroupChat(
        agents, termination_condition=TextMentionTermination(STOP) | MaxMessageTermination(40)
    )


async def _run(shape: str, calls: list[Call]) -> str:
    client = model(calls)
    if shape == "team":
        result = await team([agent("refunds", client), agent("payments", client)]).run(task=TASK)
    elif shape == "single":
        result = await agent("refunds", client, iterations=10).run(task=TASK)
    else:
        result = await team([agent("refunds", client, iterations=10)]).run(task=TASK)
    return str(result.messages[-1].content)


def produce(out: Path, release: str, scripts: list[list[Call]], shape: str) -> None:
    provider = file_provider(out, release)
    trace.set_tracer_provider(provider)  # AutoGen traces through the global provider
    logging.getLogger(EVENT_LOGGER_NAME).setLevel(logging.ERROR)  # the replay client's token-count notes
    for calls in scripts:
        assert asyncio.run(_run(shape, calls)) == f"{ANSWER} {STOP}"
    provider.shutdown()
