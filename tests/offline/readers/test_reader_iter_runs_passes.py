"""``iter_runs`` reads its input twice: a byte-scan index of which lines mention which trace and run,
then a reading pass that emits each run once its last line is read. These tests hold the seams
between the two: a run the index could not see, a span after its run was emitted, a run attribute
other than ``agent.run.id`` (with a shard's ``keep``), and what the report and progress say of both."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from otel_provenance.errors import InvalidEvidenceError, TraceReadError
from otel_provenance.offline.readers import ReadReport, iter_runs


def _span(n: int, trace: int, attributes: dict | None = None) -> dict:
    return {
        "traceId": f"{trace:032x}",
        "spanId": f"{n:016x}",
        "name": f"step {n}",
        "startTimeUnixNano": str(n),
        "endTimeUnixNano": str(n + 1),
        "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in (attributes or {}).items()],
    }


def _line(*spans: dict, resource: dict | None = None, hide_trace: bool = False) -> str:
    attributes = [{"key": k, "value": {"stringValue": v}} for k, v in (resource or {}).items()]
    request = {
        "resourceSpans": [{"resource": {"attributes": attributes}, "scopeSpans": [{"spans": list(spans)}]}]
    }
    text = json.dumps(request)
    # an escaped member name: the same JSON, but the byte-scan index cannot see the span's trace
    return (text.replace('"traceId"', '"trace\\u0049d"') if hide_trace else text) + "\n"


def _write(path: Path, *lines: str) -> Path:
    path.write_text("".join(lines))
    return path


def test_a_span_repeated_in_a_run_is_named_with_its_file(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.jsonl", _line(_span(1, 7)), _line(_span(1, 7)))
    with pytest.raises(InvalidEvidenceError) as caught:
        list(iter_runs([path]))
    assert caught.value.source == str(path)


def test_a_run_the_index_could_not_see_is_checked_at_the_end_and_named_by_the_last_file(
    tmp_path: Path,
) -> None:
    first = _write(tmp_path / "a.jsonl", _line(_span(1, 1)))
    last = _write(
        tmp_path / "b.jsonl", _line(_span(2, 7), hide_trace=True), _line(_span(2, 7), hide_trace=True)
    )
    with pytest.raises(InvalidEvidenceError) as caught:
        list(iter_runs([first, last]))
    assert caught.value.source == str(last)


def test_a_trace_id_under_an_escaped_key_is_indexed_and_its_run_not_cut_at_its_first_line(
    tmp_path: Path,
) -> None:
    """The byte scan cannot see ``"trace\\u0049d"``; a line that spells a name with such an escape is
    indexed from its parsed spans, so the run ends at its last line (it used to be emitted at the first
    and its second span refused as "after the point where the index saw it end")."""
    path = _write(tmp_path / "t.jsonl", _line(_span(1, 7)), _line(_span(2, 7), hide_trace=True))
    (run,) = iter_runs([path])
    assert sorted(s.span_id for s in run.spans) == [f"{1:016x}", f"{2:016x}"]


def _sessions(tmp_path: Path) -> Path:
    """Sessions s1 (traces 1 and 2) and s2 (trace 3) on the resource; agent.run.id on the spans says
    otherwise (a and b), to be ignored when runs are joined by session.id."""
    return _write(
        tmp_path / "t.jsonl",
        _line(_span(1, 1, {"agent.run.id": "a"}), resource={"session.id": "s1"}),
        _line(_span(2, 3, {"agent.run.id": "a"}), resource={"session.id": "s2"}),
        _line(_span(3, 2, {"agent.run.id": "b"}), resource={"session.id": "s1"}),
    )


def test_another_run_attribute_joins_runs_by_its_value_alone(tmp_path: Path) -> None:
    runs = {
        run.run_id: sorted(s.span_id for s in run.spans)
        for run in iter_runs([_sessions(tmp_path)], run_attribute="session.id")
    }
    assert runs == {"s1": [f"{1:016x}", f"{3:016x}"], "s2": [f"{2:016x}"]}


@pytest.mark.parametrize("wanted", ["s1", "s2"])
def test_keep_filters_whole_runs_of_another_run_attribute(tmp_path: Path, wanted: str) -> None:
    runs = iter_runs([_sessions(tmp_path)], run_attribute="session.id", keep=lambda key: key == wanted)
    assert [run.run_id for run in runs] == [wanted]


def test_the_report_and_progress_cover_both_passes(tmp_path: Path) -> None:
    path = _sessions(tmp_path)
    labels: list[str] = []
    report = ReadReport(progress=lambda label, done, total: labels.append(label))
    assert len(list(iter_runs([path], report=report))) == 2  # by agent.run.id: a and b
    assert (report.files, report.spans) == (1, 3)
    assert set(labels) == {f"indexing {path}", f"reading {path}"}


def test_a_file_gone_between_the_passes_is_named_as_unreadable(tmp_path: Path) -> None:
    """The reading pass opens each file again; one that went away after the index is an error naming
    it, never a read that silently lacks its runs."""
    first = _write(tmp_path / "a.jsonl", _line(_span(1, 1)))
    last = _write(tmp_path / "b.jsonl", _line(_span(2, 2)))

    def progress(label: str, done: int, total: int) -> None:
        if label == f"indexing {last}" and done == total and first.exists():
            first.unlink()  # the index is complete; the reading pass has not opened a.jsonl yet

    with pytest.raises(TraceReadError) as caught:
        list(iter_runs([first, last], report=ReadReport(progress=progress)))
    assert str(caught.value) == f"{first}: cannot read file (No such file or directory)"
    assert (caught.value.source, caught.value.line) == (str(first), None)


def test_a_url_gone_between_the_passes_is_named_by_the_error_type(tmp_path: Path) -> None:
    """fsspec raises ``FileNotFoundError(path)``, with no ``strerror``: the message names the type."""
    fsspec = pytest.importorskip("fsspec")
    first, last = "memory://passes/a.jsonl", "memory://passes/b.jsonl"
    for url, n in ((first, 1), (last, 2)):
        with fsspec.open(url, "w") as f:
            f.write(_line(_span(n, n)))
    memory = fsspec.filesystem("memory")

    def progress(label: str, done: int, total: int) -> None:
        if label == f"indexing {last}" and done == total and memory.exists(first):
            memory.rm(first)

    with pytest.raises(TraceReadError) as caught:
        list(iter_runs([first, last], report=ReadReport(progress=progress)))
    assert str(caught.value) == f"{first}: cannot read file (FileNotFoundError)"


def test_text_that_is_not_otlp_is_named_on_its_first_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "notes.txt", "hello world\nsecond line\n")
    with pytest.raises(TraceReadError) as caught:
        list(iter_runs([path]))
    assert str(caught.value) == (
        f"{path}:1: text that is neither OTLP JSON nor OTLP protobuf (not a trace file? name only the"
        " trace files, e.g. DIR/*.jsonl rather than DIR)"
    )
    assert (caught.value.source, caught.value.line) == (str(path), 1)
