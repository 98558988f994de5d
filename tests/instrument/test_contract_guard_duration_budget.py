"""A budget over calls' durations refuses no call that keeps within it (#50): before #50 the guard
judged it before each call on the call about to run as if it would run for ever, and refused every call
the budget selects — docs/contracts.md's own ``slow_update`` rule stopped every ticket update. Calls
are now judged on the time spent so far (``test_run_guard_durations.py``); the gate judges the budget
on the exported trace and agrees.
"""

from __future__ import annotations

from functools import partial

import pytest
from contract_guard_calls import contract_file, refused

import otel_provenance as op
from instrument_helpers import Traced
from offline_helpers import write_proto
from otel_provenance import semconv as sc
from otel_provenance.offline.contracts.dsl import parse_contract
from otel_provenance.offline.evaluate import evaluate
from otel_provenance.offline.readers import iter_runs


@pytest.mark.parametrize("aggregate", ["max", "sum"])
def test_a_budget_over_durations_refuses_no_call_within_it_and_the_gate_agrees(tmp_path, aggregate):
    rule = (
        f"{{id: slow_update, type: numeric_budgets, select: {{step: ticket.update}}, duration: ms,"
        f' aggregate: {aggregate}, max: "1500.5"}}'
    )
    contract = contract_file(tmp_path, rule, name="budget-example")
    traced, updated = Traced(), []

    @op.tool(name="ticket.update", side_effect="write", tracer_provider=traced.provider)
    def update(ticket_id: str) -> dict:
        updated.append(ticket_id)
        return {"updated": True}

    with op.run(inputs={"ticket_id": "T-5021"}, contract=contract, tracer_provider=traced.provider):
        assert refused([partial(update, ticket_id="T-5021")] * 2) == []
    assert updated == ["T-5021", "T-5021"]
    root = next(s for s in traced.spans if s.name == "invoke_agent")
    assert root.attributes[sc.GUARD_RUN_VERDICT] == "pass"
    assert sc.GUARD_RUN_FAILED not in root.attributes

    (run,) = iter_runs([write_proto(traced.spans, tmp_path / "trace.pb")])
    (judged,) = evaluate(run, parse_contract(contract.read_text())).rules
    assert (judged.rule_id, judged.status.value) == ("slow_update", "pass")
