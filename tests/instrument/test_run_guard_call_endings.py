"""How each call ended, as the rules judged when the run ends read it: its error type, its violations,
whether it was blocked — for a sub-agent's calls too, which the enclosing run's contract judges with
the run's own (#50), and for a call the guard never saw begin. Online and offline agree on each.

Through ``@op.tool`` and ``op.run(contract=...)`` on the real SDK; the verdict is the one the run's
span carries (``agent.guard.run.verdict``, ``agent.guard.run.failed``), and the offline side reads
the exported bytes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import otel_provenance as op
from instrument_helpers import Traced, settings
from offline_helpers import write_proto
from otel_provenance import semconv as sc
from otel_provenance.instrument.base.settings import ENV_DIGEST_KEY, reset_settings
from otel_provenance.offline.contracts.dsl import parse_contract
from otel_provenance.offline.evaluate import evaluate
from otel_provenance.offline.outcome import Outcome
from otel_provenance.offline.readers import iter_runs

ORDER = "ord-50721"
RUN_CONTRACT = """\
name: refunds
version: 1
rules:
  - id: fraud-first
    type: forbidden_paths
    to: {step: payment.refund}
    unless_preceded_by: {step: fraud.check}
  - {id: carrier-times-out-only, type: allowed_values, select: {step: shipping.quote}, attribute: error.type,
     values: [TimeoutError]}
  - {id: nothing-blocked, type: blocked_calls, max: 0}
"""
SUB_AGENT_CONTRACT = """\
name: sub-agent
version: 1
rules:
  - {id: no-delete, type: forbidden_spans, select: {step: files.delete}}
"""


class Shop:
    def __init__(self, traced: Traced) -> None:
        self.log: list[str] = []
        provider = traced.provider

        @op.tool(name="fraud.check", side_effect="read", tracer_provider=provider)
        def check(order_id: str) -> dict:
            return {"order_id": order_id, "risk": "low"}

        @op.tool(name="payment.refund", side_effect="write", tracer_provider=provider)
        def refund(order_id: str) -> str:
            self.log.append(f"refund {order_id}")
            return "refunded"

        @op.tool(name="shipping.quote", side_effect="read", tracer_provider=provider)
        def quote(order_id: str, failure: str) -> dict:
            raise {"timeout": TimeoutError, "bad-reply": ValueError}[failure]()

        @op.tool(name="files.delete", side_effect="write", tracer_provider=provider)
        def delete(order_id: str) -> str:
            self.log.append(f"delete {order_id}")
            return "deleted"

        self.check, self.refund, self.quote, self.delete = check, refund, quote, delete

    def quote_failing_with(self, failure: str) -> None:
        with pytest.raises((TimeoutError, ValueError)):
            self.quote(order_id=ORDER, failure=failure)


def _contract(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _verdicts(traced: Traced) -> list[tuple[str, tuple[str, ...]]]:
    """Per run, in order: the verdict on the run's span and the rules it names as not passing."""
    return [
        (s.attributes[sc.GUARD_RUN_VERDICT], tuple(s.attributes.get(sc.GUARD_RUN_FAILED, ())))
        for s in traced.spans
        if s.name == "invoke_agent"
    ]


def _offline(traced: Traced, contract: Path, tmp_path: Path) -> list[tuple[str, tuple[str, ...]]]:
    """Per run of the exported trace(s), the gate's verdict and the rules that did not pass."""
    parsed = parse_contract(contract.read_text())
    runs = iter_runs([write_proto(traced.spans, tmp_path / "trace.pb")])
    results = [evaluate(run, parsed) for run in runs]
    return [(r.status, tuple(x.rule_id for x in r.rules if x.status is not Outcome.PASS)) for r in results]


def test_how_a_call_failed_is_judged_when_the_run_ends(tmp_path):
    contract = _contract(tmp_path, "refunds.yaml", RUN_CONTRACT)
    traced = Traced()
    shop = Shop(traced)
    for failure in ("timeout", "bad-reply"):
        with op.run(inputs={"order_id": ORDER}, contract=contract, tracer_provider=traced.provider):
            shop.quote_failing_with(failure)
    expected = [("pass", ()), ("fail", ("carrier-times-out-only",))]
    assert _verdicts(traced) == expected
    assert sorted(_offline(traced, contract, tmp_path)) == sorted(expected)  # the reader's run order


def test_a_sub_agents_calls_end_for_the_enclosing_runs_contract_too(tmp_path):
    """The sub-agent names a contract of its own; the enclosing run's learns how each of its calls
    ended: the check it made has ended before the refund (which runs), the carrier timed out, and
    the deletion its own contract blocked counts as blocked for the run."""
    contract = _contract(tmp_path, "refunds.yaml", RUN_CONTRACT)
    sub_agent = _contract(tmp_path, "sub-agent.yaml", SUB_AGENT_CONTRACT)
    traced = Traced()
    shop = Shop(traced)
    run = op.run(inputs={"order_id": ORDER}, contract=contract, tracer_provider=traced.provider)
    sub_run = op.run(agent_name="refunds-sub-agent", contract=sub_agent, tracer_provider=traced.provider)
    with run, sub_run:  # the sub-agent's run, entered inside the run
        shop.check(order_id=ORDER)
        shop.refund(order_id=ORDER)
        shop.quote_failing_with("timeout")
        with pytest.raises(op.ProvenanceError) as blocked:
            shop.delete(order_id=ORDER)
    assert shop.log == [f"refund {ORDER}"]
    assert blocked.value.violations == ("contract:no-delete:FORBIDDEN_STEP",)
    expected = [("fail", ("nothing-blocked",))]
    assert _verdicts(traced) == expected
    assert _offline(traced, contract, tmp_path) == expected


def test_the_violations_a_call_ran_with_are_read_when_the_run_ends(tmp_path):
    """Advisory mode: a refund made before any fraud check runs, carrying the contract's objection
    (joined after the call's own checks); a rule reading ``agent.violations`` when the run ends sees
    it online as offline, and the rule the call ran over unenforced fails the run online as offline."""
    contract = _contract(
        tmp_path,
        "audit.yaml",
        "name: audit\nversion: 1\nrules:\n"
        "  - {id: fraud-first, type: forbidden_paths, to: {step: payment.refund}, "
        "unless_preceded_by: {step: fraud.check}}\n"
        "  - {id: flagged, type: attribute_constraints, select: {step: payment.refund}, "
        "attribute: agent.violations, op: exists}\n",
    )
    traced = Traced()
    shop = Shop(traced)
    run = op.run(inputs={"order_id": ORDER}, contract=contract, tracer_provider=traced.provider)
    with settings(enforce=False), run:
        shop.refund(order_id=ORDER)
    assert shop.log == [f"refund {ORDER}"]
    assert traced.span("payment.refund").attributes[sc.VIOLATIONS] == ("contract:fraud-first:FORBIDDEN_PATH",)
    expected = [("fail", ("fraud-first",))]  # flagged passes
    assert _verdicts(traced) == expected  # fraud-first objected at the call, and nobody enforced it
    assert _offline(traced, contract, tmp_path) == expected


def test_a_call_the_guard_never_saw_begin_ends_without_disturbing_the_run(monkeypatch, tmp_path):
    """An unusable digest key is a provenance fault before the contract is asked: the read call runs
    (recorded as the fault), its end is no call of the run's, and the run is judged as usual."""
    contract = _contract(tmp_path, "refunds.yaml", RUN_CONTRACT)
    traced = Traced()
    shop = Shop(traced)
    with op.run(contract=contract, tracer_provider=traced.provider):
        monkeypatch.setenv(ENV_DIGEST_KEY, "short")  # the key goes bad while the run is on
        reset_settings()
        try:
            assert shop.check(order_id=ORDER) == {"order_id": ORDER, "risk": "low"}
        finally:
            monkeypatch.delenv(ENV_DIGEST_KEY)
            reset_settings()
    assert traced.span("fraud.check").attributes[sc.VIOLATIONS] == ("provenance_fault:ConfigurationError",)
    assert _verdicts(traced) == [("pass", ())]
