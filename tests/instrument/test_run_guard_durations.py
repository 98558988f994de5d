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
from otel_provenance import semconv as sc
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


def _run_verdict(traced: Traced) -> tuple[str, tuple[str, ...]]:
    """The verdict on the run's span, and the rules it names as not passing."""
    (root,) = [s for s in traced.spans if s.name == "invoke_agent"]
    return root.attributes[sc.GUARD_RUN_VERDICT], tuple(root.attributes.get(sc.GUARD_RUN_FAILED, ()))


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
    assert _run_verdict(traced) == ("pass", ())
    assert _offline_status(traced, contract, tmp_path) == "pass"


@pytest.mark.parametrize("select", ["select: {step: report.build}, ", ""])  # the reports, every span
def test_a_run_that_has_spent_its_duration_budget_is_blocked_from_the_next_call(traced, tmp_path, select):
    contract = _contract(tmp_path, f"{select}duration: ms, aggregate: sum, max: 50")
    reports = Reports(traced)
    with op.run(contract=contract, tracer_provider=traced.provider):
        assert reports.attempt(0) is None
        assert reports.attempt(60) is None  # the budget is not spent when it starts
        assert reports.attempt(0) == BLOCKED  # it is now
    assert reports.built == [0, 60]
    assert _offline_status(traced, contract, tmp_path) == "fail"  # blocked online = fails offline


@pytest.mark.parametrize("aggregate", ["sum", "max"])
def test_the_last_call_overrunning_the_budget_fails_the_run_when_it_ends(traced, tmp_path, aggregate):
    """At its start the call had taken no time; when the run ends it has taken 60 ms of 50."""
    budget = f"select: {{step: report.build}}, duration: ms, aggregate: {aggregate}, max: 50"
    contract = _contract(tmp_path, budget)
    reports = Reports(traced)
    with op.run(contract=contract, tracer_provider=traced.provider):
        assert reports.attempt(60) is None
    assert _run_verdict(traced) == ("fail", ("slow-reports",))
    assert _offline_status(traced, contract, tmp_path) == "fail"


def test_a_call_over_a_per_call_duration_limit_does_not_block_the_next_call(traced, tmp_path):
    """``aggregate: max`` limits each call: the next one has taken no time yet (offline, the slow
    call fails the run)."""
    contract = _contract(tmp_path, "select: {step: report.build}, duration: ms, aggregate: max, max: 50")
    reports = Reports(traced)
    with op.run(contract=contract, tracer_provider=traced.provider):
        assert [reports.attempt(60), reports.attempt(0)] == [None, None]
    assert reports.built == [60, 0]
    assert _run_verdict(traced) == ("fail", ("slow-reports",))
    assert _offline_status(traced, contract, tmp_path) == "fail"


def test_the_time_between_calls_is_not_spent_by_them(traced, tmp_path):
    """A call that has ended took the time from its start to its end, not until the next call."""
    contract = _contract(tmp_path, "select: {step: report.build}, duration: ms, aggregate: sum, max: 200")
    reports = Reports(traced)
    with op.run(contract=contract, tracer_provider=traced.provider):
        assert reports.attempt(0) is None
        time.sleep(0.25)  # the agent thinks: longer than the whole budget, in no call
        assert reports.attempt(0) is None
    assert reports.built == [0, 0]
    assert _run_verdict(traced) == ("pass", ())
    assert _offline_status(traced, contract, tmp_path) == "pass"


@pytest.mark.parametrize(
    ("budget", "blocked"),
    [
        ("duration: ms, aggregate: sum, max: 50", BLOCKED),  # it has taken 60 ms: more than all of it
        ("duration: s, aggregate: sum, max: 10", None),  # it has taken 60 ms of 10 s
    ],
)
def test_a_call_still_running_counts_with_the_time_it_has_run(traced, tmp_path, budget, blocked):
    contract = _contract(tmp_path, f"select: {{step: report.build}}, {budget}")
    reports = Reports(traced)
    started, release = reports.held = threading.Event(), threading.Event()
    with op.run(contract=contract, tracer_provider=traced.provider):
        running = threading.Thread(target=contextvars.copy_context().run, args=(reports.attempt, 0))
        running.start()
        assert started.wait(10)
        time.sleep(0.06)  # the running report has taken 60 ms so far
        try:
            assert reports.attempt(0) == blocked
        finally:
            release.set()
            running.join()
    assert reports.built == ([0] if blocked else [0, 0])


def test_beside_a_duration_budget_the_runs_verdict_names_only_what_the_run_end_decides(traced, tmp_path):
    """A rule decided at call time names the call it blocked on that call's span, not in the run's
    verdict: judging the duration budget again at the end judges it alone."""
    path = tmp_path / "reports.yaml"
    path.write_text(
        "name: reports\nversion: 1\nrules:\n"
        "  - {id: slow-reports, type: numeric_budgets, select: {step: report.build}, duration: s, "
        "aggregate: sum, max: 10}\n"
        "  - {id: no-delete, type: forbidden_spans, select: {step: files.delete}}\n"
    )
    reports = Reports(traced)

    @op.tool(name="files.delete", side_effect="write", tracer_provider=traced.provider)
    def delete(name: str) -> str:
        return "deleted"

    with op.run(inputs={"name": "q3.pdf"}, contract=path, tracer_provider=traced.provider):
        assert reports.attempt(0) is None
        with pytest.raises(op.ProvenanceError):
            delete(name="q3.pdf")
    assert traced.span("files.delete").attributes["agent.violations"] == (
        "contract:no-delete:FORBIDDEN_STEP",
    )
    assert _run_verdict(traced) == ("pass", ())


def test_a_budget_over_how_calls_ended_is_undecided_while_one_still_runs_at_the_runs_end(traced, tmp_path):
    """A report still running when the run ends has no status yet: a budget over the reports that
    ended ``ok`` cannot tell whether it counts — insufficient data, not a failure (a missing piece of
    evidence is never a pass, nor a proof of a violation)."""
    select = "select: {step: report.build, attributes: {agent.tool.status: ok}}"
    contract = _contract(tmp_path, f"{select}, duration: s, aggregate: sum, max: 10")
    reports = Reports(traced)
    started, release = threading.Event(), threading.Event()
    running: threading.Thread | None = None
    try:
        with op.run(contract=contract, tracer_provider=traced.provider):
            assert reports.attempt(0) is None
            reports.held = started, release  # the next report waits until released
            running = threading.Thread(target=contextvars.copy_context().run, args=(reports.attempt, 0))
            running.start()
            assert started.wait(10)
    finally:
        release.set()
        if running is not None:
            running.join()
    assert reports.built == [0, 0]
    assert _run_verdict(traced) == ("insufficient_data", ("slow-reports",))
