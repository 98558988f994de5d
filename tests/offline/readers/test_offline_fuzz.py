"""Fuzzed and truncated inputs: a clean result or a clean TraceReadError — never another exception —
and the CLI never exits 0 on unreadable input."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from offline_helpers import reference_runs, write_jsonl, write_proto
from otel_provenance.cli import run as cli_run
from otel_provenance.errors import TraceReadError
from otel_provenance.offline.readers import ReadReport, iter_runs, read_spans
from otel_provenance.offline.readers.otlp_proto import resource_span_records

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    d = tmp_path_factory.mktemp("corpus")
    good, bad = reference_runs()
    spans = good + bad
    return {
        "jsonl": write_jsonl(spans, d / "a.jsonl", batch=2).read_bytes(),
        "proto": write_proto(spans, d / "a.pb").read_bytes(),
        "gzip": write_jsonl(spans, d / "a.jsonl.gz", batch=2, compress=True).read_bytes(),
        # the Collector file exporter's length-prefixed records: plain, each zstd-compressed, one stream
        "framed": _framed(spans, d),
        "framed-zstd": _framed(spans, d, zstandard.ZstdCompressor().compress),
        "zstd": zstandard.ZstdCompressor().compress(write_jsonl(spans, d / "z.jsonl", batch=2).read_bytes()),
    }


def _framed(spans, d: Path, compress=lambda b: b) -> bytes:
    out = b""
    for i in range(0, len(spans), 2):
        record = compress(write_proto(spans[i : i + 2], d / "f.pb").read_bytes())
        out += len(record).to_bytes(4, "big") + record
    return out


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def _outcome(path: Path) -> str:
    """Read every way the package reads; only TraceReadError may escape."""
    report = ReadReport()
    try:
        list(read_spans([path], report=report))
        list(iter_runs([path], report=ReadReport()))
    except TraceReadError as exc:
        assert str(exc).startswith(str(path))
        return "error"
    return "ok" if report.complete else "incomplete"


def _cli_agrees(path: Path, outcome: str) -> None:
    for command in ("audit", "fingerprint"):
        err = io.StringIO()
        code = cli_run([command, str(path)], io.StringIO(), err)
        assert "internal error" not in err.getvalue()
        if outcome == "error":
            assert code == 1
        elif outcome == "incomplete":
            assert code != 0


@st.composite
def mutations(draw: st.DrawFn, data: bytes) -> bytes:
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["flip", "delete", "insert", "truncate"]))
        pos = draw(st.integers(0, max(len(out) - 1, 0)))
        if op == "flip" and out:
            out[pos] = draw(st.integers(0, 255))
        elif op == "delete":
            del out[pos : pos + draw(st.integers(1, 16))]
        elif op == "insert":
            out[pos:pos] = draw(
                st.binary(min_size=1, max_size=8)
                | st.sampled_from(
                    [b'"', b"{", b"}", b"]", b",", b"\n", b"0", b"\x00", b'"intValue":"9"', b"\xff"]
                )
            )
        else:
            del out[pos:]
    return bytes(out)


@pytest.mark.parametrize("kind", ["jsonl", "proto", "gzip", "framed", "framed-zstd", "zstd"])
def test_mutated_input_never_crashes(corpus: dict[str, bytes], workdir: Path, kind: str) -> None:
    @FUZZ
    @given(st.data())
    def check(data: st.DataObject) -> None:
        path = workdir / f"mut.{kind}"
        path.write_bytes(data.draw(mutations(corpus[kind])))
        _cli_agrees(path, _outcome(path))

    check()


@pytest.mark.parametrize("kind", ["jsonl", "proto"])
def test_truncated_input_is_incomplete_or_error_never_a_pass(
    corpus: dict[str, bytes], workdir: Path, kind: str
) -> None:
    @FUZZ
    @given(st.integers(1, len(corpus[kind]) - 1))
    def check(cut: int) -> None:
        path = workdir / f"cut.{kind}"
        path.write_bytes(corpus[kind][:cut])
        outcome = _outcome(path)
        if outcome == "ok":  # only a cut exactly between records looks complete (no end marker exists)
            assert cut in _boundaries(corpus[kind], kind) or not corpus[kind][:cut].strip()
        _cli_agrees(path, outcome)

    check()


def _boundaries(data: bytes, kind: str) -> set[int]:
    if kind == "jsonl":
        newlines = [i for i, b in enumerate(data) if b == ord("\n")]
        return {i + 1 for i in newlines} | set(newlines)  # a complete line, with or without its newline
    return {offset for offset, _ in resource_span_records(data)} | {len(data)}


@pytest.mark.parametrize("kind", ["jsonl", "proto"])
def test_a_cut_exactly_between_records_reads_complete_with_the_records_before_it(
    corpus: dict[str, bytes], workdir: Path, kind: str
) -> None:
    """The property above lands a cut between records in about one example of 150, and then holds it
    only to not being an error: each such cut — a JSON line with or without its newline, a protobuf
    record's end — reads complete, with every span of the records before it."""
    data = corpus[kind]
    path = workdir / f"between.{kind}"
    for cut in sorted(_boundaries(data, kind) - {0}):
        path.write_bytes(data[:cut])
        report = ReadReport()
        spans = list(read_spans([path], report=report))
        assert report.complete, cut
        if kind == "jsonl":
            lines = [json.loads(line) for line in data[:cut].splitlines()]
            expected = sum(
                len(ss["spans"]) for doc in lines for rs in doc["resourceSpans"] for ss in rs["scopeSpans"]
            )
        else:
            request = ExportTraceServiceRequest.FromString(data[:cut])
            expected = sum(len(ss.spans) for rs in request.resource_spans for ss in rs.scope_spans)
        assert len(spans) == expected > 0, cut
        assert _outcome(path) == "ok"


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=12), inner, max_size=3),
    max_leaves=8,
)
SPAN_FIELDS = [
    "traceId",
    "spanId",
    "parentSpanId",
    "name",
    "kind",
    "startTimeUnixNano",
    "endTimeUnixNano",
    "attributes",
    "events",
    "links",
    "status",
]


def test_structurally_fuzzed_json_never_crashes(corpus: dict[str, bytes], workdir: Path) -> None:
    lines = [json.loads(raw) for raw in corpus["jsonl"].splitlines()]
    line = next(
        doc for doc in lines if doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0].get("attributes")
    )

    @FUZZ
    @given(
        st.sampled_from([*SPAN_FIELDS, "attr-value", "attr", "resource", "scope", "top"]),
        JSON_VALUES,
        st.booleans(),
    )
    def check(where: str, value: object, cli: bool) -> None:
        doc = json.loads(json.dumps(line))
        span = doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
        if where == "attr-value":
            span["attributes"][0]["value"] = value
        elif where == "attr":
            span["attributes"][0] = value
        elif where == "resource":
            doc["resourceSpans"][0]["resource"] = value
        elif where == "scope":
            doc["resourceSpans"][0]["scopeSpans"][0]["scope"] = value
        elif where == "top":
            doc = value
        else:
            span[where] = value
        path = workdir / "struct.jsonl"
        path.write_text(json.dumps(doc) + "\n")
        outcome = _outcome(path)
        if cli:
            _cli_agrees(path, outcome)

    check()


def test_random_bytes_never_crash(workdir: Path) -> None:
    @FUZZ
    @given(st.binary(max_size=200))
    def check(data: bytes) -> None:
        path = workdir / "random"
        path.write_bytes(data)
        _outcome(path)

    check()
