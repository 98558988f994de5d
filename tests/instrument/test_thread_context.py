"""Tool calls on an event loop's thread pool (``instrument/adapters/threads.py``, #47).

``loop.run_in_executor(None, tool, ...)`` — how AutoGen runs a plain ``def`` tool — does not copy the
caller's context, so the tool cannot see its ``op.run``. ``op.carry_context_into_threads()`` makes the
loop's executor copy it; without it the call says, once per tool, that it ran outside any run.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
import secrets

import pytest

import otel_provenance as op
from instrument_helpers import Traced

OUTSIDE = "ran outside any op.run"


def _tools(traced: Traced, name: str):
    @op.tool(side_effect="read", name=f"{name}_lookup", tracer_provider=traced.provider)
    def lookup(order_id: str) -> dict:
        return {"order_id": order_id, "amount": "42.50"}

    @op.tool(side_effect="write", name=f"{name}_refund", tracer_provider=traced.provider)
    def refund(order_id: str, amount: str) -> str:
        return "paid"

    return lookup, refund


async def _on_the_pool(traced: Traced, name: str, carry: bool) -> list[str]:
    """Look up and refund the run's order, each call on the loop's default executor."""
    if carry:
        op.carry_context_into_threads()
    lookup, refund = _tools(traced, name)
    loop = asyncio.get_running_loop()
    outcomes = []
    with op.run(inputs={"order_id": "ord-7"}, tracer_provider=traced.provider):
        order = await loop.run_in_executor(None, functools.partial(lookup, order_id="ord-7"))
        for _ in range(2):
            try:
                await loop.run_in_executor(None, functools.partial(refund, "ord-7", order["amount"]))
                outcomes.append("paid")
            except op.ProvenanceError:
                outcomes.append("blocked")
    return outcomes


def test_with_the_context_carried_the_tool_finds_its_run(caplog: pytest.LogCaptureFixture) -> None:
    traced, name = Traced(), f"t{secrets.token_hex(3)}"
    with caplog.at_level(logging.WARNING, logger="otel_provenance"):
        assert asyncio.run(_on_the_pool(traced, name, carry=True)) == ["paid", "paid"]
    assert OUTSIDE not in caplog.text
    spans = [s for s in traced.spans if s.name.startswith("execute_tool")]
    assert {
        s.attributes["agent.arg.amount.kind"] for s in spans if "agent.arg.amount.kind" in s.attributes
    } == {"observed"}
    assert len({s.context.trace_id for s in traced.spans}) == 1  # the run's one trace


def test_without_it_the_call_is_outside_the_run_and_says_so_once_per_tool(
    caplog: pytest.LogCaptureFixture,
) -> None:
    traced, name = Traced(), f"t{secrets.token_hex(3)}"
    with caplog.at_level(logging.WARNING, logger="otel_provenance"):
        assert asyncio.run(_on_the_pool(traced, name, carry=False)) == ["blocked", "blocked"]
    warned = [r.getMessage() for r in caplog.records if OUTSIDE in r.getMessage()]
    assert [m.split(" ", 1)[0] for m in warned] == [f"{name}_lookup", f"{name}_refund"]
    assert "op.carry_context_into_threads()" in warned[0] and "ord-7" not in caplog.text


def test_carrying_is_idempotent_and_each_call_gets_its_own_copy() -> None:
    marker: contextvars.ContextVar[str] = contextvars.ContextVar("marker", default="unset")

    def read_and_set() -> str:
        seen = marker.get()
        marker.set("changed in the thread")
        return seen

    async def main() -> tuple[bool, list[str], str]:
        first = op.carry_context_into_threads()
        same = op.carry_context_into_threads() is first
        marker.set("the caller's")
        loop = asyncio.get_running_loop()
        seen = [await loop.run_in_executor(None, read_and_set) for _ in range(2)]
        return same, seen, marker.get()

    same, seen, after = asyncio.run(main())
    assert same and seen == ["the caller's", "the caller's"] and after == "the caller's"
