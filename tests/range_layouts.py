"""The SDK exporter's lines of a few runs, laid out anew per example, for the sharding properties of
the engines that read files in parts (``--jobs N`` and Dask, #46).

The traces are written once by the real SDK and its OTLP JSON file exporter (one line per span, so a
run is several lines); :func:`lay_out` then interleaves the runs' lines, adds a blank line, a trace
that is no run and a line of logs, and spreads them over files; :func:`write` may cut the last one
off mid-line. :func:`answer` is what a source gives: fingerprints, the gate's JSON report, the
read's notes and counts.
"""

from __future__ import annotations

import random
from pathlib import Path

from hypothesis import strategies as st

from contract_runs import AT, CONTRACT, export_runs, triage_run
from otel_provenance.offline.contracts import parse_contract
from otel_provenance.offline.engines import TraceSource, fingerprint_fold, gate_fold
from otel_provenance.offline.gate import decide
from otel_provenance.offline.report import render_json

NO_RUN = (
    '{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"' + "ab" * 16 + '","spanId":"' + "cd" * 8
    + '","name":"GET /","attributes":[{"key":"k","value":{"stringValueStrindex":1}}]}]}]}]}\n'
)  # fmt: skip
LOGS = '{"resourceLogs":[]}\n'
TORN = '{"resourceSpans": [{"resource": '


LAYOUT = {
    "seed": st.integers(0, 2**32),
    "runs": st.integers(0, 8),
    "files": st.integers(1, 3),
    "extras": st.lists(st.booleans(), min_size=3, max_size=3),
    "torn": st.booleans(),
}
"""The arguments of a layout (:func:`lay_out` and :func:`write`), for ``hypothesis.given``."""


class _Lines(list[list[str]]):
    def __repr__(self) -> str:  # Hypothesis prints the arguments of a failing example
        return f"<the lines of {len(self)} runs>"


def lines_by_run(folder: Path) -> list[list[str]]:
    """The exporter's lines of each of 8 runs (a run's lines in the order it wrote them)."""
    out = _Lines()
    for i in range(8):
        path = folder / f"run{i}.jsonl"
        export_runs([triage_run(f"r{i}", "v2", writes=1 + i % 2, skip_check=i % 3 == 0)], str(path))
        out.append(path.read_text().splitlines(keepends=True))
    return out


def lay_out(lines_by_run: list[list[str]], seed: int, runs: int, files: int, extras: list[bool]) -> list[str]:
    """``runs`` runs' lines interleaved (each run's own order kept) over ``files`` files."""
    rng = random.Random(seed)
    queues = [list(lines) for lines in lines_by_run[:runs]]
    lines = []
    while any(queues):
        queue = rng.choice([q for q in queues if q])
        lines.append(queue.pop(0))
    blank, no_run, logs = extras
    for flag, extra in ((blank, "\n  \n"), (no_run, NO_RUN), (logs, LOGS)):
        if flag:
            lines.insert(rng.randrange(len(lines) + 1), extra)
    cuts = sorted(rng.choices(range(len(lines) + 1), k=files - 1))  # a file may be empty
    return ["".join(lines[a:b]) for a, b in zip([0, *cuts], [*cuts, len(lines)], strict=True)]


def write(folder: Path, texts: list[str], torn: bool) -> list[str]:
    paths = []
    for i, text in enumerate(texts):
        path = folder / f"part{i}.jsonl"
        path.write_text(text + (TORN if torn and i == len(texts) - 1 else ""))
        paths.append(str(path))
    return paths


def answer(source: TraceSource) -> tuple[object, ...]:
    contract = parse_contract(CONTRACT, "c.yaml")
    rows = source.fold(fingerprint_fold(canonical=True))
    aggregate = source.fold(gate_fold(contract, "v2", AT))
    report = source.report
    counts = (report.files, report.spans, report.not_runs, report.unknown_values)
    return rows, render_json(decide(aggregate, contract)), report.notes(), counts
