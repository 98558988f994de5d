"""The other spellings of a contract rule at call time (#50): what the guard decides before a call does
not depend on which of the equivalent ways a person wrote the rule.

- ``cardinality`` bounded by ``exact`` (or ``min`` and ``max`` together) blocks the call over it
  before it runs, like ``max`` — not only when the run ends;
- ``on_violation: block`` written out is a block a person cannot overrule: an approver that answers
  True to the call's other asks does not let it run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import otel_provenance as op
from instrument_helpers import Traced
from otel_provenance import semconv as sc

ORDER = "ord-50777"


def _contract(tmp_path: Path, bound: str, extra: str = "") -> Path:
    path = tmp_path / "once.yaml"
    path.write_text(
        "name: once\nversion: 1\nrules:\n"
        f"  - {{id: once, type: cardinality, select: {{step: refund}}, {bound}{extra}}}\n"
    )
    return path


def _refund_tool(traced: Traced, log: list[str], **options):
    @op.tool(side_effect="write", tracer_provider=traced.provider, **options)
    def refund(order_id: str) -> dict:
        log.append(order_id)
        return {"refunded": True}

    return refund


@pytest.mark.parametrize("bound", ["max: 1", "exact: 1", "min: 1, max: 1", "min: 0, max: 1"])
def test_a_second_call_over_a_cardinality_bound_is_blocked_before_it_runs_however_the_bound_is_written(
    tmp_path, bound
):
    traced, log = Traced(), []
    refund = _refund_tool(traced, log)
    with op.run(
        inputs={"order_id": ORDER}, contract=_contract(tmp_path, bound), tracer_provider=traced.provider
    ):
        refund(order_id=ORDER)
        with pytest.raises(op.ProvenanceError) as twice:
            refund(order_id=ORDER)
    assert log == [ORDER]
    assert twice.value.violations == ("contract:once:UNEXPECTED_STEP_COUNT",)
    assert traced.span("refund").attributes[sc.TOOL_STATUS] == sc.TOOL_STATUS_BLOCKED


def test_exact_zero_blocks_the_first_call(tmp_path):
    traced, log = Traced(), []
    refund = _refund_tool(traced, log)
    with (
        op.run(
            inputs={"order_id": ORDER},
            contract=_contract(tmp_path, "exact: 0"),
            tracer_provider=traced.provider,
        ),
        pytest.raises(op.ProvenanceError),
    ):
        refund(order_id=ORDER)
    assert log == []


def test_exact_below_its_count_is_judged_when_the_run_ends_never_raised(tmp_path):
    traced, log = Traced(), []
    refund = _refund_tool(traced, log)
    with op.run(
        inputs={"order_id": ORDER}, contract=_contract(tmp_path, "exact: 2"), tracer_provider=traced.provider
    ):
        refund(order_id=ORDER)
    root = next(s for s in traced.spans if s.name == "invoke_agent")
    assert (root.attributes[sc.GUARD_RUN_VERDICT], root.attributes[sc.GUARD_RUN_FAILED]) == (
        "fail",
        ("once",),
    )
    assert log == [ORDER]


@pytest.mark.parametrize("spelling", [", on_violation: block", ""], ids=["written-out", "default"])
def test_a_blocking_rule_is_not_overruled_by_an_approver_that_answers_true(tmp_path, spelling):
    """The refund also needs a person's approval (an ask), and the person says yes: the contract's
    block stands, and the approver is not even asked (nothing is asked of a call blocked anyway)."""
    traced, log, asked = Traced(), [], []

    def approve_everything(request: op.ApprovalRequest) -> bool:
        asked.append(request.reasons)
        return True

    refund = _refund_tool(traced, log, needs_approval=True)
    contract = _contract(tmp_path, "max: 1", spelling)
    with op.run(
        inputs={"order_id": ORDER},
        contract=contract,
        approver=approve_everything,
        tracer_provider=traced.provider,
    ):
        refund(order_id=ORDER)  # asked and approved: the person's yes is for this ask
        with pytest.raises(op.ProvenanceError) as twice:
            refund(order_id=ORDER)
    assert log == [ORDER]
    assert asked == [("needs_approval:refund",)]
    assert "contract:once:UNEXPECTED_STEP_COUNT" in twice.value.violations
    assert sc.GUARD_APPROVAL not in traced.span("refund").attributes


def test_a_rule_that_asks_is_overruled_by_an_approver_that_answers_true(tmp_path):
    """Control for the test above: the same rule with ``on_violation: ask`` lets the approved call run."""
    traced, log = Traced(), []
    refund = _refund_tool(traced, log)
    contract = _contract(tmp_path, "max: 1", ", on_violation: ask")
    with op.run(
        inputs={"order_id": ORDER},
        contract=contract,
        approver=lambda request: True,
        tracer_provider=traced.provider,
    ):
        refund(order_id=ORDER)
        refund(order_id=ORDER)
    assert log == [ORDER, ORDER]
    assert traced.span("refund").attributes[sc.GUARD_APPROVAL] == "approved"
