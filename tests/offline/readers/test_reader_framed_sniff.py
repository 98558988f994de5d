"""Telling the Collector's length-prefixed records (``format: proto``) from one bare protobuf request
by their first bytes: the smallest framed files (one empty request, a first record of one byte), a
file that opens with empty requests, a JSON first record, and a bare request small enough that its
fifth byte looks like the start of a framed record's payload."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_provenance.errors import TraceReadError
from otel_provenance.offline.readers import ReadReport, read_spans, sniff_format
from otel_provenance.offline.readers.tracefile import FORMAT_FRAMED, FORMAT_PROTO

JSON_REQUEST = json.dumps(
    {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "traceId": "5b8efff798038103d269b633813fc60c",
                                "spanId": "eee19b7ec3c1b174",
                                "name": "execute_tool lookup",
                                "startTimeUnixNano": "1",
                                "endTimeUnixNano": "2",
                            }
                        ]
                    }
                ]
            }
        ]
    }
).encode()


def _framed(*payloads: bytes) -> bytes:
    return b"".join(len(p).to_bytes(4, "big") + p for p in payloads)


def _small_bare_request() -> bytes:
    """One span of a resource with one attribute, encoded by the SDK's own OTLP encoder: under 128
    bytes, so every length is one byte and the fifth byte is the resource attribute's tag (0x0A)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource({"a": "b"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with provider.get_tracer("t").start_as_current_span("s"):
        pass
    data = encode_spans(exporter.get_finished_spans()).SerializeToString()
    assert len(data) < 128 and data[0] == data[4] == 0x0A
    return data


def test_one_empty_request_is_a_framed_file_with_no_spans(tmp_path: Path) -> None:
    path = tmp_path / "empty.binpb"
    path.write_bytes(_framed(b""))  # four zero bytes: the length of an empty request
    assert sniff_format(path) == FORMAT_FRAMED
    report = ReadReport()
    assert list(read_spans([path], report=report)) == []
    assert report.incomplete == []


def test_empty_requests_before_the_first_record_are_stepped_over(tmp_path: Path) -> None:
    path = tmp_path / "t.binpb"
    path.write_bytes(_framed(b"", b"", JSON_REQUEST))
    assert sniff_format(path) == FORMAT_FRAMED
    (span,) = read_spans([path])
    assert span.name == "execute_tool lookup"


def test_a_json_first_record_is_a_framed_file(tmp_path: Path) -> None:
    path = tmp_path / "t.binpb"
    path.write_bytes(_framed(JSON_REQUEST))
    assert sniff_format(path) == FORMAT_FRAMED
    (span,) = read_spans([path])
    assert span.span_id == "eee19b7ec3c1b174"


@pytest.mark.parametrize("payload", [b"{", b"\x0a"])
def test_a_first_record_of_one_byte_is_framed_and_cut_off(tmp_path: Path, payload: bytes) -> None:
    path = tmp_path / "t.binpb"
    path.write_bytes(_framed(payload))  # five bytes in all
    assert sniff_format(path) == FORMAT_FRAMED
    with pytest.raises(TraceReadError, match="record at byte 0"):
        list(read_spans([path]))


def test_a_small_bare_request_is_not_taken_for_framed_records(tmp_path: Path) -> None:
    path = tmp_path / "t.binpb"
    path.write_bytes(_small_bare_request())
    assert sniff_format(path) == FORMAT_PROTO
    (span,) = read_spans([path])
    assert span.name == "s"
    assert span.resource["a"] == "b"
