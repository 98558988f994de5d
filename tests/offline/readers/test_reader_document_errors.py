"""A multi-line OTLP/JSON document that cannot be read: the error names the file, and the line when
there is one (a syntax error), never an empty line number."""

from __future__ import annotations

from pathlib import Path

import pytest

from otel_provenance.errors import TraceReadError
from otel_provenance.offline.readers import ReadReport, read_spans


def _error(tmp_path: Path, body: bytes) -> TraceReadError:
    path = tmp_path / "doc.json"
    path.write_bytes(body)
    with pytest.raises(TraceReadError) as caught:
        list(read_spans([path]))
    return caught.value


def test_a_syntax_error_in_a_document_names_its_line(tmp_path: Path) -> None:
    err = _error(tmp_path, b'{\n  "resourceSpans": [\n    {"scopeSpans": [}\n  ]\n}\n')
    assert err.line == 3
    assert str(err) == f"{tmp_path / 'doc.json'}:3: invalid JSON (Expecting value, column 21)"


def test_a_document_that_is_not_utf8_names_the_file_without_a_line(tmp_path: Path) -> None:
    err = _error(tmp_path, b'{\n  "resourceSpans": [\n    {"x": "\xff"}\n  ]\n}\n')
    assert err.line is None
    assert str(err) == f"{tmp_path / 'doc.json'}: invalid JSON (UnicodeDecodeError)"


def test_a_duplicate_member_in_a_document_names_the_line_of_its_object(tmp_path: Path) -> None:
    err = _error(tmp_path, b'{\n  "resourceSpans": [\n    {"resource": {}, "resource": {}}\n  ]\n}\n')
    assert err.line == 3
    assert "duplicate JSON member name 'resource'" in str(err)


def test_a_document_mixing_traces_and_logs_has_its_spans_read_and_the_logs_counted(tmp_path: Path) -> None:
    """What agentevals serves for download: one document with both signals (#32)."""
    path = tmp_path / "doc.json"
    path.write_bytes(b'{\n  "resourceLogs": [], "resourceSpans": []\n}\n')
    report = ReadReport()
    assert list(read_spans([path], report=report)) == []
    assert report.notes() == [
        "left out other signals held beside traces (logs in 1 request(s)); their spans were read"
    ]


def test_a_logs_document_is_a_logs_file_not_an_empty_trace_file(tmp_path: Path) -> None:
    """A multi-line logs request read as traces would be an empty, complete trace file."""
    err = _error(tmp_path, b'{\n  "resourceLogs": []\n}\n')
    assert str(err) == f"{tmp_path / 'doc.json'}: a logs file (resourceLogs), not traces"


def test_a_file_starting_with_a_byte_order_mark_is_refused_at_line_1(tmp_path: Path) -> None:
    err = _error(tmp_path, b'\xef\xbb\xbf{"resourceSpans": []}\n')
    assert err.line == 1
    assert str(err) == f"{tmp_path / 'doc.json'}:1: starts with a UTF-8 byte-order mark (remove it)"
