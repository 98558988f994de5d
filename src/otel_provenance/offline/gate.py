"""The release gate: runs → per-rule tallies → thresholds → one decision.

``check_release`` takes any iterable of runs (read from files, or fetched from a backend), keeps
those of the release under test (and of this shard), evaluates each with ``evaluate_safely`` and
returns an ``Aggregate``; ``decide`` applies the contract's thresholds. Precedence: an error
anywhere → ``error``; else runs of the release but not one tool span in them (no agent behaviour:
the instrumentation is missing, so missing steps prove nothing) → ``insufficient_data``; else a rule
over its failing-run limit → ``fail``; else too few runs, or too many runs without enough evidence
for a rule → ``insufficient_data``; else ``pass``. No clock is
read: the completion time is whatever the caller passes.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from .aggregate import Aggregate, RuleTally
from .contracts.model import Contract, Rule
from .contracts.rational import ratio_at_most
from .contracts.rules import REGISTRY, Absence
from .evaluate import RunResult, evaluate_safely, release_conflict_result
from .model import Run
from .outcome import Outcome
from .release import DEFAULT_RELEASE_ATTRIBUTE
from .stepkey import run_steps


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
class RuleVerdict:
    rule: Rule
    tally: RuleTally
    status: (
        str  # an Outcome as a release spells it (Outcome.decision): pass | fail | insufficient_data | error
    )
    reason: str


@dataclass(frozen=True, slots=True)
class GateResult:
    decision: str
    reason: str
    aggregate: Aggregate
    verdicts: tuple[RuleVerdict, ...]  # sorted by rule id
    contract: Contract


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
            steps.update(run_steps(run).values())
            tools += sum(1 for span in run.spans if span.is_tool)
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
    elif Outcome.INSUFFICIENT in statuses:
        decision, reason = Outcome.INSUFFICIENT, "too many runs lack the evidence a rule needs"
    elif aggregate.incomplete_inputs:
        decision, reason = (
            Outcome.INSUFFICIENT,
            "the trace input is incomplete, so it cannot prove a pass",
        )
    else:
        decision, reason = Outcome.PASS, "every rule is within its thresholds"
    return GateResult(decision.decision, reason, aggregate, verdicts, contract)


def found_releases(aggregate: Aggregate) -> str:
    """``1.0.0 (25 runs), 2.0.0 (5 runs)``: the releases of the runs that were left out."""
    return ", ".join(f"{label} ({n} run{'s' if n != 1 else ''})" for label, n in aggregate.other_releases)


def _vacuous(rule: Rule, tally: RuleTally, seen: frozenset[str], runs: int) -> RuleVerdict | None:
    """A rule that would pass vacuously because its selected step never occurs (``Absence.VACUOUS``
    in the registry) is insufficient at release level: a step no run of the release contains is not
    evidence of compliance — usually a misspelled step (or a route other rules judge)."""
    select = rule.params.get("select")
    step = getattr(select, "step", None)
    if runs == 0 or REGISTRY[rule.type].absence(rule) is not Absence.VACUOUS or step is None or step in seen:
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
