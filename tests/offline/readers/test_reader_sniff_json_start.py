"""JSON text whose first four bytes could be read as a record length (leading whitespace, an empty
``{}`` request and a blank line) is still sniffed as JSON, not as the Collector's length-prefixed
records — which would report a complete file as cut off inside its first record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from otel_provenance.errors import TraceReadError
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


def _pretty_array(pad: str = "") -> bytes:
    """``jq -s .`` of a JSON Lines file: a JSON array of requests, indented, one key per line."""
    return json.dumps([{"resourceSpans": [], "pad": pad}], indent=2, ensure_ascii=False).encode()


def test_a_pretty_printed_json_array_is_reported_as_json_not_as_a_cut_record(tmp_path: Path) -> None:
    """``[``, a line end, two spaces and ``{`` read as a record length and a JSON record, too: the
    error must name what is wrong with the JSON, not a record cut off at byte 0."""
    path = tmp_path / "t.json"
    path.write_bytes(_pretty_array())
    assert sniff_format(path) == "otlp-json"
    with pytest.raises(TraceReadError, match="not a JSON object"):
        list(read_spans([path]))


def test_a_character_cut_off_by_the_sniff_leaves_the_text_json(tmp_path: Path) -> None:
    """The sniff reads 4,096 bytes; a two-byte character across that edge is still text."""
    body = _pretty_array()
    prefix = body.index(b'"pad": "') + len(b'"pad": "')
    body = _pretty_array("a" * (4095 - prefix) + "é" * 8)
    assert body[4095:4097] == "é".encode()
    path = tmp_path / "t.json"
    path.write_bytes(body)
    assert sniff_format(path) == "otlp-json"


def test_binary_that_starts_with_a_bracket_is_still_taken_for_a_record(tmp_path: Path) -> None:
    """Bytes that are no text keep the length-prefixed reading, and say the record is cut off."""
    path = tmp_path / "t.bin"
    path.write_bytes(b"[\x00\x01\x02{" + b"\x00" * 10)
    assert sniff_format(path) == "otlp-length-prefixed"
    report = ReadReport()
    assert list(read_spans([path], report=report)) == []
    assert not report.complete


def test_an_object_that_starts_like_a_record_length_is_json(tmp_path: Path) -> None:
    """``{``, a CRLF, a CRLF: a length and a record's first byte, but text that opens a JSON object
    (whose first key, with an escaped quote, is not the plain key the quick JSON check looks for)."""
    path = tmp_path / "t.json"
    path.write_bytes(b'{\r\n\r\n"a\\"b": 1}\n')
    assert sniff_format(path) == "otlp-json-lines"
    with pytest.raises(TraceReadError, match="invalid JSON"):
        list(read_spans([path]))


def test_a_pretty_printed_request_with_a_blank_line_after_its_first_line_is_one_document(
    tmp_path: Path,
) -> None:
    """The first line (``{``) does not parse on its own; the next line with text decides that the file
    is one JSON document, however many blank lines come first."""
    path = tmp_path / "t.json"
    path.write_bytes(b"{\n\n\n" + json.dumps(json.loads(REQUEST), indent=2).encode()[1:])
    assert sniff_format(path) == "otlp-json"
    assert [s.span_id for s in read_spans([path])] == ["b7ad6b7169203331"]
