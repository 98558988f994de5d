"""The demo's findings beside the traces: with an OTLP endpoint (the compose stack's SigNoz, here the
SigNoz double with logs) release 2.0.0's findings and run verdicts go there and to the demo's
findings file alike; the SigNoz logs reader finds the two headline findings on the runs' traces."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from interop import logs_sdk
from otel_provenance.offline.readers.signoz_logs import read_evaluations
from otel_provenance.offline.readers.signoz_query import SigNozClient
from signoz_logs_double import SigNozLogsDouble

pytestmark = logs_sdk

DEMO = Path(__file__).resolve().parents[2] / "examples" / "refund_agent" / "demo.py"


def test_the_demo_sends_release_2_findings_to_signoz_and_writes_the_same_records_to_its_file(tmp_path):
    out = tmp_path / "demo"
    with SigNozLogsDouble(version="v0.134.0") as double:
        env = dict(
            os.environ, OTEL_EXPORTER_OTLP_ENDPOINT=double.url, OTEL_EXPORTER_OTLP_PROTOCOL="http/protobuf"
        )
        proc = subprocess.run(
            [sys.executable, str(DEMO), "--out", str(out)],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
        now = int(time.time() * 1000)
        with SigNozClient(double.url, api_key=double.api_key) as client:
            found = read_evaluations(client, start_ms=now - 3_600_000, end_ms=now + 60_000)
    assert "not exported" not in proc.stderr
    assert "and the OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT)" in proc.stdout
    codes = {r.code for r in found if r.name != "otel-provenance.run"}
    assert {"MISSING_PREREQUISITE", "DUPLICATE_SIDE_EFFECT"} <= codes
    assert {r.release for r in found} == {"2.0.0"}  # the release judged, on every record
    scores = {(r.code, r.score) for r in found if r.code in ("DUPLICATE_SIDE_EFFECT", "UNAPPROVED_ROUTE")}
    assert scores == {("DUPLICATE_SIDE_EFFECT", 2.0), ("UNAPPROVED_ROUTE", 0.571)}  # 2 refunds; 4/7 alike
    verdicts = [r for r in found if r.name == "otel-provenance.run"]
    assert len(verdicts) == 5 and {r.label for r in verdicts} == {"fail"}  # five runs of 2.0.0, each failing
    span_ids = {span.span_id for span in double.inner.spans}
    assert all(r.span_id in span_ids for r in found if r.span_id)  # each record on a span SigNoz holds
    lines = (out / "findings-2.0.0.jsonl").read_text().splitlines()
    in_file = [
        record
        for line in lines
        for resource in json.loads(line)["resourceLogs"]
        for scope in resource["scopeLogs"]
        for record in scope["logRecords"]
    ]
    assert sorted((r.get("traceId", ""), r.get("spanId", "")) for r in in_file) == sorted(
        (r.trace_id, r.span_id) for r in found
    )
