"""Which runs the HTML reports draw, and how a gate check keeps just those while it evaluates.

A gate result holds findings, not spans; drawing a run needs its spans. The report draws, for each
failing rule (in the order the page lists them, ``reading_order``) and then each failing-run rate
not yet decided, the failing runs with the smallest run ids — ``PER_RULE`` of them, at most
``MAX_RUNS`` in all. ``WitnessKeeper`` wraps the evaluator and keeps, per rule, the ``PER_RULE``
failing runs with the smallest ids seen so far: that is a superset of the drawn runs whatever the
order the runs arrive in (files, shards, a backend), and memory stays bounded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from ..contracts.model import Contract
from ..evaluate import RunResult, evaluate_safely
from ..gate import GateResult
from ..model import Run
from ..outcome import Outcome
from .reading_order import reading_order

PER_RULE: Final = 3
MAX_RUNS: Final = 12


def witness_run_ids(result: GateResult) -> tuple[str, ...]:
    """The run ids the report draws, in the order it draws them: the failing rules' runs, then the
    failing runs so far of a failing-run rate not yet decided (the evidence its section lists)."""
    chosen: list[str] = []
    failed = [v for v in reading_order(result.verdicts) if v.status == Outcome.FAIL.decision]
    undecided = [
        v for v in result.verdicts if v.rate is not None and v.status == Outcome.INSUFFICIENT.decision
    ]
    for verdict in (*failed, *undecided):
        ids = sorted({f.run_id for f in verdict.tally.findings if f.status == Outcome.FAIL.value})
        for run_id in ids[:PER_RULE]:
            if run_id not in chosen and len(chosen) < MAX_RUNS:
                chosen.append(run_id)
    return tuple(chosen)


class WitnessKeeper:
    """An evaluator for ``check_release`` that also keeps the runs the report may draw."""

    def __init__(self, evaluator: Callable[[Run, Contract], RunResult] = evaluate_safely) -> None:
        self._evaluator = evaluator
        self._kept: dict[str, dict[str, Run]] = {}  # rule id -> run id -> run

    def __call__(self, run: Run, contract: Contract) -> RunResult:
        result = self._evaluator(run, contract)
        for rule in result.rules:
            if rule.status is not Outcome.FAIL:
                continue
            kept = self._kept.setdefault(rule.rule_id, {})
            kept[run.run_id] = run
            if len(kept) > PER_RULE:
                del kept[max(kept)]
        return result

    @property
    def runs(self) -> dict[str, Run]:
        return {run_id: run for kept in self._kept.values() for run_id, run in kept.items()}


class SmallestRuns:
    """Keeps the ``limit`` runs with the smallest run ids among those offered: the same runs
    whatever order they are offered in (``audit --report-html`` draws these failing runs)."""

    def __init__(self, limit: int = MAX_RUNS) -> None:
        self.limit = limit
        self.runs: dict[str, Run] = {}

    def offer(self, run: Run) -> None:
        self.runs[run.run_id] = run
        if len(self.runs) > self.limit:
            del self.runs[max(self.runs)]
