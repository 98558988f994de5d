"""The contract at call time (``op.run(contract=...)``, ``op.configure(contract=...)``): the refund
agent that skips the fraud check and refunds twice is stopped before the payment service is called,
with the rule named on the span in the GenAI conventions' security form and no value exported."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from pathlib import Path

import pytest
from test_metrics import collect, key

import otel_provenance as op
from canary import assert_absent, canary, exported_bytes
from instrument_helpers import settings
from otel_provenance import semconv as sc
from otel_provenance.instrument.base import settings as settings_module
from otel_provenance.instrument.spans.metrics import GUARD_RUNS
from otel_provenance.offline.contracts.dsl import parse_contract

CONTRACT = """\
name: refunds
version: 1
rules:
  - id: refund-once
    type: cardinality
    code: DUPLICATE_SIDE_EFFECT
    select: {step: payment.refund}
    max: 1
  - id: fraud-first
    type: forbidden_paths
    to: {step: payment.refund}
    unless_preceded_by: {step: fraud.check}
  - id: keyed
    type: allowed_values
    select: {step: payment.refund}
    attribute: agent.idempotency.present
    values: [true]
  - id: checked
    type: required_spans
    select: {step: fraud.check}
"""


@pytest.fixture
def contract(tmp_path: Path) -> Path:
    path = tmp_path / "refunds.yaml"
    path.write_text(CONTRACT)
    return path


class Payments:
    """The payment service's own log: what reached it."""

    def __init__(self, traced) -> None:
        self.log: list[str] = []
        provider = traced.provider

        @op.tool(name="fraud.check", side_effect="read", tracer_provider=provider)
        def check(order_id: str) -> dict:
            return {"order_id": order_id, "risk": "low"}

        @op.tool(name="payment.refund", side_effect="write", idempotency_key="key", tracer_provider=provider)
        def refund(order_id: str, key: str | None = None) -> dict:
            self.log.append(order_id)
            return {"refunded": True}

        self.check, self.refund = check, refund


def test_the_refund_without_the_check_and_the_second_refund_never_reach_the_payment_service(traced, contract):
    order, key = canary(), canary()
    payments = Payments(traced)
    with op.run(inputs={"order_id": order, "key": key}, contract=contract, tracer_provider=traced.provider):
        with pytest.raises(op.ProvenanceError) as skipped:
            payments.refund(order_id=order, key=key)
        payments.check(order_id=order)
        payments.refund(order_id=order, key=key)
        with pytest.raises(op.ProvenanceError) as twice:
            payments.refund(order_id=order, key=key)
    assert payments.log == [order]
    assert skipped.value.violations == ("contract:fraud-first:FORBIDDEN_PATH",)
    assert twice.value.violations == ("contract:refund-once:DUPLICATE_SIDE_EFFECT",)
    assert "blocked by the guard" in str(twice.value)
    first, ran, second = (traced.span("payment.refund", i) for i in range(3))
    assert first.attributes[sc.TOOL_STATUS] == "blocked"
    assert first.attributes[sc.SECURITY_DECISION_TYPE] == "deny"
    assert first.attributes[sc.SECURITY_POLICY_ID] == "contract:fraud-first"
    # no framework gave a call id: none is made up for the conventions' keys (the decision is on the
    # call's own span; its own id is agent.tool.call.id)
    assert sc.SECURITY_TARGET_ID not in first.attributes and sc.GEN_AI_TOOL_CALL_ID not in first.attributes
    assert first.attributes[sc.TOOL_CALL_ID].startswith("call_")
    (finding,) = [e for e in first.events if e.name == sc.SECURITY_FINDING_EVENT]
    assert finding.attributes[sc.SECURITY_RISK_SEVERITY] == "high"
    assert ran.attributes[sc.SECURITY_DECISION_TYPE] == "allow"
    assert second.attributes[sc.VIOLATIONS] == ("contract:refund-once:DUPLICATE_SIDE_EFFECT",)
    root = next(s for s in traced.spans if s.name == "invoke_agent")
    assert root.attributes[sc.GUARD_RUN_VERDICT] == "pass"  # the blocked calls never happened
    assert_absent([order, key], exported_bytes(traced.spans))


def test_a_call_missing_a_call_time_attribute_the_contract_requires_is_blocked(traced, contract):
    payments = Payments(traced)
    with op.run(inputs={"order_id": "ord-77120"}, contract=contract, tracer_provider=traced.provider):
        payments.check(order_id="ord-77120")
        with pytest.raises(op.ProvenanceError) as unkeyed:
            payments.refund(order_id="ord-77120")
    assert unkeyed.value.violations == ("contract:keyed:DISALLOWED_VALUE",)
    assert payments.log == []


def test_the_whole_run_rules_are_judged_when_it_ends_and_counted(traced, contract, reader):
    payments = Payments(traced)
    with op.run(inputs={"order_id": "ord-1"}, contract=contract, tracer_provider=traced.provider):
        pass  # never checked: the required fraud check is missing, and nothing raises for it
    root = next(s for s in traced.spans if s.name == "invoke_agent")
    assert root.attributes[sc.GUARD_RUN_VERDICT] == "fail"
    assert root.attributes[sc.GUARD_RUN_FAILED] == ("checked",)
    points = collect(reader)[GUARD_RUNS]
    name = "refunds@" + parse_contract(CONTRACT).digest.removeprefix("sha256:")[:12]
    assert root.attributes[sc.GUARD_CONTRACT] == name
    assert points == {key(**{sc.GUARD_RUN_VERDICT: "fail", sc.GUARD_CONTRACT: name}): 1}
    assert payments.log == []


def test_two_refunds_started_together_are_two(traced, contract):
    """A call still running counts: the second refund, decided while the first is inside the payment
    service, is blocked."""
    payments = Payments(traced)
    inside, release = threading.Event(), threading.Event()
    provider = traced.provider

    @op.tool(name="payment.refund", side_effect="write", idempotency_key="key", tracer_provider=provider)
    def slow_refund(order_id: str, key: str) -> dict:
        inside.set()
        release.wait(5)
        payments.log.append(order_id)
        return {"refunded": True}

    errors: list[BaseException] = []
    with op.run(
        inputs={"order_id": "ord-4242", "key": "idem-4242"}, contract=contract, tracer_provider=provider
    ):
        payments.check(order_id="ord-4242")
        context = __import__("contextvars").copy_context()
        worker = threading.Thread(
            target=context.run, args=(slow_refund,), kwargs={"order_id": "ord-4242", "key": "idem-4242"}
        )
        worker.start()
        assert inside.wait(5)
        try:
            payments.refund(order_id="ord-4242", key="idem-4242")
        except op.ProvenanceError as error:
            errors.append(error)
        release.set()
        worker.join(5)
    assert payments.log == ["ord-4242"]
    assert [e.violations for e in errors] == [("contract:refund-once:DUPLICATE_SIDE_EFFECT",)]


def test_runs_in_asyncio_tasks_are_judged_each_on_their_own(traced, contract):
    payments = Payments(traced)

    async def one(order: str) -> None:
        async with op.run(
            inputs={"order_id": order, "key": f"idem-{order}"},
            contract=contract,
            tracer_provider=traced.provider,
        ):
            payments.check(order_id=order)
            await asyncio.sleep(0)
            payments.refund(order_id=order, key=f"idem-{order}")

    async def main() -> None:
        await asyncio.gather(*(one(f"ord-{n:05d}") for n in range(5)))

    asyncio.run(main())
    assert sorted(payments.log) == [f"ord-{n:05d}" for n in range(5)]


def test_configure_loads_the_contract_for_every_run(tmp_path, contract):
    traced_spans = tmp_path / "spans.jsonl"
    try:
        provider = op.configure(
            exporter="file", file=traced_spans, batch=False, contract=contract, set_global=False
        )
        calls: list[str] = []

        @op.tool(name="payment.refund", side_effect="write", tracer_provider=provider)
        def refund(order_id: str) -> None:
            calls.append(order_id)

        with (
            op.run(inputs={"order_id": "ord-5"}, tracer_provider=provider),
            pytest.raises(op.ProvenanceError),
        ):
            refund(order_id="ord-5")  # no fraud check before it
        assert calls == []
        provider.shutdown()
        assert b"contract:fraud-first:FORBIDDEN_PATH" in traced_spans.read_bytes()
    finally:
        settings_module.reset_settings()


def test_with_enforcement_off_the_contract_only_warns(traced, contract):
    payments = Payments(traced)
    with (
        settings(enforce=False),
        op.run(inputs={"order_id": "ord-9"}, contract=contract, tracer_provider=traced.provider),
    ):
        payments.refund(order_id="ord-9")
    assert payments.log == ["ord-9"]
    span = traced.span("payment.refund")
    assert span.attributes[sc.SECURITY_DECISION_TYPE] == "warn"
    assert span.attributes[sc.TOOL_STATUS] == "ok"


@pytest.mark.parametrize(
    ("text", "problem"),
    [("name: x\n", "rules"), ("rules: [\n", "YAML"), (None, "cannot read")],
    ids=["invalid", "not-yaml", "missing"],
)
def test_a_contract_that_cannot_be_used_is_a_configuration_error_naming_it(tmp_path, text, problem):
    path = tmp_path / "broken.yaml"
    if text is not None:
        path.write_text(text)
    with pytest.raises(op.ConfigurationError) as error:
        op.run(contract=path)
    assert "op.run(contract=...)" in str(error.value)
    assert "broken.yaml" in str(error.value)
    with pytest.raises(op.ConfigurationError):
        op.configure(exporter="none", contract=path, set_global=False)
    settings_module.reset_settings()


def test_a_rule_that_asks_sends_the_call_to_the_approver_and_contract_policies_are_judged(traced, tmp_path):
    path = tmp_path / "ask.yaml"
    path.write_text(
        CONTRACT.replace("    max: 1\n", "    max: 1\n    on_violation: ask\n", 1)
        + "policies:\n  payment.refund:\n    arguments:\n      amount: {maximum: 5000}\n"
    )
    asked: list[tuple[str, ...]] = []

    def approver(request: op.ApprovalRequest) -> bool:
        asked.append(request.reasons)
        return len(asked) == 1  # the first duplicate is approved, the next is not

    log: list[int] = []

    @op.tool(name="fraud.check", side_effect="read", tracer_provider=traced.provider)
    def check(order_id: str) -> dict:
        return {"ok": True}

    @op.tool(
        name="payment.refund", side_effect="write", idempotency_key="key", tracer_provider=traced.provider
    )
    def refund(order_id: str, amount: int, key: str) -> dict:
        log.append(amount)
        return {"refunded": True}

    inputs = {"order_id": "ord-31337", "key": "idem-31337", "amounts": [1200, 9000]}
    with op.run(inputs=inputs, contract=path, approver=approver, tracer_provider=traced.provider):
        check(order_id="ord-31337")
        refund(order_id="ord-31337", amount=1200, key="idem-31337")
        refund(order_id="ord-31337", amount=1200, key="idem-31337")  # a duplicate, approved
        with pytest.raises(op.ProvenanceError) as denied:
            refund(order_id="ord-31337", amount=1200, key="idem-31337")  # another, denied
        with pytest.raises(op.ProvenanceError) as over:
            refund(order_id="ord-31337", amount=9000, key="idem-31337")  # over the contract's policy
    assert log == [1200, 1200]
    assert asked == [("contract:refund-once:DUPLICATE_SIDE_EFFECT",)] * 2
    assert "approval:denied" in denied.value.violations
    assert "policy:amount:maximum" in over.value.violations


def test_a_check_still_running_does_not_precede_the_refund_and_one_that_ended_does(traced, contract):
    """The order of calls is part of what a path reads: a refund decided while the fraud check is still
    running is not preceded by it; the same refund after the check ended is (the same calls, alike in
    every attribute, judged differently by when they began)."""
    payments = Payments(traced)
    inside, release = threading.Event(), threading.Event()

    @op.tool(name="fraud.check", side_effect="read", tracer_provider=traced.provider)
    def slow_check(order_id: str) -> dict:
        inside.set()
        release.wait(5)
        return {"risk": "low"}

    inputs = {"order_id": "ord-6060", "key": "idem-6060"}
    outcomes: list[tuple[str, ...] | None] = []
    with op.run(inputs=inputs, contract=contract, tracer_provider=traced.provider):
        context = contextvars.copy_context()
        worker = threading.Thread(target=context.run, args=(slow_check,), kwargs={"order_id": "ord-6060"})
        worker.start()
        assert inside.wait(5)
        for _ in range(2):
            try:
                payments.refund(order_id="ord-6060", key="idem-6060")
                outcomes.append(None)
            except op.ProvenanceError as error:
                outcomes.append(error.violations)
            release.set()
            worker.join(5)
    assert outcomes == [("contract:fraud-first:FORBIDDEN_PATH",), None]
    assert payments.log == ["ord-6060"]
