"""`otel-provenance fetch`: SigNoz → OTLP JSON Lines, re-readable, key never printed, errors exit 1."""

from __future__ import annotations

import base64
import io
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import pytest
from google.protobuf import json_format
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from otel_provenance.cli import run
from otel_provenance.offline.model import ABSENT
from otel_provenance.offline.readers import read_spans
from otel_provenance.offline.readers.signoz import read_signoz
from signoz_double import SigNozDouble, export_spans, round_like_signoz, window_around_now


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def _build(tracer) -> None:
    with tracer.start_as_current_span("invoke_agent refund", attributes={"agent.run.id": "r1"}):
        with tracer.start_as_current_span(
            "execute_tool payment.refund",
            attributes={
                "gen_ai.tool.name": "payment.refund",
                "agent.retry.number": 1,
                "agent.idempotency.present": False,
                "amount_minor": 1999,
                "agent.violations": ["a", "b"],
                "agent.arg.order_id.kind": "observed",
            },
        ):
            pass
        tracer.start_span("execute_tool fraud.check", attributes={"score": 0.25}).end()


def _read(double: SigNozDouble, release: str = "v2"):
    start, end = window_around_now()
    return sorted(
        read_signoz(double.url, release=release, start_ms=start, end_ms=end, api_key=double.api_key),
        key=lambda s: s.span_id,
    )


@pytest.mark.parametrize("version", ["v0.129.0", "v0.134.0"])
def test_fetch_writes_otlp_json_lines_that_read_back_identically(
    version: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out_file = tmp_path / "v2.jsonl"
    with SigNozDouble(version=version) as first, SigNozDouble(version=version) as second:
        export_spans(first, {"service.name": "agent", "service.version": "v2", "process.pid": 7}, _build)
        monkeypatch.setenv("SIGNOZ_API_KEY", first.api_key)
        code, out, err = _cli(
            "fetch", "--signoz", first.url, "--release", "v2", "--since", "1h", "-o", str(out_file)
        )
        assert code == 0, err
        assert "fetched 3 span(s)" in err and first.api_key not in out + err
        lines = out_file.read_text().splitlines()
        assert len(lines) == 1  # one ExportTraceServiceRequest per trace
        for line in lines:  # each line is a valid OTLP request (hex ids, as the OTLP JSON encoding has them)
            doc = json.loads(line)
            assert doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["startTimeUnixNano"].isdigit()
            json_format.Parse(json.dumps(_hex_to_b64(doc)), ExportTraceServiceRequest())
            response = httpx.post(second.otlp_url, content=line, headers={"Content-Type": "application/json"})
            assert response.status_code == 200
        assert _read(second) == _read(first)  # SigNoz → file → SigNoz changes nothing more
        from_file = sorted(read_spans([out_file]), key=lambda s: s.span_id)
        assert from_file == _read(first)  # the file readers see exactly what was read from SigNoz
    pay = next(s for s in _read_file(out_file) if s["name"] == "execute_tool payment.refund")
    attrs = {a["key"]: a["value"] for a in pay["attributes"]}
    assert attrs["agent.retry.number"] == {"intValue": "1"} and attrs["amount_minor"] == {"intValue": "1999"}
    assert attrs["agent.idempotency.present"] == {"boolValue": False}
    assert attrs["agent.violations"] == {
        "arrayValue": {"values": [{"stringValue": "a"}, {"stringValue": "b"}]}
    }
    fraud = next(s for s in _read_file(out_file) if s["name"] == "execute_tool fraud.check")
    assert "agent.idempotency.present" not in {a["key"] for a in fraud["attributes"]}


def _read_file(path: Path) -> list[dict]:
    return [
        span
        for line in path.read_text().splitlines()
        for rs in json.loads(line)["resourceSpans"]
        for ss in rs["scopeSpans"]
        for span in ss["spans"]
    ]


def _hex_to_b64(obj):
    if isinstance(obj, dict):
        return {
            k: base64.b64encode(bytes.fromhex(v)).decode()
            if k in ("traceId", "spanId", "parentSpanId")
            else _hex_to_b64(v)
            for k, v in obj.items()
        }
    return [_hex_to_b64(v) for v in obj] if isinstance(obj, list) else obj


def test_fetch_errors_exit_1_with_what_to_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with SigNozDouble() as double:
        monkeypatch.delenv("SIGNOZ_API_KEY", raising=False)
        code, _, err = _cli("fetch", "--signoz", double.url, "--release", "v2", "-o", str(tmp_path / "x"))
        assert code == 1 and "set SIGNOZ_API_KEY" in err
        monkeypatch.setenv("SIGNOZ_API_KEY", "sk-not-the-key-123")
        code, out, err = _cli("fetch", "--signoz", double.url, "--release", "v2", "-o", str(tmp_path / "x"))
        assert code == 1 and "401" in err and "sk-not-the-key-123" not in out + err
        assert not list(tmp_path.iterdir())  # no partial file left behind
        code, _, err = _cli(
            "fetch", "--signoz", double.url, "--release", "v2", "--since", "5 minutes", "-o", "x"
        )
        assert code == 1 and "--since" in err
        code, _, err = _cli(
            "fetch",
            "--signoz",
            double.url,
            "--release",
            "v2",
            "--start",
            "2026-01-02T00:00:00Z",
            "--end",
            "2026-01-01T00:00:00Z",
            "-o",
            "x",
        )
        assert code == 1 and "empty time window" in err


def test_fetch_as_a_real_process_never_prints_the_key(tmp_path: Path) -> None:
    with SigNozDouble(api_key="sk-proc-SECRET-42") as double:
        export_spans(double, {"service.name": "agent", "service.version": "v2"}, _build)
        out_file = tmp_path / "out.jsonl"
        env = {**os.environ, "SIGNOZ_API_KEY": double.api_key}
        argv = [
            sys.executable,
            "-c",
            "from otel_provenance.cli import main; main()",
            "fetch",
            "--signoz",
            double.url,
            "--release",
            "v2",
            "--since",
            "2h",
            "-o",
            str(out_file),
        ]
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert "sk-proc-SECRET-42" not in done.stdout + done.stderr + out_file.read_text()
        env["SIGNOZ_API_KEY"] = "sk-proc-WRONG-43"
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 1 and "401" in done.stderr and "sk-proc-WRONG-43" not in done.stderr


_values = st.one_of(
    st.text(max_size=12),
    st.booleans(),
    st.integers(min_value=-(2**53), max_value=2**53),
    st.floats(min_value=-1e9, max_value=1e9, allow_nan=False).filter(lambda f: f == 0 or abs(f) > 1e-6),
)
_attrs = st.dictionaries(
    st.sampled_from(["agent.arg.path.kind", "amount_minor", "flag", "ratio", "note", "x.y"]),
    _values,
    max_size=6,
)


@pytest.fixture(scope="module")
def doubles():
    with SigNozDouble(version="v0.129.0") as old, SigNozDouble(version="v0.134.0") as new:
        yield old, new


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=_attrs, second=_attrs)
def test_property_values_survive_as_signoz_keeps_them_and_absence_stays_absent(doubles, first, second):
    release = f"r-{uuid.uuid4()}"  # each example reads only its own spans
    for double in doubles:
        export_spans(
            double,
            {"service.name": "p", "service.version": release},
            lambda t: (
                t.start_span("first", attributes=first).end(),
                t.start_span("second", attributes=second).end(),
            ),
        )
        spans = {s.name: s for s in _read(double, release)}
        for name, sent in (("first", first), ("second", second)):
            got = spans[name].attributes
            assert set(got) == set(sent), (
                double.version,
                name,
                dict(got),
                sent,
            )  # nothing absent appears, nothing present is lost
            for key, value in sent.items():
                if isinstance(value, bool | str):
                    assert got[key] == value and type(got[key]) is type(value)
                elif isinstance(value, int):
                    # SigNoz rounds v·1000 in float64 (resp.go): above 2^53/1000 an integer can come back
                    # a fraction off, and the reader keeps what SigNoz answered.
                    kept = round_like_signoz(float(value))
                    assert got[key] == kept and type(got[key]) is type(kept)
                    assert kept == value or abs(value) > 2**53 // 1000
                else:
                    assert got[key] == round_like_signoz(value)
        assert spans["first"].attributes.get("nope", ABSENT) is ABSENT


def test_a_signoz_source_reads_with_its_options_counts_its_spans_and_groups_by_its_run_attribute() -> None:
    """The trace source ``gate check --signoz`` uses: the API key and other options reach the reader,
    the report counts the spans read, and ``run_attribute`` joins two traces of one session."""
    from otel_provenance.offline.engines.source import SigNozSource

    def two_traces_one_session(tracer) -> None:
        for step in ("lookup", "refund"):
            agent = {"session.id": "s-1", "gen_ai.operation.name": "invoke_agent"}
            with tracer.start_as_current_span("invoke_agent support", attributes=agent):
                tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": step}
                tracer.start_span(f"execute_tool {step}", attributes=tool).end()

    with SigNozDouble() as double:
        export_spans(double, {"service.name": "agent", "service.version": "v2"}, two_traces_one_session)
        start, end = window_around_now()
        key = double.api_key
        source = SigNozSource(double.url, "v2", start, end, run_attribute="session.id", api_key=key)
        runs = list(source.runs())
        again = list(source.runs())
    assert [len(r.trace_ids) for r in runs] == [2] and again == runs
    # the report adds up every read, as a file source's does
    assert source.report.spans == 8
