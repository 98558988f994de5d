"""``--jobs N`` by byte ranges (#46): each process reads its own part of the files, folds the runs that
lie wholly in it and sends back the spans of runs that cross an edge — and the answer is one process's.

The traces are written once by the real SDK and its OTLP JSON file exporter (one line per span, so a
run is several lines); each example then lays those lines out anew — runs interleaved, spread over
files, blank lines, a trace that is no run, a line of logs, a cut-off last line — and reads them with
1–8 processes: ranges cut inside multi-line runs, ranges with no line of their own (more processes
than lines), tiny files read whole.
"""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from otel_provenance.cli import run as cli_run
from otel_provenance.offline.engines import FileSource, PoolSource, fingerprint_fold
from otel_provenance.offline.engines.ranges import plan_ranges
from partition_files import line, span, write
from range_layouts import LAYOUT, lay_out
from range_layouts import answer as _answer
from range_layouts import lines_by_run as export_lines
from range_layouts import write as write_layout


@pytest.fixture(scope="module")
def lines_by_run(tmp_path_factory: pytest.TempPathFactory) -> list[list[str]]:
    return export_lines(tmp_path_factory.mktemp("ranges"))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(**LAYOUT, jobs=st.integers(1, 8))
def test_byte_ranges_give_the_answer_of_one_process(
    tmp_path_factory: pytest.TempPathFactory,
    lines_by_run: list[list[str]],
    seed: int,
    runs: int,
    files: int,
    jobs: int,
    extras: list[bool],
    torn: bool,
) -> None:
    folder = tmp_path_factory.mktemp("layout")
    paths = write_layout(folder, lay_out(lines_by_run, seed, runs, files, extras), torn)
    planned = plan_ranges(paths, jobs)
    assert planned is not None  # uncompressed JSON Lines: read by byte ranges, not the older way
    assert _answer(PoolSource(paths, jobs)) == _answer(FileSource(paths))


def test_a_file_is_cut_inside_a_multi_line_run(tmp_path: Path, lines_by_run: list[list[str]]) -> None:
    """Two ranges of one run's lines: the run crosses the edge, and is folded whole in the parent."""
    path = tmp_path / "one.jsonl"
    path.write_text("".join(lines_by_run[0]))
    planned = plan_ranges([str(path)], 2)
    assert planned is not None and len(planned[1]) == 2
    assert _answer(PoolSource([str(path)], 2)) == _answer(FileSource([str(path)]))


def test_compressed_input_is_read_the_older_way(tmp_path: Path, lines_by_run: list[list[str]]) -> None:
    """A gzip file cannot be entered in the middle: every process reads it whole (with the limits)."""
    path = tmp_path / "runs.jsonl.gz"
    path.write_bytes(gzip.compress("".join(line for run in lines_by_run for line in run).encode()))
    assert plan_ranges([str(path)], 2) is None
    assert _answer(PoolSource([str(path)], 2)) == _answer(FileSource([str(path)]))


def _said_by_one_process_and_two(*paths: Path) -> tuple[int, str, str]:
    """``fingerprint`` of ``paths`` with ``--jobs 1`` and ``--jobs 2``: exit code, stdout and stderr,
    which must be the same (returned once)."""
    said = []
    for jobs in ("1", "2"):
        out, err = io.StringIO(), io.StringIO()
        code = cli_run(["fingerprint", *map(str, paths), "--jobs", jobs], out, err)
        said.append((code, out.getvalue(), err.getvalue()))
    assert said[0] == said[1]
    return said[0]


def test_an_error_names_the_line_in_its_file(tmp_path: Path, lines_by_run: list[list[str]]) -> None:
    """A bad line in the second range is reported with its line number in the file, as one process says."""
    lines = [line for run in lines_by_run[:4] for line in run]
    bad = len(lines) - 2
    lines[bad] = '{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": 5}]}]}]}\n'
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(lines))
    said = _said_by_one_process_and_two(path)
    assert said[0] == 1 and f"bad.jsonl:{bad + 1}" in said[2]


def test_a_link_the_byte_scan_missed_reads_the_input_again(tmp_path: Path) -> None:
    """A run id the index's byte scan cannot see (its key escaped) joins trace 2 to run r1 only when
    the span is decoded: the fold round's answers are dropped, the link joined, and the round run
    again (as on a Dask cluster)."""
    filler = [line(span(10 + i, 100 + i, f"f{i}")) for i in range(6)]
    hidden = line(span(2, 2, "r1", hidden=True))  # while r1 is still open: trace 1 ends the file
    path = write(
        tmp_path / "hidden.jsonl", line(span(1, 1, "r1")), *filler[:3], hidden, *filler[3:], line(span(1, 3))
    )
    rows = PoolSource([str(path)], 2).fold(fingerprint_fold())
    assert rows == FileSource([str(path)]).fold(fingerprint_fold())
    assert [row[:1] + row[2:3] for row in rows if row[0] == "r1"] == [("r1", 3)]  # one run of both traces


def test_an_error_in_a_file_read_whole_names_its_line_in_the_file(
    tmp_path: Path, lines_by_run: list[list[str]]
) -> None:
    """A gzip file is one partition read whole (its lines are counted from its first): a bad line is
    reported with its line number in the file, as one process says."""
    lines = [line for run in lines_by_run[:4] for line in run]
    bad = len(lines) - 2
    lines[bad] = '{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": 5}]}]}]}\n'
    path = tmp_path / "bad.jsonl.gz"
    path.write_bytes(gzip.compress("".join(lines).encode()))
    said = _said_by_one_process_and_two(path)
    assert said[0] == 1 and f"bad.jsonl.gz:{bad + 1}" in said[2]


def test_an_error_in_a_small_file_read_whole_beside_ranges_names_its_line(
    tmp_path: Path, lines_by_run: list[list[str]]
) -> None:
    """A file no larger than a range is one partition read whole, its lines counted from its first:
    a bad line in it is named by its line in that file, as one process names it."""
    big = tmp_path / "big.jsonl"
    big.write_text("".join(line for run in lines_by_run[:4] for line in run))
    small_lines = list(lines_by_run[4][:2])
    small_lines.insert(1, '{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": 5}]}]}]}\n')
    small = tmp_path / "small.jsonl"
    small.write_text("".join(small_lines))
    planned = plan_ranges([str(big), str(small)], 2)
    assert planned is not None and planned[1][-1].start is None  # the small file: whole
    said = _said_by_one_process_and_two(big, small)
    assert said[0] == 1 and "small.jsonl:2:" in said[2]
