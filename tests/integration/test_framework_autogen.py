"""Microsoft AutoGen AgentChat: ``AssistantAgent(tools=[...])`` over ``@op.tool`` functions, driven by
``ReplayChatCompletionClient`` (autogen-ext's stub model), alone and in a ``RoundRobinGroupChat`` team.

AutoGen turns any exception a tool raises into an error result the model reads (``is_error=True``),
so a blocked call needs no adapter. AutoGen's own ``execute_tool {name}`` span (GenAI attributes and
the model's call id, set when it starts) is current while the tool runs, so ``@op.tool`` adopts it.

An ``async def`` tool runs in the agent's task, inside its ``op.run``. A plain ``def`` tool runs on the
event loop's thread pool (``run_in_executor``), which does not copy the context: there it sees no run
(every argument assumed, a sourced write blocked, each call a trace of its own) unless the loop's
executor carries the context — ``op.carry_context_into_threads()`` — and it says so, once, loudly.

Every autogen-core release pins ``protobuf~=5.29``, so AutoGen is not in the newest test set (protobuf
7): this module runs in the ``autogen`` case of ``scripts/install_check.sh`` and skips elsewhere, saying
so (``interop.ELSEWHERE``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from pathlib import Path

import pytest

from interop import require

require("autogen_agentchat")

from autogen_agentchat.agents import AssistantAgent  # noqa: E402
from autogen_agentchat.conditions import MaxMessageTermination, TextMentionTermination  # noqa: E402
from autogen_agentchat.teams import RoundRobinGroupChat  # noqa: E402
from autogen_core import EVENT_LOGGER_NAME, FunctionCall  # noqa: E402
from autogen_core.models import CreateResult, ModelFamily, ModelInfo, RequestUsage  # noqa: E402
from autogen_core.tools import FunctionTool  # noqa: E402
from autogen_ext.models.replay import ReplayChatCompletionClient  # noqa: E402
from opentelemetry import trace  # noqa: E402

import otel_provenance as op  # noqa: E402
from framework_helpers import Exported  # noqa: E402
from offline_helpers import write_jsonl  # noqa: E402
from otel_provenance.offline.readers import ReadReport, iter_runs  # noqa: E402

MODEL = ModelInfo(
    vision=False,
    function_calling=True,
    json_output=False,
    family=ModelFamily.UNKNOWN,
    structured_output=False,
)
USAGE = RequestUsage(prompt_tokens=1, completion_tokens=1)
DONE = "done TERMINATE"


@pytest.fixture(autouse=True)
def autogen_global_provider(monkeypatch: pytest.MonkeyPatch) -> Exported:
    """AutoGen traces on the global provider: ours, for this test only (it can be set once per process)."""
    out = Exported()
    monkeypatch.setattr(trace, "_TRACER_PROVIDER", out.provider)
    logging.getLogger(EVENT_LOGGER_NAME).setLevel(logging.ERROR)  # the replay client's token notes
    return out


class Refunds:
    """An order with a random (canary) id and amount; a refund that records what its body saw."""

    def __init__(self) -> None:
        self.order = f"ord-{secrets.token_hex(5)}"
        self.amount = f"{secrets.randbelow(900) + 100}.{secrets.randbelow(100):02d}"
        self.guess = f"{secrets.randbelow(9000) + 1000}.00"
        self.paid: list[tuple[str, str]] = []

    def script(self) -> list[CreateResult]:
        """Look the order up, refund its amount (sourced), then refund a guessed amount (unsourced)."""
        calls = [
            ("lookup_order", {"order_id": self.order}),
            ("issue_refund", {"order_id": self.order, "amount": self.amount}),
            ("issue_refund", {"order_id": self.order, "amount": self.guess}),
        ]
        replies = [
            CreateResult(
                finish_reason="function_calls",
                content=[FunctionCall(id=f"call_{i}", name=name, arguments=json.dumps(args))],
                usage=USAGE,
                cached=False,
            )
            for i, (name, args) in enumerate(calls)
        ]
        return [*replies, CreateResult(finish_reason="stop", content=DONE, usage=USAGE, cached=False)]

    def tools(self, kind: str, prefix: str = "") -> list:
        refunds = self
        if kind == "sync":

            @op.tool(side_effect="read", name=f"{prefix}lookup_order")
            def lookup_order(order_id: str) -> dict:
                """Look an order up by its id."""
                return {"order_id": order_id, "amount": refunds.amount}

            @op.tool(side_effect="write", name=f"{prefix}issue_refund")
            def issue_refund(order_id: str, amount: str) -> dict:
                """Refund an order's amount."""
                refunds.paid.append((order_id, amount))
                return {"status": "paid"}

            return [lookup_order, issue_refund]

        @op.tool(side_effect="read")
        async def lookup_order(order_id: str) -> dict:
            """Look an order up by its id."""
            return {"order_id": order_id, "amount": refunds.amount}

        @op.tool(side_effect="write")
        async def issue_refund(order_id: str, amount: str) -> dict:
            """Refund an order's amount."""
            refunds.paid.append((order_id, amount))
            return {"status": "paid"}

        return [lookup_order, issue_refund]


async def _drive(refunds: Refunds, tools: list, shape: str, carry: bool) -> list:
    if carry:
        op.carry_context_into_threads()
    client = ReplayChatCompletionClient(refunds.script(), model_info=MODEL)
    with op.run(inputs={"order_id": refunds.order}, agent_name="refunds"):
        if shape == "single":
            agent = AssistantAgent("refunds", model_client=client, tools=tools, max_tool_iterations=10)
            result = await agent.run(task="Refund my order.")
        else:
            agents = [AssistantAgent(n, model_client=client, tools=tools) for n in ("refunds", "payments")]
            stop = TextMentionTermination("TERMINATE") | MaxMessageTermination(20)
            result = await RoundRobinGroupChat(agents, termination_condition=stop).run(
                task="Refund my order."
            )
    return result.messages


def _results(messages: list) -> list:
    return [r for m in messages if type(m).__name__ == "ToolCallExecutionEvent" for r in m.content]


def _agent_runs(out: Exported, tmp_path: Path) -> list:
    """The exported spans as the offline half reads them: the runs that hold agent work."""
    path = write_jsonl(out.spans, tmp_path / "spans.jsonl")
    return [r for r in iter_runs([path], report=ReadReport()) if r.is_agent_run]


@pytest.mark.parametrize("shape", ["single", "team"])
@pytest.mark.parametrize(("kind", "carry"), [("sync", True), ("async", False)])
def test_the_sourced_refund_runs_the_unsourced_one_is_blocked_and_one_run_is_one_run(
    kind: str, carry: bool, shape: str, autogen_global_provider: Exported, tmp_path: Path
) -> None:
    out, refunds = autogen_global_provider, Refunds()
    messages = asyncio.run(_drive(refunds, refunds.tools(kind), shape, carry))
    assert messages[-1].content == DONE
    assert refunds.paid == [(refunds.order, refunds.amount)]  # the guessed amount never reached the body
    lookup, paid, refused = _results(messages)
    assert not lookup.is_error and not paid.is_error
    assert refused.is_error and "max_assumed:amount=assumed" in refused.content  # the model reads why
    assert refunds.guess not in refused.content

    (ran, blocked) = out.tool_spans("issue_refund")
    assert ran.attributes["agent.arg.amount.kind"] == "observed"
    assert ran.attributes["agent.arg.amount.source_tool"] == "lookup_order"
    assert (ran.attributes["agent.tool.status"], blocked.attributes["agent.tool.status"]) == ("ok", "blocked")
    # AutoGen's own span, adopted: one span per call, with the model's call id
    assert [s.attributes["gen_ai.tool.call.id"] for s in (ran, blocked)] == ["call_1", "call_2"]
    assert all(s.instrumentation_scope.name == "autogen-core" for s in (ran, blocked))

    (run,) = _agent_runs(out, tmp_path)  # one op.run, one run
    assert [s.tool_name for s in run.spans if s.is_tool] == ["lookup_order", "issue_refund", "issue_refund"]
    out.assert_no_values([refunds.order, refunds.amount, refunds.guess])


def test_a_sync_tool_without_the_context_says_once_that_it_ran_outside_the_run(
    autogen_global_provider: Exported, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Never a silent false block: the refusal is logged, once per tool, naming the fix."""
    out, refunds = autogen_global_provider, Refunds()
    prefix = f"t{secrets.token_hex(3)}_"  # the warning is once per tool and process: tools of this test
    tools = refunds.tools("sync", prefix)  # AutoGen knows them by their function's name, we by ours
    client = ReplayChatCompletionClient(refunds.script(), model_info=MODEL)

    async def drive() -> list:
        with op.run(inputs={"order_id": refunds.order}):
            agent = AssistantAgent("refunds", model_client=client, tools=tools, max_tool_iterations=10)
            return (await agent.run(task="Refund my order.")).messages

    with caplog.at_level(logging.WARNING, logger="otel_provenance"):
        messages = asyncio.run(drive())
    outside = [r.getMessage() for r in caplog.records if "ran outside any op.run" in r.getMessage()]
    assert len(outside) == 2  # lookup_order once, issue_refund once (it was called twice)
    assert all("op.carry_context_into_threads()" in m for m in outside)
    assert {m.split(" ", 1)[0] for m in outside} == {f"{prefix}lookup_order", f"{prefix}issue_refund"}
    assert refunds.paid == []  # outside the run nothing is observed: both refunds were refused
    assert [r.is_error for r in _results(messages)] == [False, True, True]
    assert not any(refunds.order in m or refunds.amount in m for m in outside)
    # what it warns about: each call a trace of its own beside the run's, so one run reads as four
    assert len(_agent_runs(out, tmp_path)) == 4


def test_the_schema_autogen_sends_is_the_same_with_and_without_op_tool() -> None:
    def lookup(order_id: str, limit: int = 10) -> dict:
        """Look an order up."""
        return {}

    async def alookup(order_id: str, limit: int = 10) -> dict:
        """Look an order up."""
        return {}

    for function in (lookup, alookup):
        plain = FunctionTool(function, description="Look an order up.").schema
        wrapped = FunctionTool(op.tool(side_effect="read")(function), description="Look an order up.").schema
        assert wrapped == plain


def test_the_docs_snippet_runs_as_written(autogen_global_provider: Exported, tmp_path: Path) -> None:
    """docs/frameworks.md's AutoGen block, with the stub model as its ``model``."""
    from framework_helpers_docs import run_doc_snippet

    calls = [("delete_file", {"path": "report.txt"}), ("delete_file", {"path": "guessed.txt"})]
    both = CreateResult(  # one model turn, two calls: AutoGen runs them at once, each on a thread
        finish_reason="function_calls",
        content=[
            FunctionCall(id=f"call_{i}", name=n, arguments=json.dumps(a)) for i, (n, a) in enumerate(calls)
        ],
        usage=USAGE,
        cached=False,
    )
    model = ReplayChatCompletionClient([both], model_info=MODEL)
    namespace = run_doc_snippet("Microsoft AutoGen AgentChat", tmp_path, model=model)
    asyncio.run(namespace["main"]("Tidy up.", {"path": "report.txt"}))
    spans = autogen_global_provider.tool_spans("delete_file")
    kinds = {s.attributes["gen_ai.tool.call.id"]: s.attributes["agent.arg.path.kind"] for s in spans}
    status = {s.attributes["gen_ai.tool.call.id"]: s.attributes["agent.tool.status"] for s in spans}
    assert (kinds, status) == (
        {"call_0": "observed", "call_1": "assumed"},
        {"call_0": "ok", "call_1": "blocked"},
    )
