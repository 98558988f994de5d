"""The forms ``op.run(contract=...)`` takes: a contract file, or the contract the offline reader parsed
from one (judged the same); anything else is refused naming the option.
"""

from __future__ import annotations

import pytest

import otel_provenance as op
from otel_provenance.offline.contracts.dsl import parse_contract

CONTRACT = """\
name: refunds
version: 1
rules:
  - {id: refund-once, type: cardinality, code: DUPLICATE_SIDE_EFFECT, select: {step: payment.refund}, max: 1}
"""


@pytest.mark.parametrize("form", ["file", "parsed"])
def test_a_contract_file_and_the_contract_parsed_from_it_judge_alike(traced, tmp_path, form):
    path = tmp_path / "refunds.yaml"
    path.write_text(CONTRACT)
    refunded: list[str] = []

    @op.tool(name="payment.refund", side_effect="write", tracer_provider=traced.provider)
    def refund(order_id: str) -> str:
        refunded.append(order_id)
        return "refunded"

    contract = path if form == "file" else parse_contract(CONTRACT)
    with op.run(inputs={"order_id": "ord-1"}, contract=contract, tracer_provider=traced.provider):
        refund(order_id="ord-1")
        with pytest.raises(op.ProvenanceError) as twice:
            refund(order_id="ord-1")
    assert refunded == ["ord-1"]
    assert twice.value.violations == ("contract:refund-once:DUPLICATE_SIDE_EFFECT",)


@pytest.mark.parametrize("contract", [42, ["refunds.yaml"], b"refunds.yaml"])
def test_a_contract_that_is_neither_a_path_nor_a_contract_is_refused_naming_the_option(contract):
    expected = r"^op\.run\(contract=\.\.\.\): expected a contract file path$"
    with pytest.raises(op.ConfigurationError, match=expected):
        op.run(contract=contract)
