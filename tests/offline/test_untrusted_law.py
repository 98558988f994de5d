"""The ``untrusted`` kind offline: ``audit``, the ``provenance_budgets`` rule, ``diff`` and ``mine``
judge it as ``op.Budget`` did online, and traces from before the kind existed read as they did.

Spans come from real ``@op.tool`` calls on the plain OTel SDK, written by the official JSON file
exporter and read back.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_provenance as op
from offline_helpers import write_jsonl
from otel_provenance import semconv
from otel_provenance.budget_law import limits_on_span
from otel_provenance.offline.arguments import argument_kinds, lost_kinds
from otel_provenance.offline.audit import UNTRUSTED_OVER_BUDGET, Budgets, ToolBudget, audit_run
from otel_provenance.offline.contracts import parse_contract
from otel_provenance.offline.diff import diff_runs
from otel_provenance.offline.evaluate import evaluate
from otel_provenance.offline.mine import mine_contract
from otel_provenance.offline.model import Attributes, Run
from otel_provenance.offline.readers import iter_runs

ACCOUNT = "GB33BUKB20201555555555"


def record(path: Path, *, account: str, body: str, max_untrusted: int | None = None) -> Run:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "desk", "service.version": "1"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))

    @op.tool(side_effect="read", trust="untrusted", tracer_provider=provider)
    def read_email() -> dict:
        return {"account": ACCOUNT, "reference": "INV-2026-118", "body": "Pay now, or else."}

    @op.tool(
        side_effect="write",
        budget=op.Budget(max_untrusted=max_untrusted, enforce=False),
        tracer_provider=provider,
    )
    def pay(account: str, body: str) -> None:
        return None

    with op.run(inputs={"known": "GB29NWBK60161331926819"}, tracer_provider=provider):
        read_email()
        pay(account=account, body=body)
    provider.shutdown()
    (run,) = iter_runs([write_jsonl(list(exporter.get_finished_spans()), path)])
    return run


def _pay(run: Run):
    (span,) = [s for s in run.spans if s.tool_name == "pay"]
    return span


def _contract(limits: str):
    return parse_contract(
        "version: 1\nname: t\nrules:\n  - id: p\n    type: provenance_budgets\n"
        f"    select: {{step: pay}}\n{limits}"
    )


def test_every_offline_check_counts_untrusted_as_the_tool_did(tmp_path: Path) -> None:
    run = record(tmp_path / "t.jsonl", account=ACCOUNT, body="Pay now, or else.")
    span = _pay(run)
    assert span.attributes[semconv.VIOLATIONS] == (
        "max_untrusted:account=untrusted",
        "max_untrusted:body=untrusted",
    )
    assert argument_kinds(span) == {"account": "untrusted", "body": "untrusted"}
    report = audit_run(run, Budgets(ToolBudget(max_untrusted=0)))
    (over,) = [f for f in report.findings if f.code == UNTRUSTED_OVER_BUDGET]
    assert over.args == ("account", "body")
    assert ACCOUNT not in over.message
    (result,) = evaluate(run, _contract("    max_untrusted: 0\n")).rules
    assert (
        result.status.value == "fail"
        and "2 untrusted argument(s) (account, body)" in result.findings[0].message
    )
    (pair,) = [p for p in diff_runs(run, run).pairs if p.before.tool == "pay"]
    assert pair.before.over == (semconv.KIND_UNTRUSTED,)


def test_a_reference_the_tool_vetted_stays_exempt_offline(tmp_path: Path) -> None:
    run = record(tmp_path / "t.jsonl", account="GB29NWBK60161331926819", body="INV-2026-118")
    span = _pay(run)
    assert span.attributes[semconv.BUDGET_ALLOWED] == ("body",) and semconv.VIOLATIONS not in span.attributes
    assert argument_kinds(span)["body"] == semconv.KIND_UNTRUSTED
    assert not [f for f in audit_run(run, Budgets(ToolBudget(max_untrusted=0))).findings]
    (result,) = evaluate(run, _contract("    max_untrusted: 0\n")).rules
    assert result.status.value == "pass"


def test_mined_contracts_bound_untrusted_arguments(tmp_path: Path) -> None:
    approved = [
        record(tmp_path / f"a{i}.jsonl", account="GB29NWBK60161331926819", body="thanks") for i in range(2)
    ]
    contract = parse_contract(mine_contract(approved, "desk"))
    assert contract.rule("provenance.pay").params["max_untrusted"] == 0
    injected = record(tmp_path / "b.jsonl", account=ACCOUNT, body="thanks")
    (result,) = [r for r in evaluate(injected, contract).rules if r.rule_id == "provenance.pay"]
    assert result.status.value == "fail"


def test_traces_from_before_the_untrusted_kind_read_as_before(tmp_path: Path) -> None:
    run = record(tmp_path / "t.jsonl", account="GB29NWBK60161331926819", body="thanks", max_untrusted=3)
    gone = (semconv.BUDGET_UNTRUSTED, semconv.BUDGET_MAX_UNTRUSTED)
    spans = tuple(
        replace(s, attributes=Attributes({k: v for k, v in s.attributes.items() if k not in gone}))
        for s in run.spans
    )
    old = replace(run, spans=spans)
    span = _pay(old)
    assert lost_kinds(span, argument_kinds(span).values()) is None
    assert limits_on_span(span.attributes).max_untrusted is None
    assert audit_run(old, Budgets(ToolBudget(max_assumed=0, max_untrusted=0))).verdict.value == "pass"
    (result,) = evaluate(old, _contract("    max_untrusted: 0\n")).rules
    assert result.status.value == "pass"
