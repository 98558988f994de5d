"""op.configure(): argument > environment > default, for every setting it owns."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_provenance as op
from interop import logs_sdk
from otel_provenance import semconv as sc
from otel_provenance.instrument import configure as cfg
from otel_provenance.instrument.spans.export import JsonLinesSpanExporter
from otel_provenance.instrument.spans.leaks import ContentLeakWarning


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path):
    for name in list(os.environ):
        if name.startswith("OTEL_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


def _wrapper(provider: TracerProvider) -> op.ProvenanceSpanProcessor:
    [wrapper] = provider._active_span_processor._span_processors
    assert isinstance(wrapper, op.ProvenanceSpanProcessor)
    return wrapper


def _exporter(provider: TracerProvider):
    wrapper = _wrapper(provider)
    if not wrapper.downstream:
        return None
    [downstream] = wrapper.downstream
    return downstream.span_exporter if hasattr(downstream, "span_exporter") else downstream._exporter


def _file_spans(path):
    return [
        s
        for line in path.read_text().splitlines()
        for rs in json.loads(line)["resourceSpans"]
        for ss in rs["scopeSpans"]
        for s in ss["spans"]
    ]


def test_default_is_the_jsonl_file_in_the_working_directory(tmp_path):
    provider = op.configure(set_global=False, batch=False)
    assert isinstance(_exporter(provider), JsonLinesSpanExporter)
    with provider.get_tracer("t").start_as_current_span("s", attributes={"input.value": "gone", "k": 1}):
        pass
    provider.shutdown()
    [span] = _file_spans(tmp_path / cfg.DEFAULT_FILE)
    assert [a["key"] for a in span["attributes"]] == ["k"]


def test_file_argument_beats_environment_beats_default(tmp_path, monkeypatch):
    monkeypatch.setenv(cfg.ENV_FILE, str(tmp_path / "env.jsonl"))
    assert _exporter(op.configure(set_global=False)).path == str(tmp_path / "env.jsonl")
    assert _exporter(op.configure(set_global=False, file=tmp_path / "arg.jsonl")).path == str(
        tmp_path / "arg.jsonl"
    )


def test_exporter_choice(monkeypatch):
    monkeypatch.setenv(cfg.ENV_EXPORTER, "none")
    assert _exporter(op.configure(set_global=False)) is None
    assert isinstance(_exporter(op.configure(set_global=False, exporter="file")), JsonLinesSpanExporter)
    memory = InMemorySpanExporter()
    assert _exporter(op.configure(set_global=False, exporter=memory)) is memory
    monkeypatch.delenv(cfg.ENV_EXPORTER)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://127.0.0.1:9/v1/traces")
    assert isinstance(_exporter(op.configure(set_global=False)), HttpExporter)


def test_protocol_argument_beats_signal_env_beats_general_env(monkeypatch):
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    assert isinstance(_exporter(op.configure(set_global=False)), GrpcExporter)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf")
    assert isinstance(_exporter(op.configure(set_global=False)), HttpExporter)
    assert isinstance(_exporter(op.configure(set_global=False, protocol="grpc")), GrpcExporter)


def test_batch_or_simple():
    assert isinstance(_wrapper(op.configure(set_global=False)).downstream[0], BatchSpanProcessor)
    assert isinstance(
        _wrapper(op.configure(set_global=False, batch=False)).downstream[0], SimpleSpanProcessor
    )


@pytest.mark.parametrize(
    ("env", "value", "fragment"),
    [
        (cfg.ENV_EXPORTER, "kafka", cfg.ENV_EXPORTER),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json", "http/json"),
        (cfg.ENV_EXCEPTION_SCOPE, "some", cfg.ENV_EXCEPTION_SCOPE),
        (cfg.ENV_LOGS, "maybe", cfg.ENV_LOGS),
        ("OTEL_PROVENANCE_DIGEST_KEY", "short", "OTEL_PROVENANCE_DIGEST_KEY"),
    ],
)
def test_bad_environment_names_the_variable(monkeypatch, env, value, fragment):
    monkeypatch.setenv(env, value)
    if env == "OTEL_EXPORTER_OTLP_PROTOCOL":
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    with pytest.raises(op.ConfigurationError, match=fragment):
        op.configure(set_global=False)


def test_bad_arguments_are_named():
    with pytest.raises(op.ConfigurationError, match="exporter"):
        op.configure(set_global=False, exporter="kafka")
    with pytest.raises(op.ConfigurationError, match="exporter"):
        op.configure(set_global=False, exporter=42)
    with pytest.raises(op.ConfigurationError, match="digest_key"):
        op.configure(set_global=False, digest_key="short")
    with pytest.raises(op.ConfigurationError, match="tracer_provider"):
        op.configure(set_global=False, tracer_provider=TracerProvider(), service_name="x")


def test_strip_settings_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(cfg.ENV_STRIP_KEYS, "myapp.secret, myapp.token")
    monkeypatch.setenv(cfg.ENV_STRIP_PREFIXES, "corp.pii_")
    monkeypatch.setenv(cfg.ENV_ALLOW_KEYS, "gen_ai.tool.description")
    monkeypatch.setenv(cfg.ENV_EXCEPTION_SCOPE, "all")
    monkeypatch.setenv(
        cfg.ENV_STRIP, "denylist"
    )  # the default hybrid mode would judge this GenAI span by the allow-list
    provider = op.configure(set_global=False, batch=False)
    attrs = {"myapp.secret": 1, "myapp.token": 2, "corp.pii_mail": 3, "gen_ai.tool.description": "d", "k": 4}
    with pytest.raises(ValueError), provider.get_tracer("t").start_as_current_span("plain", attributes=attrs):
        raise ValueError("message with value")
    provider.shutdown()
    [span] = _file_spans(tmp_path / cfg.DEFAULT_FILE)
    assert sorted(a["key"] for a in span["attributes"]) == ["gen_ai.tool.description", "k"]
    [event] = span["events"]
    assert [a["key"] for a in event["attributes"]] == ["exception.type", "exception.escaped"]
    assert span["status"].get("message") == "ValueError"


def test_options_argument_beats_environment(monkeypatch):
    monkeypatch.setenv(cfg.ENV_STRIP_KEYS, "k")
    from otel_provenance.instrument.spans.redaction import StripOptions

    options = StripOptions()
    assert _wrapper(op.configure(set_global=False, options=options)).options is options
    assert _wrapper(op.configure(set_global=False)).options.is_forbidden("k")


def test_digest_key_id_reaches_the_spans(monkeypatch):
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")
    from interop import require

    TelemetryHandler = require("opentelemetry.util.genai.handler").TelemetryHandler

    memory = InMemorySpanExporter()
    provider = op.configure(
        set_global=False,
        exporter=memory,
        batch=False,
        digest_key="7f" * 8 + bytes(range(24)).hex(),
        digest_key_id="ci-key-1",
    )
    with TelemetryHandler(tracer_provider=provider).tool("t") as call:
        call.arguments = {"a": "value-1"}
    [span] = memory.get_finished_spans()
    assert span.attributes[sc.DIGEST_KEY_ID] == "ci-key-1"


def test_adding_to_an_existing_provider_warns_about_exporters_beside_it():
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(InMemorySpanExporter()))
    with pytest.warns(ContentLeakWarning):
        assert op.configure(set_global=False, tracer_provider=provider, exporter="none") is provider


_GLOBAL = textwrap.dedent(
    """
    import otel_provenance as op
    from opentelemetry import trace, _logs
    provider = op.configure()
    assert trace.get_tracer_provider() is provider
    with trace.get_tracer("app").start_as_current_span("s", attributes={"input.value": "SECRET-1", "k": 1}):
        pass
    logger = _logs.get_logger_provider().get_logger("app")
    logger.emit(body={"input.value": "SECRET-2", "k": 2})
    provider.shutdown()
    _logs.get_logger_provider().shutdown()
    """
)


@logs_sdk
def test_global_providers_and_logs_from_environment(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(
        {cfg.ENV_LOGS: "true", cfg.ENV_LOGS_FILE: str(tmp_path / "logs.jsonl"), "OTEL_SERVICE_NAME": "svc"}
    )
    proc = subprocess.run(
        [sys.executable, "-c", _GLOBAL], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    spans_file = (tmp_path / cfg.DEFAULT_FILE).read_text()
    logs_file = (tmp_path / "logs.jsonl").read_text()
    assert '"svc"' in spans_file and '"k"' in spans_file and "SECRET" not in spans_file
    assert '"k"' in logs_file and "SECRET" not in logs_file
