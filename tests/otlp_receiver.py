"""A real OTLP/HTTP protobuf receiver on loopback, shared by the tests that export over the wire.

It answers ``POST`` on the signal paths it was given with the official response message (404 for any
other path or a body that is not ``application/x-protobuf``) and keeps each request's body, gzip
undone, and its headers (names in lower case)."""

from __future__ import annotations

import gzip
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

RESPONSES = {
    "/v1/traces": trace_service_pb2.ExportTraceServiceResponse,
    "/v1/logs": logs_service_pb2.ExportLogsServiceResponse,
    "/v1/metrics": metrics_service_pb2.ExportMetricsServiceResponse,
}


class OtlpReceiver:
    """``with OtlpReceiver("/v1/traces") as receiver:`` export to ``receiver.url``, then read
    ``receiver.bodies["/v1/traces"]``."""

    def __init__(self, *paths: str) -> None:
        self.bodies: dict[str, list[bytes]] = {path: [] for path in paths or ("/v1/traces",)}
        self.headers: list[dict[str, str]] = []
        self.lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                if (
                    self.path not in receiver.bodies
                    or self.headers["Content-Type"] != "application/x-protobuf"
                ):
                    self.send_response(404)
                    self.end_headers()
                    return
                with receiver.lock:
                    receiver.bodies[self.path].append(body)
                    receiver.headers.append({k.lower(): v for k, v in self.headers.items()})
                signal = next(s for s in RESPONSES if self.path.endswith(s))  # a proxy path may come first
                response = RESPONSES[signal]().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(response)))
                self.end_headers()
                self.wfile.write(response)

            def log_message(self, *args: object) -> None:
                pass

        return Handler

    def __enter__(self) -> OtlpReceiver:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
