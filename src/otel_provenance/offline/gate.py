"""The release gate: runs → per-rule tallies → thresholds → one decision.

``check_release`` takes any iterable of runs (read from files, or fetched from a backend), keeps
those of the release under test (and of this shard), evaluates each with ``evaluate_safely`` and
returns an ``Aggregate``; ``decide`` applies the contract's thresholds. Precedence: an error
anywhere → ``error``; else runs of the release but not one tool span in them (no agent behaviour:
the instrumentation is missing, so missing steps prove nothing) → ``insufficient_data``; else a rule
over its failing-run limit → ``fail``; else too few runs, or too many runs without enough evidence
for a rule → ``insufficient_data``; else ``pass``. No clock is
read: the completion time is whatever the caller passes.

A rule's failing-run limit is a count (``max_failing_runs``) or a rate at a confidence
(``max_failing_rate``, judged by exact binomial tests in ``contracts.confidence``): such a rule may
also be undecided — insufficient, with the further runs that could decide it (``RateVerdict``).
This module is the one place where a release is found insufficient; a merge of shards' partials
decides here too, from the same counts, so it reaches the verdict one process would.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from .aggregate import Aggregate, RuleTally
from .contracts.confidence import (
    MAX_FURTHER_RUNS,
    RateJudgement,
    fails_after,
    judge_rate,
    passes_after,
    smallest_more,
)
from .contracts.model import Contract, RateLimit, Rule
from .contracts.rational import format_exact, ratio_at_most
from .contracts.rules import REGISTRY, Absence
from .evaluate import RunResult, evaluate_safely, release_conflict_result
from .model import Run
from .outcome import Outcome
from .release import DEFAULT_RELEASE_ATTRIBUTE
from .stepkey import run_index


@dataclass(frozen=True, slots=True)
class Shard:
    """Shard ``index`` (1-based) of ``count``: a run belongs to it by a stable hash of its run id."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        try:
            index_text, count_text = text.split("/")
            shard = cls(int(index_text), int(count_text))
        except ValueError:
            raise ValueError(f"shard must look like I/N (e.g. 2/4), found {text!r}") from None
        if not 1 <= shard.index <= shard.count:
            raise ValueError(f"shard {text!r}: I must be between 1 and N")
        return shard

    def owns(self, run_id: str) -> bool:
        digest = hashlib.sha256(run_id.encode("utf-8")).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index - 1


@dataclass(frozen=True, slots=True)
class RateVerdict:
    """How a rule with a failing-run rate (``thresholds.max_failing_rate``) was judged: the exact
    tests' judgement and, when it is undecided, the further runs that could decide it.

    ``runs_to_pass``: the smallest number of further runs after which the rule passes if none of
    them fails it (and each has the evidence it needs) — the least number that can make it pass, the
    contract's ``min_runs`` and ``max_insufficient_fraction`` included. ``runs_to_fail``: the smallest
    number after which it fails if every one of them fails it. Fewer further runs than the smaller
    of the two cannot decide the rule, whatever they show. ``None``: not within
    ``MAX_FURTHER_RUNS`` (or never: runs without evidence that the contract allows none of)."""

    judgement: RateJudgement
    runs_to_pass: int | None = None
    runs_to_fail: int | None = None


@dataclass(frozen=True, slots=True)
class RuleVerdict:
    rule: Rule
    tally: RuleTally
    status: (
        str  # an Outcome as a release spells it (Outcome.decision): pass | fail | insufficient_data | error
    )
    reason: str
    rate: RateVerdict | None = None  # set for a rule judged by a failing-run rate


@dataclass(frozen=True, slots=True)
class GateResult:
    decision: str
    reason: str
    aggregate: Aggregate
    verdicts: tuple[RuleVerdict, ...]  # sorted by rule id
    contract: Contract
    further_runs: tuple[int | None, int | None] | None = None
    """For an insufficient decision that only undecided rate rules hold up (too few runs
    included): the further runs that could pass the release and that could fail it
    (:func:`further_runs`). None for every other decision and cause."""


def further_runs(verdicts: Iterable[RuleVerdict]) -> tuple[int | None, int | None] | None:
    """When every rule that has not passed is an undecided rate rule: the fewest further runs that
    could pass them all (every one must pass: the largest ``runs_to_pass``; None if one has none)
    and that could fail the release (one failing rule is enough: the smallest ``runs_to_fail``).
    None when another rule holds the release up, or every rule passed."""
    held = [v for v in verdicts if v.status != Outcome.PASS.decision]
    if not held or any(v.rate is None or v.status != Outcome.INSUFFICIENT.decision for v in held):
        return None
    to_pass = [v.rate.runs_to_pass for v in held if v.rate is not None]
    to_fail = [v.rate.runs_to_fail for v in held if v.rate is not None and v.rate.runs_to_fail is not None]
    most = None if None in to_pass else max(n for n in to_pass if n is not None)
    return most, min(to_fail, default=None)


def further_runs_sentence(more: tuple[int | None, int | None]) -> str:
    """``24 more run(s) could pass it (if none fails); 2 could fail it (if all fail)``."""
    to_pass, to_fail = more
    passing = (
        f"{to_pass} more run(s) could pass it (if none fails)"
        if to_pass is not None
        else ("no number of further runs is known to pass it")
    )
    failing = f"{to_fail} could fail it (if all fail)" if to_fail is not None else "none is known to fail it"
    return f"{passing}; {failing}"


def check_release(
    runs: Iterable[Run],
    contract: Contract,
    release: str,
    completed_at: str | None = None,
    shard: Shard | None = None,
    evaluator: Callable[[Run, Contract], RunResult] = evaluate_safely,
    release_attribute: str = DEFAULT_RELEASE_ATTRIBUTE,
) -> Aggregate:
    """Evaluate every run of ``release`` (in ``shard``) and tally the results.

    A run's release is read from its agent's spans (``offline.release``, attribute
    ``release_attribute``). A run whose agent spans disagree, one of them saying ``release``, is
    evaluated as insufficient — never skipped. Other runs are left out and counted per release."""
    aggregate = Aggregate.empty(contract.digest, (r.id for r in contract.rules), release, completed_at)
    others: Counter[str] = Counter()
    steps: set[str] = set()
    tools = 0

    def results() -> Iterator[RunResult]:  # tallied as produced: memory holds counts, not results
        nonlocal tools
        for run in runs:
            if shard is not None and not shard.owns(run.run_id):
                continue
            attribution = run.attribution_for(release_attribute)
            if not attribution.concerns(release):
                others[attribution.label(release_attribute)] += 1
                continue
            index = run_index(run)  # the walk the evaluation reads too (the last run's is reused)
            steps.update(index.by_step)
            tools += len(index.tools)
            if attribution.disagrees:
                yield release_conflict_result(run, contract, release_attribute, attribution.found)
            else:
                yield evaluator(run, contract)

    tallied = aggregate.add_all(results())
    return tallied.with_other_releases(others).with_steps_seen(steps, tools)


def decide(aggregate: Aggregate, contract: Contract) -> GateResult:
    if aggregate.contract_digest != contract.digest:
        raise ValueError("the results were produced with a different contract")
    runs = aggregate.evaluated
    # A step the contract requires elsewhere is judged by that rule when it is missing.
    seen = frozenset(aggregate.steps_seen) | {
        step
        for rule in contract.rules
        if REGISTRY[rule.type].absence(rule) is Absence.JUDGED
        for step in [getattr(rule.params.get("select"), "step", None)]
        if step is not None
    }
    verdicts = tuple(
        _vacuous(rule, aggregate.rules[rule.id], seen, runs)
        or _verdict(rule, aggregate.rules[rule.id], runs, contract.min_runs)
        for rule in sorted(contract.rules, key=lambda r: r.id)
    )
    statuses = {Outcome.of(v.status) for v in verdicts}
    more: tuple[int | None, int | None] | None = None  # set where undecided rates hold the release up
    if Outcome.ERROR in statuses:
        decision, reason = Outcome.ERROR, "an internal error occurred while checking a rule"
    elif runs and aggregate.tool_spans == 0:  # before fail: missing steps here mean missing evidence
        decision, reason = (
            Outcome.INSUFFICIENT,
            f"no run of release {aggregate.release} holds a tool span (gen_ai.operation.name=execute_tool)"
            ", so there is no agent behaviour to judge",
        )
    elif Outcome.FAIL in statuses:
        decision, reason = Outcome.FAIL, "a rule exceeded its failing-run threshold"
    elif runs == 0:
        decision, reason = Outcome.INSUFFICIENT, f"no runs of release {aggregate.release} were found"
        if aggregate.other_releases:
            reason += f" (found: {found_releases(aggregate)})"
    elif runs < contract.min_runs:
        decision, reason = (
            Outcome.INSUFFICIENT,
            f"{runs} run(s) found; the contract needs {contract.min_runs}",
        )
        if (more := further_runs(verdicts)) is not None:
            reason += f"; {further_runs_sentence(more)}"
    elif (more := further_runs(verdicts)) is not None:
        decision, reason = (
            Outcome.INSUFFICIENT,
            "a failing-run rate is not decided at its confidence yet: " + further_runs_sentence(more),
        )
    elif Outcome.INSUFFICIENT in statuses:
        decision, reason = Outcome.INSUFFICIENT, "too many runs lack the evidence a rule needs"
    elif aggregate.incomplete_inputs:
        decision, reason = (
            Outcome.INSUFFICIENT,
            "the trace input is incomplete, so it cannot prove a pass",
        )
    else:
        decision, reason = Outcome.PASS, "every rule is within its thresholds"
    return GateResult(decision.decision, reason, aggregate, verdicts, contract, more)


def found_releases(aggregate: Aggregate) -> str:
    """``1.0.0 (25 runs), 2.0.0 (5 runs)``: the releases of the runs that were left out."""
    return ", ".join(f"{label} ({n} run{'s' if n != 1 else ''})" for label, n in aggregate.other_releases)


def _vacuous(rule: Rule, tally: RuleTally, seen: frozenset[str], runs: int) -> RuleVerdict | None:
    """A rule that would pass vacuously because its selected step never occurs (``Absence.VACUOUS``
    in the registry) is insufficient at release level: a step no run of the release contains is not
    evidence of compliance — usually a misspelled step (or a route other rules judge).

    A mined rule is the exception: it carries ``support`` — the approved runs in which the miner saw
    its step — so the step is no misspelling, and a bound on a step no run takes holds (an optional
    step: approved runs took a route with it and a route without; #47). Hand-written rules (no
    ``support``) keep the check."""
    select = rule.params.get("select")
    step = getattr(select, "step", None)
    if runs == 0 or REGISTRY[rule.type].absence(rule) is not Absence.VACUOUS or step is None or step in seen:
        return None
    if rule.support:  # the miner saw the step in that many approved runs
        return None
    if tally.count(Outcome.FAIL.value) or tally.count(Outcome.ERROR.value):
        return None
    return RuleVerdict(
        rule,
        tally,
        Outcome.INSUFFICIENT.decision,
        f"selects step {step!r}, which no run of this release contains (a misspelled step?)",
    )


def _verdict(rule: Rule, tally: RuleTally, runs: int, min_runs: int) -> RuleVerdict:
    failing = tally.count(Outcome.FAIL.value)
    unknown = tally.count(Outcome.INSUFFICIENT.value)
    errors = tally.count(Outcome.ERROR.value)
    limits = rule.thresholds
    if errors:
        return RuleVerdict(rule, tally, Outcome.ERROR.decision, f"{errors} run(s) hit an internal error")
    if limits.rate is not None:
        return _rate_verdict(rule, tally, runs, min_runs)
    if failing > limits.max_failing_runs:
        return RuleVerdict(
            rule,
            tally,
            Outcome.FAIL.decision,
            f"{failing} failing run(s); at most {limits.max_failing_runs} allowed",
        )
    if runs == 0 or runs < min_runs:
        return RuleVerdict(
            rule, tally, Outcome.INSUFFICIENT.decision, f"{runs} run(s); at least {min_runs} needed"
        )
    if not ratio_at_most(unknown, runs, limits.max_insufficient_fraction):
        return RuleVerdict(
            rule,
            tally,
            Outcome.INSUFFICIENT.decision,
            f"{unknown} of {runs} run(s) lack evidence; at most {limits.max_insufficient_fraction} allowed",
        )
    return RuleVerdict(
        rule, tally, Outcome.PASS.decision, f"{failing} failing, {unknown} insufficient of {runs} run(s)"
    )


def _rate_verdict(rule: Rule, tally: RuleTally, runs: int, min_runs: int) -> RuleVerdict:
    """A rule bounded by a failing-run rate at a confidence (``contracts.confidence``): fail when the
    exact test says the rate is above the bound; else, as for a count, too few runs or too many
    without evidence are insufficient; else pass when the test says the rate is at most the bound,
    and insufficient — with the further runs that could decide — when it says neither."""
    limit = rule.thresholds.rate
    assert limit is not None
    failing, unknown = tally.count(Outcome.FAIL.value), tally.count(Outcome.INSUFFICIENT.value)
    judgement = judge_rate(limit, runs, failing, unknown)
    counts = f"{failing} failing{f' and {unknown} without evidence' if unknown else ''} of {runs} run(s)"
    if judgement.fails:
        verdict = RateVerdict(judgement)
        reason = f"{counts}: the failing-run rate is above {_bound(limit)}"
        return RuleVerdict(rule, tally, Outcome.FAIL.decision, reason, verdict)
    fraction = rule.thresholds.max_insufficient_fraction
    if runs and runs >= min_runs and ratio_at_most(unknown, runs, fraction) and judgement.passes:
        reason = f"{counts}: the failing-run rate is at most {_bound(limit)}"
        return RuleVerdict(rule, tally, Outcome.PASS.decision, reason, RateVerdict(judgement))

    def passes(more: int) -> bool:  # each condition stays true once true as passing runs are added
        total = runs + more
        return (
            total >= min_runs
            and ratio_at_most(unknown, total, fraction)
            and passes_after(limit, runs, failing, unknown, more)
        )

    can_pass = fraction > 0 or unknown == 0  # else no number of further runs makes the share allowed
    verdict = RateVerdict(
        judgement,
        smallest_more(passes) if can_pass else None,
        smallest_more(lambda more: fails_after(limit, runs, failing, more)),
    )
    if runs == 0 or runs < min_runs:
        why = f"{runs} run(s); at least {min_runs} needed"
    elif not ratio_at_most(unknown, runs, fraction):
        why = f"{unknown} of {runs} run(s) lack evidence; at most {fraction} allowed"
    else:
        why = f"{counts}: the runs show the failing-run rate neither above nor at most {_bound(limit)}"
    return RuleVerdict(
        rule, tally, Outcome.INSUFFICIENT.decision, f"{why}; {_further_runs_text(verdict, can_pass)}", verdict
    )


def _bound(limit: RateLimit) -> str:
    """``0.1 at 95 % confidence``."""
    return f"{format_exact(limit.max_rate)} at {format_exact(limit.confidence * 100)} % confidence"


def _further_runs_text(verdict: RateVerdict, can_pass: bool) -> str:
    """What could decide an undecided rate rule, in words."""
    if verdict.runs_to_pass is not None:
        to_pass = f"{verdict.runs_to_pass} more run(s) could pass it (if none of them fails)"
    elif can_pass:
        to_pass = f"not even {MAX_FURTHER_RUNS} more runs could pass it"
    else:
        to_pass = "no number of further runs can pass it (runs lack evidence and the contract allows none)"
    if verdict.runs_to_fail is not None:
        return f"{to_pass}; {verdict.runs_to_fail} could fail it (if all of them fail)"
    return f"{to_pass}; not even {MAX_FURTHER_RUNS} could fail it"
