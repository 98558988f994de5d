"""A ``numeric_budgets`` rule over durations at call time: judged on the time the run has spent so far.

A call about to start has taken no time yet, and a call still running has taken the time since it
began; the guard used to count both as running for ever, so every call a duration budget selects was
blocked, the first one too, while the offline gate passed the same run. Through ``@op.tool`` and
``op.run(contract=...)`` on the real SDK; the offline side reads the exported bytes.
"""

from __future__ import annotations

import contextvars
import threading
import time
from pathlib import Path

import pytest

import otel_provenance as op
from instrument_helpers import Traced
from offline_helpers import write_proto
from otel_provenance.offline.contracts.dsl import parse_contract
from otel_provenance.offline.evaluate import evaluate
from otel_provenance.offline.readers import iter_runs

BLOCKED = ("contract:slow-reports:BUDGET_EXCEEDED",)


def _contract(tmp_path: Path, budget: str) -> Path:
    path = tmp_path / "reports.yaml"
    rule = f"{{id: slow-reports, type: numeric_budgets, {budget}}}"
    path.write_text(f"name: reports\nversion: 1\nrules:\n  - {rule}\n")
    return path


class Reports:
    """A report service: each report takes the time it is asked to (a lower bound: it sleeps)."""

    def __init__(self, traced: Traced) -> None:
        self.built: list[int] = []
        self.held: tuple[threading.Event, threading.Event] | None = None  # (started, release)

        @op.tool(name="report.build", side_effect="read", tracer_provider=traced.provider)
        def build(ms: int) -> str:
            if self.held is not None:
                started, release = self.held
                self.held = None
                started.set()
                release.wait(10)
            time.sleep(ms / 1000)
            self.built.append(ms)
            return "done"

        self.build = build

    def attempt(self, ms: int) -> tuple[str, ...] | None:
        """The violations that blocked the report, or None when it was built."""
        try:
            self.build(ms=ms)
        except op.ProvenanceError as error:
            return error.violations
        return None


def _offline_status(traced: Traced, contract: Path, tmp_path: Path) -> str:
    (run,) = iter_runs([write_proto(traced.spans, tmp_path / "trace.pb")])
    return evaluate(run, parse_contract(contract.read_text())).status


@pytest.mark.parametrize(
    "budget",
    [
        "select: {step: report.build}, duration: s, aggregate: sum, max: 10",
        "select: {step: report.build}, duration: s, aggregate: max, max: 10",
        "duration: s, aggregate: sum, max: 10",  # every span: the run's own too
    ],
)
def test_calls_within_a_duration_budget_run(traced, tmp_path, budget):
    contract = _contract(tmp_path, budget)
    reports = Reports(traced)
    with op.run(contract=contract, tracer_provider=traced.provider):
        assert [reports.attempt(0), reports.attempt(0)] == [None, None]
    assert reports.built == [0, 0]
    assert _offline_status(traced, contract, tmp_path) == "pass"


def test_a_run_that_has_spent_its_duration_budget_is_blocked_from_the_next_call(traced, tmp_path):
    contract = _contract(tmp_path, "select: {step: report.build}, duration: ms, aggregate: sum, max: 50")
    reports = Reports(traced)
    with op.run(contract=contract, tracer_provider=traced.provider):
        assert reports.attempt(0) is None
        assert reports.attempt(60) is None  # the budget is not spent when it starts
        assert reports.attempt(0) == BLOCKED  # it is now
    assert reports.built == [0, 60]
    assert _offline_status(traced, contract, tmp_path) == "fail"  # blocked online = fails offline


def test_a_call_over_a_per_call_duration_limit_does_not_block_the_next_call(traced, tmp_path):
    """``aggregate: max`` limits each call: the next one has taken no time yet (offline, the slow
    call fails the run)."""
    contract = _contract(tmp_path, "select: {step: report.build}, duration: ms, aggregate: max, max: 50")
    reports = Reports(traced)
    with op.run(contract=contract, tracer_provider=traced.provider):
        assert [reports.attempt(60), reports.attempt(0)] == [None, None]
    assert reports.built == [60, 0]
    assert _offline_status(traced, contract, tmp_path) == "fail"


def test_a_call_still_running_counts_with_the_time_it_has_run(traced, tmp_path):
    contract = _contract(tmp_path, "select: {step: report.build}, duration: ms, aggregate: sum, max: 50")
    reports = Reports(traced)
    started, release = reports.held = threading.Event(), threading.Event()
    with op.run(contract=contract, tracer_provider=traced.provider):
        running = threading.Thread(target=contextvars.copy_context().run, args=(reports.attempt, 0))
        running.start()
        assert started.wait(10)
        time.sleep(0.06)  # the running report has taken 60 ms, more than the whole budget
        try:
            assert reports.attempt(0) == BLOCKED
        finally:
            release.set()
            running.join()
    assert reports.built == [0]
