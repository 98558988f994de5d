"""`gate check --export-findings` and `audit --export-findings`: each finding and each run's verdict
as a `gen_ai.evaluation.result` log record, sent by the official OTLP/HTTP exporter to a real
receiver on loopback — on the run's trace and the witness span, the exact attribute keys a dashboard
reads, no argument or result value in the bytes, and an export that fails never passes."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.trace import StatusCode

from canary import assert_absent, canary
from interop import logs_sdk
from offline_helpers import (
    Arg,
    Recorder,
    reference_runs,
    span_id_hex,
    tool_attributes,
    trace_id_hex,
    write_jsonl,
)
from otel_provenance import __version__, semconv
from otel_provenance.cli import run
from otel_provenance.offline.contracts.dsl import load_contract
from otlp_receiver import OtlpReceiver

pytestmark = logs_sdk  # the records are SDK log records of the 1.39+ shape

KEYS = {
    "gen_ai.evaluation.name",
    "gen_ai.evaluation.score.label",
    "gen_ai.evaluation.explanation",
    "agent.finding.code",
    "agent.rule.id",
    "agent.run.id",
    "agent.finding.witness_span_ids",
    "agent.finding.id",
}
JUDGED = {"agent.finding.release", "agent.contract.name", "agent.contract.digest"}  # what a gate judged
ID = "agent.finding.id"
SCORE = "gen_ai.evaluation.score.value"  # on a failing finding of a rule that bounds a number
GATE_RESOURCE = {"service.name": "otel-provenance-gate"}  # no service.version: it is not a release

CONTRACT = """\
version: 1
name: export-test
gate: {min_runs: 1, max_failing_runs: 0}
rules:
  - id: required.patch_file
    type: required_spans
    code: MISSING_PREREQUISITE
    select: {step: patch_file}
    min: 1
  - id: blocked_calls
    type: blocked_calls
    code: BLOCKED_CALL
    max: 0
"""


def cli(*argv: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


def records(receiver: OtlpReceiver) -> tuple[list[ExportLogsServiceRequest], list[dict]]:
    requests = [ExportLogsServiceRequest.FromString(body) for body in receiver.bodies["/v1/logs"]]
    found = []
    for request in requests:
        for resource_logs in request.resource_logs:
            resource = {kv.key: kv.value.string_value for kv in resource_logs.resource.attributes}
            for scope_logs in resource_logs.scope_logs:
                for record in scope_logs.log_records:
                    attributes: dict = {}
                    for kv in record.attributes:
                        value = kv.value
                        if value.HasField("array_value"):
                            attributes[kv.key] = tuple(v.string_value for v in value.array_value.values)
                        elif value.HasField("double_value"):
                            attributes[kv.key] = value.double_value
                        else:
                            attributes[kv.key] = value.string_value
                    found.append(
                        {
                            "resource": resource,
                            "scope": (scope_logs.scope.name, scope_logs.scope.version),
                            "event_name": record.event_name,
                            "trace_id": record.trace_id.hex(),
                            "span_id": record.span_id.hex(),
                            "attributes": attributes,
                            "body": record.body.string_value,
                        }
                    )
    return requests, found


@pytest.fixture
def release(tmp_path: Path) -> dict:
    good, bad = reference_runs()
    contract = tmp_path / "contract.yaml"
    contract.write_text(CONTRACT)
    blocked = next(s for s in bad if s.name == "execute_tool patch_file")
    good_root = next(s for s in good if s.parent is None)
    bad_root = next(s for s in bad if s.parent is None)
    return {
        "contract": contract,
        "good": write_jsonl(good, tmp_path / "good.jsonl"),
        "bad": write_jsonl(bad, tmp_path / "bad.jsonl"),
        "bad_trace": format(blocked.context.trace_id, "032x"),
        "blocked_span": format(blocked.context.span_id, "016x"),
        "good_trace": format(good_root.context.trace_id, "032x"),
        "good_root": format(good_root.context.span_id, "016x"),
        "bad_root": format(bad_root.context.span_id, "016x"),
    }


def test_each_finding_and_each_run_verdict_is_a_record_on_its_trace(release: dict) -> None:
    with OtlpReceiver("/v1/logs") as receiver:
        code, out, err = cli(
            "gate", "check", "--contract", release["contract"], "--release", "v1",
            "--export-findings", "--findings-endpoint", receiver.url,
            release["good"], release["bad"],
        )  # fmt: skip
    assert code == 2, err  # the decision stands: a fail is exit 2
    assert "FAIL" in out
    assert "exported 4 evaluation record(s) (2 finding(s), 2 run verdict(s))" in err
    _, found = records(receiver)
    assert len(found) == 4
    digest = load_contract(release["contract"]).digest
    for record in found:
        assert record["event_name"] == "gen_ai.evaluation.result"
        scored = {SCORE} if record["attributes"]["gen_ai.evaluation.score.label"] == "fail" else set()
        if record["attributes"]["agent.finding.code"] == "RUN_VERDICT":
            scored = set()  # a run's verdict bounds no number
        assert set(record["attributes"]) == KEYS | JUDGED | scored  # a dashboard panel reads them
        assert record["resource"] == GATE_RESOURCE
        assert record["scope"] == ("otel_provenance.gate", __version__)  # the gate's own version
        assert record["attributes"]["agent.finding.release"] == "v1"  # the release judged, not the gate's
        assert record["attributes"]["agent.contract.name"] == "export-test"
        assert record["attributes"]["agent.contract.digest"] == digest
    assert len({r["attributes"]["agent.finding.id"] for r in found}) == 4
    finding = next(r for r in found if r["attributes"]["gen_ai.evaluation.name"] == "blocked_calls")
    assert finding["attributes"][SCORE] == 1.0  # one blocked call; the contract allows none
    assert finding["trace_id"] == release["bad_trace"]
    assert finding["span_id"] == release["blocked_span"]  # the first witness span
    assert finding["attributes"]["agent.finding.code"] == "BLOCKED_CALL"
    assert finding["attributes"]["agent.rule.id"] == "blocked_calls"
    assert finding["attributes"]["agent.run.id"] == release["bad_trace"]
    assert finding["attributes"]["agent.finding.witness_span_ids"] == (release["blocked_span"],)
    assert finding["attributes"]["gen_ai.evaluation.score.label"] == "fail"
    assert "blocked" in finding["attributes"]["gen_ai.evaluation.explanation"]
    missing = next(r for r in found if r["attributes"]["gen_ai.evaluation.name"] == "required.patch_file")
    assert missing["attributes"]["agent.finding.code"] == "MISSING_PREREQUISITE"
    assert missing["trace_id"] == release["bad_trace"]  # a step that never ran: the trace, no span
    assert missing["span_id"] == "" and missing["attributes"]["agent.finding.witness_span_ids"] == ()
    assert missing["attributes"][SCORE] == 0.0  # occurred 0 times; at least 1 required
    verdicts = {
        r["attributes"]["agent.run.id"]: r
        for r in found
        if r["attributes"]["gen_ai.evaluation.name"] == "otel-provenance.run"
    }
    assert set(verdicts) == {release["good_trace"], release["bad_trace"]}
    passed = verdicts[release["good_trace"]]
    assert passed["attributes"]["gen_ai.evaluation.score.label"] == "pass"
    assert (passed["trace_id"], passed["span_id"]) == (release["good_trace"], release["good_root"])
    assert passed["attributes"]["agent.finding.witness_span_ids"] == ()
    failed = verdicts[release["bad_trace"]]
    assert failed["attributes"]["gen_ai.evaluation.score.label"] == "fail"
    assert failed["attributes"]["agent.finding.code"] == "RUN_VERDICT"
    assert "blocked_calls, required.patch_file" in failed["attributes"]["gen_ai.evaluation.explanation"]
    assert (failed["trace_id"], failed["span_id"]) == (release["bad_trace"], release["bad_root"])
    assert failed["attributes"]["agent.finding.witness_span_ids"] == (release["blocked_span"],)


def test_the_endpoint_comes_from_the_standard_environment_and_agent_resource_settings_never_relabel(
    release: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    with OtlpReceiver("/v1/logs") as receiver:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
        monkeypatch.setenv("OTEL_SERVICE_NAME", "refund-agent")
        monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "service.version=9.9.9,deployment.environment=ci")
        code, _, err = cli(
            "gate", "check", "--contract", release["contract"], "--release", "v1", "--export-findings",
            release["good"],
        )  # fmt: skip
    assert code == 0, err
    _, found = records(receiver)
    assert [r["attributes"]["gen_ai.evaluation.score.label"] for r in found] == ["pass"]
    assert found[0]["resource"] == GATE_RESOURCE
    assert f"{receiver.url} (OTEL_EXPORTER_OTLP_ENDPOINT)" in err


def test_no_argument_or_result_value_reaches_the_exported_bytes(tmp_path: Path) -> None:
    """Canaries in the tool calls' arguments and results (a framework's own spans keep them), and a
    contract rule that quotes the argument attribute in its finding: the text report shows the value,
    the exported records never do."""
    planted = [canary() for _ in range(4)]
    rec = Recorder("v1")
    with rec.span("invoke_agent fixer", {semconv.RUN_ID: "run-canary"}) as root:
        with rec.span(
            "execute_tool list_files",
            tool_attributes(
                "list_files",
                {"root": Arg("observed", source_tool="input", source_field="root")},
                run_id="run-canary",
                **{
                    "gen_ai.tool.call.arguments": json.dumps({"root": planted[0]}),
                    "gen_ai.tool.call.result": json.dumps({"files": [planted[1]]}),
                },
            ),
            parent=root,
        ):
            pass
        with rec.span(
            "execute_tool patch_file",
            tool_attributes(
                "patch_file",
                {"path": Arg("assumed")},
                status="blocked",
                run_id="run-canary",
                **{
                    "gen_ai.tool.call.arguments": json.dumps({"path": planted[2]}),
                    "input.value": planted[3],
                },
            ),
            parent=root,
            status=StatusCode.ERROR,
        ):
            pass
    traces = write_jsonl(rec.spans(), tmp_path / "canary.jsonl")
    contract = tmp_path / "contract.yaml"
    contract.write_text(
        CONTRACT
        + """\
  - id: list_files.arguments
    type: allowed_values
    code: DISALLOWED_VALUE
    select: {step: list_files}
    attribute: gen_ai.tool.call.arguments
    values: ["{}"]
"""
    )
    findings_file = tmp_path / "findings.jsonl"
    with OtlpReceiver("/v1/logs") as receiver:
        code, out, err = cli(
            "gate", "check", "--contract", contract, "--release", "v1", "--export-findings",
            "--findings-endpoint", receiver.url, "--findings-file", findings_file, traces,
        )  # fmt: skip
    assert code == 2, err
    assert planted[0] in out  # the report quotes the value: the records would, were it not cut out
    _, found = records(receiver)
    names = {r["attributes"]["gen_ai.evaluation.name"] for r in found}
    assert {"list_files.arguments", "blocked_calls", "otel-provenance.run"} <= names
    quoted = next(r for r in found if r["attributes"]["gen_ai.evaluation.name"] == "list_files.arguments")
    assert (
        "gen_ai.tool.call.arguments = (value not exported)"
        in quoted["attributes"]["gen_ai.evaluation.explanation"]
    )
    assert_absent(planted, [*receiver.bodies["/v1/logs"], findings_file.read_bytes()])


def test_an_export_that_fails_never_passes_and_never_turns_a_fail_into_anything_else(release: dict) -> None:
    with OtlpReceiver("/v1/traces") as receiver:  # answers 404 on /v1/logs
        passing = cli(
            "gate", "check", "--contract", release["contract"], "--release", "v1",
            "--export-findings", "--findings-endpoint", receiver.url, release["good"],
        )  # fmt: skip
        failing = cli(
            "gate", "check", "--contract", release["contract"], "--release", "v1",
            "--export-findings", "--findings-endpoint", receiver.url, release["good"], release["bad"],
        )  # fmt: skip
    assert passing[0] == 1
    assert "PASS" in passing[1]  # the report was written and printed before the export
    assert f"not exported to {receiver.url}" in passing[2]
    assert f"not exported to {receiver.url}: the exporter answered FAILURE (" in passing[2]
    assert "code: 404" in passing[2]  # the exporter's own reason, in the one error line
    assert failing[0] == 2
    assert "not exported" in failing[2]


def test_audit_exports_its_findings_with_audit_rule_ids(release: dict) -> None:
    with OtlpReceiver("/v1/logs") as receiver:
        code, _, err = cli(
            "audit", "--export-findings", "--findings-endpoint", receiver.url, release["good"], release["bad"]
        )
    assert code == 2, err
    _, found = records(receiver)
    finding = next(r for r in found if r["attributes"]["agent.finding.code"] == "blocked_call")
    assert finding["attributes"]["agent.rule.id"] == "audit.blocked_call"
    assert finding["attributes"]["gen_ai.evaluation.name"] == "audit.blocked_call"
    assert (finding["trace_id"], finding["span_id"]) == (release["bad_trace"], release["blocked_span"])
    assert finding["attributes"]["agent.finding.witness_span_ids"] == (release["blocked_span"],)
    labels = sorted(
        r["attributes"]["gen_ai.evaluation.score.label"]
        for r in found
        if r["attributes"]["gen_ai.evaluation.name"] == "otel-provenance.run"
    )
    assert labels == ["fail", "pass"]
    assert all(set(r["attributes"]) == KEYS for r in found)  # no release given, no contract: none named
    assert len({r["attributes"]["agent.finding.id"] for r in found}) == len(found)


def test_findings_file_holds_the_same_records_as_otlp_json_lines(release: dict, tmp_path: Path) -> None:
    target = tmp_path / "findings.jsonl"
    code, _, err = cli(
        "gate", "check", "--contract", release["contract"], "--release", "v1", "--findings-file", target,
        release["good"], release["bad"],
    )  # fmt: skip
    assert code == 2, err
    lines = target.read_text().splitlines()
    assert len(lines) == 1  # one ExportLogsServiceRequest per line
    logs = json.loads(lines[0])["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    assert [r["eventName"] for r in logs] == ["gen_ai.evaluation.result"] * 4
    # What a log view shows before any attribute (#50): the body is the explanation, the severity
    # follows the label, a record on a trace is marked sampled, and every record of one command
    # carries one timestamp, observed when sent (the logs reader tells exports apart by it).
    attributes = [{kv["key"]: kv["value"] for kv in record["attributes"]} for record in logs]
    labels = [a["gen_ai.evaluation.score.label"]["stringValue"] for a in attributes]
    assert sorted(labels) == ["fail", "fail", "fail", "pass"]
    severity = {"fail": (17, "ERROR"), "pass": (9, "INFO")}
    assert [(r["severityNumber"], r["severityText"]) for r in logs] == [severity[label] for label in labels]
    assert [r["body"] for r in logs] == [a["gen_ai.evaluation.explanation"] for a in attributes]
    assert all(r["traceId"] and r["flags"] == 1 for r in logs)
    assert len({(r["timeUnixNano"], r["observedTimeUnixNano"]) for r in logs}) == 1
    assert logs[0]["timeUnixNano"] == logs[0]["observedTimeUnixNano"]
    assert {r["traceId"] for r in logs} == {release["bad_trace"], release["good_trace"]}


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--findings-endpoint", "http://127.0.0.1:9"], "need --export-findings"),
        (["--export-findings", "--shard", "1/2", "--partial", "p.json"], "a --partial is not a verdict"),
        (
            ["--export-findings"],
            ": --export-findings: no OTLP endpoint; give --findings-endpoint URL or set "
            "OTEL_EXPORTER_OTLP_ENDPOINT (e.g. http://localhost:4318)\n",
        ),
        (["--findings-file", ""], ": --findings-file needs a file name\n"),
        (
            ["--findings-file", "f.jsonl", "--shard", "1/2", "--partial", "p.json"],
            "a --partial is not a verdict",
        ),
    ],
)
def test_export_options_that_cannot_work_stop_before_reading(
    release: dict, extra: list[str], message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", raising=False)
    code, out, err = cli(
        "gate", "check", "--contract", release["contract"], "--release", "v1", *extra, release["good"]
    )
    assert code == 1
    assert message in err
    assert out == ""  # nothing was decided


@pytest.mark.parametrize(
    ("protocol", "module", "extra"),
    [
        ("http/protobuf", "opentelemetry.exporter.otlp.proto.http._log_exporter", "otlp"),
        ("grpc", "opentelemetry.exporter.otlp.proto.grpc._log_exporter", "grpc"),
    ],
)
def test_a_protocol_whose_exporter_is_not_installed_says_what_to_install(
    release: dict, protocol: str, module: str, extra: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # as if not installed: its import raises
    code, out, err = cli(
        "gate", "check", "--contract", release["contract"], "--release", "v1", "--export-findings",
        "--findings-protocol", protocol, "--findings-endpoint", "http://127.0.0.1:9", release["good"],
    )  # fmt: skip
    assert code == 1 and out == ""
    over = protocol.split("/")[0]
    said = f"--export-findings over {over} needs {module}, which is not installed: "
    assert f"{said}pip install 'otel-provenance[{extra}]'" in err


def test_an_endpoint_with_a_path_and_a_trailing_slash_gets_v1_logs_added_once(release: dict) -> None:
    """A collector behind a proxy path, written with a trailing slash (``http://host/otlX/``): the
    records go to ``/otlX/v1/logs``, the slash not doubled and the path kept as written."""
    with OtlpReceiver("/otlX/v1/logs") as receiver:
        code, _, err = cli(
            "gate", "check", "--contract", release["contract"], "--release", "v1", "--export-findings",
            "--findings-endpoint", f"{receiver.url}/otlX/", release["good"],
        )  # fmt: skip
    assert code == 0, err
    assert len(receiver.bodies["/otlX/v1/logs"]) == 1


def test_pass_run_verdict_lands_on_its_own_root_span_when_the_run_spans_two_traces(tmp_path: Path) -> None:
    """A run named by agent.run.id across two traces: its verdict goes on the agent's root span."""
    rec = Recorder("v1")
    with (
        rec.span("invoke_agent fixer", {semconv.RUN_ID: "r-1"}) as root,
        rec.span("execute_tool patch_file", tool_attributes("patch_file", {}, run_id="r-1"), parent=root),
    ):
        pass
    with rec.span("execute_tool patch_file", tool_attributes("patch_file", {}, run_id="r-1")) as other:
        pass
    assert trace_id_hex(root) != trace_id_hex(other)
    contract = tmp_path / "contract.yaml"
    contract.write_text(CONTRACT)
    with OtlpReceiver("/v1/logs") as receiver:
        code, _, err = cli(
            "gate", "check", "--contract", contract, "--release", "v1", "--export-findings",
            "--findings-endpoint", receiver.url, write_jsonl(rec.spans(), tmp_path / "r.jsonl"),
        )  # fmt: skip
    assert code == 0, err
    _, found = records(receiver)
    assert [(r["trace_id"], r["span_id"]) for r in found] == [(trace_id_hex(root), span_id_hex(root))]
    assert found[0]["attributes"]["agent.run.id"] == "r-1"


def test_a_pool_of_processes_exports_the_same_records_as_one_process(release: dict, tmp_path: Path) -> None:
    """The runs' places are read in the same fold as the evaluation, so `--jobs N` (runs evaluated in
    other processes) puts every record on the same trace and span as one process does."""
    written = {}
    for jobs in ("1", "2"):
        target = tmp_path / f"findings-{jobs}.jsonl"
        code, _, err = cli(
            "gate", "check", "--contract", release["contract"], "--release", "v1", "--jobs", jobs,
            "--findings-file", target, release["good"], release["bad"],
        )  # fmt: skip
        assert code == 2, err
        written[jobs] = _records_in(target)
    assert written["1"] == written["2"]
    assert {r.get("spanId") for r in written["2"]} >= {release["blocked_span"], release["good_root"]}


def test_grpc_from_the_standard_protocol_variable(release: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """OTEL_EXPORTER_OTLP_PROTOCOL=grpc picks the official gRPC log exporter (a real grpcio server)."""
    from concurrent import futures

    import grpc
    from opentelemetry.proto.collector.logs.v1 import logs_service_pb2, logs_service_pb2_grpc

    bodies: list[bytes] = []

    class Service(logs_service_pb2_grpc.LogsServiceServicer):
        def Export(self, request, context):
            bodies.append(request.SerializeToString())
            return logs_service_pb2.ExportLogsServiceResponse()

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    logs_service_pb2_grpc.add_LogsServiceServicer_to_server(Service(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{port}")
        code, _, err = cli(
            "gate", "check", "--contract", release["contract"], "--release", "v1", "--export-findings",
            release["good"], release["bad"],
        )  # fmt: skip
    finally:
        server.stop(grace=None)
    assert code == 2, err
    request = ExportLogsServiceRequest.FromString(b"".join(bodies))
    names = sorted(
        kv.value.string_value
        for rl in request.resource_logs
        for sl in rl.scope_logs
        for r in sl.log_records
        for kv in r.attributes
        if kv.key == "gen_ai.evaluation.name"
    )
    assert names == ["blocked_calls", "otel-provenance.run", "otel-provenance.run", "required.patch_file"]


def test_an_unknown_protocol_is_refused_by_name(release: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    code, _, err = cli(
        "gate",
        "check",
        "--contract",
        release["contract"],
        "--release",
        "v1",
        "--export-findings",
        release["good"],
    )
    assert code == 1
    assert "findings cannot go over 'http/json'; use one of http/protobuf, grpc" in err


def _records_in(target: Path) -> list[dict]:
    logs = [
        record
        for line in target.read_text().splitlines()
        for resource in json.loads(line)["resourceLogs"]
        for scope in resource["scopeLogs"]
        for record in scope["logRecords"]
    ]
    for record in logs:  # stamped when sent
        del record["timeUnixNano"], record["observedTimeUnixNano"]
    return logs


def test_a_verdict_on_a_run_with_no_trace_of_its_own_is_a_record_on_no_trace(tmp_path: Path) -> None:
    """``audit`` of a run named by ``agent.run.id`` that made no tool call: its verdict names no trace,
    so the record carries no trace id, no span id and no sampled flag (not a made-up trace)."""
    rec = Recorder("v1")
    with rec.span("invoke_agent fixer", {semconv.RUN_ID: "r-1"}):
        pass
    target = tmp_path / "findings.jsonl"
    code, _, err = cli("audit", write_jsonl(rec.spans(), tmp_path / "r.jsonl"), "--findings-file", target)
    assert "exported 1 evaluation record(s) (0 finding(s), 1 run verdict(s))" in err, (code, err)
    (record,) = _records_in(target)
    assert not {"traceId", "spanId", "flags"} & set(record)
    assert {"key": "agent.run.id", "value": {"stringValue": "r-1"}} in record["attributes"]


def test_the_records_do_not_depend_on_the_order_the_traces_are_given_in(
    release: dict, tmp_path: Path
) -> None:
    """The same evidence, files and spans in any order: the same records in the same order."""
    good, bad = reference_runs()
    orders = (
        [write_jsonl(good, tmp_path / "g.jsonl"), write_jsonl(bad, tmp_path / "b.jsonl")],
        [write_jsonl(bad[::-1], tmp_path / "1.jsonl"), write_jsonl(good[::-1], tmp_path / "2.jsonl")],
    )
    seen = []
    for files in orders:
        target = tmp_path / f"findings-{len(seen)}.jsonl"
        argv = [
            "gate",
            "check",
            "--contract",
            release["contract"],
            "--release",
            "v1",
            "--findings-file",
            target,
        ]
        code, _, err = cli(*argv, *files)
        assert code == 2, err
        seen.append(_records_in(target))
    assert seen[0] != [] and seen[0] == seen[1]


def _shard_partials(release: dict, tmp_path: Path) -> list[Path]:
    partials = []
    for index in (1, 2):
        partial = tmp_path / f"partial-{index}.json"
        code, _, err = cli(
            "gate", "check", "--contract", release["contract"], "--release", "v1",
            "--shard", f"{index}/2", "--partial", partial, release["good"], release["bad"],
        )  # fmt: skip
        assert code == 0, err
        partials.append(partial)
    return partials


def test_gate_merge_exports_the_records_of_one_unsharded_check(release: dict, tmp_path: Path) -> None:
    """Each shard's partial records where its runs live, so `gate merge --findings-file` writes the
    records one unsharded check writes: the same findings and verdicts on the same traces and spans
    (a passing run's verdict on its own root span too)."""
    one = tmp_path / "one.jsonl"
    code, _, err = cli(
        "gate", "check", "--contract", release["contract"], "--release", "v1", "--findings-file", one,
        release["good"], release["bad"],
    )  # fmt: skip
    assert code == 2, err
    merged = tmp_path / "merged.jsonl"
    partials = _shard_partials(release, tmp_path)
    code, _, err = cli(
        "gate", "merge", "--contract", release["contract"], "--findings-file", merged, *partials
    )
    assert code == 2, err
    assert "exported 4 evaluation record(s)" in err
    assert _records_in(merged) == _records_in(one)
    assert {r.get("spanId") for r in _records_in(merged)} >= {release["blocked_span"], release["good_root"]}


def test_gate_merge_names_a_partial_whose_run_places_are_broken(release: dict, tmp_path: Path) -> None:
    partials = _shard_partials(release, tmp_path)
    broken = next(p for p in partials if "run_places" in p.read_text())
    data = json.loads(broken.read_text())
    data["run_places"][next(iter(data["run_places"]))] = ["not-a-trace-id", None]
    broken.write_text(json.dumps(data))
    target = tmp_path / "merged.jsonl"
    code, out, err = cli(
        "gate", "merge", "--contract", release["contract"], "--findings-file", target, *partials
    )
    assert code == 1
    assert str(broken) in err and "trace id" in err, err
    assert out == "" and not target.exists()


def test_a_re_run_gives_each_record_the_same_id_and_another_release_other_ids(tmp_path: Path) -> None:
    """The id is what lets a backend update a record instead of keeping a copy per CI run: the same
    judgement (release, contract name, run, rule, finding) has the same id whenever it is made."""
    contract = tmp_path / "contract.yaml"
    contract.write_text(CONTRACT)
    traces = {}
    for release in ("v1", "v2"):
        good, bad = reference_runs(release)
        traces[release] = [write_jsonl(good, tmp_path / f"{release}-good.jsonl")]
        traces[release].append(write_jsonl(bad, tmp_path / f"{release}-bad.jsonl"))
    ids = {}
    for name, release in (("first", "v1"), ("again", "v1"), ("v2", "v2")):
        target = tmp_path / f"{name}.jsonl"
        code, _, err = cli(
            "gate", "check", "--contract", contract, "--release", release, "--findings-file", target,
            *traces[release],
        )  # fmt: skip
        assert code == 2, err
        records = _records_in(target)
        ids[name] = [a["value"]["stringValue"] for r in records for a in r["attributes"] if a["key"] == ID]
        assert len(set(ids[name])) == len(records) == 4
    assert ids["again"] == ids["first"]
    assert not set(ids["v2"]) & set(ids["first"])


def test_every_record_of_a_release_bigger_than_one_export_batch_is_sent_once(tmp_path: Path) -> None:
    """#50: records go out in batches of 512; a release of 600 runs (300 failing) makes 900 records —
    two batches. Each is sent, once, to the OTLP receiver and to the file alike."""
    from contract_runs import AT, export_runs, triage_run

    runs = [triage_run(f"b{i:03d}", "v2", skip_check=i % 2 == 0) for i in range(600)]
    traces = tmp_path / "traces.jsonl"
    export_runs(runs, str(traces))
    contract = tmp_path / "c.yaml"
    contract.write_text(
        "version: 1\nname: batches\ngate: {max_failing_runs: 0}\nrules:\n"
        "  - {id: checked, type: required_spans, select: {step: permissions.check}}\n"
    )
    findings_file = tmp_path / "findings.jsonl"
    with OtlpReceiver("/v1/logs") as receiver:
        code, _, err = cli(
            "gate", "check", "--contract", contract, "--release", "v2", "--completed-at", AT,
            "--export-findings", "--findings-endpoint", receiver.url, "--findings-file", findings_file,
            traces,
        )  # fmt: skip
    assert code == 2, err
    assert "exported 900 evaluation record(s) (300 finding(s), 600 run verdict(s))" in err
    requests, found = records(receiver)
    assert len(requests) == 2  # 512 + 388
    ids = [r["attributes"][ID] for r in found]
    assert len(ids) == len(set(ids)) == 900
    verdicts = [r for r in found if r["attributes"]["agent.finding.code"] == "RUN_VERDICT"]
    assert len({r["attributes"]["agent.run.id"] for r in verdicts}) == 600  # every run, once
    lines = findings_file.read_text().splitlines()
    in_file = [
        record
        for line in lines
        for resource_logs in json.loads(line)["resourceLogs"]
        for scope_logs in resource_logs["scopeLogs"]
        for record in scope_logs["logRecords"]
    ]
    assert len(lines) == 2 and len(in_file) == 900


def test_a_partial_records_the_places_of_its_own_releases_runs_only(tmp_path: Path) -> None:
    """Traces of two releases: the partial of ``v1`` says where each v1 run lives, and nothing of the
    v2 runs it left out (they are counted as another release, not placed)."""
    from contract_runs import CONTRACT as TRIAGE
    from contract_runs import export_runs, triage_run

    runs = [
        triage_run("a", "v1"),
        triage_run("b", "v1", writes=2),
        triage_run("c", "v2"),
        triage_run("d", "v2"),
    ]
    export_runs(runs, str(tmp_path / "runs.jsonl"))
    contract = tmp_path / "triage.yaml"
    contract.write_text(TRIAGE)
    partial = tmp_path / "p.json"
    code, _, err = cli(
        "gate", "check", "--contract", contract, "--release", "v1", "--shard", "1/1", "--partial", partial,
        tmp_path / "runs.jsonl",
    )  # fmt: skip
    assert code == 0, err
    data = json.loads(partial.read_text())
    assert len(data["run_ids"]) == 2 and data["other_releases"] == {"v2": 2}
    assert sorted(data["run_places"]) == data["run_ids"]
