"""Readers: what real pipelines write (#12) and what hostile files try (#18 points 7 and 8).

Empty requests, ``stringValueStrindex``, snake_case names, mixed signals, cut and corrupt
length-prefixed records, zstd without a zstd library, decompression bombs (gzip, zstd stream, zstd
record), and duplicate JSON member names — each refused or counted, never silently misread.
"""

from __future__ import annotations

import gzip
import json
import random
import re
import sys
import tracemalloc
from pathlib import Path

import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from offline_helpers import Recorder, write_jsonl, write_proto
from otel_provenance.errors import TraceReadError
from otel_provenance.offline.readers import ReadLimits, ReadReport, iter_runs, read_spans, sniff_format

SPAN = {
    "traceId": "0af7651916cd43dd8448eb211c80319c",
    "spanId": "b7ad6b7169203331",
    "name": "execute_tool refund",
    "kind": 1,
    "startTimeUnixNano": "1",
    "endTimeUnixNano": "2",
}


def _request(*spans: dict) -> dict:
    return {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {}, "spans": list(spans)}]}]}


def _line(**fields) -> str:
    return json.dumps(_request({**SPAN, **fields})) + "\n"


def test_empty_request_is_an_empty_request(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("{}\n" + _line() + "{}\n")
    assert [s.span_id for s in read_spans([path])] == [SPAN["spanId"]]
    path.write_text("{}\n")
    assert list(read_spans([path])) == [] and list(iter_runs([path])) == []


def test_string_value_strindex_is_a_counted_unknown_value(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    attributes = [
        {"key": "kept", "value": {"stringValue": "x"}},
        {"key": "indexed", "value": {"stringValueStrindex": 3}},
        {"key": "in_array", "value": {"arrayValue": {"values": [{"stringValueStrindex": 1}]}}},
    ]
    path.write_text(_line(attributes=attributes))
    report = ReadReport()
    (span,) = read_spans([path], report=report)
    assert dict(span.attributes) == {"kept": "x"}
    assert report.unknown_values == 2
    assert report.notes() == [
        "2 attribute value(s) of an unknown kind (e.g. stringValueStrindex) were left out"
    ]
    report = ReadReport()
    (_run,) = iter_runs([path], report=report)
    assert report.unknown_values == 2


def test_string_value_strindex_in_protobuf(tmp_path: Path) -> None:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue

    if "string_value_strindex" not in AnyValue.DESCRIPTOR.fields_by_name:
        pytest.skip("this opentelemetry-proto release predates string_value_strindex (the writer needs it)")

    request = ExportTraceServiceRequest()
    sp = request.resource_spans.add().scope_spans.add().spans.add()
    sp.trace_id, sp.span_id, sp.name = bytes.fromhex(SPAN["traceId"]), bytes.fromhex(SPAN["spanId"]), "x"
    kv = sp.attributes.add()
    kv.key, kv.value.string_value_strindex = "indexed", 4
    path = tmp_path / "t.pb"
    path.write_bytes(request.SerializeToString())
    report = ReadReport()
    (span,) = read_spans([path], report=report)
    assert "indexed" not in span.attributes and report.unknown_values == 1


def test_snake_case_names_read_like_camel_case(tmp_path: Path) -> None:
    snake = {
        "resource_spans": [
            {
                "scope_spans": [
                    {
                        "spans": [
                            {
                                "trace_id": SPAN["traceId"],
                                "span_id": SPAN["spanId"],
                                "parent_span_id": "b7ad6b7169203332",
                                "name": "n",
                                "start_time_unix_nano": "5",
                                "end_time_unix_nano": "6",
                                "attributes": [{"key": "gen_ai.tool.name", "value": {"string_value": "t"}}],
                            }
                        ]
                    }
                ]
            }
        ]
    }
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(snake) + "\n")
    (span,) = read_spans([path])
    assert span.parent_span_id == "b7ad6b7169203332" and span.start_ns == 5 and span.tool_name == "t"
    snake["resource_spans"][0]["scope_spans"][0]["spans"][0]["traceId"] = SPAN["traceId"]
    path.write_text(json.dumps(snake) + "\n")
    with pytest.raises(TraceReadError, match="'traceId' is given twice"):
        list(read_spans([path]))


def test_legacy_instrumentation_library_names(tmp_path: Path) -> None:
    doc = {
        "resourceSpans": [
            {
                "instrumentationLibrarySpans": [
                    {"instrumentationLibrary": {"name": "old-lib", "version": "0.9"}, "spans": [SPAN]}
                ]
            }
        ]
    }
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(doc) + "\n")
    (span,) = read_spans([path])
    assert (span.scope_name, span.scope_version) == ("old-lib", "0.9")


def test_mixed_signal_lines_are_skipped_and_counted(tmp_path: Path) -> None:
    logs = json.dumps({"resourceLogs": [{"scopeLogs": [{"logRecords": [{"traceId": SPAN["traceId"]}]}]}]})
    metrics = json.dumps({"resourceMetrics": []})
    path = tmp_path / "t.jsonl"
    path.write_text(
        logs + "\n" + _line() + (logs + "\n") * 11 + metrics + "\n" + metrics + "\n" + metrics + "\n"
    )
    report = ReadReport()
    assert len(list(read_spans([path], report=report))) == 1
    assert report.notes() == [f"{path}: skipped 12 logs lines, 3 metrics lines (not traces)"]
    report = ReadReport()
    assert len(list(iter_runs([path], report=report))) == 1
    assert [str(s) for s in report.skipped] == [
        f"{path}: skipped 12 logs lines, 3 metrics lines (not traces)"
    ]
    path.write_text(metrics + "\n" + logs + "\n")
    with pytest.raises(TraceReadError, match="holds no traces: 1 logs line, 1 metrics line"):
        list(read_spans([path]))
    path.write_text(logs + "\n{}\n")  # an empty request is no trace either
    for read in (read_spans, iter_runs):
        with pytest.raises(TraceReadError, match=r"a logs file \(resourceLogs\), not traces"):
            list(read([path]))


def test_a_file_of_other_signals_is_named_whole_even_when_its_name_reads_like_the_message(
    tmp_path: Path,
) -> None:
    logs = json.dumps({"resourceLogs": []})
    metrics = json.dumps({"resourceMetrics": []})
    path = tmp_path / "export: skipped 9 spans: skipped.jsonl"
    path.write_text(metrics + "\n" + logs + "\n" + logs + "\n")
    for read in (read_spans, iter_runs):
        with pytest.raises(TraceReadError) as caught:
            list(read([path]))
        assert caught.value.source == str(path)
        assert caught.value.problem == "holds no traces: 2 logs lines, 1 metrics line"
        assert str(caught.value) == f"{path}: holds no traces: 2 logs lines, 1 metrics line"


def test_a_logs_line_the_byte_scan_cannot_see_is_an_error_naming_its_signal(tmp_path: Path) -> None:
    """The file index finds a line's signal by its member name's bytes; written with an escape, the
    name is only seen once the line is parsed, and the line is then refused, named, not read as
    an empty trace request."""
    path = tmp_path / "t.jsonl"
    path.write_text(_line() + '{"resource\\u004cogs": []}\n')
    for read in (read_spans, iter_runs):
        with pytest.raises(TraceReadError) as caught:
            list(read([path]))
        assert (caught.value.line, caught.value.problem) == (2, "a logs request (resourceLogs), not traces")


def test_signal_names_as_string_values_do_not_decide_a_lines_signal(tmp_path: Path) -> None:
    """A line's signal is its request's member name. The same words as string values — a log body
    "resourceSpans", a span attribute named "resourceLogs" — are data: a logs line saying
    "resourceSpans" is skipped as logs, a trace line saying "resourceLogs" is read as traces."""
    body = {"body": {"stringValue": "resourceSpans"}}
    logs = json.dumps({"resourceLogs": [{"scopeLogs": [{"logRecords": [body]}]}]}) + "\n"
    attributes = [{"key": "resourceLogs", "value": {"stringValue": "resourceMetrics"}}]
    said = _line(spanId="00f067aa0ba902b7", attributes=attributes)
    path = tmp_path / "t.jsonl"
    path.write_text(_line() + logs + said.replace('"resourceSpans"', '"resource\\u0053pans"'))
    for read in (read_spans, iter_runs):  # two spans of one trace: one run
        report = ReadReport()
        assert len(list(read([path], report=report))) == (2 if read is read_spans else 1)
        assert [str(s) for s in report.skipped] == [f"{path}: skipped 1 logs line (not traces)"]
    path.write_text(said)  # alone in its file: a trace file, not "a logs file"
    (span,) = read_spans([path])
    assert span.attributes["resourceLogs"] == "resourceMetrics"


def test_a_line_the_byte_scan_takes_for_logs_is_still_read_as_what_it_parses_to(tmp_path: Path) -> None:
    """The scan judges by the first signal member; a member *named* with a quote in it can fool it
    (no OTLP writer makes one). The parse has the last word: the line's spans are read, not lost."""
    odd = json.dumps({'"resourceLogs': 1, **_request({**SPAN, "spanId": "00f067aa0ba902b7"})}) + "\n"
    assert '"resourceLogs":' in odd.replace("\\", "")
    path = tmp_path / "t.jsonl"
    path.write_text(_line() + odd)
    assert sorted(s.span_id for s in read_spans([path])) == ["00f067aa0ba902b7", "b7ad6b7169203331"]


def test_a_resource_or_scope_without_its_list_holds_no_spans(tmp_path: Path) -> None:
    """proto3 JSON leaves an empty repeated field out: a resource without ``scopeSpans`` and a scope
    without ``spans`` are empty, not malformed."""
    no_scopes = json.dumps({"resourceSpans": [{"resource": {}}, _request(SPAN)["resourceSpans"][0]]})
    no_spans = json.dumps({"resourceSpans": [{"scopeSpans": [{"scope": {"name": "s"}}]}]})
    path = tmp_path / "t.jsonl"
    path.write_text(no_scopes + "\n" + no_spans + "\n")
    (span,) = read_spans([path])
    assert span.span_id == SPAN["spanId"]


def test_a_line_that_is_no_otlp_request_is_named_as_such(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(_line() + '{"foo": 1}\n')
    with pytest.raises(TraceReadError) as caught:
        list(read_spans([path]))
    assert caught.value.line == 2
    assert caught.value.problem == "no resourceSpans: not an OTLP ExportTraceServiceRequest"


def test_blank_lines_of_any_whitespace_are_skipped_and_still_counted(tmp_path: Path) -> None:
    """A line of nothing but whitespace holds no request, whatever its length ("\\r\\n" from an editor,
    indentation left by a script); it still counts for the line numbers of what follows, and an
    unterminated blank last line is not a line cut off."""
    blanks = ["   \n", "\t\r\n", "\x0c \x0b\n", " " * 40 + "\n"]
    path = tmp_path / "t.jsonl"
    path.write_text(_line() + "".join(blanks) + _line(spanId="00f067aa0ba902b7") + "    ")
    for read in (read_spans, iter_runs):
        report = ReadReport()
        assert len(list(read([path], report=report))) == (2 if read is read_spans else 1)
        assert report.incomplete == []
    path.write_text(_line() + "".join(blanks) + _line(spanId="nope"))
    with pytest.raises(TraceReadError) as caught:
        list(read_spans([path]))
    assert caught.value.line == 2 + len(blanks)


def test_a_malformed_logs_line_is_still_an_error(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(_line() + '{"resourceLogs": [}\n')
    with pytest.raises(TraceReadError, match="invalid JSON") as info:
        list(iter_runs([path]))
    assert info.value.line == 2


def _framed(*payloads: bytes) -> bytes:
    return b"".join(len(p).to_bytes(4, "big") + p for p in payloads)


def _proto_request(spans) -> bytes:
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    return encode_spans(spans).SerializeToString()


def _recorded(n: int = 2):
    rec = Recorder("v1")
    for i in range(n):
        with rec.span(f"step {i}"):
            pass
    return rec.spans()


def test_length_prefixed_records_cut_off_are_incomplete(tmp_path: Path) -> None:
    spans = _recorded()
    data = _framed(_proto_request(spans[:1]), _proto_request(spans[1:]))
    path = tmp_path / "t.bin"
    path.write_bytes(data[:-3])
    assert sniff_format(path) == "otlp-length-prefixed"
    with pytest.raises(TraceReadError, match="incomplete file"):
        list(read_spans([path]))
    report = ReadReport()
    assert [s.name for s in read_spans([path], report=report)] == ["step 0"] and not report.complete


def test_a_bad_length_prefixed_record_names_its_offset(tmp_path: Path) -> None:
    good = _proto_request(_recorded(1))
    path = tmp_path / "t.bin"
    path.write_bytes(_framed(good, b"\x0a\x05\x12\x03\x0a\x01\xff"))
    with pytest.raises(TraceReadError, match=f"record at byte {4 + len(good)}"):
        list(read_spans([path]))
    path.write_bytes(_framed(good, b"\x10\x01"))
    with pytest.raises(TraceReadError, match=f"record at byte {4 + len(good)}: unexpected protobuf field 2"):
        list(read_spans([path]))


def test_zstd_without_a_zstd_library_names_the_extra(tmp_path: Path, monkeypatch) -> None:
    spans = _recorded()
    stream = tmp_path / "t.jsonl.zst"
    stream.write_bytes(zstandard.ZstdCompressor().compress(write_jsonl(spans, tmp_path / "t").read_bytes()))
    record = tmp_path / "t.bin"
    record.write_bytes(_framed(zstandard.ZstdCompressor().compress(_proto_request(spans))))
    assert len(list(read_spans([stream]))) == len(list(read_spans([record]))) == 2
    monkeypatch.setitem(sys.modules, "zstandard", None)  # as if the extra were not installed
    monkeypatch.setitem(sys.modules, "compression", None)
    for path in (stream, record):
        with pytest.raises(
            TraceReadError, match=r"install the 'zstd' extra \(pip install 'otel-provenance\[zstd\]'\)"
        ) as info:
            list(read_spans([path]))
        assert info.value.source == str(path)


# --- #18 point 7: decompression limits -------------------------------------------------------------

_GIB = 1 << 30


def _bounded(read, measure: bool = True) -> tuple[BaseException, int]:
    """Run ``read``; the exception it raised and the peak of Python memory it allocated (traced
    only with ``measure``: tracing slows the many-small-lines bombs tenfold)."""
    if not measure:
        try:
            read()
        except TraceReadError as exc:
            return exc, 0
        pytest.fail("the bomb was read")
    tracemalloc.start()
    try:
        read()
    except TraceReadError as exc:
        error = exc
    else:
        pytest.fail("the bomb was read")
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return error, peak


@pytest.mark.parametrize(
    ("head", "body"),
    [(b"", b"\n"), (b'{"resourceSpans":"', b"a")],
    ids=["newlines", "one-endless-line"],
)
def test_gzip_bomb_is_refused_quickly_in_bounded_memory(tmp_path: Path, head: bytes, body: bytes) -> None:
    member = gzip.compress(body * ((1 << 20) // len(body)), compresslevel=9)  # 1 MiB → ~1 KB
    path = tmp_path / "bomb.jsonl.gz"
    # a ~1 MB file of 1 GiB: gzip reads concatenated members as one stream
    path.write_bytes(gzip.compress(head) + member * 1024)
    assert path.stat().st_size < 3 << 20
    error, peak = _bounded(lambda: list(read_spans([path])), measure=bool(head))
    assert "expands more than 200 times" in str(error) and str(path) in str(error)
    assert peak < 200 << 20  # never near the 1 GiB it would expand to


def test_zstd_stream_and_record_bombs_are_refused(tmp_path: Path) -> None:
    compressor = zstandard.ZstdCompressor(level=19)
    frame = compressor.compress(b"a" * (1 << 20))  # 1 MiB → a few dozen bytes
    stream = tmp_path / "bomb.jsonl.zst"
    stream.write_bytes(compressor.compress(b'{"resourceSpans":"') + frame * 1024)  # one endless line
    error, peak = _bounded(lambda: list(read_spans([stream])))
    assert "expands more than" in str(error) and peak < 200 << 20
    record = tmp_path / "bomb.bin"
    record.write_bytes(_framed(frame * 1024))
    error, peak = _bounded(lambda: list(read_spans([record])))
    assert "record at byte 0 expands more than" in str(error) and peak < 200 << 20
    assert isinstance(error, TraceReadError) and error.source == str(record)


def test_a_corrupt_zstd_record_names_the_file_the_record_and_the_library_error(tmp_path: Path) -> None:
    frame = zstandard.ZstdCompressor().compress(_proto_request(_recorded()))
    record = tmp_path / "corrupt.bin"
    record.write_bytes(_framed(frame[:4] + b"\xff" * 8 + frame[12:]))
    with pytest.raises(TraceReadError) as info:
        list(read_spans([record]))
    assert info.value.source == str(record)
    assert info.value.problem == "record at byte 0: corrupt zstd data (ZstdError)"


def test_decompression_limits_are_configurable(tmp_path: Path) -> None:
    path = write_jsonl(_recorded(50), tmp_path / "t.jsonl.gz", compress=True)
    assert len(list(read_spans([path]))) == 50
    with pytest.raises(TraceReadError, match="decompresses to more than 1000 bytes"):
        list(read_spans([path], limits=ReadLimits(max_bytes=1000)))
    with pytest.raises(TraceReadError, match="expands more than 2 times") as info:
        list(iter_runs([path], limits=ReadLimits(max_ratio=2, ratio_floor=0)))
    assert str(info.value).endswith("raise ReadLimits.max_ratio / OTEL_PROVENANCE_READ_MAX_RATIO to read it")
    with pytest.raises(ValueError):
        ReadLimits(max_ratio=0)


def test_cli_reads_limits_from_the_environment(tmp_path: Path, monkeypatch) -> None:
    from otel_provenance.cli import run

    rec = Recorder("v1")
    for i in range(5):
        with rec.span(f"invoke_agent {i}", attributes={"gen_ai.operation.name": "invoke_agent"}):
            pass
    path = write_jsonl(rec.spans(), tmp_path / "t.jsonl.gz", compress=True)
    monkeypatch.setenv("OTEL_PROVENANCE_READ_MAX_BYTES", "100")
    assert run(["fingerprint", str(path)]) == 1
    monkeypatch.setenv("OTEL_PROVENANCE_READ_MAX_BYTES", "lots")
    assert run(["fingerprint", str(path)]) == 1
    monkeypatch.delenv("OTEL_PROVENANCE_READ_MAX_BYTES")
    assert run(["fingerprint", str(path)]) == 0


# --- #18 point 8: duplicate JSON member names ------------------------------------------------------


@pytest.mark.parametrize(
    "attribute",
    [
        '{"key":"approved","value":{"boolValue":false},"value":{"boolValue":true}}',
        '{"key":"approved","value":{"boolValue":false,"boolValue":true}}',
        '{"key":"approved","key":"other","value":{"boolValue":true}}',
    ],
)
def test_duplicate_member_names_are_refused_with_file_and_line(tmp_path: Path, attribute: str) -> None:
    line = _line().replace('"kind": 1', '"kind": 1, "attributes": [' + attribute + "]")
    assert attribute in line
    path = tmp_path / "t.jsonl"
    path.write_text(_line(spanId="b7ad6b7169203332") + line)
    for read in (read_spans, iter_runs):
        with pytest.raises(TraceReadError, match="duplicate JSON member name") as info:
            list(read([path]))
        assert info.value.source == str(path) and info.value.line == 2


@pytest.mark.parametrize("lead", ["", "\n\n"], ids=["first-line", "after-blank-lines"])
def test_duplicate_member_in_a_pretty_document_names_its_line(tmp_path: Path, lead: str) -> None:
    text = lead + json.dumps(_request(SPAN), indent=2).replace(
        '"name": "execute_tool refund"', '"name": "a",\n"name": "b"'
    )
    path = tmp_path / "t.json"
    path.write_text(text)
    assert sniff_format(path) == "otlp-json"
    with pytest.raises(TraceReadError, match="duplicate JSON member name 'name'") as info:
        list(read_spans([path]))
    lines = text.splitlines()
    opening = next(i for i, ln in enumerate(lines) if ln.strip() == '"spans": [') + 1  # the span's "{"
    assert lines[opening].strip() == "{" and info.value.line == opening + 1  # 1-based: the object's line


def test_duplicate_member_too_deep_to_locate_is_still_refused_without_a_line(tmp_path: Path) -> None:
    """The line is found by a second, pure-Python parse, which recurses about twice as deep per level
    as the C parser that found the duplicate: nesting that only the C parser can take gives no line,
    never a crash and never a pass."""
    depth = 700
    nested = "[" * depth + "]" * depth
    text = json.dumps(_request(SPAN), indent=2).replace(
        '"name": "execute_tool refund"', f'"deep": {nested},\n"name": "a",\n"name": "b"'
    )
    json.loads(text)  # the C parser takes this nesting
    path = tmp_path / "t.json"
    path.write_text(text)
    assert sniff_format(path) == "otlp-json"
    with pytest.raises(TraceReadError, match="duplicate JSON member name 'name'") as info:
        list(read_spans([path]))
    assert info.value.line is None and info.value.source == str(path)


def test_protobuf_files_still_read(tmp_path: Path) -> None:
    spans = _recorded(3)
    assert len(list(read_spans([write_proto(spans, tmp_path / "t.pb")]))) == 3


# --- through the CLI --------------------------------------------------------------------------------

FIXTURES = Path(__file__).parents[2] / "fixtures" / "foreign"


def _cli(*argv: object) -> tuple[int, str, str]:
    import io

    from otel_provenance.cli import run

    out, err = io.StringIO(), io.StringIO()
    code = run([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


def test_commands_say_what_they_skipped(tmp_path: Path) -> None:
    mixed = FIXTURES / "python-sdk-mixed.jsonl"
    note = f"note: {mixed}: skipped 4 logs lines, 4 metrics lines (not traces)"
    code, _, err = _cli("fingerprint", mixed)
    assert code == 0 and note in err
    contract = tmp_path / "c.yaml"
    code, _, err = _cli("mine", "--approved", mixed, "-o", contract)
    assert code == 0 and note in err
    for jobs in ("1", "2"):
        code, _, err = _cli(
            "gate", "check", "--contract", contract, "--release", "py-1", mixed, "--jobs", jobs
        )
        assert code == 0 and err.count(note) == 1, err


def test_a_duplicate_member_cannot_turn_a_failing_gate_into_a_pass(tmp_path: Path) -> None:
    """#18 point 8: with last-wins, the second ``value`` made the gate pass (exit 0)."""
    contract = tmp_path / "c.yaml"
    contract.write_text(
        "version: 1\nname: approvals\nrules:\n"
        "  - id: approved_refunds\n    type: allowed_values\n    select: {step: refund}\n"
        "    attribute: approved\n    values: [true]\n"
    )

    def line(value: str, extra: str = "") -> str:
        attrs = '{"key":"gen_ai.operation.name","value":{"stringValue":"execute_tool"}},'
        attrs += '{"key":"gen_ai.tool.name","value":{"stringValue":"refund"}},'
        attrs += '{"key":"approved","value":' + value + extra + "}"
        span = json.dumps({**SPAN}).replace("}", ',"attributes":[' + attrs + "]}")
        resource = '{"attributes":[{"key":"service.version","value":{"stringValue":"v1"}}]}'
        return '{"resourceSpans":[{"resource":' + resource + ',"scopeSpans":[{"spans":[' + span + "]}]}]}\n"

    path = tmp_path / "t.jsonl"
    path.write_text(line('{"boolValue":false}'))
    assert _cli("gate", "check", "--contract", contract, "--release", "v1", path)[0] == 2
    path.write_text(line('{"boolValue":true}'))
    assert _cli("gate", "check", "--contract", contract, "--release", "v1", path)[0] == 0
    path.write_text(line('{"boolValue":false}', ',"value":{"boolValue":true}'))
    code, _, err = _cli("gate", "check", "--contract", contract, "--release", "v1", path)
    assert code == 1 and f"{path}:1: duplicate JSON member name 'value'" in err


def test_an_all_zero_parent_span_id_in_protobuf_is_refused(tmp_path: Path) -> None:
    """OTLP writes a root's parent empty and calls an all-zero id invalid: reading eight zero bytes as
    "no parent" would make a span whose parent was lost look like a clean root."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    request = encode_spans(list(_recorded(1)))
    span = request.resource_spans[0].scope_spans[0].spans[0]
    assert span.parent_span_id == b""
    span.parent_span_id = bytes(8)
    path = tmp_path / "t.pb"
    path.write_bytes(request.SerializeToString())
    with pytest.raises(TraceReadError, match="parent_span_id is all zeros"):
        list(read_spans([path]))


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "gzip"])
def test_progress_is_reported_with_the_file_size_while_a_long_file_is_read(tmp_path: Path, compress) -> None:
    """For compressed input, progress counts the compressed bytes read: the file's size is its total."""
    rng = random.Random(5)
    text = "".join(_line(spanId=f"{rng.getrandbits(64):016x}") for _ in range(5000))
    path = tmp_path / "t.jsonl"
    path.write_bytes(gzip.compress(text.encode()) if compress else text.encode())
    calls: list[tuple[str, int, int]] = []
    report = ReadReport(progress=lambda label, done, total: calls.append((label, done, total)))
    assert len(list(read_spans([path], report=report))) == 5000
    size = path.stat().st_size
    assert len(calls) >= 3 and all(total == size and 0 < done <= size for _, done, total in calls)
    assert calls[-1][1:] == (size, size)
    assert {label for label, _, _ in calls} == {f"reading {path}"}  # every call names the file


def test_lines_appended_after_the_index_was_built_are_not_read(tmp_path: Path) -> None:
    """iter_runs indexes every file, then reads each again up to the line the index reached: a line
    a writer appends in between (here to the second file, after the first run came out) is read by
    the next gate, not half-way into this one's runs."""

    def run_line(n: int) -> str:
        attributes = [{"key": "agent.run.id", "value": {"stringValue": f"r{n}"}}]
        return _line(traceId=f"{n:032x}", spanId=f"{n:016x}", attributes=attributes)

    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text(run_line(1))
    second.write_text(run_line(2) + run_line(3))
    runs = iter_runs([first, second])
    assert next(runs).run_id == "r1"
    with second.open("a") as f:
        f.write(run_line(9))
    assert [run.run_id for run in runs] == ["r2", "r3"]


def test_a_report_counts_every_file_and_span_read(tmp_path: Path) -> None:
    texts = [_line(spanId="0000000000000001") + _line(spanId="0000000000000002"), _line(), _line()]
    paths = [tmp_path / f"t{n}.jsonl" for n in range(len(texts))]
    for path, text in zip(paths, texts, strict=True):
        path.write_text(text)
    report = ReadReport()
    assert len(list(read_spans(paths, report=report))) == 4
    assert (report.files, report.spans) == (3, 4)


@pytest.mark.parametrize("trace_id_key", ["traceId", "trace\\u0049d"], ids=["indexed", "unindexed"])
def test_iter_runs_of_a_release_yields_no_run_of_another(tmp_path: Path, trace_id_key: str) -> None:
    """Also when the byte index cannot see a span's trace (its key written with an escape): such runs
    are held to the end of the input and filtered there."""
    spans = []
    for release in ("v1", "v2", "v1", "v2"):
        rec = Recorder(release)
        with rec.span("invoke_agent a"), rec.span("execute_tool t"):
            pass
        spans += rec.spans()
    path = write_jsonl(spans, tmp_path / "t.jsonl")
    path.write_text(path.read_text().replace('"traceId"', f'"{trace_id_key}"'))
    every = list(iter_runs([path]))
    runs = list(iter_runs([path], "v2"))
    assert runs and {r.release for r in runs} == {"v2"}
    assert sorted(r.run_id for r in runs) == sorted(r.run_id for r in every if r.release == "v2")
    assert len(every) == 2 * len(runs)


@pytest.mark.parametrize("kind", ["gzip", "zstd"])
def test_compressed_input_rewinds_to_its_start_and_nowhere_else(tmp_path: Path, kind: str) -> None:
    """The sniffer reads a file's head and rewinds: decompression restarts from the first byte, with
    the count of bytes produced (what the limits check, and ``tell``) from zero. Any other seek is
    refused rather than answered with the start."""
    import io

    from otel_provenance.offline.readers._compressed import open_input

    text = b"".join(b'{"line": %d}\n' % i for i in range(20_000))  # several decompressor steps
    packed = gzip.compress(text) if kind == "gzip" else zstandard.ZstdCompressor().compress(text)
    path = tmp_path / f"t.{kind}"
    path.write_bytes(packed)
    limits = ReadLimits(max_bytes=len(text), max_ratio=1000)
    with open_input(str(path), limits) as f:
        assert f.read() == text  # exactly at the byte limit
        f.seek(0)
        assert f.read(300_000) == text[:300_000]
        assert f.seek(0) == 0 and f.tell() == 0
        assert f.read() == text  # all of it again, exactly at the byte limit
        f.seek(0)
        with pytest.raises(
            io.UnsupportedOperation, match=r"^compressed input can only be rewound to its start$"
        ):
            f.seek(len(text) // 2)


def test_a_zstd_file_of_several_frames_is_read_to_its_last_frame(tmp_path: Path) -> None:
    """zstd streams may be concatenated frames (a writer that flushes per batch, or ``cat``): a reader
    that stopped at the first frame's end would drop the rest of the file without a word."""
    first, second = (write_jsonl(_recorded(n), tmp_path / f"part{n}.jsonl").read_bytes() for n in (2, 3))
    compressor = zstandard.ZstdCompressor()
    path = tmp_path / "frames.jsonl.zst"
    path.write_bytes(compressor.compress(first) + compressor.compress(second))
    assert len(list(read_spans([path]))) == 5


@pytest.mark.parametrize("kind", ["gzip", "zstd"])
def test_a_cut_compressed_file_is_incomplete_and_names_its_compression(tmp_path: Path, kind: str) -> None:
    """A compressed stream that ends early is incomplete input, and the message says which kind of
    data was cut off — what a user checks the writer for. So is one cut before its first byte of
    output: not an empty file."""
    text = write_jsonl(_recorded(40), tmp_path / "t.jsonl").read_bytes()
    packed = gzip.compress(text) if kind == "gzip" else zstandard.ZstdCompressor().compress(text)
    path = tmp_path / f"t.jsonl.{'gz' if kind == 'gzip' else 'zst'}"
    for cut in (len(packed) * 2 // 3, 12):
        path.write_bytes(packed[:cut])
        expected = rf"^{re.escape(str(path))}.*incomplete file: the {kind} data ends early"
        with pytest.raises(TraceReadError, match=expected):
            list(read_spans([path]))


def _zstd_frame(payload: bytes, kind: str) -> bytes:
    """One frame as different writers make it: sized one-shot, checksummed, streamed (no size in
    its header, so a window descriptor instead), or a skippable frame carrying no data at all."""
    if kind == "skippable":
        magic = 0x184D2A50 + len(payload) % 16
        return magic.to_bytes(4, "little") + len(payload).to_bytes(4, "little") + payload
    if kind == "streamed":
        obj = zstandard.ZstdCompressor(level=3).compressobj()
        return obj.compress(payload) + obj.flush()
    return zstandard.ZstdCompressor(level=1, write_checksum=kind == "checksummed").compress(payload)


@settings(max_examples=60)
@given(data=st.data())
def test_a_zstd_file_cut_inside_a_frame_is_incomplete_and_one_cut_between_frames_complete(data) -> None:
    """zstandard ends a stream cut off mid-frame as if it were whole; the reader follows the frames and
    says the file is incomplete — however the frames were written (sized, streamed, checksummed,
    skippable, many blocks, runs of one byte) and wherever the cut falls. A cut that falls exactly
    between frames leaves whole frames: complete, with every span they hold."""
    import tempfile

    kinds = st.sampled_from(["sized", "checksummed", "streamed", "skippable"])
    frames, spans_in = [], []
    for _ in range(data.draw(st.integers(1, 3), label="frames")):
        kind = data.draw(kinds)
        n = data.draw(st.integers(1, 3))
        with tempfile.TemporaryDirectory() as scratch:
            text = write_jsonl(_recorded(n), Path(scratch) / "t.jsonl").read_bytes()
        padding = b"\n" * data.draw(st.sampled_from([0, 150_000]))  # two blocks, of one repeated byte
        frames.append(_zstd_frame(text + padding, kind))
        spans_in.append(0 if kind == "skippable" else n)
    if all(n == 0 for n in spans_in):
        with tempfile.TemporaryDirectory() as scratch:
            frames[0] = _zstd_frame(write_jsonl(_recorded(1), Path(scratch) / "t").read_bytes(), "sized")
        spans_in[0] = 1
    whole = b"".join(frames)
    ends = [sum(len(f) for f in frames[: i + 1]) for i in range(len(frames))]
    cut = data.draw(st.one_of(st.sampled_from(ends), st.integers(5, len(whole))), label="cut")
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "t.jsonl.zst"
        path.write_bytes(whole[:cut])
        report = ReadReport()
        read = list(read_spans([path], report=report))
    before = sum(n for end, n in zip(ends, spans_in, strict=True) if end <= cut)
    if cut in ends:
        assert report.complete and len(read) == before
    else:
        assert not report.complete and "the zstd data ends early" in str(report.incomplete[0])
        assert before <= len(read) <= before + spans_in[ends.index(min(e for e in ends if e > cut))]


def test_a_zstd_record_cut_inside_its_frame_is_an_error(tmp_path: Path) -> None:
    """The Collector's per-record zstd: a record's bytes end inside the frame (its length says so), and
    zstandard hands back what it could. The record is refused, never read as fewer spans."""
    frame = zstandard.ZstdCompressor(level=1).compress(_proto_request(_recorded(3)))
    path = tmp_path / "t.bin"
    for cut in (len(frame) - 1, len(frame) - 4, len(frame) // 2):
        path.write_bytes(_framed(frame[:cut]))
        with pytest.raises(TraceReadError, match=r"record at byte 0: corrupt zstd data \(it ends inside"):
            list(read_spans([path]))
    path.write_bytes(_framed(frame))
    assert len(list(read_spans([path]))) == 3


def test_a_pzstd_file_is_read_whole_and_a_cut_in_its_skippable_frames_is_incomplete(tmp_path: Path) -> None:
    """pzstd writes a skippable frame before each frame; such a file is zstd all the same. Cut inside a
    skippable frame's content (no data lost yet), it is still a cut file."""
    parts = [write_jsonl(_recorded(n), tmp_path / f"p{n}.jsonl").read_bytes() for n in (2, 3)]
    whole = b"".join(_zstd_frame(b"\x00" * 4, "skippable") + _zstd_frame(p, "sized") for p in parts)
    path = tmp_path / "t.jsonl.zst"
    path.write_bytes(whole)
    report = ReadReport()
    assert len(list(read_spans([path], report=report))) == 5 and report.complete
    second = len(_zstd_frame(b"\x00" * 4, "skippable") + _zstd_frame(parts[0], "sized"))
    path.write_bytes(whole[: second + 10])  # inside the second skippable frame's four bytes
    report = ReadReport()
    assert len(list(read_spans([path], report=report))) == 2 and not report.complete


@settings(max_examples=100)
@given(
    st.lists(
        st.one_of(
            st.tuples(
                st.sampled_from(["sized", "checksummed", "streamed"]),
                st.binary(max_size=300),
                st.sampled_from([0, 150_000]),  # past zstd's 128 KiB block: a frame of many blocks
            ),
            # a skippable frame's content is stored as it is: 300 bytes already need a multi-byte size
            st.tuples(st.just("skippable"), st.binary(max_size=300), st.sampled_from([0, 300])),
        ),
        min_size=1,
        max_size=3,
    )
)
def test_the_frame_walker_is_between_frames_exactly_at_frame_ends(frames) -> None:
    """Fed a few bytes at a time (headers split across feeds every way), the walker is between frames
    at the start, at each frame's end, and nowhere else."""
    from otel_provenance.offline.readers._zstd_frames import FrameWalker

    blobs = [_zstd_frame(payload + b"\n" * padding, kind) for kind, payload, padding in frames]
    data = b"".join(blobs)
    ends = {0} | {sum(len(b) for b in blobs[: i + 1]) for i in range(len(blobs))}
    for step in (1, 2, 3, 5, 7):
        walker = FrameWalker()
        for at in range(0, len(data), step):
            assert walker.between_frames is (at in ends), (step, at)
            walker.feed(data[at : at + step])
        assert walker.between_frames, step


# zstandard writes no dictionary id (the reader has no dictionary), never an 8-byte content size (a
# frame of 4 GiB and more) and a content size with a window descriptor only for large frames, so the
# frames above never hold those header fields: these frames are made by hand, every layout of the
# frame header RFC 8878 allows, with blocks of each type (the walker skips their contents unread).
_CONTENT_SIZE_BYTES = {0: 0, 1: 2, 2: 4, 3: 8}


@st.composite
def _hand_made_frames(draw) -> bytes:
    content_size_flag = draw(st.integers(0, 3))
    single_segment = draw(st.booleans())
    dictionary_flag = draw(st.integers(0, 3))
    checksum = draw(st.booleans())
    descriptor = content_size_flag << 6 | single_segment << 5 | checksum << 2 | dictionary_flag
    header = b"" if single_segment else draw(st.binary(min_size=1, max_size=1))  # the window descriptor
    header += draw(st.binary(min_size=(0, 1, 2, 4)[dictionary_flag], max_size=(0, 1, 2, 4)[dictionary_flag]))
    size_bytes = _CONTENT_SIZE_BYTES[content_size_flag] or single_segment
    header += draw(st.binary(min_size=size_bytes, max_size=size_bytes))
    blocks = draw(st.lists(st.tuples(st.sampled_from([0, 1, 2]), st.integers(0, 40)), min_size=1, max_size=3))
    body = b""
    for n, (kind, size) in enumerate(blocks):
        last = n == len(blocks) - 1
        body += (size << 3 | kind << 1 | last).to_bytes(3, "little")
        body += draw(st.binary(min_size=1 if kind == 1 else size, max_size=1 if kind == 1 else size))
    body += draw(st.binary(min_size=4, max_size=4)) if checksum else b""
    return b"\x28\xb5\x2f\xfd" + bytes([descriptor]) + header + body


@settings(max_examples=200)
@given(st.lists(_hand_made_frames(), min_size=1, max_size=3))
def test_the_frame_walker_reads_every_frame_header_layout(frames: list[bytes]) -> None:
    from otel_provenance.offline.readers._zstd_frames import FrameWalker

    data = b"".join(frames)
    ends = {0} | {sum(len(f) for f in frames[: i + 1]) for i in range(len(frames))}
    for step in (1, 2, 3, 7):
        walker = FrameWalker()
        for at in range(0, len(data), step):
            assert walker.between_frames is (at in ends), (step, at)
            walker.feed(data[at : at + step])
        assert walker.between_frames, step


@pytest.mark.parametrize("content_size_flag", [1, 2, 3])
def test_a_zstd_frame_with_a_long_content_size_field_is_read_and_one_cut_in_it_incomplete(
    tmp_path: Path, content_size_flag: int
) -> None:
    """Any writer may give the content size in 2, 4 or 8 bytes (zstandard uses 8 only past 4 GiB): the
    frame is read whole, and cut anywhere inside — its header included — it is incomplete."""
    text = write_jsonl(_recorded(2), tmp_path / "t.jsonl").read_bytes()
    assert 256 <= len(text) < 2**17  # one raw block; a 2-byte content size is the size less 256
    size = len(text) - 256 if content_size_flag == 1 else len(text)
    frame = (
        b"\x28\xb5\x2f\xfd"
        + bytes([content_size_flag << 6 | 1 << 5])  # a single segment: no window descriptor
        + size.to_bytes(_CONTENT_SIZE_BYTES[content_size_flag], "little")
        + (len(text) << 3 | 1).to_bytes(3, "little")  # the last block, raw
        + text
    )
    path = tmp_path / "t.jsonl.zst"
    path.write_bytes(frame + frame)
    report = ReadReport()
    assert len(list(read_spans([path], report=report))) == 4 and report.complete
    for cut in (len(frame) + 6, len(frame) + 5 + _CONTENT_SIZE_BYTES[content_size_flag], 2 * len(frame) - 1):
        path.write_bytes((frame + frame)[:cut])
        report = ReadReport()
        list(read_spans([path], report=report))
        assert not report.complete and "the zstd data ends early" in str(report.incomplete[0]), cut


def test_the_frame_walker_is_never_between_frames_after_structure_it_cannot_follow() -> None:
    """Four bytes that are no frame's magic, or a block of the reserved type: the walker cannot know
    where the next frame starts, so it never says the stream is whole again (the decompressor refuses
    such data first; the walker must not vouch for it either)."""
    from otel_provenance.offline.readers._zstd_frames import FrameWalker

    frame = _zstd_frame(b"x", "sized")
    reserved = (
        b"\x28\xb5\x2f\xfd" + bytes([1 << 5]) + b"\x01" + (1 << 3 | 3 << 1 | 1).to_bytes(3, "little") + b"y"
    )
    for stream in (b"\x00\x00\x00\x00" + frame, reserved + frame, frame + b"PK\x03\x04" + frame):
        walker = FrameWalker()
        walker.feed(stream)
        assert not walker.between_frames, stream
