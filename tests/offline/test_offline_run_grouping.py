"""Which spans make one run: a trace is one run; traces that share agent.run.id are one run.

Spans without a run id (the agent's root span, a downstream service's server span) must stay in
their trace's run — otherwise a run looks incomplete and every rule about it is unjudgeable.
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from offline_helpers import Recorder, tool_attributes, write_jsonl, write_proto
from otel_provenance import semconv
from otel_provenance.offline.readers import iter_runs, read_spans
from otel_provenance.offline.runs import group_runs


def _agent_run(rec: Recorder, run_id: str | None, tools: int = 3) -> None:
    """A root without a run id, tool spans with it, and a service span under the last tool."""
    with rec.span("refund.request") as root:
        for i in range(tools):
            with rec.span(
                f"execute_tool t{i}", tool_attributes(f"t{i}", {}, run_id=run_id), parent=root
            ) as t:
                if i == tools - 1:
                    with rec.span("payment POST /refund", {"agent.side_effect": "write"}, parent=t):
                        pass


def test_spans_without_run_id_join_their_traces_run(tmp_path):
    rec = Recorder()
    _agent_run(rec, "run-a")
    _agent_run(rec, "run-b")
    spans = rec.spans()
    path = write_jsonl(spans, tmp_path / "t.jsonl", batch=2)
    runs = list(iter_runs([path]))
    assert [r.run_id for r in runs] == ["run-a", "run-b"] or sorted(r.run_id for r in runs) == [
        "run-a",
        "run-b",
    ]
    for run in runs:
        assert len(run.spans) == 5
        ids = {s.span_id for s in run.spans}
        assert all(s.parent_span_id is None or s.parent_span_id in ids for s in run.spans)
    assert sorted(r.run_id for r in group_runs(read_spans([path]))) == ["run-a", "run-b"]


def test_a_run_id_joins_several_traces(tmp_path):
    rec = Recorder()
    _agent_run(rec, "run-x", tools=2)
    _agent_run(rec, "run-x", tools=2)  # a second trace of the same run
    _agent_run(rec, None, tools=1)  # a trace without any run id is a run of its own
    spans = rec.spans()
    for path in (write_jsonl(spans, tmp_path / "a.jsonl", batch=3), write_proto(spans, tmp_path / "a.pb")):
        runs = sorted(iter_runs([path]), key=lambda r: r.run_id)
        assert len(runs) == 2
        joined = next(r for r in runs if r.run_id == "run-x")
        assert len(joined.trace_ids) == 2 and len(joined.spans) == 8
        alone = next(r for r in runs if r.run_id != "run-x")
        assert alone.run_id == alone.trace_ids[0] and len(alone.spans) == 3


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), batch=st.integers(1, 7))
def test_streaming_grouping_equals_grouping_everything(tmp_path_factory, seed, batch):
    rng = random.Random(seed)
    rec = Recorder()
    for i in range(5):
        _agent_run(rec, rng.choice([None, f"run-{i}", "run-shared"]), tools=rng.randint(1, 3))
    spans = rec.spans()
    rng.shuffle(spans)
    path = write_jsonl(spans, tmp_path_factory.mktemp("g") / "s.jsonl", batch=batch)
    streamed = sorted(iter_runs([path]), key=lambda r: r.run_id)
    whole = group_runs(read_spans([path]))
    assert streamed == whole
    for run in whole:  # every span's parent is in its run: nothing was split off
        ids = {s.span_id for s in run.spans}
        assert all(s.parent_span_id in ids for s in run.spans if s.parent_span_id)
        assert (
            any(s.attributes.get(semconv.RUN_ID) == run.run_id for s in run.spans)
            or run.run_id in run.trace_ids
        )
