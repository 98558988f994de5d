"""A path rule may name the run's own span (step ``invoke_agent``): at call time that span is still
open, so no call comes after it — as offline, where it ends after every call it holds.

"No refund once the agent's run is over" passes for a refund the agent makes in its run. Through
``@op.tool`` and ``op.run(contract=...)`` on the real SDK; the offline side reads the exported bytes.
"""

from __future__ import annotations

import otel_provenance as op
from offline_helpers import write_proto
from otel_provenance.offline.contracts.dsl import parse_contract
from otel_provenance.offline.evaluate import evaluate
from otel_provenance.offline.readers import iter_runs

CONTRACT = """\
name: refunds
version: 1
rules:
  - id: no-refund-after-the-run
    type: forbidden_paths
    from: {step: invoke_agent}
    to: {step: payment.refund}
"""


def test_a_refund_made_in_the_run_does_not_come_after_the_runs_own_span(traced, tmp_path):
    contract = tmp_path / "refunds.yaml"
    contract.write_text(CONTRACT)
    refunded: list[str] = []

    @op.tool(name="payment.refund", side_effect="write", tracer_provider=traced.provider)
    def refund(order_id: str) -> str:
        refunded.append(order_id)
        return "refunded"

    with op.run(inputs={"order_id": "ord-1"}, contract=contract, tracer_provider=traced.provider):
        refund(order_id="ord-1")
        refund(order_id="ord-1")
    assert refunded == ["ord-1", "ord-1"]
    assert "agent.violations" not in traced.span("payment.refund").attributes
    (run,) = iter_runs([write_proto(traced.spans, tmp_path / "trace.pb")])
    assert evaluate(run, parse_contract(CONTRACT)).status == "pass"
