"""Case 1 (guard) — the contract at call time: a refund run under its mined contract vs the same run
with provenance only.

Subject: one refund-agent run (six ``@op.tool`` calls: policy, order, fraud check, calculation,
payment with an idempotency key, notification) inside ``op.run(contract=...)`` with a contract shaped
like the one ``mine`` writes for that agent — per tool a required count, a maximum, allowed values,
a retry budget and a provenance budget, a guarded path and an approved route (32 rules) — so every call
is judged before it runs and the run is judged when it ends. Baseline: the same run, same tools,
same provider, without a contract (provenance budgets only). Each sample is ``runs`` runs; the ratio
is per run (the same six calls on both sides).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import otel_provenance as op
from otel_provenance.instrument.call.guard import ContractGuard
from otel_provenance.offline.contracts.dsl import dump_document, parse_contract

from .harness import CPU_CLOCK, Result, paired_medians, ratio_result
from .online import wrapped_provider

CASE = "1 tool call (guard)"
STEPS = (
    ("policy.retrieve", "read"),
    ("order.lookup", "read"),
    ("fraud.check", "read"),
    ("refund.calculate", "none"),
    ("payment.refund", "write"),
    ("customer.notify", "write"),
)


def contract_document() -> dict:
    """What ``mine`` writes for the refund agent (per tool: required, at most, values, retries,
    provenance), a reviewer's guarded path, and one approved route family."""
    rules: list[dict] = []
    for step, _ in STEPS:
        select = {"step": step}
        rules += [
            {"id": f"required.{step}", "type": "required_spans", "select": select, "min": 1},
            {"id": f"at_most.{step}", "type": "cardinality", "select": select, "max": 1},
            {"id": f"retries.{step}", "type": "retry_budgets", "select": select, "max_retries": 0},
            {"id": f"provenance.{step}", "type": "provenance_budgets", "select": select, "max_assumed": 0},
            {
                "id": f"values.{step}",
                "type": "allowed_values",
                "select": select,
                "attribute": "agent.data_domain",
                "values": ["refunds"],
            },
        ]
    rules.append(
        {
            "id": "refund.after.fraud.check",
            "type": "forbidden_paths",
            "to": {"step": "payment.refund"},
            "unless_preceded_by": {"step": "fraud.check"},
        }
    )
    steps = {step: 1 for step, _ in STEPS}
    edges = [{"from": "refund.request", "to": step, "count": 1} for step, _ in STEPS]
    family = {"id": "route-1", "status": "approved", "fingerprints": ["0" * 64], "runs": 25}
    rules.append(
        {
            "id": "approved_route",
            "type": "approved_routes",
            "similarity": "9/10",
            "families": [{**family, "example_trace_ids": [], "steps": steps, "edges": edges}],
        }
    )
    return {"version": 1, "name": "refunds", "rules": rules}


def run(quick: bool, workdir: Path) -> list[Result]:
    runs = 10 if quick else 200
    repeat = 3 if quick else 9
    provider, exporter = wrapped_provider()
    path = workdir / "guard-contract.yaml"
    path.write_text(dump_document(contract_document()))
    guard = ContractGuard.load(path, "benchmarks")
    tools = {
        step: op.tool(
            lambda **arguments: {"ok": True, "max_days": 30, "customer_id": "CUST-12345"},
            name=step,
            side_effect=side_effect,
            data_domain="refunds",
            idempotency_key="key" if step == "payment.refund" else None,
            tracer_provider=provider,
        )
        for step, side_effect in STEPS
    }

    def one_run(contract: ContractGuard | None) -> None:
        with op.run(inputs={"order_id": "ORD-00042", "key": "idem-00042"}, contract=contract):
            policy = tools["policy.retrieve"](order_id="ORD-00042")
            order = tools["order.lookup"](order_id="ORD-00042")
            tools["fraud.check"](order_id="ORD-00042", customer_id=order["customer_id"])
            tools["refund.calculate"](order_id="ORD-00042", max_days=policy["max_days"])
            tools["payment.refund"](order_id="ORD-00042", key="idem-00042")
            tools["customer.notify"](customer_id=order["customer_id"])

    def many(contract: ContractGuard | None) -> Callable[[], None]:
        def go() -> None:
            for _ in range(runs):
                one_run(contract)

        return go

    one_run(guard)  # the contract allows this run: nothing below is a blocked call
    guarded_s, plain_s = paired_medians(many(guard), many(None), repeat, clock=CPU_CLOCK)
    assert exporter.spans > 0, "spans did not reach the exporter"
    return [
        ratio_result(
            CASE,
            guarded_s / runs,
            plain_s / runs,
            max_ratio=1.5,
            note=f"per run of 6 calls; {len(parse_contract(path.read_text()).rules)} rules vs none",
            extra={"runs_per_sample": runs, "samples": repeat},
        )
    ]
