"""The benchmark harness runs end to end on tiny sizes (``--quick``), so it cannot rot.

No timing assertions: only that every case produced its rows, the table printed and the JSON is
well formed. Plus the trace generator's contract: valid OTLP that the real reader accepts, runs of
10–50 spans interleaved across lines, byte-identical for the same seed.
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from otel_provenance.offline.readers import iter_runs

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks import tracegen  # noqa: E402
from benchmarks.case_scaling import per_doubling  # noqa: E402
from benchmarks.harness import Result, print_comparison  # noqa: E402


def test_quick_run_prints_the_table_and_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    header = proc.stdout.splitlines()[0].split()
    assert header == ["case", "median", "baseline", "ratio", "target", "result"]
    data = json.loads(out.read_text())
    assert data["meta"]["quick"] is True and data["meta"]["unmeasured_cases"] == []
    cases = [r["case"] for r in data["results"]]
    for prefix in ("1 tool call", "2 stripping", "3 remember", "4 gate", "5 scaling", "6 dask"):
        assert any(c.startswith(prefix) for c in cases), (prefix, cases)
    for r in data["results"]:
        assert r["case"] in proc.stdout
        assert math.isfinite(r["median"]) and r["median"] > 0, r
        assert math.isfinite(r["baseline"]) and r["baseline"] > 0, r
        assert r["passed"] in (True, False, None)
        assert (r["target"] == "-") == (r["passed"] is None)
    # --compare reads such a file back: every case of this run is matched with itself and held; a
    # ratio moved by a fifth is printed with its direction, a verdict that changed too.
    results = [Result(**r) for r in data["results"]]
    text = io.StringIO()
    print_comparison(results, str(out), text)
    assert f"{len(results)} of {len(results)} ratios held" in text.getvalue()
    slower = [dataclasses.replace(results[0], ratio=results[0].ratio * 1.2), *results[1:]]
    text = io.StringIO()
    print_comparison(slower, str(out), text)
    assert f"up    {results[0].case}: ratio" in text.getvalue()
    assert f"{len(results) - 1} of {len(results)} ratios held" in text.getvalue()


def test_an_unknown_case_is_a_usage_error() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--cases", "99"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2 and "invalid choice" in proc.stderr


def test_generated_traces_are_valid_interleaved_and_deterministic(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    written = tracegen.write_jsonl(a, seed=11, release="v9", spans=3_000)
    tracegen.write_jsonl(b, seed=11, release="v9", spans=3_000)
    assert a.read_bytes() == b.read_bytes()
    runs = list(iter_runs([a]))
    assert sum(len(r.spans) for r in runs) == written >= 3_000
    assert all(tracegen.MIN_SPANS <= len(r.spans) <= tracegen.MAX_SPANS for r in runs)
    assert {r.release for r in runs} == {"v9"}
    assert all(len(r.trace_ids) == 1 for r in runs)  # every span carries the run id: no split runs
    # Interleaving: some run's spans are spread over more than one line, lines hold several runs.
    lines = a.read_text().splitlines()
    assert all(len(json.loads(line)["resourceSpans"][0]["scopeSpans"][0]["spans"]) <= 512 for line in lines)
    per_line = [
        Counter(s["traceId"] for s in json.loads(line)["resourceSpans"][0]["scopeSpans"][0]["spans"])
        for line in lines
    ]
    assert max(len(c) for c in per_line) > 1
    assert len(lines) > 1


def test_model_runs_match_the_file_model() -> None:
    runs = tracegen.model_runs(seed=3, release="v1", count=20, span_range=(10, 20))
    assert len(runs) == 20 and all(10 <= len(r.spans) <= 20 for r in runs)
    assert {r.release for r in runs} == {"v1"}


def test_per_doubling_normalises_size_ratios() -> None:
    assert per_doubling(1_000, 1.0, 2_000, 2.0) == pytest.approx(2.0)
    assert per_doubling(1_000, 1.0, 10_000, 10.0) == pytest.approx(2.0)
    assert per_doubling(1_000, 1.0, 4_000, 16.0) == pytest.approx(4.0)
