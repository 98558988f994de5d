"""A multi-line OTLP/JSON document that parses but is not one trace request: the error names the
file (a document has no line to name) and says what the request is."""

from __future__ import annotations

from pathlib import Path

import pytest

from otel_provenance.errors import TraceReadError
from otel_provenance.offline.readers import read_spans, sniff_format


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (b'[\n  "resourceSpans"\n]\n', "not a JSON object (expected an OTLP ExportTraceServiceRequest)"),
    ],
    ids=["an-array"],
)
def test_a_document_that_is_no_trace_request_names_the_file_and_the_problem(
    tmp_path: Path, body: bytes, problem: str
) -> None:
    """A top-level array is refused as a whole document (spans and logs in one request are read: #32)."""
    path = tmp_path / "doc.json"
    path.write_bytes(body)
    assert sniff_format(path) == "otlp-json"
    with pytest.raises(TraceReadError) as caught:
        list(read_spans([path]))
    err = caught.value
    assert (err.source, err.line, err.problem) == (str(path), None, problem)
    assert str(err) == f"{path}: {problem}"
