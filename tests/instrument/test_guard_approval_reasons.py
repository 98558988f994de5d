"""A call asked about for more than one reason (#50): the person is asked once, and a denial's message
names every reason, as the request gave them — the second is not lost behind the first."""

from __future__ import annotations

import pytest

import otel_provenance as op


def test_a_denied_call_with_two_asks_names_both_in_its_message(traced) -> None:
    ran: list[int] = []
    asked: list[tuple[str, ...]] = []

    @op.tool(
        side_effect="write",
        needs_approval=True,
        policy=op.Policy(arguments={"amount": {"maximum": 100}}, on_violation="ask"),
        tracer_provider=traced.provider,
    )
    def refund(amount: int) -> int:
        ran.append(amount)
        return amount

    def approver(request: op.ApprovalRequest) -> bool:
        asked.append(request.reasons)
        return False

    with op.run(inputs={"amount": 250}, approver=approver), pytest.raises(op.ProvenanceError) as denied:
        refund(amount=250)
    assert ran == [] and asked == [("policy:amount:maximum", "needs_approval:refund")]
    assert str(denied.value) == (
        "refund: blocked: needs a person's approval (policy:amount:maximum, needs_approval:refund), "
        "not given: the approver answered False (approval:denied)"
    )
