"""What the run's span says when the run ends (#50): ``agent.guard.run.verdict`` and
``agent.guard.run.failed`` hold the rules only the whole run decides (docs/guard.md's table):

- an attribute rule over an attribute set *after* the call (``agent.tool.status``) is judged there —
  a tool that failed fails the run;
- a rule decided before each call is not judged again there: a person's yes to an ``ask`` rule stands
  on the call's span (``agent.guard.approval``), not as a failed run;
- each run under a contract configured for every run (``op.configure(contract=...)``) gets its own
  verdict, however the runs before it went;
- the run's calls hang under the run's span as the exported trace says — the span's name
  (``invoke_agent refunds``) and the attributes a rule names (``gen_ai.agent.name``) — so the whole-run
  rules over it (``required_edges``, ``required_ancestry``) say what the gate says.
"""

from __future__ import annotations

import pytest
from contract_guard_calls import contract_file

import otel_provenance as op
from instrument_helpers import Traced
from offline_helpers import write_proto
from otel_provenance import semconv as sc
from otel_provenance.instrument.base import settings as settings_module
from otel_provenance.offline.contracts.dsl import parse_contract
from otel_provenance.offline.evaluate import evaluate
from otel_provenance.offline.readers import iter_runs

ORDER = "ord-50610"


def _verdicts(traced: Traced) -> list[tuple]:
    roots = [s for s in traced.spans if s.attributes.get(sc.GEN_AI_OPERATION_NAME) == sc.INVOKE_AGENT]
    return [(s.attributes[sc.GUARD_RUN_VERDICT], s.attributes.get(sc.GUARD_RUN_FAILED)) for s in roots]


def _tools(traced: Traced, log: list[str], *, fail: bool = False):
    @op.tool(name="fraud.check", side_effect="read", tracer_provider=traced.provider)
    def check(order_id: str) -> dict:
        return {"risk": "low"}

    provider = traced.provider

    @op.tool(name="payment.refund", side_effect="write", idempotency_key="key", tracer_provider=provider)
    def refund(order_id: str, key: str | None = None) -> dict:
        log.append(order_id)
        if fail:
            raise TimeoutError("the payment service did not answer")
        return {"refunded": True}

    return check, refund


@pytest.mark.parametrize(
    "rule",
    [
        "{id: refund-ok, type: allowed_values, select: {step: payment.refund}, attribute: agent.tool.status,"
        " values: [ok]}",
        "{id: refund-ok, type: attribute_constraints, select: {step: payment.refund}, attribute: error.type,"
        " op: '!=', value: TimeoutError}",
    ],
    ids=["allowed_values-status", "attribute_constraints-error-type"],
)
def test_a_rule_over_how_a_call_ended_fails_the_run_whose_call_failed(tmp_path, rule):
    traced, log = Traced(), []
    _, refund = _tools(traced, log, fail=True)
    contract = contract_file(tmp_path, rule)
    with (
        op.run(inputs={"order_id": ORDER}, contract=contract, tracer_provider=traced.provider),
        pytest.raises(TimeoutError),
    ):
        refund(order_id=ORDER)  # not judged before the call: its status is not known yet
    assert log == [ORDER]
    assert _verdicts(traced) == [("fail", ("refund-ok",))]


@pytest.mark.parametrize(
    ("rule", "code"),
    [
        (
            "{id: no-refunds, type: forbidden_spans, select: {step: payment.refund}, on_violation: ask}",
            "FORBIDDEN_STEP",
        ),
        (
            "{id: no-refunds, type: allowed_values, select: {step: payment.refund},"
            " attribute: agent.idempotency.present, values: [true], on_violation: ask}",
            "DISALLOWED_VALUE",
        ),
    ],
    ids=["forbidden_spans", "allowed_values-call-time-attribute"],
)
def test_a_call_time_rule_a_person_overruled_is_not_failed_again_when_the_run_ends(tmp_path, rule, code):
    traced, log, asked = Traced(), [], []
    _, refund = _tools(traced, log)

    def approve(request: op.ApprovalRequest) -> bool:
        asked.append(request.reasons)
        return True

    contract = contract_file(tmp_path, rule)
    options = {"contract": contract, "approver": approve, "tracer_provider": traced.provider}
    with op.run(inputs={"order_id": ORDER}, **options):
        refund(order_id=ORDER)  # no idempotency key: the allowed_values rule objects too
    assert log == [ORDER]
    assert asked == [(f"contract:no-refunds:{code}",)]
    assert traced.span("payment.refund").attributes[sc.GUARD_APPROVAL] == "approved"
    assert _verdicts(traced) == [("pass", None)]


@pytest.mark.parametrize(
    ("bounds", "refunds", "verdict"),
    [
        ("max: 1", 2, ("pass", None)),
        ("exact: 1", 2, ("pass", None)),
        ("min: 1, max: 1", 2, ("pass", None)),
        ("exact: 1", 0, ("fail", ("one-refund",))),  # the minimum still waits for the end
        ("min: 2, max: 2", 3, ("pass", None)),
        ("min: 3, max: 3", 2, ("fail", ("one-refund",))),
    ],
)
def test_a_cardinality_maximum_a_person_overruled_is_not_failed_again_when_the_run_ends(
    tmp_path, bounds, refunds, verdict
):
    """Like every rule decided before each call: the run's end judges only a ``cardinality``'s
    minimum (docs/guard.md's table), so a refund a person let past the maximum is on its span, not
    a failed run."""
    traced, log, asked = Traced(), [], []
    _, refund = _tools(traced, log)

    def approve(request: op.ApprovalRequest) -> bool:
        asked.append(request.reasons)
        return True

    select = "select: {step: payment.refund}"
    rule = f"{{id: one-refund, type: cardinality, {select}, {bounds}, on_violation: ask}}"
    contract = contract_file(tmp_path, rule)
    options = {"contract": contract, "approver": approve, "tracer_provider": traced.provider}
    with op.run(inputs={"order_id": ORDER}, **options):
        for _ in range(refunds):
            refund(order_id=ORDER)
    assert log == [ORDER] * refunds
    over = max(0, refunds - int(bounds.rpartition(" ")[2]))
    assert asked == [("contract:one-refund:UNEXPECTED_STEP_COUNT",)] * over
    assert _verdicts(traced) == [verdict]


@pytest.mark.parametrize(
    "rule",
    [
        "type: cardinality, {select}, max: 1",
        "type: cardinality, {select}, exact: 1",
        "type: cardinality, {select}, min: 0, max: 1",
        "type: forbidden_spans, {select}",
    ],
)
def test_a_count_over_how_calls_ended_is_judged_whole_when_the_run_ends(tmp_path, rule):
    """A selector over an attribute set after the call (``agent.tool.status: error``) cannot pick
    the call before it runs, so nothing of the rule was decided then: the run's end judges all of it
    (found in review: the minimum-only end had let three failed refunds pass ``max: 1``)."""
    traced, log = Traced(), []
    _, refund = _tools(traced, log, fail=True)
    select = "select: {step: payment.refund, attributes: {agent.tool.status: error}}"
    contract = contract_file(tmp_path, "{id: failed-refunds, " + rule.format(select=select) + "}")
    with op.run(inputs={"order_id": ORDER}, contract=contract, tracer_provider=traced.provider):
        for _ in range(3):
            with pytest.raises(TimeoutError):
                refund(order_id=ORDER)
    assert log == [ORDER] * 3  # none blocked: a call's status is not known before it runs
    assert _verdicts(traced) == [("fail", ("failed-refunds",))]


@pytest.mark.parametrize(
    "rule",
    [
        "{id: one-refund, type: cardinality, select: {step: payment.refund}, max: 1}",
        "{id: one-refund, type: forbidden_spans, select: {step: payment.refund}}",
    ],
)
def test_a_call_time_rule_no_one_enforced_fails_the_run(tmp_path, rule):
    """``enforce=False``: the guard only tags, so the calls ran over the rule and nobody decided they
    could — the run fails, as the offline gate says; an approval (above) is a decision, this is not."""
    traced, log = Traced(), []
    _, refund = _tools(traced, log)
    contract = contract_file(tmp_path, rule)
    options = {"contract": contract, "tracer_provider": traced.provider}
    try:
        op.configure(exporter="none", enforce=False, set_global=False)
        with op.run(inputs={"order_id": ORDER}, **options):
            refund(order_id=ORDER)
            refund(order_id=ORDER)
    finally:
        settings_module.reset_settings()
    assert log == [ORDER] * 2
    assert _verdicts(traced) == [("fail", ("one-refund",))]


def test_an_unenforced_objection_of_a_policy_is_not_a_contract_rule_of_the_same_name(tmp_path):
    """``policy:amount:run_sum`` names an argument, not a rule: a contract rule that happens to be
    called ``amount`` (and passes) does not fail the run for it."""
    traced, log = Traced(), []

    @op.tool(
        name="payment.refund",
        side_effect="write",
        policy=op.Policy(arguments={"amount": {"run_sum": 100}}),
        tracer_provider=traced.provider,
    )
    def refund(order_id: str, amount: int) -> dict:
        log.append(order_id)
        return {"refunded": True}

    contract = contract_file(
        tmp_path, "{id: amount, type: cardinality, select: {step: payment.refund}, max: 5}"
    )
    try:
        op.configure(exporter="none", enforce=False, set_global=False)
        with op.run(
            inputs={"order_id": ORDER, "amount": 500}, contract=contract, tracer_provider=traced.provider
        ):
            refund(order_id=ORDER, amount=500)
    finally:
        settings_module.reset_settings()
    assert log == [ORDER]
    assert traced.span("payment.refund").attributes[sc.VIOLATIONS] == ("policy:amount:run_sum",)
    assert _verdicts(traced) == [("pass", None)]


def test_each_run_under_a_configured_contract_gets_its_own_verdict(tmp_path):
    traced, log = Traced(), []
    check, refund = _tools(traced, log)
    contract = contract_file(tmp_path, "{id: checked, type: required_spans, select: {step: fraud.check}}")
    try:
        op.configure(exporter="none", contract=contract, set_global=False)
        for checked in (False, True, True, False):
            with op.run(inputs={"order_id": ORDER}, tracer_provider=traced.provider):
                if checked:
                    check(order_id=ORDER)
                refund(order_id=ORDER)
    finally:
        settings_module.reset_settings()
    failed, passed = ("fail", ("checked",)), ("pass", None)
    assert _verdicts(traced) == [failed, passed, passed, failed]


@pytest.mark.parametrize(
    ("agent", "parent", "verdict"),
    [
        (None, "{step: invoke_agent}", "pass"),
        ("refunds", "{step: invoke_agent refunds}", "pass"),
        ("refunds", "{attributes: {gen_ai.agent.name: refunds}}", "pass"),
        ("mailer", "{step: invoke_agent refunds}", "fail"),
        ("mailer", "{attributes: {gen_ai.agent.name: refunds}}", "fail"),
    ],
)
def test_the_whole_run_rules_over_the_agents_span_say_what_the_gate_says(tmp_path, agent, parent, verdict):
    """docs/contracts.md's edge and ancestry examples: the run's span is ``invoke_agent``, or
    ``invoke_agent <name>`` with ``gen_ai.agent.name`` for a named agent; a refund made in another
    agent's run fails the run, online and offline."""
    traced, log = Traced(), []
    _, refund = _tools(traced, log)
    contract = contract_file(
        tmp_path,
        f"{{id: refund-by-agent, type: required_edges, parent: {parent}, child: {{step: payment.refund}}}}",
        f"{{id: writes-inside-agent, type: required_ancestry, ancestor: {parent},"
        " descendant: {attributes: {agent.side_effect: write}}}",
    )
    options = {"contract": contract, "tracer_provider": traced.provider}
    with op.run(inputs={"order_id": ORDER}, agent_name=agent, **options):
        refund(order_id=ORDER)
    assert log == [ORDER]
    failed = ("refund-by-agent", "writes-inside-agent") if verdict == "fail" else None
    assert _verdicts(traced) == [(verdict, failed)]
    (run,) = iter_runs([write_proto(traced.spans, tmp_path / "trace.pb")])
    offline = evaluate(run, parse_contract(contract.read_text()))
    assert [rule.status.value for rule in offline.rules] == [verdict, verdict]
