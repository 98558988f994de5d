"""The OTLP JSON Lines file: official format, one line per batch, survives SIGKILL and failed writes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

import otel_provenance as op
from otel_provenance.instrument.spans.export import AppendLineStream, JsonLinesSpanExporter
from otel_provenance.offline.readers import ReadReport, read_spans


def _lines(path) -> tuple[list[dict], bytes]:
    """Complete lines parsed, and the torn tail (b"" when the file ends with a newline)."""
    data = path.read_bytes()
    *complete, tail = data.split(b"\n")
    return [json.loads(line) for line in complete], tail


def test_one_line_per_batch_in_official_otlp_json_shape(tmp_path):
    path = tmp_path / "spans.jsonl"
    provider = TracerProvider()
    provider.add_span_processor(
        op.ProvenanceSpanProcessor(BatchSpanProcessor(JsonLinesSpanExporter(path), max_export_batch_size=5))
    )
    tracer = provider.get_tracer("t")
    with tracer.start_as_current_span("root"):
        for i in range(11):
            with tracer.start_as_current_span(f"child {i}", attributes={"i": i, "input.value": "gone"}):
                pass
    provider.shutdown()
    docs, tail = _lines(path)
    assert tail == b""
    assert len(docs) >= 3  # 12 spans in batches of at most 5
    spans = [s for d in docs for rs in d["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]
    assert len(spans) == 12
    assert all(len(s["traceId"]) == 32 and len(s["spanId"]) == 16 for s in spans)
    assert b"gone" not in path.read_bytes()
    # the offline reader reads it back
    read = list(read_spans([str(path)]))
    assert sorted(s.name for s in read) == sorted(["root"] + [f"child {i}" for i in range(11)])


def test_append_to_existing_file_and_bad_path(tmp_path):
    path = tmp_path / "spans.jsonl"
    for _ in range(2):
        provider = TracerProvider()
        provider.add_span_processor(
            op.ProvenanceSpanProcessor(SimpleSpanProcessor(JsonLinesSpanExporter(path)))
        )
        with provider.get_tracer("t").start_as_current_span("s"):
            pass
        provider.shutdown()
    assert len(_lines(path)[0]) == 2
    with pytest.raises(op.ConfigurationError, match="cannot open"):
        JsonLinesSpanExporter(tmp_path / "missing-dir" / "x.jsonl")


def test_stream_writes_each_flush_in_one_piece(tmp_path):
    path = tmp_path / "raw.jsonl"
    stream = AppendLineStream(path)
    stream.write('{"a":')
    assert path.read_bytes() == b""  # nothing reaches the file before flush
    stream.write("1}\n")
    stream.flush()
    assert path.read_bytes() == b'{"a":1}\n'
    stream.close()
    stream.close()
    with pytest.raises(ValueError):
        stream.write("x")


_WRITER = textwrap.dedent(
    """
    import sys
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    import otel_provenance as op
    from otel_provenance.instrument.spans.export import JsonLinesSpanExporter

    provider = TracerProvider()
    provider.add_span_processor(
        op.ProvenanceSpanProcessor(SimpleSpanProcessor(JsonLinesSpanExporter(sys.argv[1])))
    )
    tracer = provider.get_tracer("writer")
    payload = "p" * 400_000
    seq = 0
    while True:
        attrs = {"seq": seq, "payload": payload, "input.value": "x"}
        with tracer.start_as_current_span("s", attributes=attrs):
            pass
        # SimpleSpanProcessor exported the span inside end(): report the batch as complete
        sys.stdout.write(f"{seq}\\n")
        sys.stdout.flush()
        seq += 1
    """
)


def test_sigkill_mid_stream_keeps_every_complete_batch(tmp_path):
    path = tmp_path / "killed.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    reported: list[int] = []
    try:
        for line in proc.stdout:
            reported.append(int(line))
            if len(reported) >= 25:
                break
        os.kill(proc.pid, signal.SIGKILL)
        rest, _ = proc.communicate(timeout=30)
        reported.extend(int(x) for x in rest.split())
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    docs, tail = _lines(path)
    seqs = [
        attr["value"]["intValue"]
        for d in docs
        for rs in d["resourceSpans"]
        for ss in rs["scopeSpans"]
        for s in ss["spans"]
        for attr in s["attributes"]
        if attr["key"] == "seq"
    ]
    in_file = {int(s) for s in seqs}
    assert set(reported) <= in_file  # every batch the writer finished is complete in the file
    assert sorted(in_file) == list(range(len(in_file)))  # in order, none missing
    assert len(in_file) - len(set(reported)) <= 1  # at most the one being reported when killed
    # at most one torn line, and only at the end; the offline reader reports it and reads the rest
    report = ReadReport()
    read = list(read_spans([str(path)], report=report))
    assert len(read) == len(in_file)
    assert len(report.incomplete) == (1 if tail else 0)


_DISK_FULL = textwrap.dedent(
    """
    import os, resource, signal, sys
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from otel_provenance.instrument.spans.export import JsonLinesSpanExporter

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of being killed
    path = sys.argv[1]
    exporter = JsonLinesSpanExporter(path)
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("t")
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)

    def span(seq, size):
        with tracer.start_as_current_span("s", attributes={"seq": seq, "pad": "p" * size}):
            pass

    span(0, 10)
    resource.setrlimit(resource.RLIMIT_FSIZE, (os.path.getsize(path) + 200, hard))
    span(1, 20_000)   # written in part, then the file is "full"
    resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    span(2, 10)
    span(3, 10)
    """
)


def test_a_failed_partial_write_does_not_swallow_the_next_batch(tmp_path):
    path = tmp_path / "full.jsonl"
    proc = subprocess.run(
        [sys.executable, "-c", _DISK_FULL, str(path)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b""
    parsed = []
    torn = 0
    for line in lines[:-1]:
        try:
            parsed.append(json.loads(line))
        except ValueError:
            torn += 1
    assert torn == 1  # the batch that hit the limit
    seqs = [
        a["value"]["intValue"]
        for d in parsed
        for rs in d["resourceSpans"]
        for ss in rs["scopeSpans"]
        for s in ss["spans"]
        for a in s["attributes"]
        if a["key"] == "seq"
    ]
    assert seqs == ["0", "2", "3"]
