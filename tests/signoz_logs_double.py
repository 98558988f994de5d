"""SigNoz's logs, for the tests: the traces double (``signoz_double.SigNozDouble``) behind a front that
adds OTLP/HTTP log ingest and raw ``logs`` queries — composition, so the traces double stays as it is.

The front answers ``POST /v1/logs`` and ``POST /api/v5/query_range`` whose one query has
``signal: logs``; every other request (trace ingest, trace queries, version, keys, health) is passed
unchanged to the inner traces double over HTTP, faults and all.

Ingest follows ``SigNoz/signoz-otel-collector`` ``exporter/clickhouselogsexporter/exporter.go``
(``attributesToMap``, the producer loop): log attributes go to a number map (ints and doubles), a
bool map, and a string map for everything else by pdata ``AsString`` (an array as its JSON text);
every resource attribute is a string; ``trace_id`` / ``span_id`` are hex or ``""``; a zero timestamp
becomes the observed one; the record's ``event_name`` is not stored (no such column in v0.129).

Queries follow ``SigNoz/signoz`` v0.129 ``pkg/telemetrylogs/statement_builder.go``
(``buildListQuery``: ``timestamp`` and ``id`` always, and without ``selectFields`` every default
column — ``trace_id``, ``span_id``, ``trace_flags``, ``severity_text``, ``severity_number``,
``scope_name``, ``scope_version``, ``body``, the three attribute maps, ``resources_string``,
``scope_string``; the limit 100 when none is given) and ``pkg/telemetrylogs/const.go`` (the
intrinsic fields a filter may name without a context). Strict decoding, the filter grammar, auth by
``SIGNOZ-API-KEY`` and the ``[start, end)`` window are the traces double's (``parse_filter``,
``evaluate``); numbers in rows are rounded as SigNoz renders them (``round_like_signoz``).
``requestType: "scalar"`` — a dashboard's table panel — is answered by ``signoz_scalar``, and a
request's dashboard ``variables`` fill a filter's ``IN $name`` (``resolve_variables``).
"""

from __future__ import annotations

import gzip
import http.client
import itertools
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)

from signoz_collector import as_string
from signoz_double import (
    Key,
    SigNozDouble,
    evaluate,
    parse_filter,
    parse_key,
    resolve_variables,
    rfc3339_nano,
    round_like_signoz,
)
from signoz_scalar import ScalarRefused, scalar_result

__all__ = ["SigNozLogsDouble", "StoredLog"]

MAX_LIMIT = 10_000
DEFAULT_LIMIT = 100
# pkg/telemetrylogs/const.go IntrinsicFields, plus the columns every row has
INTRINSIC = {
    "body",
    "trace_id",
    "span_id",
    "trace_flags",
    "severity_text",
    "severity_number",
    "scope_name",
    "scope_version",
    "timestamp",
    "id",
}
_TOP_FIELDS = {
    "schemaVersion",
    "start",
    "end",
    "requestType",
    "compositeQuery",
    "variables",
    "noCache",
    "formatOptions",
}
_SPEC_FIELDS = {
    "name", "stepInterval", "signal", "source", "aggregations", "disabled", "filter", "groupBy", "order",
    "selectFields", "limit", "limitBy", "offset", "cursor", "having", "secondaryAggregations", "functions",
    "legend",
}  # fmt: skip
_KEY_FIELDS = {"name", "description", "unit", "signal", "fieldContext", "fieldDataType"}


@dataclass
class StoredLog:
    id: str
    timestamp_ns: int
    trace_id: str
    span_id: str
    trace_flags: int
    severity_text: str
    severity_number: int
    body: str
    scope_name: str
    scope_version: str
    strings: dict[str, str] = field(default_factory=dict)
    numbers: dict[str, float] = field(default_factory=dict)
    bools: dict[str, bool] = field(default_factory=dict)
    resource: dict[str, str] = field(default_factory=dict)


class _Refused(Exception):
    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def _strict(obj: Any, allowed: set[str], where: str) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise _Refused(f"{where} must be an object")
    unknown = sorted(set(obj) - allowed)
    if unknown:
        raise _Refused(f"unknown field {json.dumps(unknown[0])} in {where}")
    return obj


class SigNozLogsDouble:
    """``with SigNozLogsDouble() as double:`` — ``double.url`` is SigNoz's base URL (API and OTLP),
    ``double.logs`` what was ingested, ``double.inner`` the traces double behind it."""

    def __init__(self, inner: SigNozDouble | None = None, **inner_options: Any) -> None:
        self.inner = inner if inner is not None else SigNozDouble(**inner_options)
        self.logs: list[StoredLog] = []
        self.catalogue: set[tuple[str, str]] = set()  # (name, context)
        self.queries: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def api_key(self) -> str:
        return self.inner.api_key

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def otlp_url(self) -> str:
        return self.url + "/v1/traces"

    def start(self) -> SigNozLogsDouble:
        self.inner.start()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, args=(0.01,), daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        self.inner.stop()

    def __enter__(self) -> SigNozLogsDouble:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- ingest ------------------------------------------------------------------------------------

    def ingest(self, request: ExportLogsServiceRequest) -> None:
        with self._lock:
            for resource_logs in request.resource_logs:
                resource = {kv.key: as_string(kv.value) for kv in resource_logs.resource.attributes}
                self.catalogue.update((k, "resource") for k in resource)
                for scope_logs in resource_logs.scope_logs:
                    for record in scope_logs.log_records:
                        stored = self._store(record, resource, scope_logs.scope)
                        self.logs.append(stored)

    def _store(self, record: Any, resource: dict[str, str], scope: Any) -> StoredLog:
        ts = record.time_unix_nano or record.observed_time_unix_nano
        stored = StoredLog(
            id=f"{ts:020d}-{next(self._ids):08d}",  # a ksuid sorts by time too
            timestamp_ns=ts,
            trace_id=record.trace_id.hex(),
            span_id=record.span_id.hex(),
            trace_flags=record.flags,
            severity_text=record.severity_text,
            severity_number=record.severity_number,
            body=as_string(record.body) if record.HasField("body") else "",
            scope_name=scope.name,
            scope_version=scope.version,
            resource=dict(resource),
        )
        for kv in record.attributes:  # attributesToMap(record.Attributes(), false)
            kind = kv.value.WhichOneof("value")
            if kind in ("int_value", "double_value"):
                stored.numbers[kv.key] = float(getattr(kv.value, kind))
            elif kind == "bool_value":
                stored.bools[kv.key] = kv.value.bool_value
            else:
                stored.strings[kv.key] = as_string(kv.value)
            self.catalogue.add((kv.key, "attribute"))
        return stored

    # --- query_range, signal logs ------------------------------------------------------------------

    def query_logs(self, body: Any) -> dict[str, Any]:
        top = _strict(body, _TOP_FIELDS, "query range request")
        for name in ("start", "end"):
            if not isinstance(top.get(name), int) or isinstance(top.get(name), bool):
                raise _Refused(f"{name} must be epoch milliseconds")
        request_type = top.get("requestType")
        if request_type not in ("raw", "scalar"):
            raise _Refused(f"the double answers requestType 'raw' and 'scalar' only, got {request_type!r}")
        variables = top.get("variables") or {}
        for name, item in variables.items():
            if not isinstance(_strict(item, {"type", "value"}, f"variable {name}").get("type"), str):
                raise _Refused(f"variable {name} has no type")
        queries = _strict(top.get("compositeQuery"), {"queries"}, "composite query").get("queries")
        if not isinstance(queries, list) or len(queries) != 1:
            raise _Refused("the double answers exactly one query per request")
        spec = _strict(
            _strict(queries[0], {"type", "spec"}, "query envelope").get("spec"), _SPEC_FIELDS, "query spec"
        )
        limit = spec.get("limit") or DEFAULT_LIMIT
        if limit > MAX_LIMIT:
            raise _Refused(f"limit exceeds maximum allowed value of {MAX_LIMIT}")
        order = []
        for item in spec.get("order") or []:
            _strict(item, {"key", "direction"}, "order")
            key = _strict(item.get("key"), _KEY_FIELDS, "order key")
            if str(item.get("direction", "")).lower() not in ("asc", "desc"):
                raise _Refused("invalid direction for order by clause")
            order.append(
                (Key(key["name"], key.get("fieldContext"), key.get("fieldDataType")), item["direction"])
            )
        tree = resolve_variables(parse_filter((spec.get("filter") or {}).get("expression", "")), variables)
        missing = [k.name for k in (tree.all_keys() if tree else ()) if not self._catalogued(k)]
        if missing and not self.inner.null_for_absent:
            raise _Refused(f"Found {len(missing)} errors while parsing the search expression.")
        with self._lock:
            matched = [
                log
                for log in self.logs
                if top["start"] * 1_000_000 <= log.timestamp_ns < top["end"] * 1_000_000
                and (tree is None or evaluate(tree, lambda k, log=log: _lookup(log, k)))
            ]
        if request_type == "scalar":
            try:
                result = scalar_result(spec, matched, _lookup, parse_key)
            except ScalarRefused as exc:
                raise _Refused(str(exc)) from None
            meta = {"rowsScanned": len(self.logs), "bytesScanned": 0, "durationMs": 1}
            answer = {"type": "scalar", "meta": meta, "data": {"results": [result]}}
            return {"status": "success", "data": answer}
        for key, direction in reversed(order):
            matched.sort(key=lambda log, k=key: _lookup(log, k), reverse=direction.lower() == "desc")
        offset = spec.get("offset") or 0
        page = matched[offset : offset + limit]
        rows = [{"timestamp": rfc3339_nano(log.timestamp_ns), "data": _row(log)} for log in page]
        return {
            "status": "success",
            "data": {
                "type": "raw",
                "meta": {"rowsScanned": len(self.logs), "bytesScanned": 0, "durationMs": 1},
                "data": {
                    "results": [{"queryName": spec.get("name", "A"), "nextCursor": "", "rows": rows or None}]
                },
            },
        }

    def _catalogued(self, key: Key) -> bool:
        if key.context in (None, "log") and key.name in INTRINSIC:
            return True
        contexts = {"attribute", "tag"} if key.context in ("attribute", "tag") else {key.context}
        return any(n == key.name and (key.context is None or c in contexts) for n, c in self.catalogue)

    # --- HTTP --------------------------------------------------------------------------------------

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        double = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _send(
                self, status: int, body: bytes, content_type: str, extra: dict[str, str] | None = None
            ) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                for name, value in (extra or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            def _error(self, status: int, message: str) -> None:
                code = {400: "invalid_input", 401: "unauthenticated"}.get(status, "internal")
                body = {
                    "status": "error",
                    "error": {"type": code.replace("_", "-"), "code": code, "message": message},
                }
                self._send(status, json.dumps(body).encode(), "application/json")

            def _body(self) -> bytes:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                return gzip.decompress(raw) if self.headers.get("Content-Encoding") == "gzip" else raw

            def do_POST(self) -> None:
                path = urlsplit(self.path).path
                body = self._body()
                if path == "/v1/logs":
                    request = ExportLogsServiceRequest()
                    try:
                        request.ParseFromString(body)
                    except Exception as exc:  # malformed OTLP is a 400, as in the collector
                        self._error(400, f"bad OTLP payload: {type(exc).__name__}")
                        return
                    double.ingest(request)
                    self._send(200, ExportLogsServiceResponse().SerializeToString(), "application/x-protobuf")
                    return
                if path == "/api/v5/query_range":
                    try:
                        parsed = json.loads(body)
                    except ValueError:
                        parsed = None
                    spec = _first_spec(parsed)
                    if spec is not None and spec.get("signal") == "logs":
                        double.queries.append(parsed)
                        if (
                            self.headers.get("Authorization")
                            or self.headers.get("SIGNOZ-API-KEY") != double.api_key
                        ):
                            self._error(401, "unauthenticated")
                            return
                        try:
                            self._send(
                                200, json.dumps(double.query_logs(parsed)).encode(), "application/json"
                            )
                        except _Refused as exc:
                            self._error(exc.status, str(exc))
                        return
                self._forward("POST", body)

            def do_GET(self) -> None:
                self._forward("GET", None)

            def _forward(self, method: str, body: bytes | None) -> None:
                """The traces double answers everything that is not logs, as it would on its own."""
                host, port = urlsplit(double.inner.url).netloc.split(":")
                connection = http.client.HTTPConnection(host, int(port), timeout=30)
                headers = {
                    k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-encoding")
                }
                if body is not None:
                    headers["Content-Length"] = str(len(body))
                try:
                    connection.request(method, self.path, body=body, headers=headers)
                    answer = connection.getresponse()
                    data = answer.read()
                    extra = {k: v for k, v in answer.getheaders() if k.lower() == "retry-after"}
                    self._send(
                        answer.status, data, answer.getheader("Content-Type") or "application/json", extra
                    )
                finally:
                    connection.close()

        return Handler


def _first_spec(body: Any) -> dict[str, Any] | None:
    try:
        spec = body["compositeQuery"]["queries"][0]["spec"]
    except (KeyError, IndexError, TypeError):
        return None
    return spec if isinstance(spec, dict) else None


def _lookup(log: StoredLog, key: Key) -> Any:
    if key.context in (None, "log") and key.name in INTRINSIC:
        if key.name == "timestamp":
            return log.timestamp_ns
        return getattr(log, key.name)
    if key.context == "resource":
        return log.resource.get(key.name)
    for values in (log.strings, log.numbers, log.bools):
        if key.name in values and key.context in (None, "attribute", "tag"):
            return values[key.name]
    return log.resource.get(key.name) if key.context is None else None


def _row(log: StoredLog) -> dict[str, Any]:
    return {
        "timestamp": rfc3339_nano(log.timestamp_ns),
        "id": log.id,
        "trace_id": log.trace_id,
        "span_id": log.span_id,
        "trace_flags": log.trace_flags,
        "severity_text": log.severity_text,
        "severity_number": log.severity_number,
        "scope_name": log.scope_name,
        "scope_version": log.scope_version,
        "body": log.body,
        "attributes_string": dict(log.strings),
        "attributes_number": {k: round_like_signoz(v) for k, v in log.numbers.items()},
        "attributes_bool": dict(log.bools),
        "resources_string": dict(log.resource),
        "scope_string": {},
    }
