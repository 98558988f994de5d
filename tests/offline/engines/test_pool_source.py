"""``--jobs N``: the pool engine (``offline.engines.PoolSource``) gives the bytes one process gives.

The pool is a trace source like the others: each process folds the runs of its shard, the partials are
merged with the fold's own merge, and what the reads found (traces that are no run, attribute values of
an unknown kind, other signals) adds up to what one process reports.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from contract_runs import export_runs, triage_run
from otel_provenance.cli import run as cli_run
from otel_provenance.offline.engines import FileSource, PoolSource, fingerprint_fold


def cli(*argv: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli_run([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("pool")
    runs = [triage_run(f"r{i}", "v2", writes=1 + i % 2, skip_check=i % 3 == 0) for i in range(9)]
    export_runs(runs, str(folder / "runs.jsonl"))
    # a trace that is no run, a line of logs beside, and an attribute value of an unknown kind
    (folder / "other.jsonl").write_text(
        '{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"' + "ab" * 16 + '","spanId":"' + "cd" * 8
        + '","name":"GET /","attributes":[{"key":"k","value":{"stringValueStrindex":1}}]}]}]}]}\n'
        '{"resourceLogs":[]}\n'
    )  # fmt: skip
    return folder


@pytest.mark.parametrize(
    "command", [("audit",), ("audit", "--format", "json"), ("fingerprint", "--canonical")]
)
def test_audit_and_fingerprint_in_processes_match_one_process(traces: Path, command: tuple[str, ...]) -> None:
    one = cli(*command, traces)
    assert cli(*command, traces, "--jobs", "3") == one
    assert "left out 1 trace(s) that are no agent run" in one[2]
    assert "1 attribute value(s) of an unknown kind" in one[2]
    assert "skipped 1 logs line (not traces)" in one[2]


def test_the_pool_reports_what_one_process_reports(traces: Path) -> None:
    one, pool = FileSource([str(traces)]), PoolSource([str(traces)], 2)
    assert pool.fold(fingerprint_fold()) == one.fold(fingerprint_fold())
    assert pool.report.notes() == one.report.notes()
    assert (pool.report.files, pool.report.spans, pool.report.not_runs) == (
        one.report.files,
        one.report.spans,
        one.report.not_runs,
    )
    assert [r.run_id for r in pool.runs()] == [r.run_id for r in FileSource([str(traces)]).runs()]


def test_jobs_is_one_backend_among_the_others(traces: Path) -> None:
    code, _, err = cli("audit", traces, "--jobs", "2", "--dask-scheduler", "tcp://127.0.0.1:1")
    assert code == 1 and "choose one of --dask-scheduler and --jobs" in err
    code, _, err = cli("fingerprint", traces, "--jobs", "0")
    assert code == 1 and "--jobs must be at least 1" in err


@pytest.mark.parametrize("engine", ["one-process", "pool"])
def test_a_gate_fold_for_a_shard_evaluates_that_shards_runs_only(traces: Path, engine: str) -> None:
    """``gate_fold(..., shard=)`` over a source that reads every run (the library use: the CLI also
    filters the source): each shard tallies its own runs, and the shards' merge is the whole release."""
    from contract_runs import CONTRACT
    from otel_provenance.offline import Shard, gate_fold, parse_contract

    contract = parse_contract(CONTRACT)

    def source() -> FileSource | PoolSource:
        return FileSource([str(traces)]) if engine == "one-process" else PoolSource([str(traces)], 2)

    whole = source().fold(gate_fold(contract, "v2", "2026-01-31T12:00:00Z"))
    parts = [source().fold(gate_fold(contract, "v2", "2026-01-31T12:00:00Z", Shard(i, 2))) for i in (1, 2)]
    assert whole.evaluated == 9 and parts[0].evaluated + parts[1].evaluated == 9
    for index, part in enumerate(parts, start=1):
        assert all(Shard(index, 2).owns(run_id) for run_id in part.run_ids)
    assert parts[0].merge(parts[1]) == whole
