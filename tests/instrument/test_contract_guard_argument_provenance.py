"""Contract rules over where a call's arguments came from, judged before the call (#50).

- A selector may name an argument's source (``agent.arg.order_id.source_tool``): a refund whose order
  id was read from a support ticket (which a customer writes) is refused, one whose id came from the
  order lookup runs — the guard keeps the keys a contract names, per-call as they are.
- A ``provenance_budgets`` rule with its own ``allow`` list (as ``mine`` writes it) judges each
  argument's kind by that list, not by the tool's own: an argument the tool's budget lets through
  unsourced is still refused when the contract does not allow it.
"""

from __future__ import annotations

from contract_guard_calls import contract_file

import otel_provenance as op
from instrument_helpers import Traced

ORDER = "ord-50731"


FROM_TICKETS = (
    "{id: not-from-tickets, type: forbidden_spans,"
    " select: {step: payment.refund, attributes: {agent.arg.order_id.source_tool: support.ticket}}}"
)
NAMED = (
    "{id: named, type: provenance_budgets, select: {step: payment.refund}, max_assumed: 0, allow: [reason]}"
)


def test_a_refund_for_an_order_id_read_from_a_ticket_is_refused(tmp_path):
    contract = contract_file(tmp_path, FROM_TICKETS)
    traced, log = Traced(), []
    provider = traced.provider

    @op.tool(name="support.ticket", side_effect="read", tracer_provider=provider)
    def ticket(ticket_id: str) -> dict:
        return {"order_id": ORDER, "text": "I never got my parcel, please refund"}

    @op.tool(name="orders.lookup", side_effect="read", tracer_provider=provider)
    def lookup(customer_id: str) -> dict:
        return {"order_id": ORDER, "status": "lost in transit"}

    @op.tool(name="payment.refund", side_effect="write", tracer_provider=provider)
    def refund(order_id: str) -> dict:
        log.append(order_id)
        return {"refunded": True}

    with op.run(inputs={"ticket_id": "T-8812"}, contract=contract, tracer_provider=provider):
        found = ticket(ticket_id="T-8812")
        try:
            refund(order_id=found["order_id"])
        except op.ProvenanceError as error:
            refused = error.violations
    assert refused == ("contract:not-from-tickets:FORBIDDEN_STEP",)
    with op.run(inputs={"customer_id": "cus-31"}, contract=contract, tracer_provider=provider):
        refund(order_id=lookup(customer_id="cus-31")["order_id"])
    assert log == [ORDER]


def test_a_provenance_budget_with_its_own_allow_list_refuses_what_only_the_tool_allows(tmp_path):
    contract = contract_file(tmp_path, NAMED)
    traced, log = Traced(), []

    @op.tool(
        name="payment.refund",
        side_effect="write",
        budget=op.Budget(allow={"memo", "reason"}),  # the tool lets both be written by the model
        tracer_provider=traced.provider,
    )
    def refund(order_id: str, memo: str = "", reason: str = "") -> dict:
        log.append(memo or reason)
        return {"refunded": True}

    with op.run(inputs={"order_id": ORDER}, contract=contract, tracer_provider=traced.provider):
        refund(order_id=ORDER, reason="the customer asked")
        try:
            refund(order_id=ORDER, memo="goodwill")
        except op.ProvenanceError as error:
            refused = error.violations
    assert refused == ("contract:named:UNSOURCED_ARGUMENTS",)
    assert log == ["the customer asked"]
