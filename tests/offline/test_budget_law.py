"""One budget law: the same argument-kind cases give the same decision through ``op.Budget`` (online),
``audit``, the ``provenance_budgets`` rule and ``diff`` (offline), and mined contracts respect the
allow-list the tool applied. Spans come from real ``@op.tool`` calls on the plain OTel SDK, written by
the official JSON file exporter and read back."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_provenance as op
from offline_helpers import write_jsonl
from otel_provenance import semconv
from otel_provenance.budget_law import ALLOW_REACH, Limits, count_arguments, over_budget
from otel_provenance.offline.audit import (
    ASSUMED_OVER_BUDGET,
    INVENTED_OVER_BUDGET,
    Budgets,
    ToolBudget,
    audit_run,
)
from otel_provenance.offline.contracts import parse_contract
from otel_provenance.offline.diff import diff_runs
from otel_provenance.offline.evaluate import evaluate
from otel_provenance.offline.mine import mine_contract
from otel_provenance.offline.model import Run
from otel_provenance.offline.readers import iter_runs

SEEN = {"ticket_id": "TCK-004711", "reason": "the customer asked twice", "title": "Refund for order"}
ASM, INV = semconv.KIND_ASSUMED, semconv.KIND_INVENTED


@dataclass(frozen=True)
class Case:
    name: str
    kinds: dict[str, str]  # argument → observed | assumed | invented
    allow: frozenset[str]
    max_assumed: int | None
    max_invented: int | None
    over: tuple[str, ...]  # the one decision every path must reach


CASES = [
    Case(
        "allowed_reason_but_guessed_id",
        {"ticket_id": ASM, "reason": ASM},
        frozenset({"reason"}),
        0,
        None,
        (ASM,),
    ),
    Case(
        "allowed_reason_sourced_id",
        {"ticket_id": "observed", "reason": ASM},
        frozenset({"reason"}),
        0,
        None,
        (),
    ),
    Case("reason_not_allowed", {"reason": ASM}, frozenset(), 0, None, (ASM,)),
    Case("allow_never_reaches_invented", {"title": INV}, frozenset({"title"}), None, 0, (INV,)),
    Case("invented_within", {"title": INV}, frozenset(), None, 1, ()),
    Case("both_over", {"ticket_id": ASM, "title": INV, "reason": ASM}, frozenset(), 1, 0, (ASM, INV)),
    Case("all_sourced", {"ticket_id": "observed", "title": "observed"}, frozenset(), 0, 0, ()),
    Case("one_counted_within_one", {"ticket_id": ASM, "reason": ASM}, frozenset({"reason"}), 1, 0, ()),
]


def record(case: Case, path: Path) -> Run:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "desk", "service.version": "1"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("desk")
    budget = op.Budget(
        max_assumed=case.max_assumed, max_invented=case.max_invented, allow=case.allow, enforce=False
    )

    @op.tool(side_effect="read", tracer_provider=provider)
    def lookup() -> dict:
        return dict(SEEN)

    @op.tool(
        side_effect="read",
        budget=budget,
        invented={n for n, k in case.kinds.items() if k == INV},
        tracer_provider=provider,
    )
    def act(ticket_id: str = "", reason: str = "", title: str = "") -> None:
        return None

    with op.run(), tracer.start_as_current_span("invoke_agent desk"):
        seen = lookup()
        act(
            **{
                n: seen[n] if k == "observed" else f"never seen before: {n} 8812"
                for n, k in case.kinds.items()
            }
        )
    provider.shutdown()
    (run,) = iter_runs([write_jsonl(list(exporter.get_finished_spans()), path)])
    return run


def _act(run: Run):
    (span,) = [s for s in run.spans if s.tool_name == "act"]
    return span


def online(run: Run) -> tuple[str, ...]:
    violations = _act(run).attributes.get(semconv.VIOLATIONS, ())
    rules = {v.split(":", 1)[0] for v in violations}
    return tuple(k for k, rule in ((ASM, "max_assumed"), (INV, "max_invented")) if rule in rules)


def audited(run: Run, case: Case) -> tuple[str, ...]:
    report = audit_run(run, Budgets(ToolBudget(case.max_assumed, case.max_invented)))
    codes = {f.code for f in report.findings}
    return tuple(k for k, code in ((ASM, ASSUMED_OVER_BUDGET), (INV, INVENTED_OVER_BUDGET)) if code in codes)


def contracted(run: Run, case: Case) -> tuple[str, ...]:
    limits = "".join(
        f"\n    {key}: {value}"
        for key, value in (("max_assumed", case.max_assumed), ("max_invented", case.max_invented))
        if value is not None
    )
    contract = parse_contract(
        "version: 1\nname: t\nrules:\n  - id: p\n    type: provenance_budgets\n"
        f"    select: {{step: act}}{limits}\n"
    )
    (result,) = evaluate(run, contract).rules
    kinds = {key for f in result.findings for w in f.witnesses for key, _ in w.observed}
    return tuple(k for k in (ASM, INV) if k in kinds)


def diffed(run: Run) -> tuple[str, ...]:
    (pair,) = [p for p in diff_runs(run, run).pairs if p.before.tool == "act"]
    return pair.before.over


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_every_path_reaches_the_same_decision(case: Case, tmp_path: Path) -> None:
    run = record(case, tmp_path / "t.jsonl")
    law = over_budget(
        count_arguments(case.kinds.items(), case.allow), Limits(case.max_assumed, case.max_invented)
    )
    assert law == case.over
    assert online(run) == case.over
    assert audited(run, case) == case.over
    assert contracted(run, case) == case.over
    assert diffed(run) == case.over


def test_the_allow_list_reaches_assumed_only() -> None:
    assert frozenset({ASM}) == ALLOW_REACH


def test_mined_budgets_respect_what_the_tool_allowed(tmp_path: Path) -> None:
    sourced = CASES[1]  # ticket_id observed, reason assumed but allowed
    approved = [record(sourced, tmp_path / f"a{i}.jsonl") for i in range(2)]
    contract = parse_contract(mine_contract(approved, "desk"))
    rule = contract.rule("provenance.act")
    assert rule.params["max_assumed"] == 0 and rule.params["allow"] == ("reason",)
    guessed = record(CASES[0], tmp_path / "b.jsonl")  # an assumed ticket_id next to the allowed reason
    (result,) = [r for r in evaluate(guessed, contract).rules if r.rule_id == "provenance.act"]
    assert result.status.value == "fail"
    assert "1 assumed argument(s) (ticket_id) (reason allowed)" in result.findings[0].message


@pytest.mark.parametrize("recorded", ["0", True, False, 0.0, (0,)], ids=repr)
def test_a_recorded_limit_that_is_not_an_integer_is_no_limit(recorded: object) -> None:
    """A foreign span may carry ``agent.budget.max_*`` of another type: ``diff`` reads it as no limit
    recorded (a bool is not an integer here, though Python says so), never as a limit or a crash."""
    from contract_runs import RunBuilder

    def one_call(limit: object) -> Run:
        b = RunBuilder("hostile-budget", "1")
        b.add(
            "act",
            attrs={
                semconv.TOOL_STATUS: "ok",
                semconv.arg_attr("reason", semconv.ARG_KIND_SUFFIX): ASM,
                semconv.arg_attr("title", semconv.ARG_KIND_SUFFIX): INV,
                semconv.BUDGET_MAX_ASSUMED: limit,
                semconv.BUDGET_MAX_INVENTED: limit,
                semconv.BUDGET_MAX_UNTRUSTED: limit,
            },
        )
        return b.run()

    assert diffed(one_call(0)) == (ASM, INV)  # the same call with integer limits is over both
    assert diffed(one_call(recorded)) == ()
