"""Tool-call metrics leave the process: OTLP/HTTP to a real receiver on loopback, and the OTLP JSON
Lines file default — read back with protobuf's own JSON parser, not with this package's code.
Plus the canary: no argument value, caller-chosen name or id in any metric attribute."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_provenance as op
from instrument_helpers import Traced
from otel_provenance.errors import ConfigurationError
from otel_provenance.instrument.configure import configure_metrics
from otel_provenance.instrument.spans import metrics as tool_metrics
from otlp_receiver import OtlpReceiver

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def clean_env(monkeypatch):
    for name in list(os.environ):
        if name.startswith(("OTEL_EXPORTER_OTLP", "OTEL_PROVENANCE", "OTEL_SERVICE", "OTEL_RESOURCE")):
            monkeypatch.delenv(name)


@pytest.fixture
def metrics_receiver():
    with OtlpReceiver("/v1/metrics") as receiver:
        yield receiver.url, receiver.bodies["/v1/metrics"]


def _tools(provider):
    @op.tool(side_effect="read", tracer_provider=provider)
    def lookup(order_id: str) -> dict:
        return {"amount": 12}

    @op.tool(side_effect="write", tracer_provider=provider)
    def refund(order_id: str, amount: int) -> None:
        return None

    return lookup, refund


def _drive(provider) -> None:
    lookup, refund = _tools(provider)
    with op.run(inputs={"order_id": "o-1"}):
        lookup("o-1")
        refund("o-1", 12)
        with pytest.raises(op.ProvenanceError):
            refund("o-1", 999)


def _sums(requests) -> dict[tuple, float]:
    """(metric name, sorted attribute items) -> value, from ExportMetricsServiceRequest messages."""
    out: dict[tuple, float] = {}
    for request in requests:
        for rm in request.resource_metrics:
            for sm in rm.scope_metrics:
                for metric in sm.metrics:
                    which = metric.WhichOneof("data")
                    for point in getattr(metric, which).data_points:
                        attrs = tuple(sorted((a.key, a.value.string_value) for a in point.attributes))
                        value = point.count if which == "histogram" else point.as_int
                        out[(metric.name, attrs)] = value  # cumulative: the last export wins
    return out


def _resource(request) -> dict[str, str]:
    return {a.key: a.value.string_value for a in request.resource_metrics[0].resource.attributes}


def test_metrics_reach_an_otlp_http_receiver(clean_env, metrics_receiver):
    url, bodies = metrics_receiver
    from opentelemetry.sdk.resources import Resource

    provider = configure_metrics(
        endpoint=url, resource=Resource.create({"service.version": "2.0.0"}), set_global=False
    )
    tool_metrics.use_meter_provider(provider)
    try:
        _drive(Traced().provider)
    finally:
        tool_metrics.use_meter_provider(None)
        provider.shutdown()  # the periodic reader exports once more at shutdown
    requests = [metrics_service_pb2.ExportMetricsServiceRequest.FromString(b) for b in bodies]
    assert requests and _resource(requests[-1])["service.version"] == "2.0.0"
    sums = _sums(requests)
    calls = "agent.tool.calls"
    assert (
        sums[
            (
                calls,
                (("agent.side_effect", "write"), ("agent.tool.status", "ok"), ("gen_ai.tool.name", "refund")),
            )
        ]
        == 1
    )
    blocked = (
        ("agent.side_effect", "write"),
        ("agent.tool.status", "blocked"),
        ("gen_ai.tool.name", "refund"),
    )
    assert sums[(calls, blocked)] == 1
    assert (
        sums[("agent.tool.arguments", (("agent.arg.kind", "assumed"), ("gen_ai.tool.name", "refund")))] == 1
    )
    assert (
        sums[
            (
                "agent.budget.violations",
                (("agent.budget.rule", "max_assumed"), ("gen_ai.tool.name", "refund")),
            )
        ]
        == 1
    )
    assert (
        sums[
            (
                "gen_ai.execute_tool.duration",
                (("gen_ai.tool.name", "lookup"), ("gen_ai.tool.type", "function")),
            )
        ]
        == 1
    )


def test_metrics_file_is_otlp_json(clean_env, tmp_path):
    path = tmp_path / "m.jsonl"
    provider = configure_metrics(exporter="file", file=path, set_global=False)
    tool_metrics.use_meter_provider(provider)
    try:
        _drive(Traced().provider)
    finally:
        tool_metrics.use_meter_provider(None)
        provider.shutdown()
    lines = path.read_text().splitlines()
    assert lines
    requests = [json_format.Parse(line, metrics_service_pb2.ExportMetricsServiceRequest()) for line in lines]
    names = {name for name, _ in _sums(requests)}
    assert names == {
        "gen_ai.execute_tool.duration",
        "gen_ai.invoke_agent.duration",  # op.run opened its invoke_agent span
        "agent.tool.calls",
        "agent.tool.arguments",
        "agent.budget.violations",
    }


_SCRIPT = textwrap.dedent(
    """
    import otel_provenance as op
    op.configure(service_name="svc", service_version="1.1.0", batch=False, {extra})

    @op.tool(side_effect="write")
    def refund(order_id: str) -> None:
        return None

    with op.run(inputs={{"order_id": "o-1"}}):
        refund("o-1")
        refund("o-1")
        try:
            refund("o-2")
        except op.ProvenanceError:
            pass
    """
)


def _run(tmp_path, extra: str = "", env: dict | None = None) -> None:
    script = tmp_path / "agent.py"
    script.write_text(_SCRIPT.format(extra=extra))
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_EXPORTER", "OTEL_PROVENANCE"))}
    environ.update(env or {})
    subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=environ, check=True, timeout=120)


def test_op_configure_file_default_writes_metrics_at_exit(tmp_path):
    _run(tmp_path)
    spans = tmp_path / "otel-provenance-spans.jsonl"
    metrics_file = tmp_path / "otel-provenance-metrics.jsonl"
    assert spans.exists() and metrics_file.exists()
    requests = [
        json_format.Parse(line, metrics_service_pb2.ExportMetricsServiceRequest())
        for line in metrics_file.read_text().splitlines()
    ]
    assert _resource(requests[-1])["service.version"] == "1.1.0"
    sums = _sums(requests)
    ok = (("agent.side_effect", "write"), ("agent.tool.status", "ok"), ("gen_ai.tool.name", "refund"))
    assert sums[("agent.tool.calls", ok)] == 2
    assert sums[("agent.tool.retries", (("gen_ai.tool.name", "refund"),))] == 1


def test_metrics_file_sits_beside_a_named_span_file(tmp_path):
    (tmp_path / "out").mkdir()
    _run(tmp_path, extra='file="out/spans.jsonl"')
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["spans.jsonl", "spans.metrics.jsonl"]
    assert not (tmp_path / "otel-provenance-metrics.jsonl").exists()


def test_metrics_file_variable_wins(tmp_path):
    _run(tmp_path, extra='file="spans.jsonl"', env={"OTEL_PROVENANCE_METRICS_FILE": "m.jsonl"})
    assert (tmp_path / "m.jsonl").stat().st_size > 0
    assert not (tmp_path / "spans.metrics.jsonl").exists()


@pytest.mark.parametrize(
    ("extra", "env"),
    [("metrics=False", {}), ("", {"OTEL_PROVENANCE_METRICS": "false"}), ("exporter='none'", {})],
)
def test_metrics_opt_out(tmp_path, extra, env):
    _run(tmp_path, extra=extra, env=env)
    assert not (tmp_path / "otel-provenance-metrics.jsonl").exists()


def test_a_ready_span_exporter_leaves_metrics_off_unless_asked(clean_env, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    op.configure(exporter=InMemorySpanExporter(), set_global=False)
    op.configure(exporter="file", set_global=False)  # non-global: nothing would record into it
    assert not (tmp_path / "otel-provenance-metrics.jsonl").exists()
    op.configure(exporter=InMemorySpanExporter(), metrics=True, set_global=False)
    try:
        assert (tmp_path / "otel-provenance-metrics.jsonl").exists()
        assert tool_metrics._provider is not None  # asked for: the package records into it
    finally:
        tool_metrics.use_meter_provider(None)


def test_bad_metrics_variable_is_a_configuration_error(clean_env, monkeypatch, tmp_path):
    monkeypatch.setenv("OTEL_PROVENANCE_METRICS", "maybe")
    with pytest.raises(ConfigurationError, match="OTEL_PROVENANCE_METRICS"):
        op.configure(exporter="file", file=tmp_path / "s.jsonl", set_global=False)


def test_canary_no_value_name_or_id_in_any_metric_attribute(tmp_path):
    """Values, caller-chosen argument names (``**kwargs`` keys), run ids and trace ids stay out."""
    reader = InMemoryMetricReader()
    file_path = tmp_path / "canary.jsonl"
    provider = MeterProvider(
        metric_readers=[reader],
    )
    file_provider = configure_metrics(exporter="file", file=file_path, set_global=False)
    traced = Traced()
    secret_value = f"val-{secrets.token_hex(8)}"
    secret_name = f"name_{secrets.token_hex(8)}"
    run_id = f"run-{secrets.token_hex(8)}"

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    def send(to: str, **extra) -> str:
        return f"res-{secret_value}"

    @op.tool(tracer_provider=traced.provider)
    def fail(**extra) -> None:
        raise KeyError(secret_value)

    for target in (provider, file_provider):
        tool_metrics.use_meter_provider(target)
        try:
            with op.run(inputs={"to": secret_value}, run_id=run_id):
                send(secret_value, **{secret_name: secret_value})
                send(secret_value, **{secret_name: secret_value})
                with pytest.raises(op.ProvenanceError):
                    send(f"other-{secret_value}", **{secret_name: "x"})
                with pytest.raises(KeyError):
                    fail(**{secret_name: secret_value})
        finally:
            tool_metrics.use_meter_provider(None)
    file_provider.shutdown()
    ids = {format(s.context.trace_id, "032x") for s in traced.spans}
    ids |= {format(s.context.span_id, "016x") for s in traced.spans}
    ids |= {str(s.attributes["agent.tool.call.id"]) for s in traced.spans}

    forbidden = [secret_value, secret_name, run_id, *ids]
    seen = []
    data = reader.get_metrics_data()
    for rm in data.resource_metrics:
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                for point in metric.data.data_points:
                    for k, v in point.attributes.items():
                        seen.append(f"{k}={v}")
                    for exemplar in getattr(point, "exemplars", None) or ():
                        for k, v in (exemplar.filtered_attributes or {}).items():
                            seen.append(f"{k}={v}")
    assert seen
    for text in seen:
        for bad in forbidden:
            assert bad not in text, (bad, text)
    exported = file_path.read_bytes()
    assert b"agent.tool.calls" in exported
    for bad in (secret_value, secret_name, run_id):  # exemplars may carry trace ids, never these
        assert bad.encode() not in exported
    provider.shutdown()
