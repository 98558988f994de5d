"""The whole loop against the SigNoz double: spans into SigNoz, `gate check --signoz … --export-findings`
back into SigNoz's logs, and the SigNoz logs reader finds each finding and run verdict on its trace."""

from __future__ import annotations

import io
import re
import time

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from test_export_findings import CONTRACT

from interop import logs_sdk
from offline_helpers import T0, reference_runs, write_jsonl
from otel_provenance.cli import run
from otel_provenance.errors import QueryError
from otel_provenance.offline.readers.signoz_logs import evaluations_filter, read_evaluations
from otel_provenance.offline.readers.signoz_query import SigNozClient
from signoz_logs_double import SigNozLogsDouble

pytestmark = logs_sdk


@pytest.mark.parametrize("version", ["v0.129.0", "v0.134.0"])
def test_findings_exported_from_a_signoz_gate_are_read_back_beside_their_traces(
    tmp_path, monkeypatch, version
):
    good, bad = reference_runs()
    blocked = next(s for s in bad if s.name == "execute_tool patch_file")
    bad_trace, blocked_span = (
        format(blocked.context.trace_id, "032x"),
        format(blocked.context.span_id, "016x"),
    )
    contract = tmp_path / "contract.yaml"
    contract.write_text(CONTRACT)
    with SigNozLogsDouble(version=version) as double:
        exporter = OTLPSpanExporter(endpoint=double.otlp_url, timeout=10)  # through the front, to the traces
        exporter.export([*good, *bad])
        exporter.shutdown()
        assert len(double.inner.spans) == len(good) + len(bad)
        monkeypatch.setenv("SIGNOZ_API_KEY", double.api_key)
        window = ["--start", str(T0 // 1_000_000 - 1_000), "--end", str(T0 // 1_000_000 + 60_000)]
        err = io.StringIO()
        code = run(
            ["gate", "check", "--contract", str(contract), "--release", "v1", "--signoz", double.url, *window,
             "--export-findings", "--findings-endpoint", double.url],
            io.StringIO(), err,
        )  # fmt: skip
        assert code == 2, err.getvalue()
        assert len(double.logs) == 4  # two findings, two run verdicts
        assert all(not log.strings.get("event_name") for log in double.logs)  # SigNoz keeps no event name
        now = int(time.time() * 1000)
        with SigNozClient(double.url, api_key=double.api_key) as client:
            found = read_evaluations(client, start_ms=now - 3_600_000, end_ms=now + 60_000, page=3)
            of_bad = read_evaluations(
                client, start_ms=now - 3_600_000, end_ms=now + 60_000, trace_id=bad_trace
            )
    assert len(found) == 4  # two pages of 3: the paging reads past the first
    by_name = {(r.name, r.run_id): r for r in found}
    finding = by_name[("blocked_calls", bad_trace)]
    assert (finding.trace_id, finding.span_id) == (bad_trace, blocked_span)
    assert (finding.code, finding.rule_id, finding.label) == ("BLOCKED_CALL", "blocked_calls", "fail")
    assert finding.witness_span_ids == (blocked_span,)  # an array attribute, stored as its JSON text
    assert finding.severity_text == "ERROR"
    assert (finding.release, finding.contract_name) == ("v1", "export-test")  # what it judged
    assert finding.score == 1.0 and len(finding.record_id) == 32
    verdicts = sorted((r.label, r.run_id == bad_trace) for r in found if r.name == "otel-provenance.run")
    assert verdicts == [("fail", True), ("pass", False)]
    assert {r.trace_id for r in of_bad} == {bad_trace} and len(of_bad) == 3


def test_the_logs_reader_refuses_a_record_that_is_not_an_evaluation(tmp_path):
    """A log record under the gate's service name without the evaluation attributes is an error that
    names the record, never a silently shorter list."""
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
    from opentelemetry.sdk.resources import Resource

    with SigNozLogsDouble() as double:
        provider = LoggerProvider(resource=Resource({"service.name": "otel-provenance-gate"}))
        provider.add_log_record_processor(
            SimpleLogRecordProcessor(OTLPLogExporter(endpoint=double.url + "/v1/logs"))
        )
        provider.get_logger("someone.else").emit(body="hello", attributes={"gen_ai.evaluation.name": "x"})
        provider.shutdown()
        now = int(time.time() * 1000)
        with SigNozClient(double.url, api_key=double.api_key) as client, pytest.raises(QueryError) as raised:
            read_evaluations(client, start_ms=now - 60_000, end_ms=now + 60_000)
    assert "not an otel-provenance evaluation" in str(raised.value)
    named = re.search(r"SigNoz log record (\S+) has no string", str(raised.value))
    assert named and re.fullmatch(r"\d{20}-00000001", named[1])  # the record, by the id SigNoz gave it
    assert evaluations_filter("ab" * 16) == (
        "resource.service.name = 'otel-provenance-gate' AND trace_id = '" + "ab" * 16 + "'"
    )


def test_findings_files_from_the_file_path_match_what_signoz_received(tmp_path):
    """`--findings-file` and OTLP carry the same records: the file demo and the SigNoz demo agree."""
    good, bad = reference_runs()
    contract = tmp_path / "contract.yaml"
    contract.write_text(CONTRACT)
    files = [write_jsonl(good, tmp_path / "good.jsonl"), write_jsonl(bad, tmp_path / "bad.jsonl")]
    target = tmp_path / "findings.jsonl"
    with SigNozLogsDouble() as double:
        argv = ["gate", "check", "--contract", contract, "--release", "v1", "--export-findings"]
        argv += ["--findings-endpoint", double.url, "--findings-file", target, *files]
        assert run([str(a) for a in argv], io.StringIO(), io.StringIO()) == 2
        received = sorted(
            (log.strings["gen_ai.evaluation.name"], log.trace_id, log.span_id) for log in double.logs
        )
    import json

    written = json.loads(target.read_text())["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    from_file = sorted(
        (next(a["value"]["stringValue"] for a in r["attributes"] if a["key"] == "gen_ai.evaluation.name"),
         r.get("traceId", ""), r.get("spanId", ""))
        for r in written
    )  # fmt: skip
    assert received == from_file


def _gate_into_signoz(double: SigNozLogsDouble, contract, files) -> int:
    argv = ["gate", "check", "--contract", contract, "--release", "v1", "--export-findings"]
    argv += ["--findings-endpoint", double.url, *files]
    return run([str(a) for a in argv], io.StringIO(), io.StringIO())


def test_the_gate_run_twice_leaves_one_record_per_finding_and_a_changed_judgement_replaces_the_old(
    tmp_path,
):
    """A CI job re-run on the same release sends every record again: SigNoz keeps both copies, the
    reader returns each finding once (same ids). Then the contract is relaxed and the gate run again:
    what is read back is the new judgement only — the finding it no longer has is gone."""
    good, bad = reference_runs()
    contract = tmp_path / "contract.yaml"
    contract.write_text(CONTRACT)
    files = [write_jsonl(good, tmp_path / "good.jsonl"), write_jsonl(bad, tmp_path / "bad.jsonl")]
    with SigNozLogsDouble() as double:
        now = int(time.time() * 1000)

        def read_back() -> list:
            with SigNozClient(double.url, api_key=double.api_key) as client:
                return read_evaluations(client, start_ms=now - 60_000, end_ms=now + 600_000, page=5)

        assert _gate_into_signoz(double, contract, files) == 2
        first = read_back()
        assert _gate_into_signoz(double, contract, files) == 2
        assert len(double.logs) == 8  # SigNoz holds both exports
        again = read_back()
        contract.write_text(CONTRACT.replace("max: 0", "max: 1"))  # a blocked call is now allowed
        assert _gate_into_signoz(double, contract, files) == 2  # the missing patch_file still fails
        relaxed = read_back()
    assert len(first) == 4 and len(again) == 4  # one record per finding and per run verdict
    assert sorted(r.record_id for r in again) == sorted(r.record_id for r in first)
    assert {r.timestamp for r in again} != {r.timestamp for r in first}  # the newer copies
    assert [r.name for r in relaxed if r.name != "otel-provenance.run"] == ["required.patch_file"]
    verdicts = {r.run_id: r for r in relaxed if r.name == "otel-provenance.run"}
    assert len(verdicts) == 2 and "blocked_calls" not in "".join(r.explanation for r in verdicts.values())
    assert {r.contract_digest for r in relaxed} != {r.contract_digest for r in first}  # which one judged
