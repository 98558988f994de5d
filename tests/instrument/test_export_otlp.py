"""End to end over the wire: the real OTLP exporters (HTTP and gRPC) to receivers on loopback.

Each receiver is real: an ``http.server`` accepting ``POST /v1/traces`` protobuf, and a grpcio
server implementing ``TraceService`` from ``opentelemetry.proto``. What they receive is written to
a file and read back with the offline reader (``offline.readers.read_spans``).
"""

from __future__ import annotations

import secrets
import threading
from concurrent import futures

import grpc
import pytest
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

import otel_provenance as op
from interop import logs_sdk, require
from otel_provenance import semconv as sc
from otel_provenance.instrument.configure import configure_logs
from otel_provenance.offline.readers import read_spans
from otlp_receiver import OtlpReceiver


class _Received:
    def __init__(self) -> None:
        self.bodies: dict[str, list[bytes]] = {"/v1/traces": [], "/v1/logs": []}
        self.headers: list[dict[str, str]] = []
        self.lock = threading.Lock()


@pytest.fixture
def http_receiver():
    with OtlpReceiver("/v1/traces", "/v1/logs") as receiver:
        yield receiver.url, receiver


@pytest.fixture
def grpc_receiver():
    received = _Received()

    class Service(trace_service_pb2_grpc.TraceServiceServicer):
        def Export(self, request, context):
            with received.lock:
                received.bodies["/v1/traces"].append(request.SerializeToString())
                received.headers.append(dict(context.invocation_metadata()))
            return trace_service_pb2.ExportTraceServiceResponse()

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Service(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield f"http://127.0.0.1:{port}", received
    server.stop(grace=None)


def _emit(provider, monkeypatch) -> list[str]:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")
    handler = require("opentelemetry.util.genai.handler").TelemetryHandler(tracer_provider=provider)
    path = f"src/{secrets.token_hex(6)}.py"
    body = secrets.token_hex(12)
    tracer = provider.get_tracer("agent")
    with tracer.start_as_current_span("invoke_agent coder", attributes={"gen_ai.input.messages": body}):
        with handler.tool("list_files") as call:
            call.arguments = {"root": "src"}
            call.tool_result = {"files": [path]}
        with handler.tool("read_file") as call:
            call.arguments = {"path": path}
            call.tool_result = body
    return [path, body]


def _read_back(tmp_path, received: _Received | OtlpReceiver):
    bodies = received.bodies["/v1/traces"]
    assert bodies, "the receiver got nothing"
    wire = b"".join(bodies)
    out = tmp_path / "received.binpb"
    out.write_bytes(wire)
    return wire, {s.name: s for s in read_spans([str(out)])}


@pytest.mark.parametrize("protocol", ["http/protobuf", "grpc"])
def test_configure_ships_stripped_spans_over_otlp(
    protocol, http_receiver, grpc_receiver, tmp_path, monkeypatch
):
    endpoint, received = http_receiver if protocol == "http/protobuf" else grpc_receiver
    provider = op.configure(
        service_name="refund-agent",
        service_version="2.0.0",
        endpoint=endpoint,
        protocol=protocol,
        headers={"signoz-ingestion-key": "test-key"},
        set_global=False,
    )
    values = _emit(provider, monkeypatch)
    assert provider.force_flush(10_000)
    provider.shutdown()
    wire, spans = _read_back(tmp_path, received)
    for value in values:
        assert value.encode() not in wire
    read_file = spans["execute_tool read_file"]
    # util-genai spans carry no parameter schema: the argument is exported by position (#18 point 9)
    assert read_file.attributes[sc.arg_attr("arguments.0", sc.ARG_KIND_SUFFIX)] == sc.KIND_OBSERVED
    assert read_file.attributes[sc.arg_attr("arguments.0", sc.ARG_SOURCE_TOOL_SUFFIX)] == "list_files"
    assert read_file.resource[sc.SERVICE_VERSION] == "2.0.0"
    assert read_file.resource[sc.SERVICE_NAME] == "refund-agent"
    assert sc.GEN_AI_TOOL_CALL_ARGUMENTS not in read_file.attributes
    assert "gen_ai.input.messages" not in spans["invoke_agent coder"].attributes
    assert all(h.get("signoz-ingestion-key") == "test-key" for h in received.headers)


def test_standard_env_variables_drive_the_exporter(http_receiver, tmp_path, monkeypatch):
    endpoint, received = http_receiver
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-team=agents")
    monkeypatch.setenv("OTEL_SERVICE_NAME", "from-env")
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "service.version=9.9.9")
    monkeypatch.chdir(tmp_path)
    provider = op.configure(set_global=False)
    values = _emit(provider, monkeypatch)
    provider.shutdown()
    wire, spans = _read_back(tmp_path, received)
    assert not [v for v in values if v.encode() in wire]
    span = spans["execute_tool read_file"]
    assert span.resource[sc.SERVICE_NAME] == "from-env"
    assert span.resource[sc.SERVICE_VERSION] == "9.9.9"
    assert all(h.get("x-team") == "agents" for h in received.headers)
    assert not (tmp_path / "otel-provenance-spans.jsonl").exists()  # an endpoint means OTLP, not the file


@logs_sdk
def test_logs_over_otlp_http_are_stripped(http_receiver, monkeypatch):
    endpoint, received = http_receiver
    provider = configure_logs(exporter="otlp", endpoint=endpoint, set_global=False)
    logger = provider.get_logger("app")  # not an AI library's: the deny-list judges its records
    secret = secrets.token_hex(10)
    logger.emit(event_name="gen_ai.user.message", body={"content": secret})
    logger.emit(body={"note": "kept", "input.value": secret}, attributes={"output.value": secret, "n": 1})
    provider.shutdown()
    [wire] = received.bodies["/v1/logs"]
    assert secret.encode() not in wire
    request = logs_service_pb2.ExportLogsServiceRequest.FromString(wire)
    records = [r for rl in request.resource_logs for sl in rl.scope_logs for r in sl.log_records]
    assert len(records) == 1
    assert [kv.key for kv in records[0].body.kvlist_value.values] == ["note"]
    assert [kv.key for kv in records[0].attributes] == ["n"]
