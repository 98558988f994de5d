"""With enforcement off, a call the provenance budget objects to is still judged by the contract (#50).

Advisory mode (``OTEL_PROVENANCE_ENFORCE=false``) runs every call and tags it: the budget's objection
(an argument nobody gave, ``max_assumed:…``) is already on the call when the contract judges it, and the
contract's own objection joins it on the span — the budget's does not turn the contract's judgement
into a fault.
"""

from __future__ import annotations

import otel_provenance as op
from instrument_helpers import Traced, settings
from otel_provenance import semconv as sc


def test_a_call_the_budget_objects_to_is_judged_by_the_contract_too(tmp_path):
    contract = tmp_path / "refunds.yaml"
    contract.write_text(
        "name: refunds\nversion: 1\nrules:\n"
        "  - {id: refund-once, type: cardinality, select: {step: refund}, max: 1}\n"
    )
    traced, log = Traced(), []

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    def refund(order_id: str) -> dict:
        log.append(order_id)
        return {"refunded": True}

    with settings(enforce=False), op.run(inputs={}, contract=contract, tracer_provider=traced.provider):
        refund(order_id="ord-50144")  # an order id the user never gave: assumed
        refund(order_id="ord-50144")
    assert log == ["ord-50144", "ord-50144"]
    first, second = (traced.span("refund", i).attributes for i in range(2))
    assert first[sc.VIOLATIONS] == ("max_assumed:order_id=assumed",)
    assert second[sc.VIOLATIONS] == (
        "max_assumed:order_id=assumed",
        "contract:refund-once:UNEXPECTED_STEP_COUNT",
    )
    assert {first[sc.SECURITY_DECISION_TYPE], second[sc.SECURITY_DECISION_TYPE]} == {"warn"}
