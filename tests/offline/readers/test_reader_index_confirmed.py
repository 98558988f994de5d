"""A run id the run index's byte search cannot place is an error, never two runs read as one.

The index reads a compact line's ``agent.run.id`` keys as its spans' own. What else can hold one — a
span's event, a nested key-value list, a member the reader does not know, another signal's records
in the same request, a ``{"traceId":…`` object cutting a span before its attributes — the second pass
sees (``TraceFile.run_spans``), and each pair no span on its line carries is judged when its run is
whole (``tracefile.judge``): no span of the run carries it, and the read stops with an error naming
the line, in one process and in ``--jobs`` alike. Spelt with blanks, the same line is parsed whole by
the index, and its runs are the parsed spans' runs. (Found by two adversarial reviews of the index.)
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from offline_helpers import json_kv, json_tool_span
from otel_provenance.cli import run as cli_run
from otel_provenance.errors import OtelProvenanceError, TraceReadError
from otel_provenance.offline.engines import FileSource, PoolSource, fingerprint_fold
from otel_provenance.offline.readers import ReadReport, iter_runs, read_spans
from otel_provenance.offline.runs import group_runs

A, B = "0af7651916cd43dd8448eb211c80319c", "5b8efff798038103d269b633813fc60c"


def _request(*spans: dict, **beside: object) -> dict:
    return {
        "resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {}, "spans": list(spans)}]}],
        **beside,
    }


_R2 = json_kv(**{"agent.run.id": "r2"})
_OTHER = json_tool_span(B, "00f067aa0ba902b8", "r2")  # the run the misplaced id would join A's trace to
CASES = {
    "event": _request(
        json_tool_span(A, "00f067aa0ba902b7", events=[{"timeUnixNano": "2", "name": "e", "attributes": _R2}]),
        _OTHER,
    ),
    "nested-list": _request(
        json_tool_span(
            A, "00f067aa0ba902b7", attributes=[{"key": "x", "value": {"kvlistValue": {"values": _R2}}}]
        ),
        _OTHER,
    ),
    "unknown-span-member": _request(json_tool_span(A, "00f067aa0ba902b7", xExtra={"values": _R2}), _OTHER),
    "log-record": _request(
        _OTHER,
        json_tool_span(A, "00f067aa0ba902b7"),
        resourceLogs=[{"scopeLogs": [{"logRecords": [{"attributes": _R2}]}]}],
    ),
    "log-record-with-trace-id": _request(  # cut like a span of the same scope: '},{"traceId"'
        _OTHER,
        json_tool_span(A, "00f067aa0ba902b7"),
        resourceLogs=[{"scopeLogs": [{"logRecords": [{}, {"traceId": A, "attributes": _R2}]}]}],
    ),
    "unknown-request-member": {
        **_request(_OTHER, json_tool_span(A, "00f067aa0ba902b7")),
        "xExtra": {"attributes": _R2},
    },
}
EXPECTED = sorted([(A, [A]), ("r2", [B])])


def _write(path: Path, request: dict, compact: bool) -> Path:
    separators = (",", ":") if compact else (", ", ": ")
    path.write_text(json.dumps(request, separators=separators) + "\n")
    return path


def _shape(runs) -> list[tuple[str, list[str]]]:
    return sorted((run.run_id, sorted({s.trace_id for s in run.spans})) for run in runs)


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_misplaced_run_id_on_a_compact_line_is_an_error_naming_the_line(tmp_path: Path, case: str) -> None:
    path = _write(tmp_path / "t.jsonl", CASES[case], compact=True)
    assert _shape(group_runs(read_spans([path]))) == EXPECTED  # valid OTLP: the parsed spans' runs
    with pytest.raises(TraceReadError) as info:
        list(iter_runs([path]))
    assert info.value.source == str(path) and info.value.line == 1
    assert f"agent.run.id 'r2' is written outside the attributes of trace {A}'s spans" in str(info.value)


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_same_line_spelt_with_blanks_is_read_as_its_spans_say(tmp_path: Path, case: str) -> None:
    path = _write(tmp_path / "t.jsonl", CASES[case], compact=False)
    assert _shape(iter_runs([path])) == _shape(group_runs(read_spans([path]))) == EXPECTED


def test_a_misplaced_run_id_that_names_the_spans_own_run_is_read(tmp_path: Path) -> None:
    """An event repeating its span's own run id joins nothing: no error."""
    event = {"timeUnixNano": "2", "name": "e", "attributes": json_kv(**{"agent.run.id": "r1"})}
    request = _request(json_tool_span(A, "00f067aa0ba902b7", "r1", events=[event]), _OTHER)
    path = _write(tmp_path / "t.jsonl", request, compact=True)
    assert _shape(iter_runs([path])) == sorted([("r1", [A]), ("r2", [B])])


def test_jobs_and_the_older_way_report_it_as_one_process_does(tmp_path: Path) -> None:
    """``--jobs 2`` reads byte ranges (the check runs in each partition's conversion); a gzip file is
    read the older way, each process keeping its share of the runs (the check then converts the
    whole line, the other shares' spans too). Both stop, as one process does."""
    lines = [
        json.dumps(_request(json_tool_span(f"{n:032x}", f"{n:016x}", f"r{n}")), separators=(",", ":"))
        for n in range(1, 9)
    ]
    lines.insert(4, json.dumps(CASES["event"], separators=(",", ":")))
    plain = tmp_path / "t.jsonl"
    plain.write_text("\n".join(lines) + "\n")
    packed = tmp_path / "t.jsonl.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    for path in (plain, packed):
        for source in (FileSource([str(path)]), PoolSource([str(path)], 2)):
            with pytest.raises(
                OtelProvenanceError, match=r"t\.jsonl(\.gz)?:5: agent\.run\.id 'r2' is written outside"
            ):
                source.fold(fingerprint_fold())


def test_a_command_exits_1_with_the_line_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path / "t.jsonl", CASES["log-record"], compact=True)
    code = cli_run(["fingerprint", str(path)])
    assert code == 1
    assert f"{path}:1: agent.run.id 'r2' is written outside" in capsys.readouterr().err


def _line(request: dict) -> str:
    return json.dumps(request, separators=(",", ":"))


def test_a_pair_another_line_confirms_is_read(tmp_path: Path) -> None:
    """Line 1: trace A's span carries no run id, its event carries r1; line 2: another span of A
    carries r1. The pair the search made on line 1 is true of the run: read, not refused (a check
    of one line refused it)."""
    event = {"timeUnixNano": "2", "name": "e", "attributes": json_kv(**{"agent.run.id": "r1"})}
    first = _line(_request(json_tool_span(A, "00f067aa0ba902b7", events=[event])))
    second = _line(_request(json_tool_span(A, "00f067aa0ba902b9", "r1")))
    path = tmp_path / "t.jsonl"
    path.write_text(first + "\n" + second + "\n")
    assert _shape(iter_runs([path])) == _shape(group_runs(read_spans([path]))) == [("r1", [A])]
    for source in (FileSource([str(path)]), PoolSource([str(path)], 2)):
        assert [row[0] for row in source.fold(fingerprint_fold())] == ["r1"]


def test_a_trace_id_object_inside_a_span_before_its_attributes_is_no_silent_join(tmp_path: Path) -> None:
    """A second event written trace id first, before the span's own attributes: the search cuts the
    span there and pairs the span's own run id (r1) with that trace (B's, whose span says r2). As
    many run id keys as spans carrying one: only a count of the cuts shows it."""
    events = [{"timeUnixNano": "1", "name": "a"}, {"traceId": B, "timeUnixNano": "2", "name": "b"}]
    span = json_tool_span(A, "00f067aa0ba902b7", "r1")
    span = {key: value for key, value in span.items() if key != "attributes"}
    span = {**span, "events": events, "attributes": json_kv(**{"agent.run.id": "r1"})}
    path = tmp_path / "t.jsonl"
    path.write_text(_line(_request(span)) + "\n" + _line(_request(_OTHER)) + "\n")
    assert _shape(group_runs(read_spans([path]))) == sorted([("r1", [A]), ("r2", [B])])
    with pytest.raises(
        TraceReadError, match=f"agent\\.run\\.id 'r1' is written outside the attributes of trace {B}"
    ):
        list(iter_runs([path]))


def test_each_share_of_a_split_read_counts_what_it_reads_once(tmp_path: Path) -> None:
    """``iter_runs(keep=...)``, as each process of the older ``--jobs`` way reads gzip input: a line
    the fast decoder leaves to the strict reader (a profiling value) holding other shares' runs is
    not read again for the check: its unknown values count once over the shares, as in one process
    (a whole-line re-read counted 3 in each share, 6 for 2), and each share's runs are its own."""
    odd = {"key": "u", "value": {"stringValueStrindex": 1}}  # counted, left out
    spans = [json_tool_span(f"{n:032x}", f"{n:016x}", f"r{n}") for n in (1, 2)]
    for span in spans:
        span["attributes"].append(odd)
    path = tmp_path / "t.jsonl"
    path.write_text(_line(_request(*spans)) + "\n")
    whole = ReadReport()
    assert [run.run_id for run in iter_runs([path], report=whole)] == ["r1", "r2"]
    counted = 0
    for share in ("r1", "r2"):
        report = ReadReport()
        assert [run.run_id for run in iter_runs([path], report=report, keep=lambda r, s=share: r == s)] == [
            share
        ]
        counted += report.unknown_values
    assert counted == whole.unknown_values == 2
