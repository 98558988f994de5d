"""Files written by software other than this package, read with span counts checked independently.

tests/fixtures/foreign/ holds files made by the official Python OTLP JSON file exporter and OTLP
encoders, by the OpenTelemetry JS SDK's own JSON serializer, by protobuf's JSON printer, and by a
small writer that follows the Collector file exporter's documented format (gen/ has the generators).
Each file is counted here by a plain walk — ``json`` and the official protobuf classes, zstd undone by
``zstandard`` — that shares no code with the package's readers, and the count must also match the
number of spans the generator made, so neither count can be vacuous.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import zstandard
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from otel_provenance.errors import TraceReadError
from otel_provenance.offline.readers import ReadReport, iter_runs, read_spans, sniff_format

FIXTURES = Path(__file__).parents[2] / "fixtures" / "foreign"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def _json_count(doc: dict) -> int:
    """Spans in one OTLP JSON request, under any of the names real writers use."""
    n = 0
    for rs in doc.get("resourceSpans") or doc.get("resource_spans") or ():
        scopes = rs.get("scopeSpans") or rs.get("scope_spans") or rs.get("instrumentationLibrarySpans") or ()
        for ss in scopes:
            n += len(ss.get("spans") or ())
    return n


def _frames(data: bytes) -> list[bytes]:
    out, pos = [], 0
    while pos < len(data):
        size = int.from_bytes(data[pos : pos + 4], "big")
        out.append(data[pos + 4 : pos + 4 + size])
        pos += 4 + size
    return out


def _unzstd(data: bytes) -> bytes:
    return zstandard.ZstdDecompressor().decompressobj().decompress(data)


def _proto_count(payload: bytes) -> int:
    """Spans in one request parsed with the official classes; logs and metrics requests parse as
    garbage spans (protobuf keeps mismatched fields as unknown), which have no 16-byte trace id."""
    request = ExportTraceServiceRequest.FromString(payload)
    return sum(
        1
        for rs in request.resource_spans
        for ss in rs.scope_spans
        for sp in ss.spans
        if len(sp.trace_id) == 16 and len(sp.span_id) == 8
    )


def _legacy_proto_count(data: bytes) -> int:
    """Field 1000 (instrumentation_library_spans) of each ResourceSpans, walked by hand."""
    from opentelemetry.proto.trace.v1.trace_pb2 import ScopeSpans

    def varint(buf: bytes, pos: int) -> tuple[int, int]:
        shift = value = 0
        while True:
            byte = buf[pos]
            pos += 1
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                return value, pos
            shift += 7

    def fields(buf: bytes):
        pos = 0
        while pos < len(buf):
            tag, pos = varint(buf, pos)
            size, pos = varint(buf, pos)  # every field here is length-delimited
            yield tag >> 3, buf[pos : pos + size]
            pos += size

    return sum(
        len(ScopeSpans.FromString(ils).spans)
        for number, rs in fields(data)
        if number == 1
        for inner, ils in fields(rs)
        if inner == 1000
    )


def _independent(name: str) -> int:
    data = (FIXTURES / name).read_bytes()
    if data[:4] == ZSTD_MAGIC:
        data = _unzstd(data)
    if name.endswith(".pb"):
        return _legacy_proto_count(data)
    if name.endswith((".bin", ".zst")) and not name.endswith(".jsonl.zst"):
        total = 0
        for payload in _frames(data):
            if payload[:4] == ZSTD_MAGIC:
                payload = _unzstd(payload)
            total += _json_count(json.loads(payload)) if payload[:1] == b"{" else _proto_count(payload)
        return total
    text = data.decode()
    if name.endswith(".json"):
        return _json_count(json.loads(text))
    return sum(_json_count(json.loads(line)) for line in text.splitlines() if line.strip())


CASES = {
    # file: (format sniffed, spans the generator made, runs, skipped notes)
    "python-sdk.jsonl": ("otlp-json-lines", 12, 4, []),
    "python-sdk-mixed.jsonl": ("otlp-json-lines", 12, 4, ["skipped 4 logs lines, 4 metrics lines"]),
    "js-sdk.jsonl": ("otlp-json-lines", 9, 3, []),
    "protobuf-snake-case.jsonl": ("otlp-json-lines", 12, 4, []),
    "legacy-names.json": ("otlp-json", 6, 2, []),
    "legacy-names.pb": ("otlp-protobuf", 6, 2, []),
    "collector-proto.bin": ("otlp-length-prefixed", 12, 4, []),
    "collector-proto-mixed.bin": ("otlp-length-prefixed", 12, 4, ["skipped 1 logs record, 1 metrics record"]),
    "collector-proto-zstd-legacy.bin": ("otlp-length-prefixed", 12, 4, []),
    "collector-json-zstd-legacy.bin": ("otlp-length-prefixed", 12, 4, []),
    "collector-proto-native.zst": ("otlp-length-prefixed", 12, 4, []),
    "collector-json-native.jsonl.zst": ("otlp-json-lines", 12, 4, []),
}


def test_every_fixture_is_covered() -> None:
    on_disk = {p.name for p in FIXTURES.iterdir() if p.is_file()}
    assert on_disk == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_fixture_reads_with_the_independent_span_count(name: str) -> None:
    fmt, made, runs, notes = CASES[name]
    path = FIXTURES / name
    assert sniff_format(path) == fmt
    independent = _independent(name)
    assert independent == made  # the independent walk is not vacuous
    report = ReadReport()
    spans = list(read_spans([path], report=report))
    assert len(spans) == independent and report.complete
    assert len({(s.trace_id, s.span_id) for s in spans}) == len(spans)
    assert [str(s).split(": ", 1)[1].removesuffix(" (not traces)") for s in report.skipped] == notes
    assert report.unknown_values == 0
    report = ReadReport()
    read_runs = list(iter_runs([path], report=report))
    assert len(read_runs) == runs and sum(len(r.spans) for r in read_runs) == independent
    tools = [s.tool_name for r in read_runs for s in r.spans if s.is_tool]
    assert len(tools) == 2 * runs and set(tools) == {"lookup_order", "refund"}


def test_js_sdk_fields_survive() -> None:
    spans = list(read_spans([FIXTURES / "js-sdk.jsonl"]))
    tool = next(s for s in spans if s.tool_name == "refund" and s.status.code.name == "ERROR")
    assert tool.attributes["attempt"] == 1 and tool.attributes["ratio"] == 0.5
    assert tool.attributes["tags"] == ("a", "b") and tool.release == "js-1"
    assert tool.scope_name == "js-agent-tracer" and tool.parent_span_id is not None


def test_snake_case_and_camel_case_files_read_the_same() -> None:
    snake = list(read_spans([FIXTURES / "protobuf-snake-case.jsonl"]))
    camel = list(read_spans([FIXTURES / "collector-proto.bin"]))
    assert snake == camel


def test_a_file_of_only_logs_is_still_refused(tmp_path: Path) -> None:
    lines = (FIXTURES / "python-sdk-mixed.jsonl").read_text().splitlines()
    path = tmp_path / "logs.jsonl"
    path.write_text("\n".join(line for line in lines if line.startswith('{"resourceLogs"')) + "\n")
    with pytest.raises(TraceReadError, match="a logs file"):
        list(read_spans([path]))
    with pytest.raises(TraceReadError, match="a logs file"):
        list(iter_runs([path]))
