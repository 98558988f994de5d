"""OTLP JSON attribute values the reader must refuse with words naming the attribute and the fault."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from otel_provenance.errors import TraceReadError
from otel_provenance.offline.readers import _convert, read_spans


def _file(tmp_path: Path, value: dict) -> Path:
    span = {
        "traceId": "0af7651916cd43dd8448eb211c80319c",
        "spanId": "b7ad6b7169203331",
        "name": "execute_tool t",
        "kind": 1,
        "startTimeUnixNano": "1",
        "endTimeUnixNano": "2",
        "attributes": [{"key": "k", "value": value}],
    }
    request = {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {}, "spans": [span]}]}]}
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(request) + "\n")
    return path


def test_a_bytes_value_is_its_base64_decoded_bytes(tmp_path: Path) -> None:
    (span,) = read_spans([_file(tmp_path, {"bytesValue": "AAECAw=="})])
    assert span.attributes["k"] == b"\x00\x01\x02\x03"


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({"bytesValue": 5}, "attribute 'k' bytesValue is not a base64 string"),
        # Outside the base64 alphabet: a lenient decoder would drop the "!" and read b"abc"
        ({"bytesValue": "YWJj!"}, "attribute 'k' bytesValue is not valid base64"),
        ({"bytesValue": "YWJ"}, "attribute 'k' bytesValue is not valid base64"),  # bad padding
        (
            {"arrayValue": {"values": [{"stringValue": "a"}, {}]}},
            "attribute 'k': array element without a value",
        ),
    ],
    ids=["not-a-string", "outside-the-alphabet", "bad-padding", "empty-array-element"],
)
def test_a_malformed_attribute_value_is_an_error_naming_it(tmp_path: Path, value: dict, problem: str) -> None:
    path = _file(tmp_path, value)
    with pytest.raises(TraceReadError) as info:
        list(read_spans([path]))
    assert str(info.value).endswith(problem) and info.value.line == 1


def test_the_unknown_value_marker_names_itself() -> None:
    """Debug output (a span's attributes printed mid-conversion) shows what the marker is."""
    assert repr(_convert.UNKNOWN_VALUE) == "UNKNOWN_VALUE"


def test_ids_in_url_safe_base64_read_as_their_hex(tmp_path: Path) -> None:
    """proto3 JSON writes bytes as base64; some writers use the URL-safe alphabet (``-`` and ``_``)."""
    trace_hex, span_hex = "fbeffbeffbeffbeffbeffbeffbeffbef", "fbeffbeffbeffbef"
    path = _file(tmp_path, {"stringValue": "x"})
    text = path.read_text().replace("0af7651916cd43dd8448eb211c80319c", "--_77_vv--_77_vv--_77w==")
    path.write_text(text.replace("b7ad6b7169203331", "--_77_vv--8="))
    (span,) = read_spans([path])
    assert (span.trace_id, span.span_id) == (trace_hex, span_hex)


def test_a_long_duplicate_member_name_is_shown_cut_to_sixty_characters(tmp_path: Path) -> None:
    name = "n" * 100
    path = _file(tmp_path, {"stringValue": "x"})
    path.write_text(path.read_text().replace('"name": ', f'"{name}": 1, "{name}": 2, "name": '))
    with pytest.raises(TraceReadError) as info:
        list(read_spans([path]))
    assert info.value.problem == f"duplicate JSON member name '{'n' * 60}' (last-wins would change the data)"


@pytest.mark.parametrize(
    "value",
    [{"stringValue": ""}, {"intValue": "5"}],
    ids=["empty-string", "not-a-string"],
)
def test_a_json_span_without_a_usable_run_id_is_kept_or_not_by_its_trace_id(tmp_path: Path, value) -> None:
    """``keep`` (a shard's filter) is asked about a span's run key before the span is converted: an
    empty or non-string ``agent.run.id`` does not name a run, so the key is the trace id."""
    path = _file(tmp_path, value)
    path.write_text(path.read_text().replace('"key": "k"', '"key": "agent.run.id"'))
    asked: list[str] = []
    assert list(read_spans([path], keep=lambda key: asked.append(key) or False)) == []
    assert asked == ["0af7651916cd43dd8448eb211c80319c"]
    (span,) = read_spans([path], keep=lambda key: key == "0af7651916cd43dd8448eb211c80319c")
    assert span.attributes["agent.run.id"] == value.get("stringValue", 5)


def test_a_malformed_run_id_value_is_reported_by_the_shard_of_its_trace(tmp_path: Path) -> None:
    """A run id value that is no object names no run: the span falls in its trace id's share, and
    is reported there (every span is reported by exactly the shard that owns it)."""
    trace_id = "0af7651916cd43dd8448eb211c80319c"
    path = _file(tmp_path, {"stringValue": "x"})
    text = path.read_text()
    path.write_text(
        text.replace('"key": "k", "value": {"stringValue": "x"}', '"key": "agent.run.id", "value": "r1"')
    )
    with pytest.raises(TraceReadError, match="malformed OTLP structure"):
        list(read_spans([path], keep=lambda key: key == trace_id))
    assert list(read_spans([path], keep=lambda key: key != trace_id)) == []
