"""A sub-agent's ``op.run`` inside the agent's run is part of that run (#50, red team round 4).

Offline, one trace is one run: the gate counts a refund a sub-agent made beside the parent's. So the
guard does too — "blocked online = fails offline" holds for nested runs — whether the contract comes
from ``op.run(contract=...)`` or ``op.configure(contract=...)``, and a nested run naming a contract of
its own is judged by both. An argument-value policy's run total is the outermost run's as well.
Through ``@op.tool`` and ``op.run`` on the real SDK; the offline side reads the exported bytes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_guard_contract import Payments as Shop  # the fraud check, the refund and its service's log

import otel_provenance as op
from instrument_helpers import Traced, settings
from offline_helpers import write_proto
from otel_provenance import semconv as sc
from otel_provenance.instrument.base import settings as settings_module
from otel_provenance.offline.contracts.dsl import parse_contract
from otel_provenance.offline.evaluate import evaluate
from otel_provenance.offline.outcome import Outcome
from otel_provenance.offline.readers import iter_runs

CONTRACT = """\
name: refunds
version: 1
rules:
  - {id: refund-once, type: cardinality, code: DUPLICATE_SIDE_EFFECT, select: {step: payment.refund}, max: 1}
  - {id: checked, type: required_spans, select: {step: fraud.check}}
"""
ORDER = "ord-50501"


@pytest.fixture
def contract(tmp_path: Path) -> Path:
    path = tmp_path / "refunds.yaml"
    path.write_text(CONTRACT)
    return path


def _agent_with_a_refunding_sub_agent(shop, traced: Traced, **run_options) -> list[tuple[str, ...]]:
    """The agent refunds, then hands over to a sub-agent (a nested run) that refunds again."""
    blocked: list[tuple[str, ...]] = []
    with op.run(inputs={"order_id": ORDER}, tracer_provider=traced.provider, **run_options):
        shop.check(order_id=ORDER)
        shop.refund(order_id=ORDER)
        with op.run(agent_name="refunds-sub-agent", tracer_provider=traced.provider):
            try:
                shop.refund(order_id=ORDER)
            except op.ProvenanceError as error:
                blocked.append(error.violations)
    return blocked


def _offline_failures(traced: Traced, tmp_path: Path) -> list[tuple[str, int]]:
    """The gate's view of the exported trace: (rule, refunds it names) for each failing rule."""
    (run,) = iter_runs([write_proto(traced.spans, tmp_path / "trace.pb")])
    result = evaluate(run, parse_contract(CONTRACT))
    return [
        (rule.rule_id, len({s for f in rule.findings for w in f.witnesses for s in w.span_ids}))
        for rule in result.rules
        if rule.status is Outcome.FAIL
    ]


def test_a_second_refund_made_by_a_sub_agent_fails_offline_and_is_blocked_online(contract, tmp_path):
    advisory = Traced()
    shop = Shop(advisory)
    with settings(enforce=False):  # the guard only tags: both refunds reach the service
        _agent_with_a_refunding_sub_agent(shop, advisory, contract=contract)
    assert shop.log == [ORDER, ORDER]
    assert _offline_failures(advisory, tmp_path) == [("refund-once", 2)]  # one trace, one run
    second = advisory.span("payment.refund")
    assert second.attributes[sc.VIOLATIONS] == ("contract:refund-once:DUPLICATE_SIDE_EFFECT",)

    traced = Traced()
    shop = Shop(traced)
    blocked = _agent_with_a_refunding_sub_agent(shop, traced, contract=contract)
    assert shop.log == [ORDER]
    assert blocked == [("contract:refund-once:DUPLICATE_SIDE_EFFECT",)]
    assert _offline_failures(traced, tmp_path) == []  # the blocked call never happened


def test_a_contract_configured_for_every_run_counts_the_sub_agents_calls_with_the_run(contract):
    traced = Traced()
    shop = Shop(traced)
    try:
        op.configure(exporter="none", contract=contract, set_global=False)
        blocked = _agent_with_a_refunding_sub_agent(shop, traced)
    finally:
        settings_module.reset_settings()
    assert shop.log == [ORDER]
    assert blocked == [("contract:refund-once:DUPLICATE_SIDE_EFFECT",)]


def test_a_sub_agent_naming_its_own_contract_is_judged_by_the_enclosing_one_too(contract, tmp_path):
    lenient = tmp_path / "sub-agent.yaml"
    lenient.write_text("name: sub\nversion: 1\nrules:\n  - id: no-delete\n    type: forbidden_spans\n"
                       "    select: {step: files.delete}\n")  # fmt: skip
    traced = Traced()
    shop = Shop(traced)
    with op.run(inputs={"order_id": ORDER}, contract=contract, tracer_provider=traced.provider):
        shop.check(order_id=ORDER)
        shop.refund(order_id=ORDER)
        sub_agent = op.run(contract=lenient, tracer_provider=traced.provider)
        with sub_agent, pytest.raises(op.ProvenanceError) as twice:
            shop.refund(order_id=ORDER)
    assert twice.value.violations == ("contract:refund-once:DUPLICATE_SIDE_EFFECT",)
    assert shop.log == [ORDER]


def test_the_whole_run_is_judged_once_when_the_outermost_run_ends_with_the_sub_agents_calls(contract):
    """The required fraud check, made by the sub-agent, counts for the run; the verdict is the
    outermost run's, on its span."""
    traced = Traced()
    shop = Shop(traced)
    with op.run(inputs={"order_id": ORDER}, contract=contract, tracer_provider=traced.provider):
        with op.run(tracer_provider=traced.provider):
            shop.check(order_id=ORDER)
        shop.refund(order_id=ORDER)
    (root,) = [s for s in traced.spans if s.name == "invoke_agent"]
    assert root.attributes[sc.GUARD_RUN_VERDICT] == "pass"
    assert sc.GUARD_RUN_FAILED not in root.attributes


def test_a_run_entered_alone_after_being_nested_is_judged_by_its_own_contract_again(contract):
    """A run object entered a second time, no longer inside another, is its own run again."""
    traced = Traced()
    shop = Shop(traced)
    sub = op.run(inputs={"order_id": ORDER}, tracer_provider=traced.provider)
    with op.run(inputs={"order_id": ORDER}, contract=contract, tracer_provider=traced.provider):
        shop.refund(order_id=ORDER)
        with sub, pytest.raises(op.ProvenanceError):
            shop.refund(order_id=ORDER)
    with sub:
        shop.refund(order_id=ORDER)  # no contract of its own, none configured: nothing counts it
    assert shop.log == [ORDER, ORDER]


def test_a_policy_run_total_is_spent_by_the_sub_agents_calls_too():
    traced = Traced()
    paid: list[int] = []

    @op.tool(
        side_effect="write",
        policy=op.Policy(arguments={"amount": {"run_sum": 100}}),
        tracer_provider=traced.provider,
    )
    def refund(order_id: str, amount: int) -> None:
        paid.append(amount)

    with op.run(inputs={"order_id": ORDER, "amount": 80}, tracer_provider=traced.provider):
        refund(order_id=ORDER, amount=80)
        with op.run(tracer_provider=traced.provider), pytest.raises(op.ProvenanceError) as over:
            refund(order_id=ORDER, amount=80)
    assert over.value.violations == ("policy:amount:run_sum",)
    assert paid == [80]
