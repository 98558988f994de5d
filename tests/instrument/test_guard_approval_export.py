"""What leaves the process when a person is asked (#34): the outcome (``agent.guard.approval``) on the
span and in the metrics — never an argument value, whatever the approver answers, raises or quotes.
Spans through ``op.ProvenanceSpanProcessor`` to the JSON Lines file exporter and in memory (both
stripping modes); metrics through the real SDK's reader and the metrics file."""

from __future__ import annotations

import logging
import threading

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader, NumberDataPoint
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_provenance as op
from canary import assert_absent, canary, exported_bytes
from otel_provenance import semconv as sc
from otel_provenance.instrument.configure import configure_metrics
from otel_provenance.instrument.spans import metrics as tool_metrics

OUTCOMES = ("approved", "denied", "timeout", "error")


class Pipeline:
    """A provider whose spans go through the stripping processor to memory and to a JSON Lines file."""

    def __init__(self, tmp_path, mode: str = "denylist") -> None:
        self.memory = InMemorySpanExporter()
        self.file = tmp_path / f"spans-{mode}.jsonl"
        self.provider = TracerProvider()
        self.provider.add_span_processor(
            op.ProvenanceSpanProcessor(
                SimpleSpanProcessor(self.memory),
                SimpleSpanProcessor(op.JsonLinesSpanExporter(self.file)),
                options=op.StripOptions(mode=mode),
            )
        )

    def spans(self, tool: str):
        return [s for s in self.memory.get_finished_spans() if s.name == f"execute_tool {tool}"]


def _approvers(secrets: list[str], release: threading.Event):
    """One approver per outcome; each quotes the arguments' values where it can."""

    def approved(request):
        return True

    def denied(request):
        return f"no: {', '.join(map(str, request.arguments.values()))} {secrets[0]}"  # not True: denied

    def timeout(request):
        release.wait(30)
        return True

    def error(request):
        raise ValueError(f"cannot judge {dict(request.arguments)!r} {secrets[0]}")

    return {"approved": approved, "denied": denied, "timeout": timeout, "error": error}


def _call_every_outcome(provider, secrets: list[str], release: threading.Event) -> list[BaseException]:
    account, memo, pin = secrets

    @op.tool(side_effect="write", needs_approval=True, tracer_provider=provider)
    def transfer(account: str, memo: dict, pin: str) -> dict:
        return {"receipt": f"r-{account}"}

    errors: list[BaseException] = []
    for outcome, approver in _approvers(secrets, release).items():
        with op.run(inputs={"account": account, "memo": {"note": memo}, "pin": pin}, approver=approver,
                    approval_timeout=0.2):  # fmt: skip
            try:
                transfer(account=account, memo={"note": memo}, pin=pin)
                assert outcome == "approved"
            except op.ProvenanceError as denied:
                errors.append(denied)
    return errors


@pytest.mark.parametrize("mode", ["denylist", "allowlist"])
def test_no_argument_value_leaves_for_any_outcome(tmp_path, caplog, mode):
    caplog.set_level(logging.DEBUG)
    pipeline = Pipeline(tmp_path, mode)
    secrets = [canary(), canary(), "482913"]
    release = threading.Event()
    try:
        errors = _call_every_outcome(pipeline.provider, secrets, release)
    finally:
        release.set()
    spans = pipeline.spans("transfer")
    assert [s.attributes[sc.GUARD_APPROVAL] for s in spans] == list(OUTCOMES)  # the key is kept
    assert [s.attributes[sc.TOOL_STATUS] for s in spans] == ["ok", "blocked", "blocked", "blocked"]
    assert len(errors) == 3
    blobs = [*exported_bytes(spans), pipeline.file.read_bytes()]
    assert b"agent.guard.approval" in blobs[-1]
    assert_absent(secrets, blobs)
    assert_absent(secrets, [str(e).encode() for e in errors] + [caplog.text.encode()])
    assert "ValueError" in str(errors[-1])  # the approver's exception by type only


def test_a_needs_approval_function_quoting_a_value_leaks_nothing(traced):
    secret = canary()

    def needs(arguments):
        raise RuntimeError(f"cannot read {arguments['account']}")

    @op.tool(side_effect="read", needs_approval=needs, tracer_provider=traced.provider)
    def lookup(account: str) -> None:
        return None

    with op.run(approver=lambda r: True), pytest.raises(op.ProvenanceError) as blocked:
        lookup(account=secret)
    assert blocked.value.violations == ("needs_approval:lookup=RuntimeError",)
    assert_absent([secret], [*exported_bytes(traced.spans), str(blocked.value).encode()])


def _sums(data, name: str) -> dict[frozenset, int]:
    return {
        frozenset(point.attributes.items()): point.value
        for rm in data.resource_metrics
        for sm in rm.scope_metrics
        if sm.scope.name == tool_metrics.SCOPE
        for metric in sm.metrics
        if metric.name == name
        for point in metric.data.data_points
        if isinstance(point, NumberDataPoint)
    }


def test_metrics_count_each_outcome_and_carry_no_value(tmp_path, traced):
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    metrics_file = tmp_path / "metrics.jsonl"
    file_provider = configure_metrics(exporter="file", file=metrics_file, set_global=False)
    secrets = [canary(), canary(), "771204"]
    release = threading.Event()
    try:
        for target in (provider, file_provider):
            tool_metrics.use_meter_provider(target)
            _call_every_outcome(traced.provider, secrets, release)
            tool_metrics.use_meter_provider(None)
            release.set()
            release = threading.Event()
    finally:
        tool_metrics.use_meter_provider(None)
        release.set()
    file_provider.shutdown()
    data = reader.get_metrics_data()
    tool = sc.GEN_AI_TOOL_NAME
    assert _sums(data, tool_metrics.APPROVALS) == {
        frozenset({tool: "transfer", sc.GUARD_APPROVAL: outcome}.items()): 1 for outcome in OUTCOMES
    }
    calls = _sums(data, tool_metrics.TOOL_CALLS)
    by_status = {dict(k)[sc.TOOL_STATUS]: v for k, v in calls.items()}
    assert by_status == {"ok": 1, "blocked": 3}
    rules = {
        dict(k)[tool_metrics.BUDGET_RULE]: v for k, v in _sums(data, tool_metrics.BUDGET_VIOLATIONS).items()
    }
    assert rules == {"needs_approval": 3, "approval": 3}  # the approved call broke no rule
    exported = metrics_file.read_bytes()
    assert tool_metrics.APPROVALS.encode() in exported
    assert_absent(secrets, [exported])
    provider.shutdown()
