"""Counts at call time: a count reads the calls its selector can pick, and every rule is judged.

A ``cardinality`` rule over every write (``select: {attributes: {agent.side_effect: write}}``, the
example of docs/contracts.md) counts the writes of every tool; the guard used to count only the
calls of the tool about to be called, so a refund and then a deletion — two writes, one allowed —
both ran while the offline gate failed the trace. A rule the call cannot be judged on yet (an
attribute set when it ends) does not stop the rules after it. Through ``@op.tool`` and
``op.run(contract=...)`` on the real SDK; the offline side reads the exported bytes.
"""

from __future__ import annotations

from pathlib import Path

import otel_provenance as op
from instrument_helpers import Traced, settings
from offline_helpers import write_proto
from otel_provenance.offline.contracts.dsl import parse_contract
from otel_provenance.offline.evaluate import evaluate
from otel_provenance.offline.outcome import Outcome
from otel_provenance.offline.readers import iter_runs

ORDER = "ord-50831"
ONE_WRITE = """\
name: one-write
version: 1
rules:
  - {id: one-write, type: cardinality, select: {attributes: {agent.side_effect: write}}, max: 1}
"""
AFTER_THE_CALL_FIRST = """\
name: refunds
version: 1
rules:
  - {id: times-out-only, type: allowed_values, select: {step: payment.refund}, attribute: error.type,
     values: [TimeoutError]}
  - {id: refund-once, type: cardinality, select: {step: payment.refund}, max: 1}
"""


class Desk:
    """A refund, a deletion and a lookup: what reached each service."""

    def __init__(self, traced: Traced) -> None:
        self.log: list[str] = []
        provider = traced.provider

        @op.tool(name="payment.refund", side_effect="write", tracer_provider=provider)
        def refund(order_id: str) -> str:
            self.log.append("refund")
            return "refunded"

        @op.tool(name="files.delete", side_effect="write", tracer_provider=provider)
        def delete(order_id: str) -> str:
            self.log.append("delete")
            return "deleted"

        @op.tool(name="order.lookup", side_effect="read", tracer_provider=provider)
        def lookup(order_id: str) -> dict:
            self.log.append("lookup")
            return {"order_id": order_id}

        self.tools = {"refund": refund, "delete": delete, "lookup": lookup}

    def attempt(self, *names: str) -> list[tuple[str, ...] | None]:
        """Per call, the violations that blocked it, or None when it ran."""
        out: list[tuple[str, ...] | None] = []
        for name in names:
            try:
                self.tools[name](order_id=ORDER)
                out.append(None)
            except op.ProvenanceError as error:
                out.append(error.violations)
        return out


def _contract(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "contract.yaml"
    path.write_text(text)
    return path


def _offline_failures(traced: Traced, contract: Path, tmp_path: Path) -> list[str]:
    (run,) = iter_runs([write_proto(traced.spans, tmp_path / "trace.pb")])
    result = evaluate(run, parse_contract(contract.read_text()))
    return [r.rule_id for r in result.rules if r.status is Outcome.FAIL]


def test_a_count_over_every_write_counts_the_writes_of_every_tool(tmp_path):
    contract = _contract(tmp_path, ONE_WRITE)
    traced = Traced()
    desk = Desk(traced)
    with op.run(inputs={"order_id": ORDER}, contract=contract, tracer_provider=traced.provider):
        blocked = desk.attempt("refund", "lookup", "delete", "refund")
    over = ("contract:one-write:UNEXPECTED_STEP_COUNT",)
    assert blocked == [None, None, over, over]
    assert desk.log == ["refund", "lookup"]
    assert _offline_failures(traced, contract, tmp_path) == []  # the blocked writes never ran


def test_the_writes_an_advisory_count_lets_run_fail_the_run_offline(tmp_path):
    """The same calls with enforcement off: both writes run, each named on its span as over the
    count, and the gate fails the trace — blocked online is what fails offline."""
    contract = _contract(tmp_path, ONE_WRITE)
    traced = Traced()
    desk = Desk(traced)
    run = op.run(inputs={"order_id": ORDER}, contract=contract, tracer_provider=traced.provider)
    with settings(enforce=False), run:
        assert desk.attempt("refund", "delete") == [None, None]
    assert desk.log == ["refund", "delete"]
    violations = [
        traced.span(step).attributes.get("agent.violations") for step in ("payment.refund", "files.delete")
    ]
    assert violations == [None, ("contract:one-write:UNEXPECTED_STEP_COUNT",)]
    assert _offline_failures(traced, contract, tmp_path) == ["one-write"]


def test_a_rule_judged_when_the_call_ends_does_not_stop_the_rules_after_it(tmp_path):
    contract = _contract(tmp_path, AFTER_THE_CALL_FIRST)
    traced = Traced()
    desk = Desk(traced)
    with op.run(inputs={"order_id": ORDER}, contract=contract, tracer_provider=traced.provider):
        blocked = desk.attempt("refund", "refund")
    assert blocked == [None, ("contract:refund-once:UNEXPECTED_STEP_COUNT",)]
    assert desk.log == ["refund"]
