"""Evaluate one run against a contract: a pure function from (run, contract) to verdicts.

Each rule is compiled once (``RuleType.compile``) into a test that is true only when its checker
would find nothing; most runs of a release pass most rules, and those are decided from counts the
run's evidence shares among all rules. Only a rule the test cannot pass runs its checker, which
writes every finding (:func:`check_rule`) — so the results are the checkers' results, byte for byte.

``evaluate`` lets an internal error propagate; ``evaluate_safely`` is the single place where an
exception becomes the status ``error`` — for that rule and therefore for the run — which no later
stage can turn into a pass.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from .contracts.compiled import AllPass
from .contracts.evidence import RunEvidence
from .contracts.model import Contract, Rule
from .contracts.outcomes import run_witnesses
from .contracts.rules import REGISTRY, Unknown, Violation, Witness
from .contracts.ruletype import Passes
from .model import Run
from .outcome import Outcome, worst


@dataclass(frozen=True, slots=True)
class Finding:
    """One reason a rule did not pass on a run (a violation or a missing piece of evidence)."""

    status: Outcome  # FAIL or INSUFFICIENT (ERROR for an internal error)
    message: str
    witnesses: tuple[Witness, ...]


@dataclass(frozen=True, slots=True)
class RuleResult:
    rule_id: str
    code: str
    status: Outcome
    findings: tuple[Finding, ...] = ()


@dataclass(frozen=True, slots=True)
class RunResult:
    run_id: str
    trace_ids: tuple[str, ...]
    release: str | None
    status: str  # pass | fail | insufficient_data | error
    rules: tuple[RuleResult, ...]  # sorted by rule id


def evaluate(run: Run, contract: Contract) -> RunResult:
    """Every rule of ``contract`` on ``run``. Raises on an internal error (see ``evaluate_safely``)."""
    evidence = RunEvidence(run)
    return _result(run, [evaluate_rule(rule, evidence) for rule in contract.rules])


def evaluate_rule(rule: Rule, evidence: RunEvidence) -> RuleResult:
    """The rule's result on one run: ``pass`` when its compiled test (``RuleType.compile``) shows the
    checker would find nothing, else what :func:`check_rule` finds."""
    passes, passed = compiled(rule)
    if passes is not None and passes(evidence):
        return passed
    return check_rule(rule, evidence)


def compiled(rule: Rule) -> tuple[Passes | None, RuleResult]:
    """The rule's pass test and the result it gives, made on first use and kept on the rule."""
    made = rule.compiled
    if made is None:
        compile_rule = REGISTRY[rule.type].compile
        made = (compile_rule(rule) if compile_rule else None, RuleResult(rule.id, rule.code, Outcome.PASS))
        object.__setattr__(rule, "compiled", made)
    return made


def check_rule(rule: Rule, evidence: RunEvidence) -> RuleResult:
    """The rule's checker on one run, its findings sorted: the one place a rule's findings are made."""
    checker = REGISTRY[rule.type].checker
    findings = []
    for outcome in checker(rule, evidence):
        if isinstance(outcome, Violation):
            findings.append(Finding(Outcome.FAIL, outcome.message, outcome.witnesses))
        elif isinstance(outcome, Unknown):
            findings.append(Finding(Outcome.INSUFFICIENT, outcome.message, outcome.witnesses))
        else:
            raise TypeError(f"rule {rule.id}: checker yielded {type(outcome).__name__}")
    statuses = {f.status for f in findings}
    status = Outcome.FAIL if Outcome.FAIL in statuses else Outcome.INSUFFICIENT if statuses else Outcome.PASS
    return RuleResult(rule.id, rule.code, status, tuple(sorted(findings, key=_finding_key)))


def evaluate_safely(
    run: Run, contract: Contract, rule_evaluator: Callable[[Rule, RunEvidence], RuleResult] = evaluate_rule
) -> RunResult:
    """Like ``evaluate``, but an exception in a rule makes that rule ``error`` (never ``pass``).

    The message names the exception type only: exception text could quote trace content.
    """
    try:
        evidence = RunEvidence(run)
    except Exception as exc:  # evidence that cannot be indexed makes every rule an error
        return _result(run, [_error(rule, exc) for rule in contract.rules])
    plan = _plan(contract) if rule_evaluator is evaluate_rule else None
    if plan is not None:
        all_pass = _PLAN.all_pass  # made with the plan
        if all_pass is not None and all_pass(evidence):  # most runs: every rule's pass, in id order
            return RunResult(run.run_id, run.trace_ids, run.release, _PASSED, _PLAN.passed)
        return _evaluate_planned(run, evidence, plan)
    results = []
    for rule in contract.rules:
        try:
            results.append(rule_evaluator(rule, evidence))
        except Exception as exc:
            results.append(_error(rule, exc))
    return _result(run, results)


_Step = tuple[Rule, "Passes | None", RuleResult, "str | None"]


class _Plan(threading.local):
    """The last contract evaluated (on this thread) and its rules as :func:`_evaluate_planned` walks
    them: sorted by id, each with its compiled test, its ``pass`` result and the step whose absence
    passes it (``RuleType.passes_without_step``) — found once per contract, not per run —, with the
    contract's :class:`AllPass` test and the results it stands for."""

    contract: Contract | None = None
    steps: tuple[_Step, ...] | None = None
    all_pass: AllPass | None = None
    passed: tuple[RuleResult, ...] = ()


_PLAN = _Plan()


def _plan(contract: Contract) -> tuple[_Step, ...] | None:
    """The contract's plan; None when a rule does not compile (each run then asks ``evaluate_rule``,
    which makes that rule's exception the rule's ``error``)."""
    plan = _PLAN
    if plan.contract is not contract:
        steps: list[_Step] | None = []
        for rule in sorted(contract.rules, key=lambda r: r.id):
            try:
                passes, passed = compiled(rule)
            except Exception:
                steps = None
                break
            without = REGISTRY[rule.type].passes_without_step
            select = rule.params.get(without) if without is not None else None
            steps.append((rule, passes, passed, getattr(select, "step", None)))
        plan.contract, plan.steps = contract, None if steps is None else tuple(steps)
        plan.all_pass = None if steps is None else AllPass.of([(r, p, w) for r, p, _, w in steps])
        plan.passed = () if steps is None else tuple(passed for _, _, passed, _ in steps)
    return plan.steps


def _evaluate_planned(run: Run, evidence: RunEvidence, plan: tuple[_Step, ...]) -> RunResult:
    """``evaluate_safely`` with ``evaluate_rule``, over the contract's plan: the same results, without
    asking a rule whose selected step the run does not take, and with the rules already in order."""
    present = evidence.by_step
    results = []
    for rule, passes, passed, step in plan:
        if step is not None and step not in present:
            results.append(passed)
            continue
        try:
            results.append(passed if passes is not None and passes(evidence) else check_rule(rule, evidence))
        except Exception as exc:
            results.append(_error(rule, exc))
    return _result(run, results, ordered=True)


_PASSED = Outcome.PASS.decision


def release_conflict_result(run: Run, contract: Contract, key: str, found: tuple[str, ...]) -> RunResult:
    """The result of a run whose agent spans disagree about the release: every rule insufficient.

    Such a run cannot be attributed to one release, so nothing in it can pass for any of them; it is
    counted (never skipped), and the finding names the values found."""
    message = (
        f"the run's agent spans disagree about {key} ({', '.join(found)}); it cannot be attributed "
        "to one release"
    )
    witnesses = run_witnesses(run, **{key: found})
    finding = Finding(Outcome.INSUFFICIENT, message, witnesses)
    return _result(
        run, [RuleResult(rule.id, rule.code, Outcome.INSUFFICIENT, (finding,)) for rule in contract.rules]
    )


def _error(rule: Rule, exc: BaseException) -> RuleResult:
    message = f"internal error while checking rule {rule.id}: {type(exc).__name__}"
    return RuleResult(rule.id, rule.code, Outcome.ERROR, (Finding(Outcome.ERROR, message, ()),))


def _result(run: Run, results: list[RuleResult], ordered: bool = False) -> RunResult:
    """The run's result: its rules' results sorted by rule id (``ordered``: they already are)."""
    ordered = tuple(results) if ordered else tuple(sorted(results, key=lambda r: r.rule_id))
    status = worst({r.status for r in ordered}).decision
    return RunResult(run.run_id, run.trace_ids, run.release, status, ordered)


def _finding_key(finding: Finding) -> tuple:
    return (finding.status.value, finding.message, [(w.trace_id, w.span_ids) for w in finding.witnesses])
