"""The counters are kept in the process and reported through observable counters (#45: a synchronous
counter's ``add`` cost a third of an ``@op.tool`` call). What a reader gets must be what synchronous
counters gave: monotonic sums, cumulative or per interval as the reader asks, every call counted
when many threads call tools at once, a new provider starting from zero — read back through the
real SDK's ``InMemoryMetricReader``."""

from __future__ import annotations

import sys
import threading

from opentelemetry.sdk.metrics import Counter, Histogram, MeterProvider, ObservableCounter
from opentelemetry.sdk.metrics.export import AggregationTemporality, InMemoryMetricReader, Sum

import otel_provenance as op
from instrument_helpers import Traced
from otel_provenance import semconv as sc
from otel_provenance.instrument.spans import metrics as tool_metrics

TOOL = sc.GEN_AI_TOOL_NAME


def _sums(reader: InMemoryMetricReader) -> dict[str, tuple[Sum, dict[frozenset, int]]]:
    out = {}
    data = reader.get_metrics_data()
    for rm in data.resource_metrics if data else ():
        for sm in rm.scope_metrics:
            if sm.scope.name != tool_metrics.SCOPE:
                continue
            for metric in sm.metrics:
                if isinstance(metric.data, Sum):
                    points = {frozenset(p.attributes.items()): p.value for p in metric.data.data_points}
                    out[metric.name] = (metric.data, points)
    return out


def _provider(**reader_options) -> tuple[MeterProvider, InMemoryMetricReader]:
    reader = InMemoryMetricReader(**reader_options)
    provider = MeterProvider(metric_readers=[reader])
    tool_metrics.use_meter_provider(provider)
    return provider, reader


def _tools():
    traced = Traced()

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def lookup(order_id: str) -> dict:
        return {"order_id": order_id, "status": "shipped"}

    return lookup


def _one(points: dict[frozenset, int], **attributes) -> int:
    return points.get(frozenset(attributes.items()), 0)


def test_counters_are_monotonic_cumulative_sums_by_default():
    provider, reader = _provider()
    try:
        lookup = _tools()
        with op.run(inputs={"order_id": "o-1"}):
            lookup("o-1")
            lookup("o-2")
        first = _sums(reader)
        with op.run(inputs={"order_id": "o-3"}):
            lookup("o-3")
        second = _sums(reader)
    finally:
        tool_metrics.use_meter_provider(None)
        provider.shutdown()
    calls = {TOOL: "lookup", sc.SIDE_EFFECT: "read", sc.TOOL_STATUS: "ok"}
    data, points = first[tool_metrics.TOOL_CALLS]
    assert data.is_monotonic and data.aggregation_temporality == AggregationTemporality.CUMULATIVE
    assert _one(points, **calls) == 2
    assert _one(second[tool_metrics.TOOL_CALLS][1], **calls) == 3
    kinds = second[tool_metrics.TOOL_ARGUMENTS][1]
    # o-1 and o-3 are their runs' inputs; o-2 is in nothing the first run saw
    assert _one(kinds, **{TOOL: "lookup", tool_metrics.ARG_KIND: "observed"}) == 2
    assert _one(kinds, **{TOOL: "lookup", tool_metrics.ARG_KIND: "assumed"}) == 1


def test_a_delta_reader_gets_each_intervals_counts():
    """The SDK takes differences of an observable counter's totals for a delta reader, as it sums a
    synchronous counter's adds per interval: a second collection counts only the calls since."""
    delta = dict.fromkeys((Counter, ObservableCounter, Histogram), AggregationTemporality.DELTA)
    provider, reader = _provider(preferred_temporality=delta)
    try:
        lookup = _tools()
        with op.run(inputs={"order_id": "o-1"}):
            for n in range(5):
                lookup(f"o-{n}")
            first = _sums(reader)
            lookup("o-1")
            second = _sums(reader)
    finally:
        tool_metrics.use_meter_provider(None)
        provider.shutdown()
    calls = {TOOL: "lookup", sc.SIDE_EFFECT: "read", sc.TOOL_STATUS: "ok"}
    data, points = second[tool_metrics.TOOL_CALLS]
    assert data.aggregation_temporality == AggregationTemporality.DELTA
    assert _one(first[tool_metrics.TOOL_CALLS][1], **calls) == 5
    assert _one(points, **calls) == 1
    assert _one(second[tool_metrics.TOOL_RETRIES][1], **{TOOL: "lookup"}) == 1  # o-1 again in the run


def test_no_call_is_lost_when_threads_record_at_once():
    """Each thread records its own calls while the interpreter switches threads as often as it can:
    the sums add up to every call made (an unlocked read-add-write of the sum loses some)."""
    provider, reader = _provider()
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    threads, per_thread = 8, 2_000
    try:
        start = threading.Barrier(threads)

        def work() -> None:
            start.wait()
            for _ in range(per_thread):
                tool_metrics.record_tool_call("t", status="ok", side_effect="read", kinds=("assumed",))

        pool = [threading.Thread(target=work) for _ in range(threads)]
        for thread in pool:
            thread.start()
        for thread in pool:
            thread.join()
        sums = _sums(reader)
    finally:
        sys.setswitchinterval(before)
        tool_metrics.use_meter_provider(None)
        provider.shutdown()
    calls = {TOOL: "t", sc.SIDE_EFFECT: "read", sc.TOOL_STATUS: "ok"}
    assert _one(sums[tool_metrics.TOOL_CALLS][1], **calls) == threads * per_thread
    arguments = sums[tool_metrics.TOOL_ARGUMENTS][1]
    assert _one(arguments, **{TOOL: "t", tool_metrics.ARG_KIND: "assumed"}) == threads * per_thread


def test_a_new_provider_starts_from_zero():
    """``use_meter_provider`` gives the package new instruments, as a new MeterProvider's counters
    start at zero: what the last provider counted is not reported to the next."""
    old, old_reader = _provider()
    try:
        tool_metrics.record_tool_call("t", status="ok", side_effect="read")
        tool_metrics.record_approval("t", "denied")
        tool_metrics.record_run_verdict("fail", "c@1234")
        assert tool_metrics.TOOL_CALLS in _sums(old_reader)
        new, new_reader = _provider()
        try:
            tool_metrics.record_tool_call("t", status="blocked", side_effect="write")
            sums = _sums(new_reader)
        finally:
            new.shutdown()
    finally:
        tool_metrics.use_meter_provider(None)
        old.shutdown()
    (points,) = [sums[tool_metrics.TOOL_CALLS][1]]
    assert points == {frozenset({TOOL: "t", sc.SIDE_EFFECT: "write", sc.TOOL_STATUS: "blocked"}.items()): 1}
    assert tool_metrics.APPROVALS not in sums and tool_metrics.GUARD_RUNS not in sums
    old_sums = _sums(old_reader)
    assert _one(old_sums[tool_metrics.APPROVALS][1], **{TOOL: "t", sc.GUARD_APPROVAL: "denied"}) == 1
    assert (
        _one(
            old_sums[tool_metrics.GUARD_RUNS][1],
            **{sc.GUARD_RUN_VERDICT: "fail", sc.GUARD_CONTRACT: "c@1234"},
        )
        == 1
    )
