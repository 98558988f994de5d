"""A ``cardinality`` rule with both a minimum and a maximum at call time (#50): only the maximum is
decided before a call; the minimum waits for the run's end (docs/guard.md). A run that has not yet
made its minimum is not a reason to block the calls that would make it.
"""

from __future__ import annotations

import pytest

import otel_provenance as op
from instrument_helpers import Traced
from otel_provenance import semconv as sc

ORDER = "ord-50288"


def _verdict(traced: Traced) -> tuple:
    root = next(s for s in traced.spans if s.name == "invoke_agent")
    return root.attributes[sc.GUARD_RUN_VERDICT], root.attributes.get(sc.GUARD_RUN_FAILED)


@pytest.mark.parametrize("calls", [1, 4])
def test_calls_below_a_minimum_run_and_the_call_over_the_maximum_is_blocked(tmp_path, calls):
    contract = tmp_path / "shipments.yaml"
    contract.write_text(
        "name: shipments\nversion: 1\nrules:\n"
        "  - {id: two-or-three, type: cardinality, select: {step: ship}, min: 2, max: 3}\n"
    )
    traced, shipped, blocked = Traced(), [], []

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    def ship(order_id: str) -> dict:
        shipped.append(order_id)
        return {"shipped": True}

    with op.run(inputs={"order_id": ORDER}, contract=contract, tracer_provider=traced.provider):
        for _ in range(calls):
            try:
                ship(order_id=ORDER)
            except op.ProvenanceError as error:
                blocked.append(error.violations)
    assert len(shipped) == min(calls, 3)
    assert blocked == [("contract:two-or-three:UNEXPECTED_STEP_COUNT",)] * (calls - len(shipped))
    # one shipment is under the minimum: judged when the run ends, recorded, never raised
    assert _verdict(traced) == (("fail", ("two-or-three",)) if calls == 1 else ("pass", None))
