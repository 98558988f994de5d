"""The Collector file exporter's length-prefixed records (``format: proto``): progress through a long
file, where a cut record starts, and JSON payloads among the records."""

from __future__ import annotations

from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

from offline_helpers import Recorder
from otel_provenance.errors import TraceReadError
from otel_provenance.offline.readers import ReadReport, read_spans, sniff_format


def _framed(*payloads: bytes) -> bytes:
    return b"".join(len(p).to_bytes(4, "big") + p for p in payloads)


def _request(name: str = "step") -> bytes:
    rec = Recorder("v1")
    with rec.span(name):
        pass
    return encode_spans(rec.spans()).SerializeToString()


def test_progress_is_reported_every_2048_records_with_the_bytes_read(tmp_path: Path) -> None:
    first = _request()
    path = tmp_path / "t.bin"
    path.write_bytes(_framed(first, *[b""] * 4099))  # then 4,099 empty requests (4 bytes each)
    calls: list[tuple[str, int, int]] = []
    report = ReadReport(progress=lambda label, done, total: calls.append((label, done, total)))
    assert [s.name for s in read_spans([path], report=report)] == ["step"]
    size, label = path.stat().st_size, f"reading {path}"
    after = 4 + len(first)  # the end of record 1; each later record is a 4-byte empty prefix
    assert calls == [(label, after + 2047 * 4, size), (label, after + 4095 * 4, size), (label, size, size)]


@pytest.mark.parametrize("cut", [2, 9], ids=["in-the-length", "in-the-payload"])
def test_a_record_cut_off_names_the_byte_where_it_starts(tmp_path: Path, cut: int) -> None:
    first, second, third = _request("one"), _request("two"), _request("three")
    data = _framed(first, second, third)
    third_at = 4 + len(first) + 4 + len(second)
    path = tmp_path / "t.bin"
    path.write_bytes(data[: third_at + cut])
    report = ReadReport()
    assert [s.name for s in read_spans([path], report=report)] == ["one", "two"]
    [incomplete] = report.incomplete
    assert incomplete.problem == f"the data ends inside the record at byte {third_at}"


def test_a_json_record_is_read_as_json_also_after_leading_whitespace(tmp_path: Path) -> None:
    first = _request("binary")
    json_record = (
        b'\n {"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "'
        + b"ab" * 16
        + (b'", "spanId": "' + b"cd" * 8 + b'", "name": "from json", "endTimeUnixNano": "2"}]}]}]}')
    )
    path = tmp_path / "t.bin"
    path.write_bytes(_framed(first, json_record))
    assert sniff_format(path) == "otlp-length-prefixed"
    assert sorted(s.name for s in read_spans([path])) == ["binary", "from json"]


def test_a_bad_json_record_names_the_byte_where_it_starts(tmp_path: Path) -> None:
    first = _request()
    path = tmp_path / "t.bin"
    path.write_bytes(_framed(first, b'{"resourceSpans": 5}'))
    with pytest.raises(TraceReadError) as caught:
        list(read_spans([path]))
    assert str(caught.value) == f"{path}: record at byte {4 + len(first)}: resourceSpans is not an array"


def test_a_protobuf_record_with_a_foreign_field_after_its_spans_names_the_record_and_the_byte(
    tmp_path: Path,
) -> None:
    """The record is taken for traces by its first span; the field after it is refused with both
    places: the record's byte in the file, then the field's byte in the record."""
    first, second = _request("one"), _request("two")
    path = tmp_path / "t.bin"
    path.write_bytes(_framed(first, second + b"\x10\x01"))  # field 2, a varint: no trace request has it
    with pytest.raises(TraceReadError) as caught:
        list(read_spans([path]))
    assert str(caught.value) == (
        f"{path}: record at byte {4 + len(first)}: byte {len(second)}: unexpected protobuf field 2 "
        "(wire type 0); not an OTLP ExportTraceServiceRequest"
    )


def test_a_json_logs_record_among_trace_records_is_skipped_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "t.bin"
    path.write_bytes(_framed(_request(), b'{"resourceLogs": []}'))
    report = ReadReport()
    assert [s.name for s in read_spans([path], report=report)] == ["step"]
    [skipped] = report.skipped
    assert (skipped.counts, skipped.unit) == ((("logs", 1),), "records")
