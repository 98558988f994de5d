"""A rule may name an attribute the guard otherwise sets aside as a per-call identifier.

Where an argument was found (``agent.arg.<name>.source_tool``), a call id or a digest differ from
call to call, so the guard leaves them out of what it judges counts and per-call rules on — unless a
rule of the contract names one. A refund whose order id must come from the order lookup is judged on
where it came from, at call time as offline. Through ``@op.tool`` and ``op.run(contract=...)`` on the
real SDK; the offline side reads the exported bytes.
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
  - id: order-from-lookup
    type: allowed_values
    select: {step: payment.refund}
    attribute: agent.arg.order_id.source_tool
    values: [order.lookup]
"""


def test_a_rule_on_where_an_argument_was_found_is_judged_at_call_time(traced, tmp_path):
    contract = tmp_path / "refunds.yaml"
    contract.write_text(CONTRACT)
    refunded: list[str] = []

    @op.tool(name="order.lookup", side_effect="read", tracer_provider=traced.provider)
    def lookup(customer: str) -> dict:
        return {"order_id": "ord-77123"}

    @op.tool(name="order.search", side_effect="read", tracer_provider=traced.provider)
    def search(customer: str) -> dict:
        return {"order_id": "ord-88456"}

    @op.tool(name="payment.refund", side_effect="write", tracer_provider=traced.provider)
    def refund(order_id: str) -> str:
        refunded.append(order_id)
        return "refunded"

    with op.run(inputs={"customer": "c-501"}, contract=contract, tracer_provider=traced.provider):
        looked_up = lookup(customer="c-501")["order_id"]
        found = search(customer="c-501")["order_id"]
        refund(order_id=looked_up)
        try:
            refund(order_id=found)
        except op.ProvenanceError as error:
            blocked = error.violations
    assert refunded == ["ord-77123"]
    assert blocked == ("contract:order-from-lookup:DISALLOWED_VALUE",)
    (run,) = iter_runs([write_proto(traced.spans, tmp_path / "trace.pb")])
    result = evaluate(run, parse_contract(CONTRACT))  # offline, the blocked refund's span says the same
    assert [w.span_ids for r in result.rules for f in r.findings for w in f.witnesses] == [
        (format(traced.span("payment.refund").context.span_id, "016x"),)
    ]
