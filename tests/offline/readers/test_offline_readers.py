"""Readers: real SDK output (JSON Lines, protobuf, gzip, single document) read back faithfully."""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import Link as OtelLink
from opentelemetry.trace import StatusCode as OtelStatusCode
from opentelemetry.trace import format_span_id, format_trace_id, set_span_in_context

from offline_helpers import Recorder, write_jsonl, write_proto
from otel_provenance import semconv
from otel_provenance.errors import InvalidEvidenceError, TraceReadError
from otel_provenance.offline.model import ABSENT, Attributes, Span, SpanKind, Status, StatusCode
from otel_provenance.offline.readers import ReadReport, iter_runs, read_spans, sniff_format
from otel_provenance.offline.runs import group_runs

TYPED = {
    "s": "text",
    "empty": "",
    "zero": 0,
    "false": False,
    "i": -(2**63),
    "big": 2**63 - 1,
    "f": 1.25,
    "b": True,
    "strs": ("a", "b"),
    "ints": (1, 2, 3),
    "floats": (0.5, -1.5),
    "bools": (True, False),
    "nested": {"k": "v", "inner": {"n": 3, "l": [1, 2]}},
    "blob": b"\x00\x01",
}


def _typed_spans() -> list[ReadableSpan]:
    rec = Recorder("v7")
    with rec.span("root", {"agent.run.id": "run-1"}) as root:
        with rec.span("child", TYPED, parent=root, status=OtelStatusCode.ERROR) as child:
            child.add_event("evt", {"n": 1, "s": "x"}, timestamp=rec.tick())
        rec.tracer.start_span(
            "linked", links=[OtelLink(child.get_span_context(), {"why": "retry"})], start_time=rec.tick()
        ).end(end_time=rec.tick())
    return rec.spans()


def _expected(value):
    if isinstance(value, dict):
        return Attributes({k: _expected(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_expected(v) for v in value)
    return value


def _check_same(ours: Span, theirs: ReadableSpan) -> None:
    assert ours.trace_id == format_trace_id(theirs.context.trace_id)
    assert ours.span_id == format_span_id(theirs.context.span_id)
    assert ours.parent_span_id == (format_span_id(theirs.parent.span_id) if theirs.parent else None)
    assert ours.name == theirs.name
    assert ours.kind == SpanKind.INTERNAL
    assert (ours.start_ns, ours.end_ns) == (theirs.start_time, theirs.end_time)
    assert (
        ours.status.code
        == {
            OtelStatusCode.UNSET: StatusCode.UNSET,
            OtelStatusCode.OK: StatusCode.OK,
            OtelStatusCode.ERROR: StatusCode.ERROR,
        }[theirs.status.status_code]
    )
    assert dict(ours.attributes) == {k: _expected(v) for k, v in theirs.attributes.items()}
    assert dict(ours.resource) == dict(theirs.resource.attributes)
    assert ours.scope_name == theirs.instrumentation_scope.name
    assert ours.scope_version == theirs.instrumentation_scope.version
    assert [(e.name, e.time_ns, dict(e.attributes)) for e in ours.events] == [
        (e.name, e.timestamp, dict(e.attributes)) for e in theirs.events
    ]
    assert [(li.trace_id, li.span_id, dict(li.attributes)) for li in ours.links] == [
        (format_trace_id(li.context.trace_id), format_span_id(li.context.span_id), dict(li.attributes))
        for li in theirs.links
    ]


@pytest.mark.parametrize("writer", ["jsonl", "jsonl-batched", "jsonl-gz", "proto", "proto-gz", "document"])
def test_round_trip_keeps_every_field_and_type(tmp_path: Path, writer: str) -> None:
    spans = _typed_spans()
    path = tmp_path / "t"
    if writer == "jsonl":
        write_jsonl(spans, path)
    elif writer == "jsonl-batched":
        write_jsonl(spans, path, batch=2)
    elif writer == "jsonl-gz":
        write_jsonl(spans, path, compress=True)
    elif writer == "proto":
        write_proto(spans, path)
    elif writer == "proto-gz":
        write_proto(spans, path, compress=True)
    else:
        write_jsonl(spans, tmp_path / "one", batch=len(spans))
        doc = json.loads((tmp_path / "one").read_text())
        path.write_text(json.dumps(doc, indent=2))
    ours = list(read_spans([path]))
    by_id = {s.span_id: s for s in ours}
    assert len(ours) == len(spans) == 3
    for theirs in spans:
        _check_same(by_id[format_span_id(theirs.context.span_id)], theirs)
    child = next(s for s in ours if s.name == "child")
    # absence is never "", 0 or False — and those values survive as themselves
    assert (
        child.attributes["empty"] == ""
        and child.attributes["zero"] == 0
        and child.attributes["false"] is False
    )
    assert type(child.attributes["zero"]) is int and type(child.attributes["false"]) is bool
    assert child.attributes.get("missing", ABSENT) is ABSENT and "missing" not in child.attributes
    assert type(child.attributes["f"]) is float and child.release == "v7"


def test_format_is_sniffed_from_bytes_not_name(tmp_path: Path) -> None:
    spans = _typed_spans()
    assert sniff_format(write_jsonl(spans, tmp_path / "a.pb")) == "otlp-json-lines"
    assert sniff_format(write_proto(spans, tmp_path / "b.jsonl")) == "otlp-protobuf"
    assert sniff_format(write_proto(spans, tmp_path / "c.json.gz", compress=True)) == "otlp-protobuf"
    (tmp_path / "empty").write_bytes(b"")
    assert sniff_format(tmp_path / "empty") == "empty"
    assert list(read_spans([tmp_path / "empty"])) == []


COLLECTOR_LINE = (
    '{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"svc"}},'
    '{"key":"service.version","value":{"stringValue":"2.0"}}],"droppedAttributesCount":0},'
    '"scopeSpans":[{"scope":{"name":"lib","version":"0.1"},"spans":[{"traceId":"5B8EFFF798038103D269B633813FC60C",'
    '"spanId":"EEE19B7EC3C1B174","parentSpanId":"","traceState":"","flags":768,"name":"execute_tool lookup",'
    '"kind":"SPAN_KIND_INTERNAL","startTimeUnixNano":1544712660000000000,"endTimeUnixNano":"1544712661000000000",'
    '"attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"execute_tool"}},'
    '{"key":"gen_ai.tool.name","value":{"stringValue":"lookup"}},{"key":"n","value":{"intValue":"7"}},'
    '{"key":"d","value":{"doubleValue":"NaN"}},{"key":"unset","value":{}}],'
    '"droppedAttributesCount":0,"events":[],"droppedEventsCount":0,"links":[],"droppedLinksCount":0,'
    '"status":{"code":"STATUS_CODE_OK","message":""}}],"schemaUrl":""}],"schemaUrl":""}]}\n'
)


def test_collector_file_exporter_shape(tmp_path: Path) -> None:
    path = tmp_path / "collector.json"
    path.write_text(COLLECTOR_LINE * 1)
    (span,) = read_spans([path])
    assert span.trace_id == "5b8efff798038103d269b633813fc60c" and span.parent_span_id is None
    assert span.kind is SpanKind.INTERNAL and span.status.code is StatusCode.OK
    assert span.start_ns == 1544712660000000000 and span.end_ns == 1544712661000000000
    assert span.attributes["n"] == 7 and span.attributes["d"] != span.attributes["d"]  # NaN
    assert "unset" not in span.attributes and span.is_tool and span.release == "2.0"


def _line(**span_fields) -> str:
    span = {
        "traceId": "0af7651916cd43dd8448eb211c80319c",
        "spanId": "b7ad6b7169203331",
        "name": "x",
        "kind": 1,
        "startTimeUnixNano": "1",
        "endTimeUnixNano": "2",
    }
    span.update(span_fields)
    return (
        json.dumps({"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {}, "spans": [span]}]}]})
        + "\n"
    )


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"traceId": "xyz"}, "traceId is not a 32-digit hex id"),
        ({"spanId": "00000000000000000"}, "spanId is not a 16-digit hex id"),
        ({"spanId": "0000000000000000"}, "spanId is all zeros (invalid)"),
        (
            {"links": [{"traceId": "xyz", "spanId": "b7ad6b7169203331"}]},
            "link traceId is not a 32-digit hex id",
        ),
        (
            {"links": [{"traceId": "0af7651916cd43dd8448eb211c80319c"}]},
            "link spanId is missing or not a string",
        ),
        ({"kind": 9}, "kind 9 is out of range 0..5"),
        ({"kind": 6}, "kind 6 is out of range 0..5"),
        ({"kind": "SPAN_KIND_BOGUS"}, "kind is not a known span kind"),
        ({"kind": 1.0}, "kind is not a known span kind"),
        ({"attributes": [{"key": "a", "value": {"mapValue": {}}}]}, "value of unknown type 'mapValue'"),
        ({"attributes": [{"key": "a", "value": {"intValue": "1.5"}}]}, "'a' intValue is not an integer"),
        ({"attributes": [{"key": "a", "value": {"intValue": str(2**63)}}]}, "signed 64-bit range"),
        ({"attributes": [{"key": "a", "value": {"boolValue": "true"}}]}, "boolValue has the wrong JSON type"),
        (
            {
                "attributes": [
                    {"key": "a", "value": {"stringValue": "x"}},
                    {"key": "a", "value": {"stringValue": "y"}},
                ]
            },
            "duplicate attribute key",
        ),
        ({"startTimeUnixNano": "-1"}, "startTimeUnixNano is out of the unsigned 64-bit range"),
        ({"startTimeUnixNano": 1.5}, "startTimeUnixNano is not an integer"),
        ({"endTimeUnixNano": "12e3"}, "endTimeUnixNano is not an integer"),
        ({"status": {"code": 7}}, "status code 7 is out of range 0..2"),
        ({"status": {"code": 3}}, "status code 3 is out of range 0..2"),  # one past ERROR
        ({"parentSpanId": "X" * 16}, "parentSpanId is not a 16-digit hex id"),  # not zeros: not a root
        ({"startTimeUnixNano": "9" * 20}, "startTimeUnixNano is out of the unsigned 64-bit range"),
        ({"endTimeUnixNano": "9" * 20}, "endTimeUnixNano is out of the unsigned 64-bit range"),
        ({"attributes": [{"key": 7, "value": {"stringValue": "x"}}]}, "attribute key is not a string"),
        (
            {"events": [{"name": "e", "timeUnixNano": "1", "attributes": "nope"}]},
            "malformed OTLP structure (TypeError)",
        ),
        ({"events": [{"name": 7, "timeUnixNano": "1"}]}, "event name is not a string"),
        (
            {"events": [{"name": "e", "timeUnixNano": "-1"}]},
            "event timeUnixNano is out of the unsigned 64-bit range",
        ),
    ],
)
def test_errors_name_file_line_and_problem(tmp_path: Path, fields: dict, problem: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(_line() + _line(**fields))
    with pytest.raises(TraceReadError) as info:
        list(read_spans([path]))
    assert info.value.source == str(path) and info.value.line == 2
    assert info.value.problem.startswith("resourceSpans[0].scopeSpans[0].spans[0]")
    assert info.value.problem.endswith(problem)  # the whole message, not a fragment of a longer one


@pytest.mark.parametrize("value", [{"stringValue": "x"}, {"intValue": "5"}, {"boolValue": True}, {}, None])
def test_an_attribute_key_that_is_not_a_string_is_refused_whatever_its_value(tmp_path: Path, value) -> None:
    """Each kind of value takes its own path through the conversion (the string and small-integer
    ones are inlined); an empty or missing value carries nothing, but its key is still judged."""
    kv = {"key": 7} if value is None else {"key": 7, "value": value}
    path = tmp_path / "bad.jsonl"
    path.write_text(_line(attributes=[kv]))
    with pytest.raises(TraceReadError) as info:
        list(read_spans([path]))
    assert info.value.problem == "resourceSpans[0].scopeSpans[0].spans[0]: attribute key is not a string"


@pytest.mark.parametrize("kind", ["SPAN_KIND_BOGUS", 1.0, None])
def test_a_kind_that_is_neither_a_number_nor_a_known_name_is_named_as_such(tmp_path: Path, kind) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(_line(kind=kind))
    with pytest.raises(TraceReadError) as info:
        list(read_spans([path]))
    assert info.value.problem == "resourceSpans[0].scopeSpans[0].spans[0]: kind is not a known span kind"


@pytest.mark.parametrize(
    ("resource_spans", "where", "problem"),
    [
        (
            {"resource": {"attributes": [{"key": "a", "value": {"intValue": "x"}}]}, "scopeSpans": []},
            "resourceSpans[0]: ",
            "attribute 'a' intValue is not an integer",
        ),
        (
            {"resource": {}, "scopeSpans": [{"scope": {"name": 7}, "spans": []}]},
            "resourceSpans[0].scopeSpans[0]: ",
            "scope name/version is not a string",
        ),
    ],
)
def test_an_error_above_the_spans_names_its_resource_or_scope(
    tmp_path: Path, resource_spans: dict, where: str, problem: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(_line() + json.dumps({"resourceSpans": [resource_spans]}) + "\n")
    with pytest.raises(TraceReadError) as info:
        list(read_spans([path]))
    assert info.value.line == 2
    assert info.value.problem == where + problem


def test_error_messages_never_hold_attribute_values(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(_line(attributes=[{"key": "k", "value": {"intValue": "SECRET-42"}}]))
    with pytest.raises(TraceReadError) as info:
        list(read_spans([path]))
    assert "SECRET" not in str(info.value)


def test_bad_json_line_in_the_middle_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(_line() + '{"resourceSpans": [\n' + _line(spanId="b7ad6b7169203332"))
    with pytest.raises(TraceReadError) as info:
        list(read_spans([path], report=ReadReport()))
    assert info.value.line == 2 and "invalid JSON" in info.value.problem


def test_torn_last_line_is_incomplete_not_ignored(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    second = _line(spanId="b7ad6b7169203332", parentSpanId="b7ad6b7169203331")
    path.write_text(_line() + second[: len(second) // 2])
    with pytest.raises(TraceReadError, match="incomplete file") as info:
        list(read_spans([path]))
    assert info.value.line == 2
    with pytest.raises(TraceReadError, match="incomplete file"):
        list(iter_runs([path]))
    report = ReadReport()
    spans = list(read_spans([path], report=report))
    assert [s.span_id for s in spans] == ["b7ad6b7169203331"]
    assert not report.complete and report.incomplete[0].line == 2
    report = ReadReport()
    assert len(list(iter_runs([path], report=report))) == 1 and not report.complete


def test_unterminated_but_complete_last_line_is_fine(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(_line().rstrip("\n"))
    report = ReadReport()
    assert len(list(read_spans([path], report=report))) == 1 and report.complete


def test_torn_protobuf_keeps_complete_records(tmp_path: Path) -> None:
    rec1, rec2 = Recorder("v1"), Recorder("v2")  # two resources → two ResourceSpans records
    with rec1.span("a"):
        pass
    with rec2.span("b"):
        pass
    full = write_proto(rec1.spans() + rec2.spans(), tmp_path / "full.pb").read_bytes()
    path = tmp_path / "torn.pb"
    path.write_bytes(full[:-5])
    with pytest.raises(TraceReadError, match="incomplete file"):
        list(read_spans([path]))
    report = ReadReport()
    assert [s.name for s in read_spans([path], report=report)] == ["a"] and not report.complete


def test_protobuf_garbage_is_a_clean_error(tmp_path: Path) -> None:
    path = tmp_path / "x.pb"
    path.write_bytes(b"\x08\x96\x01garbage")
    with pytest.raises(TraceReadError, match="unexpected protobuf field 1"):
        list(read_spans([path]))


def test_missing_file_is_a_clean_error(tmp_path: Path) -> None:
    with pytest.raises(TraceReadError, match="cannot read file"):
        list(read_spans([tmp_path / "nope.jsonl"]))


@pytest.mark.parametrize(
    ("spans", "problem"),
    [
        ([{"spanId": "b7ad6b7169203331"}, {"spanId": "b7ad6b7169203331", "name": "again"}], "occurs twice"),
        ([{"spanId": "b7ad6b7169203331", "parentSpanId": "b7ad6b7169203331"}], "is its own parent"),
        (
            [
                {"spanId": "b7ad6b7169203331", "parentSpanId": "b7ad6b7169203332"},
                {"spanId": "b7ad6b7169203332", "parentSpanId": "b7ad6b7169203333"},
                {"spanId": "b7ad6b7169203333", "parentSpanId": "b7ad6b7169203331"},
            ],
            "cycle",
        ),
    ],
)
def test_invalid_evidence(tmp_path: Path, spans: list[dict], problem: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("".join(_line(**s) for s in spans))
    with pytest.raises(InvalidEvidenceError, match=problem):
        list(iter_runs([path]))
    with pytest.raises(InvalidEvidenceError, match=problem):
        group_runs(read_spans([path]))


def _interleaved(tmp_path: Path) -> tuple[Path, list]:
    """Three runs whose spans are interleaved across batch lines; run "r-early" ends on line 2."""
    rec = Recorder("v1")
    made = {}
    for run_id in ("r-late", "r-early", "r-mid"):
        made[run_id] = rec.tracer.start_span(
            "root", attributes={semconv.RUN_ID: run_id}, start_time=rec.tick()
        )
    order = ["r-late", "r-early", "r-mid", "r-late", "r-early", "r-mid", "r-late", "r-mid", "r-late"]
    for i, run_id in enumerate(order):
        ctx = set_span_in_context(made[run_id])
        rec.tracer.start_span(
            f"step {i}", context=ctx, attributes={semconv.RUN_ID: run_id}, start_time=rec.tick()
        ).end(end_time=rec.tick())
    for span in made.values():
        span.end(end_time=rec.tick())
    finished = rec.spans()
    # finished = the nine steps, then the three roots; put roots first so ends are spread out
    ordered = finished[9:] + finished[:9]
    return write_jsonl(ordered, tmp_path / "runs.jsonl", batch=3), ordered


def test_iter_runs_streams_runs_once_complete(tmp_path: Path) -> None:
    path, spans = _interleaved(tmp_path)
    report = ReadReport()
    iterator = iter_runs([path], report=report)
    first = next(iterator)
    assert first.run_id == "r-early" and len(first.spans) == 3
    assert report.spans < len(spans)  # emitted before the whole file was converted
    rest = list(iterator)
    streamed = [first, *rest]
    assert sorted(streamed, key=lambda r: r.run_id) == group_runs(read_spans([path]))
    assert [r.run_id for r in streamed] == [r.run_id for r in iter_runs([path])]  # deterministic


def test_iter_runs_groups_across_files_and_traces(tmp_path: Path) -> None:
    rec = Recorder("v1")
    with rec.span("first trace", {semconv.RUN_ID: "R"}):
        pass
    with rec.span("second trace", {semconv.RUN_ID: "R"}):
        pass
    with rec.span("no run id"):
        pass
    a, b, c = rec.spans()
    write_jsonl([a, c], tmp_path / "1.jsonl")
    write_proto([b], tmp_path / "2.pb")
    runs = list(iter_runs([tmp_path / "1.jsonl", tmp_path / "2.pb"]))
    by_id = {r.run_id: r for r in runs}
    assert len(by_id["R"].spans) == 2 and len(by_id["R"].trace_ids) == 2
    assert format_trace_id(c.context.trace_id) in by_id


def test_release_filter(tmp_path: Path) -> None:
    spans = []
    for release in ("v1", "v2"):
        rec = Recorder(release)
        with rec.span("x"):
            pass
        spans += rec.spans()
    path = write_jsonl(spans, tmp_path / "t.jsonl")
    assert [r.release for r in iter_runs([path], release="v2")] == ["v2"]
    assert [r.release for r in group_runs(read_spans([path]), release="v1")] == ["v1"]
    assert list(iter_runs([path], release="v3")) == []


def test_cut_gzip_is_incomplete_and_corrupt_gzip_an_error(tmp_path: Path) -> None:
    lines = [_line(spanId=f"{i + 1:016x}") for i in range(300)]
    data = gzip.compress("".join(lines).encode())
    path = tmp_path / "t.jsonl.gz"
    path.write_bytes(data[: len(data) * 2 // 3])
    with pytest.raises(TraceReadError, match="incomplete file: the gzip data ends early"):
        list(read_spans([path]))
    report = ReadReport()
    spans = list(read_spans([path], report=report))
    assert 0 < len(spans) < 300 and not report.complete
    assert [s.span_id for s in spans] == [f"{i + 1:016x}" for i in range(len(spans))]
    report = ReadReport()
    (run,) = iter_runs([path], report=report)  # one trace: one run, from the lines before the cut
    assert len(run.spans) == len(spans) and len(report.incomplete) == 1
    corrupt = bytearray(data)
    corrupt[len(data) // 2 : len(data) // 2 + 8] = b"\xff" * 8
    path.write_bytes(bytes(corrupt))
    report = ReadReport()
    with pytest.raises(TraceReadError):  # bad deflate data, a CRC mismatch, or garbage lines: all errors
        list(read_spans([path], report=report))
    assert report.complete


def test_deeply_nested_lines_are_clean_errors(tmp_path: Path) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_bytes(b'{"resourceSpans":[]}\n' + b"[" * 100_000 + b"\n" + b'{"resourceSpans":[]}\n')
    with pytest.raises(TraceReadError, match="invalid JSON"):
        list(read_spans([path]))
    path.write_bytes(b'{"resourceSpans":[]}\n' + b"[" * 100_000)  # as a cut last line
    report = ReadReport()
    assert list(read_spans([path], report=report)) == [] and not report.complete


@pytest.mark.parametrize("writer", [write_jsonl, write_proto])
def test_keep_hook_partitions_runs_exactly(tmp_path: Path, writer) -> None:
    rec = Recorder("v1")
    for i in range(12):
        with (
            rec.span("root", {semconv.RUN_ID: f"run-{i}"} if i % 3 else {}) as root,
            rec.span("child", {semconv.RUN_ID: f"run-{i}"} if i % 3 else {}, parent=root),
        ):
            pass
    path = writer(rec.spans(), tmp_path / "t")
    everything = list(iter_runs([path]))
    shards = [
        list(iter_runs([path], keep=lambda key, i=i: zlib.crc32(key.encode()) % 3 == i)) for i in range(3)
    ]
    assert sorted((r for shard in shards for r in shard), key=lambda r: r.run_id) == sorted(
        everything, key=lambda r: r.run_id
    )
    assert len(everything) == 12 and sum(len(shard) for shard in shards) == 12
    kept = list(read_spans([path], keep=lambda key: key == "run-1"))
    assert [s.name for s in kept] == ["child", "root"] or [s.name for s in kept] == ["root", "child"]


@pytest.mark.parametrize("writer", [write_jsonl, write_proto])
def test_keep_hook_is_asked_about_a_spans_whole_run(tmp_path: Path, writer) -> None:
    """A third-party child span names no run: the keep hook is asked about the run its trace belongs
    to. A run id joined to a smaller one is asked about as that one. So a shard keeps a run whole or
    not at all."""
    rec = Recorder("v1")
    with rec.span("root", {semconv.RUN_ID: "run-b"}) as root, rec.span("child", {}, parent=root):
        pass  # the child names no run: its trace's run is run-b's
    with (
        rec.span("other", {semconv.RUN_ID: "run-a"}) as other,
        rec.span("joined", {semconv.RUN_ID: "run-b"}, parent=other),
    ):
        pass  # this trace carries both ids: run-b is joined to run-a
    path = writer(rec.spans(), tmp_path / "t")
    (everything,) = iter_runs([path])
    assert everything.run_id == "run-a" and len(everything.spans) == 4
    asked: list[str] = []
    assert list(iter_runs([path], keep=lambda run: asked.append(run) or run == "run-a")) == [everything]
    assert set(asked) == {"run-a"}
    assert list(iter_runs([path], keep=lambda run: run != "run-a")) == []


def test_make_span_builds_the_same_span_as_the_dataclass() -> None:
    """#13: readers build spans with ``model.make_span`` (slot setters, no frozen ``__setattr__``):
    the result must be indistinguishable from ``Span(...)`` — fields, equality, hash, frozenness."""
    import dataclasses

    from otel_provenance.offline.model import (
        Attributes,
        Event,
        Link,
        Span,
        SpanKind,
        Status,
        StatusCode,
        make_span,
    )

    values = (
        "0af7651916cd43dd8448eb211c80319c",
        "b7ad6b7169203331",
        "b7ad6b7169203330",
        "execute_tool x",
        SpanKind.CLIENT,
        5,
        9,
        Status(StatusCode.ERROR, "boom"),
        Attributes({"a": 1}),
        (Event("e", 6),),
        (Link("1" * 32, "2" * 16),),
        Attributes({"service.version": "v1"}),
        "scope",
        "1.0",
    )
    # a new field must be added to make_span too; the last one, echo, is Run's to set (False here)
    assert len(values) == len(dataclasses.fields(Span)) - 1
    made, expected = make_span(*values), Span(*values)
    assert made == expected and hash(made) == hash(expected) and repr(made) == repr(expected)
    assert dataclasses.astuple(made) == dataclasses.astuple(expected)
    assert [getattr(made, f.name) for f in dataclasses.fields(Span)] == [*values, False]
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.name = "other"  # type: ignore[misc]


def test_an_event_without_name_or_time_reads_as_proto3_defaults(tmp_path: Path) -> None:
    """Proto3 JSON leaves out fields at their defaults: an empty name and time 0."""
    path = tmp_path / "events.jsonl"
    path.write_text(_line(events=[{}, {"name": "retry"}]))
    (span,) = read_spans([path])
    assert [(e.name, e.time_ns) for e in span.events] == [("", 0), ("retry", 0)]


def test_an_event_name_of_another_type_is_named_exactly(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text(_line(events=[{"name": ["retry"]}]))
    with pytest.raises(TraceReadError) as info:
        list(read_spans([path]))
    assert info.value.problem == "resourceSpans[0].scopeSpans[0].spans[0]: event name is not a string"


def test_times_span_the_whole_unsigned_64_bit_range(tmp_path: Path) -> None:
    path = tmp_path / "edges.jsonl"
    path.write_text(_line(startTimeUnixNano="0", endTimeUnixNano=str(2**64 - 1)))
    (span,) = read_spans([path])
    assert (span.start_ns, span.end_ns) == (0, 2**64 - 1)


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"status": {"code": "STATUS_CODE_BOGUS"}}, "status code is not a known status code"),
        ({"name": 7}, "name is not a string"),
        ({"status": {"code": 2, "message": 7}}, "status message is not a string"),
    ],
)
def test_a_span_field_of_the_wrong_kind_is_named_word_for_word(
    tmp_path: Path, fields: dict, problem: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(_line(**fields))
    with pytest.raises(TraceReadError) as info:
        list(read_spans([path]))
    assert info.value.problem == f"resourceSpans[0].scopeSpans[0].spans[0]: {problem}"


def test_a_cut_off_line_is_shown_with_the_file_and_the_line(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl"
    path.write_text(_line() + _line()[:-20])
    report = ReadReport()
    list(read_spans([path], report=report))
    assert [str(i) for i in report.incomplete] == [
        f"{path}:2: the last line is cut off (was the writer stopped mid-write?)"
    ]


def test_a_span_whose_empty_name_was_left_out_reads_with_an_empty_name(tmp_path: Path) -> None:
    """The proto3 JSON mapping leaves out a field at its default: a span named "" has no ``name``."""
    line = json.loads(_line())
    del line["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["name"]
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(line) + "\n")
    assert [s.name for s in read_spans([path])] == [""]


def test_a_resource_equal_in_json_but_of_another_type_is_converted_again(tmp_path: Path) -> None:
    """Python compares JSON ``true`` equal to ``1``: a resource is reused from the line before only when
    every value is a string, so the second line's boolean given as a number is still refused."""
    lines = []
    for flag in ("true", "1"):
        resource = '{"attributes":[{"key":"cloud.enabled","value":{"boolValue":' + flag + "}}]}"
        lines.append(_line().replace('"resource": {}', '"resource": ' + resource))
    path = tmp_path / "t.jsonl"
    path.write_text("".join(lines))
    with pytest.raises(TraceReadError) as info:
        list(read_spans([path]))
    assert info.value.line == 2 and "'cloud.enabled': boolValue has the wrong JSON type" in info.value.problem


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ({"message": "tool failed"}, Status(StatusCode.UNSET, "tool failed")),  # code 0 left out
        ({"code": 2}, Status(StatusCode.ERROR, "")),  # message "" left out
        ({"code": "STATUS_CODE_ERROR", "message": "boom"}, Status(StatusCode.ERROR, "boom")),
        ({"code": 0}, Status()),
    ],
)
def test_fields_left_out_at_their_defaults_read_as_those_defaults(tmp_path: Path, status, expected) -> None:
    """The proto3 JSON mapping leaves out every field at its default: a status without a code is
    UNSET, one without a message has "", a span without kind or times is UNSPECIFIED at 0 to 0."""
    line = json.loads(_line(status=status))
    span = line["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    del span["kind"], span["startTimeUnixNano"], span["endTimeUnixNano"]
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(line) + "\n")
    (read,) = read_spans([path])
    assert (read.status, read.kind, read.start_ns, read.end_ns) == (expected, SpanKind.UNSPECIFIED, 0, 0)


def test_times_given_as_json_numbers_read_as_those_numbers(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(_line(startTimeUnixNano=1544712660000000000, endTimeUnixNano=1544712661000000000))
    (read,) = read_spans([path])
    assert (read.start_ns, read.end_ns) == (1544712660000000000, 1544712661000000000)


def _logs_line() -> str:
    return (
        json.dumps({"resourceLogs": [{"resource": {}, "scopeLogs": [{"logRecords": [{"body": {}}]}]}]}) + "\n"
    )


@pytest.mark.parametrize("empty", ["{}", "{ }", "{}" + " " * 30, " \t{\r}"])
def test_an_empty_request_of_any_length_is_no_trace_line(tmp_path: Path, empty: str) -> None:
    """``{}`` with JSON whitespace anywhere is an empty request (the Collector writes ``{}`` for one):
    beside a logs request it does not make the file a traces file."""
    path = tmp_path / "mixed.jsonl"
    path.write_text(_logs_line() + empty + "\n")
    with pytest.raises(TraceReadError) as caught:
        list(read_spans([path]))
    assert str(caught.value) == f"{path}: a logs file (resourceLogs), not traces"


@pytest.mark.parametrize("line", ["nope", "{}\f", "{}x", "[]"])
def test_a_short_line_that_is_no_request_is_an_error_on_its_line(tmp_path: Path, line: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("{}\n" + line + "\n")
    with pytest.raises(TraceReadError) as caught:
        list(read_spans([path]))
    assert caught.value.line == 2
