"""The README's main command, end to end: five services as real processes, 25 approved v1 runs,
mine, then gate v2 (exit 2 with the two headline findings) and a v1-behaviour release (exit 0)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from interop import logs_sdk
from otel_provenance import semconv
from otel_provenance.offline.readers import iter_runs

pytestmark = logs_sdk  # the demo's agent also ships its log records through the logs processor

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "examples" / "refund_agent" / "demo.py"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("refund-demo")
    proc = subprocess.run(
        [sys.executable, str(DEMO), "--out", str(out)], capture_output=True, text=True, timeout=300
    )
    return proc, out


def test_v2_fails_the_gate_with_the_findings_that_prove_it(demo):
    proc, out = demo
    assert proc.returncode == 2, proc.stdout[-3000:] + proc.stderr[-3000:]
    text = proc.stdout
    block = text[text.index("== gate check release 2.0.0") :]
    assert "FAIL: This release exceeded one or more trajectory thresholds.\nFindings:\n" in block
    lines = block.splitlines()
    assert any(
        line.startswith("MISSING_PREREQUISITE (")
        and "fraud.check is required at least 1 time(s) but occurred 0 time(s)." in line
        for line in lines
    )
    assert any(
        line.startswith("DUPLICATE_SIDE_EFFECT (")
        and "payment.refund occurred 2 times; the contract permits at most 1 per run." in line
        for line in lines
    )
    # Every finding is proved by trace ids.
    report = json.loads((out / "report-2.0.0.json").read_text())
    assert report["decision"] == "fail"
    # the HTML report the README shows, and the demo says where it went (#37)
    html = (out / "report-2.0.0.html").read_text()
    assert "DUPLICATE_SIDE_EFFECT" in html and "MISSING_PREREQUISITE" in html
    assert f"release 2.0.0's gate report: {out / 'report-2.0.0.html'}" in text


def test_the_demo_reads_in_a_screen_and_says_its_exit_2_is_intended(demo):
    """#49: the demo printed 92 lines, half of them trace ids, and never said that exit 2 is how it
    ends. The ids that prove the findings go to a file it names; its last line says the 2 is intended."""
    proc, out = demo
    lines = proc.stdout.splitlines()
    assert len(lines) < 60, len(lines)
    with_ids = [line for line in lines if re.search(r"\b[0-9a-f]{32}\b", line)]
    assert len(with_ids) <= 1, with_ids  # `mine`'s example traces of the approved family
    proofs = [line for line in (out / "gate-2.0.0.txt").read_text().splitlines() if line.startswith("  ")]
    assert proofs and all(re.search(r"[0-9a-f]{32}", line) for line in proofs)
    assert f"   exit 2; the {len(proofs)} lines of trace and span ids proving the findings: " in proc.stdout
    assert lines[-1].startswith("Done: exit 2 — release 2.0.0 failed the gate, which is what this demo shows")


def test_the_v1_behaviour_passes_the_same_gate(demo):
    proc, _ = demo
    block = proc.stdout[
        proc.stdout.index("== gate check release 1.1.0") : proc.stdout.index("== gate check release 2.0.0")
    ]
    assert "PASS: This release met every trajectory threshold." in block
    assert "exit 0" in block


@pytest.mark.parametrize(
    ("phase", "release", "code"), [("release-2.0.0", "2.0.0", 2), ("release-1.1.0", "1.1.0", 0)]
)
def test_a_phase_folder_given_whole_gates_as_its_span_files_do(demo, phase, release, code):
    """A user handed the demo's output passes a phase's folder, not a glob: the folder holds trace,
    log and metrics files only (the payment ledger lives in ``ledgers/``), so the verdict is the same."""
    import io

    from otel_provenance.cli import run

    _, out = demo
    argv = ["gate", "check", "--contract", str(out / "contract.yaml"), "--release", release]
    err = io.StringIO()
    assert (
        run([*argv, "--completed-at", "2026-12-01T00:00:00Z", str(out / phase)], io.StringIO(), err) == code
    )
    assert "neither OTLP" not in err.getvalue()
    phases = {p.parent.name for p in out.rglob("*.txt") if p.parent != out}  # out/gate-*.txt: reports
    assert phases == {"ledgers"}  # no ledger among the traces


def _ledger(path: Path) -> dict[str, int]:
    booked: dict[str, int] = {}
    for line in path.read_text().splitlines() if path.exists() else ():
        booked[line.split()[0]] = booked.get(line.split()[0], 0) + 1
    return booked


def test_under_the_guard_no_bad_refund_reaches_the_payment_service_and_no_approved_call_is_blocked(demo):
    """#34: the payment service's own ledger — release 2.0.0 books two refunds per request unguarded,
    at most one (here none: the contract stops the run before the payment) with the contract loaded;
    the 25 runs of the approved behaviour under the same contract have no blocked call."""
    proc, out = demo
    unguarded = _ledger(out / "ledgers" / "release-2.0.0.txt")
    guarded = _ledger(out / "ledgers" / "guard-2.0.0.txt")
    assert sorted(unguarded.values()) == [2] * 5  # control: without the guard each request pays twice
    assert all(count <= 1 for count in guarded.values())
    approved = list(iter_runs(sorted((out / "guard-1.1.0").glob("*.jsonl"))))
    assert len(approved) == 25
    statuses = [s.attributes.get(semconv.TOOL_STATUS) for run in approved for s in run.spans if s.is_tool]
    assert statuses and "blocked" not in statuses
    held = list(iter_runs(sorted((out / "guard-2.0.0").glob("*.jsonl"))))
    assert [run.release for run in held if run.is_agent_run] == ["2.0.0+guard"] * 5
    assert all(any(s.blocked for s in run.spans) for run in held if run.is_agent_run)
    assert "requests was answered: 'We could not issue your refund automatically" in proc.stdout


def _contract_blocks(directory: Path) -> dict[str, set[str]]:
    """The agent's blocked calls in ``directory``: tool -> the contract rules that refused them."""
    from otel_provenance.offline.readers import read_spans

    found: dict[str, set[str]] = {}
    for span in read_spans(sorted(str(p) for p in directory.glob("*.jsonl"))):
        if span.blocked:
            found.setdefault(span.tool_name, set()).update(span.attributes[semconv.VIOLATIONS])
    return found


def test_the_mined_contract_stops_a_release_that_skips_the_fraud_check_before_the_refund(demo):
    """#49, as the demo shows it: release 1.2.0 is 1.0.0 without ``fraud.check`` and otherwise
    behaves. With the contract ``mine`` wrote — no rule added by hand — the guard refuses every
    refund before its body runs: the payment service books none, the spans say which rule."""
    proc, out = demo
    assert "order a write after the checks every approved run made first" in proc.stdout
    assert not _ledger(out / "ledgers" / "guard-1.2.0.txt")  # the payment service never saw a refund
    blocked = _contract_blocks(out / "guard-1.2.0")
    assert set(blocked) == {"payment.refund"}
    assert blocked["payment.refund"] == {"contract:payment.refund.after.fraud.check:MISSING_PREREQUISITE"}
    runs = [run for run in iter_runs(sorted((out / "guard-1.2.0").glob("*.jsonl"))) if run.is_agent_run]
    assert len(runs) == 5
    for run in runs:  # each refund was refused; no payment service span exists under it
        assert [s.tool_name for s in run.spans if s.is_tool and s.blocked] == ["payment.refund"]
        assert not any(s.name.startswith("payment /") for s in run.spans)
    assert "release 1.2.0 (1.0.0 without the fraud check), 5 runs: 0 refund(s) booked" in proc.stdout


def test_the_mined_contract_stops_a_release_that_skips_the_policy_check_before_the_refund(demo, tmp_path):
    """#49, as the issue's user met it: their own release skips the policy check (the refund window
    comes from its configuration, a declared input, so every argument is sourced) and otherwise
    behaves. Under ``op.run(contract=<the mined contract>)`` against the demo's real services, the
    refund is refused before its body runs — the payment service's own ledger stays empty — and the
    error names the ordering rule; without the contract the same release pays every refund."""
    import importlib.util
    import uuid

    import otel_provenance as op

    spec = importlib.util.spec_from_file_location("refund_demo_script", DEMO)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)  # puts examples/refund_agent on sys.path
    from agent import Agent  # examples/refund_agent/agent.py

    class SkipsPolicy(Agent):
        """Release 1.3.0: the 30-day window from configuration instead of the policy service."""

        def handle(self, order_id: str) -> str:
            with (
                self.tracer.start_as_current_span("refund.request"),
                op.run(inputs={"order_id": order_id, "max_days": 30}, contract=self.contract),
            ):
                order = self.lookup_order(order_id=order_id)
                self.check_fraud(
                    customer_id=order["customer_id"], order_id=order_id, amount_cents=order["amount_cents"]
                )
                refund = self.calculate_refund(
                    amount_cents=order["amount_cents"],
                    days_since_delivery=order["days_since_delivery"],
                    max_days=30,
                )
                key = f"refund-{uuid.uuid4()}"
                self.refund_payment(
                    order_id=order_id, amount_cents=refund["refund_cents"], idempotency_key=key
                )
                return "paid"

    _, out = demo
    contract = out / "contract.yaml"
    results: dict[str, list[str]] = {}
    for name, loaded in (("unguarded", None), ("guarded", str(contract))):
        phase = tmp_path / name
        with script.services(phase) as endpoints:
            provider = script.tracer_provider(
                "refund-agent", "1.3.0", phase / "agent.jsonl", set_global=False
            )
            agent = SkipsPolicy(endpoints, "1.3.0", provider, None, loaded)
            outcomes = []
            for n in range(3):
                try:
                    outcomes.append(agent.handle(f"ORD-{900 + n:05d}"))
                except op.ProvenanceError as refused:
                    outcomes.append(str(refused))
            agent.close()
            provider.shutdown()
        results[name] = outcomes
    assert results["unguarded"] == ["paid"] * 3
    assert sum(_ledger(tmp_path / "ledgers" / "unguarded.txt").values()) == 3  # control: it does pay
    assert not _ledger(tmp_path / "ledgers" / "guarded.txt")  # before its body ran: nothing booked
    assert all(
        o.startswith("payment.refund: blocked") and "payment.refund.after.policy.retrieve" in o
        for o in results["guarded"]
    ), results["guarded"]
    blocked = _contract_blocks(tmp_path / "guarded")
    assert set(blocked) == {"payment.refund"}
    assert "contract:payment.refund.after.policy.retrieve:MISSING_PREREQUISITE" in blocked["payment.refund"]


def test_both_releases_told_the_customer_the_same_sentence(demo):
    proc, _ = demo
    assert "-> same sentence" in proc.stdout


def test_no_argument_result_or_reply_value_left_any_process(demo):
    _, out = demo
    files = list(out.rglob("*.jsonl"))
    assert len(files) >= 3 * 7  # 3 phases x (agent spans + 5 services + agent logs)
    data = b"".join(p.read_bytes() for p in files)
    for canary in (b"ORD-0", b"CUST-", b"refund has been issued", b"POL-RET-30", b"FRD-", b"RF-ORD"):
        assert canary not in data, canary
    # ...while the stripped log records themselves were still exported.
    logs = (out / "approved" / "logs" / "agent-1.0.0.jsonl").read_text()
    # The summary record carries gen_ai.output.messages, so the default (hybrid) mode judges it by the
    # allow-list: it leaves without its body or content key, 25 records still exported.
    assert logs.count("refund request handled") == 0
    assert logs.count('"agent.release"') == 0 and logs.count('"traceId"') >= 25


def _readable(span):
    """An offline-model span as the SDK's ReadableSpan, so the real OTLP exporter can send it again."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

    def plain(value):
        return list(value) if isinstance(value, tuple) else value

    ctx = SpanContext(int(span.trace_id, 16), int(span.span_id, 16), False, TraceFlags(1))
    parent = (
        SpanContext(int(span.trace_id, 16), int(span.parent_span_id, 16), False, TraceFlags(1))
        if span.parent_span_id
        else None
    )
    return ReadableSpan(
        name=span.name,
        context=ctx,
        parent=parent,
        resource=Resource({k: plain(v) for k, v in span.resource.items()}),
        attributes={k: plain(v) for k, v in span.attributes.items()},
        kind=SpanKind(int(span.kind) - 1 if int(span.kind) > 0 else 0),
        status=Status(StatusCode(int(span.status.code)), span.status.message or None),
        start_time=span.start_ns,
        end_time=span.end_ns,
    )


@pytest.mark.parametrize("version", ["v0.129.0", "v0.134.0"])
def test_the_same_verdict_read_back_from_signoz(demo, tmp_path, monkeypatch, version):
    """The v2 spans, sent by the real OTLP/HTTP exporter into the SigNoz double and read back with
    `gate check --signoz`, give the same findings and the same JSON report bytes as the files."""
    import io

    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    from otel_provenance.cli import run
    from otel_provenance.offline.readers import read_spans
    from signoz_double import SigNozDouble

    _, out = demo
    files = sorted(str(p) for p in (out / "release-2.0.0").glob("*.jsonl"))
    spans = list(read_spans(files))
    common = ["gate", "check", "--contract", str(out / "contract.yaml"), "--release", "2.0.0"]
    common += ["--completed-at", "2026-01-01T00:00:00Z"]
    from_files, from_signoz = tmp_path / "files.json", tmp_path / "signoz.json"
    stdout_files = io.StringIO()
    html_files, html_signoz = tmp_path / "files.html", tmp_path / "signoz.html"
    argv = [*common, "--report-json", str(from_files), "--report-html", str(html_files), *files]
    assert run(argv, stdout_files, io.StringIO()) == 2

    with SigNozDouble(version=version) as double:
        exporter = OTLPSpanExporter(endpoint=double.otlp_url, timeout=10)
        exporter.export([_readable(s) for s in spans])
        exporter.shutdown()
        monkeypatch.setenv("SIGNOZ_API_KEY", double.api_key)
        start = min(s.start_ns for s in spans) // 1_000_000 - 1_000
        end = max(s.end_ns for s in spans) // 1_000_000 + 1_000
        stdout_signoz, stderr = io.StringIO(), io.StringIO()
        window = ["--signoz", double.url, "--start", str(start), "--end", str(end)]
        argv = [*common, *window, "--report-json", str(from_signoz), "--report-html", str(html_signoz)]
        code = run(argv, stdout_signoz, stderr)
    assert code == 2, stderr.getvalue()
    assert from_signoz.read_bytes() == from_files.read_bytes()
    assert html_signoz.read_bytes() == html_files.read_bytes()  # the same runs drawn, byte for byte
    assert stdout_signoz.getvalue() == stdout_files.getvalue()
    assert double.api_key not in stdout_signoz.getvalue() + stderr.getvalue()


def test_the_demo_exporting_to_signoz_gates_the_same_from_there(tmp_path, monkeypatch):
    """The whole flow against the SigNoz double: every process exports over real OTLP/HTTP (as in the
    compose stack) besides its file; `gate check --signoz` then gives the file path's report bytes."""
    import io
    import os

    from otel_provenance.cli import run
    from signoz_double import SigNozDouble

    out = tmp_path / "demo"
    with SigNozDouble(version="v0.134.0") as double:
        env = dict(
            os.environ, OTEL_EXPORTER_OTLP_ENDPOINT=double.url, OTEL_EXPORTER_OTLP_PROTOCOL="http/protobuf"
        )
        proc = subprocess.run(
            [sys.executable, str(DEMO), "--out", str(out)],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
        assert double.spans  # the spans really went over OTLP
        monkeypatch.setenv("SIGNOZ_API_KEY", double.api_key)
        report = tmp_path / "signoz.json"
        argv = ["gate", "check", "--contract", str(out / "contract.yaml"), "--release", "2.0.0"]
        argv += ["--completed-at", "2026-01-01T00:00:00Z", "--since", "1h", "--report-json", str(report)]
        code = run([*argv, "--signoz", double.url], io.StringIO(), io.StringIO())
    assert code == 2
    assert report.read_bytes() == (out / "report-2.0.0.json").read_bytes()


def test_the_demo_writes_metrics_files_with_the_counters(demo):
    """Agent and services export metrics (OTLP JSON Lines, one file per process and release)."""
    from google.protobuf import json_format
    from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2

    _, out = demo
    seen: dict[str, set[str]] = {}
    for path in sorted(out.glob("*/metrics/*.jsonl")):
        for line in path.read_text().splitlines():
            request = json_format.Parse(line, metrics_service_pb2.ExportMetricsServiceRequest())
            for rm in request.resource_metrics:
                resource = {a.key: a.value.string_value for a in rm.resource.attributes}
                for sm in rm.scope_metrics:
                    for metric in sm.metrics:
                        key = f"{resource['service.name']}@{resource.get('service.version', '')}"
                        seen.setdefault(key, set()).add(metric.name)
    tool_metrics = {"agent.tool.calls", "agent.tool.arguments", "gen_ai.execute_tool.duration"}
    for release in ("1.0.0", "1.1.0", "2.0.0"):
        assert tool_metrics <= seen[f"refund-agent@{release}"], seen
    assert "agent.tool.retries" in seen["refund-agent@2.0.0"]  # v2 refunds twice after a timeout
    assert "http.server.request.duration" in seen["refund-payment@"]


def _gate_exit(contract_text: str, directory: Path, folder: Path) -> int:
    import io

    from otel_provenance.cli import run

    contract = folder / "cut.yaml"
    contract.write_text(contract_text)
    files = [str(p) for p in sorted(directory.glob("*.jsonl"))]
    argv = ["gate", "check", "--contract", str(contract), "--release", "2.0.0"]
    return run([*argv, "--completed-at", "2026-12-01T00:00:00Z", *files], io.StringIO(), io.StringIO())


def test_every_line_boundary_cut_of_the_demo_contract_is_refused_or_fails_v2(demo, tmp_path):
    """#36: a copy of the contract cut short at a line boundary must never pass the failing release.
    The seal ``mine`` writes near the top (the line the contract ends with) makes every such cut a
    refused contract; without the seal, some cuts are valid contracts that pass release 2.0.0 (what the
    seal is there for)."""
    from otel_provenance.errors import ContractError
    from otel_provenance.offline import parse_contract

    _, out = demo
    text = (out / "contract.yaml").read_text()
    lines = text.splitlines(keepends=True)
    assert lines[2] == "seal: '# end of contract'\n" and lines[-1] == "# end of contract\n"
    for k in range(1, len(lines)):
        cut = "".join(lines[:k])
        try:
            parse_contract(cut)
        except ContractError:
            continue
        assert _gate_exit(cut, out / "release-2.0.0", tmp_path) != 0, f"the cut after line {k} passed v2"
    unsealed = lines[:2] + lines[3:]
    passing = [
        k
        for k in range(3, len(unsealed))
        if _accepts("".join(unsealed[:k]))
        and _gate_exit("".join(unsealed[:k]), out / "release-2.0.0", tmp_path) == 0
    ]
    assert passing, "without its seal, no cut passed: this test would not notice the seal missing"


def _accepts(text: str) -> bool:
    from otel_provenance.errors import ContractError
    from otel_provenance.offline import parse_contract

    try:
        parse_contract(text)
    except ContractError:
        return False
    return True


def test_the_readme_sample_gate_output_is_what_the_demo_prints(demo):
    """The README shows release 2.0.0's gate output: every line it shows (the trace-id lines aside,
    which differ on every run) is one the demo printed, and it leaves out no finding the demo printed."""
    proc, _ = demo
    readme = (ROOT / "README.md").read_text()
    start = readme.index("```\nFAIL: This release exceeded")
    sample = readme[start + 4 : readme.index("```", start + 4)].splitlines()
    shown = [line for line in sample if not line.startswith("  ")]
    printed = proc.stdout[proc.stdout.index("== gate check release 2.0.0") :].splitlines()
    assert [line for line in shown if line not in printed] == []
    findings = [line for line in printed if line.split(" ", 1)[0].isupper() and "(" in line.split(" ", 2)[1]]
    assert findings and [line for line in findings if line not in shown] == []
