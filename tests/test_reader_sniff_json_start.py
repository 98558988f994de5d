"""JSON text whose first four bytes could be read as a record length (leading whitespace, an empty
``{}`` request and a blank line) is still sniffed as JSON, not as the Collector's length-prefixed
records — which would report a complete file as cut off inside its first record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from otel_provenance.offline.readers import ReadReport, read_spans, sniff_format

REQUEST = json.dumps(
    {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "traceId": "0af7651916cd43dd8448eb211c80319c",
                                "spanId": "b7ad6b7169203331",
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


@pytest.mark.parametrize(
    "body",
    [
        b"    " + REQUEST + b"\n",
        b"\t\t\t\t" + REQUEST + b"\n",
        b"\r\n\r\n" + REQUEST + b"\r\n",
        b"{}\n\n" + REQUEST + b"\n",
        b"{}\r\n" + REQUEST + b"\r\n",
    ],
    ids=["four-spaces", "four-tabs", "two-crlf", "empty-request-then-blank-line", "empty-request-crlf"],
)
def test_json_lines_that_start_like_a_record_length_are_read_as_json(tmp_path: Path, body: bytes) -> None:
    """Bytes 0-3 of these files are whitespace or ``{}`` and a line end, and byte 4 is ``{``: the
    start of a length-prefixed JSON record, had the file no JSON object at its start."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(body)
    assert sniff_format(path) == "otlp-json-lines"
    report = ReadReport()
    assert [s.span_id for s in read_spans([path], report=report)] == ["b7ad6b7169203331"]
    assert report.complete
