"""smolagents' ``ToolCallingAgent`` instrumented by OpenInference (``SmolagentsInstrumentor``), a scripted
``Model`` subclass as the model; the run ends with smolagents' own ``final_answer`` tool call."""

from __future__ import annotations

import json
from pathlib import Path

import refund
import smolagents
from official import file_provider
from openinference.instrumentation.smolagents import SmolagentsInstrumentor
from refund import ANSWER, Call
from smolagents import ChatMessage, Model, ToolCallingAgent, tool
from smolagents.models import ChatMessageToolCall, ChatMessageToolCallFunction, MessageRole
from smolagents.monitoring import TokenUsage


class ScriptedModel(Model):
    """One scripted tool call per model turn, then the ``final_answer`` call with the answer; arguments
    come as a JSON string, as from a chat completions API."""

    def __init__(self, calls: list[Call]) -> None:
        super().__init__(model_id="stub-model")
        self.pending = [*calls, ("final_answer", {"answer": ANSWER})]
        self.turn = 0

    def generate(self, messages, stop_sequences=None, response_format=None, tools_to_call_from=None,
                 **kwargs):  # fmt: skip
        self.turn += 1
        name, arguments = self.pending.pop(0)
        call = ChatMessageToolCall(ChatMessageToolCallFunction(name=name, arguments=json.dumps(arguments)),
                                   id=f"call_{self.turn}", type="function")  # fmt: skip
        usage = TokenUsage(input_tokens=120, output_tokens=20)
        return ChatMessage(role=MessageRole.ASSISTANT, content=None, tool_calls=[call], token_usage=usage)


# smolagents builds a tool's schema from type hints and an ``Args:`` docstring section, which the plain
# refund functions lack: thin wrappers of the same names add them.
@tool
def lookup_order(order_id: str) -> dict:
    """Look an order up by its id.

    Args:
        order_id: The order's id.
    """
    return refund.lookup_order(order_id)


@tool
def check_fraud(order_id: str) -> dict:
    """Check an order for fraud before money moves.

    Args:
        order_id: The order's id.
    """
    return refund.check_fraud(order_id)


@tool
def issue_refund(order_id: str, amount: str) -> dict:
    """Refund an order's amount to the customer.

    Args:
        order_id: The order's id.
        amount: The amount to refund.
    """
    return refund.issue_refund(order_id, amount)


@tool
def notify_customer(order_id: str, message: str) -> dict:
    """Send the customer a message about their order.

    Args:
        order_id: The order's id.
        message: The message to send.
    """
    return refund.notify_customer(order_id, message)


TOOLS = [lookup_order, check_fraud, issue_refund, notify_customer]
assert tuple(t.name for t in TOOLS) == refund.TOOL_NAMES


def produce(out: Path, release: str, scripts: list[list[Call]]) -> None:
    provider = file_provider(out, release)
    # The instrumentor wraps ``generate`` of the model classes smolagents exports, so the stub joins them.
    smolagents.ScriptedModel = ScriptedModel
    SmolagentsInstrumentor().instrument(tracer_provider=provider)
    for calls in scripts:
        agent = ToolCallingAgent(tools=TOOLS, model=ScriptedModel(calls), name="refunds", verbosity_level=0)
        assert agent.run("Refund my order, please.") == ANSWER
    provider.shutdown()
