"""A rule that names the run's own id sees the run's span too, as the gate does (#50).

``op.run(run_id=...)`` puts the id on the run's span and on each call. A budget whose selector names
that id selects the run's span as well, which carries no such number: the gate cannot sum the budget
(``insufficient_evidence``, not a failure), so the guard refuses no call for it — a call is refused only
for what the gate would fail naming it.
"""

from __future__ import annotations

from functools import partial

from contract_guard_calls import contract_file, refused

import otel_provenance as op
from instrument_helpers import Traced
from offline_helpers import write_proto
from otel_provenance.offline.contracts.dsl import parse_contract
from otel_provenance.offline.evaluate import evaluate
from otel_provenance.offline.readers import iter_runs


def test_a_budget_over_a_named_runs_spans_is_judged_on_the_runs_span_as_the_gate_judges_it(tmp_path):
    contract = contract_file(
        tmp_path,
        "{id: no-retries, type: numeric_budgets, select: {attributes: {agent.run.id: nightly-7}},"
        " attribute: agent.retry.number, aggregate: sum, max: 0}",
        name="nightly",
    )
    traced, synced = Traced(), []

    @op.tool(name="crm.sync", side_effect="write", tracer_provider=traced.provider)
    def sync(account: str) -> dict:
        synced.append(account)
        return {"synced": True}

    with op.run(
        run_id="nightly-7", inputs={"account": "acc-12"}, contract=contract, tracer_provider=traced.provider
    ):
        assert refused([partial(sync, account="acc-12")] * 2) == []  # the second is a retry
    assert synced == ["acc-12", "acc-12"]
    (run,) = iter_runs([write_proto(traced.spans, tmp_path / "trace.pb")])
    (judged,) = evaluate(run, parse_contract(contract.read_text())).rules
    assert judged.status.value == "insufficient_evidence"
