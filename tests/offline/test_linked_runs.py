"""Runs that span traces through span links (``offline/linked_runs.py``, #47).

The traces are recorded with the real SDK, each "message" a root span of its own that links to the span
that sent it, as AutoGen's team runtime writes them; they are read back from OTLP JSON Lines and
protobuf files. Every engine must group them alike: the streaming reader, ``group_runs`` (SigNoz),
``--jobs`` (the pool) — the Dask cluster is checked in ``engines/test_dask_source.py``.
"""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from offline_helpers import (
    Recorder,
    agent_turn,
    plain_trace,
    team_run,
    tool_attributes,
    trace_id_hex,
    write_jsonl,
    write_proto,
)
from otel_provenance.cli import run as cli_run
from otel_provenance.offline.linked_runs import LinkJoins
from otel_provenance.offline.readers import ReadReport, iter_runs, read_spans
from otel_provenance.offline.runs import group_runs


def _runs(paths: list[Path], **options) -> tuple[list, ReadReport]:
    report = ReadReport()
    runs = sorted(
        (r for r in iter_runs(paths, report=report, **options) if r.is_agent_run), key=lambda r: r.run_id
    )
    return runs, report


def _tools(run) -> list[str]:
    return [s.tool_name for s in run.spans if s.is_tool]


def test_a_run_written_as_a_trace_per_turn_is_one_run_named_by_its_firstagent_turn(tmp_path: Path) -> None:
    rec = Recorder()
    firsts = [team_run(rec, ["lookup_order", "check_fraud", "issue_refund"]) for _ in range(3)]
    spans = rec.spans()
    for path in (write_jsonl(spans, tmp_path / "t.jsonl"), write_proto(spans, tmp_path / "t.pb")):
        runs, report = _runs([path])
        assert [r.run_id for r in runs] == sorted(trace_id_hex(f) for f in firsts)
        assert all(_tools(r) == ["lookup_order", "check_fraud", "issue_refund"] for r in runs)
        # per run: the 3 turns and 3 passing messages after the first turn joined it; the setup did not
        assert report.links == LinkJoins(joined=3 * 6, runs=3)
        assert all(len(r.trace_ids) == 7 for r in runs)
    whole = [r for r in group_runs(read_spans([path])) if r.is_agent_run]
    assert whole == runs


def test_the_note_says_how_many_traces_links_joined(tmp_path: Path) -> None:
    rec = Recorder()
    team_run(rec, ["lookup_order"])
    path = write_jsonl(rec.spans(), tmp_path / "t.jsonl")
    out, err = io.StringIO(), io.StringIO()
    assert cli_run(["fingerprint", str(path)], out, err) == 0
    assert len(out.getvalue().splitlines()) == 1
    assert "span links joined 2 trace(s) into 1 run(s) that span traces" in err.getvalue()
    assert "left out 2 trace(s) that are no agent run" in err.getvalue()  # the setup: send, publish


def test_runs_that_share_a_setup_trace_without_agent_work_stay_apart(tmp_path: Path) -> None:
    """A framework's setup trace every run links to holds no agent work: it joins nothing."""
    rec = Recorder()
    setup = plain_trace(rec, "autogen create RoundRobinGroupChatManager", [])
    for _ in range(2):
        team_run(rec, ["lookup_order", "issue_refund"], setup=setup)
    runs, report = _runs([write_jsonl(rec.spans(), tmp_path / "t.jsonl")])
    assert [_tools(r) for r in runs] == [["lookup_order", "issue_refund"]] * 2
    assert report.links is not None and not report.links.refused


def test_a_trace_linking_to_two_runs_is_refused_and_named(tmp_path: Path) -> None:
    """A consumer that links to the work of several runs is not all of them: it stays a run of its own."""
    rec = Recorder()
    a = agent_turn(rec, "lookup_order", [])
    b = agent_turn(rec, "lookup_order", [])
    summary = agent_turn(rec, "notify_customer", [a, b])
    after = agent_turn(rec, "issue_refund", [summary])  # follows the refused trace: joins it
    runs, report = _runs([write_jsonl(rec.spans(), tmp_path / "t.jsonl", batch=3)])
    assert len(runs) == 3
    joined = next(r for r in runs if r.run_id == trace_id_hex(summary))
    assert _tools(joined) == ["notify_customer", "issue_refund"] and trace_id_hex(after) in joined.trace_ids
    assert report.links is not None
    (refusal,) = report.links.refused
    assert refusal.trace_id == trace_id_hex(summary)
    assert refusal.runs == tuple(sorted((trace_id_hex(a), trace_id_hex(b))))
    (note,) = [n for n in report.notes() if "more than one run" in n]
    assert f"trace {trace_id_hex(summary)} links to runs {', '.join(refusal.runs)}" in note
    assert report.warnings() == [note]  # a refusal asks for a look; what was joined is only noted (#49)


def test_a_run_id_is_never_joined_to_another_run_by_a_link(tmp_path: Path) -> None:
    """``agent.run.id`` names a run; a trace without one that links to it joins it."""
    rec = Recorder()
    first = agent_turn(rec, "lookup_order", [], run_id="run-a")
    second = agent_turn(rec, "check_fraud", [first], run_id="run-b")  # its own run id: not joined
    agent_turn(rec, "issue_refund", [second])  # no run id: joins run-b
    runs, report = _runs([write_jsonl(rec.spans(), tmp_path / "t.jsonl")])
    assert {r.run_id: _tools(r) for r in runs} == {
        "run-a": ["lookup_order"],
        "run-b": ["check_fraud", "issue_refund"],
    }
    assert report.links is not None and report.links.joined == 1


def test_traces_that_link_to_each_other_are_one_run(tmp_path: Path) -> None:
    rec = Recorder()
    with rec.span("a") as a, rec.span("b", links=[a]) as b:
        pass
    # a's trace links back to b's: a cycle. Both hold agent work.
    with rec.span("execute_tool lookup_order", tool_attributes("lookup_order", {}), parent=a, links=[b]):
        pass
    with rec.span("execute_tool issue_refund", tool_attributes("issue_refund", {}), parent=b):
        pass
    runs, report = _runs([write_jsonl(rec.spans(), tmp_path / "t.jsonl")])
    assert [sorted(_tools(r)) for r in runs] == [["issue_refund", "lookup_order"]]
    assert runs[0].run_id == min(trace_id_hex(a), trace_id_hex(b))
    assert report.links == LinkJoins(joined=1, runs=1)


def test_links_to_traces_not_in_the_input_change_nothing(tmp_path: Path) -> None:
    rec, elsewhere = Recorder(), Recorder()
    upstream = agent_turn(elsewhere, "lookup_order", [])  # recorded, never written
    agent_turn(rec, "check_fraud", [upstream])
    agent_turn(rec, "issue_refund", [])
    runs, report = _runs([write_jsonl(rec.spans(), tmp_path / "t.jsonl")])
    assert len(runs) == 2
    assert report.links is None and report.notes() == []


def test_input_without_links_reads_as_before(tmp_path: Path) -> None:
    rec = Recorder()
    for _ in range(3):
        agent_turn(rec, "lookup_order", [])
    runs, report = _runs([write_jsonl(rec.spans(), tmp_path / "t.jsonl")])
    assert len(runs) == 3 and report.links is None


@pytest.mark.parametrize("kind", ["jsonl", "proto"])  # split by byte ranges, or read whole by one worker
def test_every_engine_joins_alike(tmp_path: Path, kind: str) -> None:
    """``--jobs 2`` and one process print the same runs and the same note."""
    rec = Recorder()
    for i in range(4):
        team_run(rec, ["lookup_order", "check_fraud", "issue_refund"][: i + 1])
    if kind == "jsonl":
        path = write_jsonl(rec.spans(), tmp_path / "t.jsonl", batch=2)
    else:
        path = write_proto(rec.spans(), tmp_path / "t.pb")
    outputs = []
    for extra in ([], ["--jobs", "2"]):
        out, err = io.StringIO(), io.StringIO()
        code = cli_run(["audit", "--format", "json", str(path), *extra], out, err)
        outputs.append((code, out.getvalue(), err.getvalue()))
    assert outputs[0] == outputs[1]
    assert sorted(len(run["calls"]) for run in json.loads(outputs[0][1])["runs"]) == [1, 2, 3, 3]
    assert "span links joined 18 trace(s) into 4 run(s)" in outputs[0][2]


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), batch=st.integers(1, 6))
def test_the_same_runs_whatever_the_order_of_the_input(tmp_path_factory, seed: int, batch: int) -> None:
    rng = random.Random(seed)
    rec = Recorder()
    setup = plain_trace(rec, "setup", [])
    turns = [team_run(rec, ["t"] * rng.randint(0, 3), setup=rng.choice([setup, None])) for _ in range(3)]
    agent_turn(rec, "fan_in", rng.sample(turns, rng.randint(1, 3)))
    spans = rec.spans()
    rng.shuffle(spans)
    folder = tmp_path_factory.mktemp("linked")
    streamed, report = _runs([write_jsonl(spans, folder / "s.jsonl", batch=batch)])
    grouped = ReadReport()
    whole = [r for r in group_runs(read_spans([folder / "s.jsonl"]), report=grouped) if r.is_agent_run]
    assert streamed == whole and report.links == grouped.links
    ordered, ordered_report = _runs([write_jsonl(rec.spans(), folder / "o.jsonl")])
    assert [(r.run_id, r.trace_ids) for r in ordered] == [(r.run_id, r.trace_ids) for r in streamed]
    assert ordered_report.links == report.links
