"""Which earlier result an argument is attributed to, and budgets of any size.

When several results of a run held the value, the data-flow edge points at the most recent one: the
evidence closest to the call. A budget with a pair of limits no other call used still blocks.
"""

from __future__ import annotations

import secrets

import pytest

import otel_provenance as op
from instrument_helpers import arg_attrs


def test_a_value_returned_again_by_a_later_tool_is_sourced_to_the_later_result(traced):
    """``get_order`` was given an observed id and returned it again; ``refund`` then names the
    ``get_order`` span as the source, not the listing that first showed the id."""
    order = f"ord-{secrets.token_hex(4)}"

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def list_orders() -> dict:
        return {"orders": [order]}

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def get_order(order_id: str) -> dict:
        return {"order_id": order_id, "status": "paid"}

    @op.tool(side_effect="write", idempotency_key="order_id", tracer_provider=traced.provider)
    def refund(order_id: str) -> str:
        return "refunded"

    with op.run():
        listed = list_orders()["orders"][0]
        found = get_order(listed)["order_id"]
        refund(found)
    assert arg_attrs(traced.span("get_order"), "order_id")["source_tool"] == "list_orders"
    attrs = arg_attrs(traced.span("refund"), "order_id")
    assert attrs["kind"] == "observed"
    assert attrs["source_tool"] == "get_order"
    assert attrs["source_field"] == "order_id"
    assert attrs["source_span_id"] == format(traced.span("get_order").context.span_id, "016x")


@pytest.mark.parametrize("kind", ["assumed", "invented"])
def test_a_budget_with_limits_no_other_call_used_still_blocks(traced, kind):
    """Limits are shared per (max_assumed, max_invented) pair; a pair seen for the first time is
    built and enforced like any other, for either kind."""
    ran: list[str] = []
    unused = 1_000 + secrets.randbelow(10**9)  # a limit no other test uses
    if kind == "assumed":
        budget, invented = op.Budget(max_assumed=0, max_invented=unused), ()
    else:
        budget, invented = op.Budget(max_assumed=unused, max_invented=0), ("account",)

    @op.tool(side_effect="write", budget=budget, invented=invented, tracer_provider=traced.provider)
    def open_account(account: str) -> str:
        ran.append(account)
        return "opened"

    with op.run(), pytest.raises(op.ProvenanceError) as blocked:
        open_account(f"ACCT-{secrets.token_hex(3)}")
    assert ran == []
    assert blocked.value.violations == (f"max_{kind}:account={kind}",)
