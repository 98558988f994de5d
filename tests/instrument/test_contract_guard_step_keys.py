"""The guard finds a call's rules by its step key, as the offline gate does (#50).

A contract names a step by its *step key*: the tool's name with the parts that vary from run to run
(dates, runs of four or more digits, hex ids, UUIDs) taken out (``offline/stepkey.py``) — what ``mine``
writes and what the gate matches. A tool named for a dated API version, ``billing.v20240620.refund``,
is the step ``billing.v{id}.refund``; two tenants' tools ``crm.tenant_4711.refund`` and
``crm.tenant_4712.refund`` are one step, ``crm.tenant_{id}.refund``. Before #50 the guard looked the
rules up by the raw tool name and counted only calls of the same raw name: such calls ran unjudged,
and only the run's span (and the gate, afterwards) failed the run — "blocked online = fails offline"
broke for them. Through ``@op.tool`` and ``op.run`` on the real SDK; the gate reads the exported bytes.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from contract_guard_calls import contract_file, refused

import otel_provenance as op
from instrument_helpers import Traced, settings
from offline_helpers import write_proto
from otel_provenance import semconv as sc
from otel_provenance.offline.contracts.dsl import parse_contract
from otel_provenance.offline.evaluate import evaluate
from otel_provenance.offline.outcome import Outcome
from otel_provenance.offline.readers import iter_runs

ORDER = "ord-50913"


def _refunds(traced: Traced, log: list[str], *names: str) -> list:
    def make(name: str):
        @op.tool(name=name, side_effect="write", tracer_provider=traced.provider)
        def refund(order_id: str) -> dict:
            log.append(name)
            return {"refunded": True}

        return partial(refund, order_id=ORDER)

    return [make(name) for name in names]


def _run(traced: Traced, rule: str, tmp_path: Path, tools: list) -> list[tuple[str, ...]]:
    """The agent calls each of ``tools`` in turn; the objections of the calls the guard blocked."""
    contract = contract_file(tmp_path, rule, name="billing")
    with op.run(inputs={"order_id": ORDER}, contract=contract, tracer_provider=traced.provider):
        return refused(tools)


def _offline_failures(traced: Traced, tmp_path: Path) -> list[str]:
    """The rules the gate fails on the exported trace, under the contract :func:`_run` used."""
    (run,) = iter_runs([write_proto(traced.spans, tmp_path / "trace.pb")])
    contract = parse_contract((tmp_path / "billing.yaml").read_text())
    return [r.rule_id for r in evaluate(run, contract).rules if r.status is Outcome.FAIL]


ONCE = "{id: once, type: cardinality, select: {step: 'billing.v{id}.refund'}, max: 1}"


def test_a_second_call_of_a_tool_named_with_a_date_is_blocked_as_the_gate_would_fail_it(tmp_path):
    advisory, log = Traced(), []
    (refund,) = _refunds(advisory, log, "billing.v20240620.refund")
    with settings(enforce=False):  # the guard only tags: both refunds run, and the gate fails the run
        assert _run(advisory, ONCE, tmp_path, [refund, refund]) == []
    assert _offline_failures(advisory, tmp_path) == ["once"]
    assert advisory.span("billing.v20240620.refund").attributes[sc.VIOLATIONS] == (
        "contract:once:UNEXPECTED_STEP_COUNT",
    )

    traced, log = Traced(), []
    (refund,) = _refunds(traced, log, "billing.v20240620.refund")
    blocked = _run(traced, ONCE, tmp_path, [refund, refund])
    assert blocked == [("contract:once:UNEXPECTED_STEP_COUNT",)]
    assert log == ["billing.v20240620.refund"]
    root = next(s for s in traced.spans if s.name == "invoke_agent")
    assert root.attributes[sc.GUARD_RUN_VERDICT] == "pass"
    assert _offline_failures(traced, tmp_path) == []


def test_calls_of_two_tools_that_are_one_step_are_counted_together(tmp_path):
    traced, log = Traced(), []
    tools = _refunds(traced, log, "crm.tenant_4711.refund", "crm.tenant_4712.refund")
    rule = "{id: once, type: cardinality, select: {step: 'crm.tenant_{id}.refund'}, max: 1}"
    assert _run(traced, rule, tmp_path, tools) == [("contract:once:UNEXPECTED_STEP_COUNT",)]
    assert log == ["crm.tenant_4711.refund"]
    assert _offline_failures(traced, tmp_path) == []


@pytest.mark.parametrize(
    "rule",
    [
        "{id: never, type: forbidden_spans, select: {step: 'billing.v{id}.refund'}}",
        "{id: never, type: forbidden_paths, to: {step: 'billing.v{id}.refund'},"
        " unless_preceded_by: {step: check}}",
    ],
    ids=["forbidden_spans", "forbidden_paths"],
)
def test_a_forbidden_call_of_a_tool_named_with_a_date_never_runs(tmp_path, rule):
    traced, log = Traced(), []
    (refund,) = _refunds(traced, log, "billing.v20240620.refund")
    (blocked,) = _run(traced, rule, tmp_path, [refund])
    assert blocked[0].startswith("contract:never:")
    assert log == []
