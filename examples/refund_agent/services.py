"""The refund agent's five backend services, each its own process speaking JSON over HTTP on loopback.

    python services.py NAME --out DIR [--ledger FILE]

starts service NAME (policy, orders, fraud, payment, notification) on a free loopback port, prints
``READY <port>`` on stdout, and serves until stdin closes or it is terminated. Each request is a SERVER
span continued from the caller's W3C ``traceparent`` header, so one agent run is one trace across all
processes. Spans leave through the stripping processor into ``DIR/service-NAME.jsonl``; the request
duration histogram (``http.server.request.duration``) into ``DIR/metrics/service-NAME.jsonl``.

The services carry no ``service.version``: the release under test is the agent's.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from opentelemetry import metrics, propagate, trace
from opentelemetry.trace import SpanKind, Status, StatusCode
from telemetry import meter_provider, tracer_provider

# How long the payment processor takes the first time it sees an order (a cold cache on its side).
PAYMENT_COLD_START_S = 0.25


def _digest(*parts: str) -> str:
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:10].upper()


class _State:
    """In-memory books of the fake backends; the payment ledger is what a duplicate refund corrupts.
    The payment service also keeps its own log of every refund it books (``--ledger FILE``, one
    ``<order id> <refund id>`` line each): the evidence the demo counts. It is not a trace file, so it
    is kept out of ``--out``, which a gate may be given whole."""

    def __init__(self) -> None:
        self.ledger_file: Path | None = None
        self.lock = threading.Lock()
        self.refunds: dict[str, list[str]] = {}
        self.by_idempotency_key: dict[str, str] = {}
        self.seen_orders: set[str] = set()


STATE = _State()


def policy(body: dict) -> tuple[dict, dict]:
    return {"policy_id": "POL-RET-30", "max_days": 30, "refundable": True}, {"agent.data_domain": "policy"}


def orders(body: dict) -> tuple[dict, dict]:
    order_id = str(body["order_id"])
    n = int(_digest(order_id), 16)
    return (
        {
            "order_id": order_id,
            "customer_id": "CUST-" + _digest("customer", order_id)[:6],
            "amount_cents": 1000 + n % 9000,
            "currency": "EUR",
            "days_since_delivery": 1 + n % 20,
        },
        {"agent.data_domain": "orders"},
    )


def fraud(body: dict) -> tuple[dict, dict]:
    return (
        {"risk": "low", "check_id": "FRD-" + _digest("fraud", str(body.get("order_id")))},
        {"agent.data_domain": "risk"},
    )


def payment(body: dict) -> tuple[dict, dict]:
    order_id = str(body["order_id"])
    key = body.get("idempotency_key")
    with STATE.lock:
        cold = order_id not in STATE.seen_orders
        STATE.seen_orders.add(order_id)
    if cold:
        time.sleep(PAYMENT_COLD_START_S)
    with STATE.lock:
        if key and key in STATE.by_idempotency_key:
            refund_id = STATE.by_idempotency_key[key]
        else:
            refund_id = f"RF-{order_id}-{len(STATE.refunds.get(order_id, [])) + 1}"
            STATE.refunds.setdefault(order_id, []).append(refund_id)
            if STATE.ledger_file is not None:
                with STATE.ledger_file.open("a") as ledger:
                    ledger.write(f"{order_id} {refund_id}\n")
            if key:
                STATE.by_idempotency_key[key] = refund_id
    attrs = {
        "agent.data_domain": "payments",
        "agent.side_effect": "write",
        "agent.idempotency.present": bool(key),
    }
    return {"refund_id": refund_id, "status": "refunded"}, attrs


def notification(body: dict) -> tuple[dict, dict]:
    return (
        {"notification_id": "NTF-" + _digest("notify", str(body.get("customer_id")), str(time.time_ns()))},
        {"agent.data_domain": "notifications", "agent.side_effect": "write"},
    )


HANDLERS = {
    "policy": policy,
    "orders": orders,
    "fraud": fraud,
    "payment": payment,
    "notification": notification,
}


def make_handler(name: str, tracer: trace.Tracer, meter: metrics.Meter) -> type[BaseHTTPRequestHandler]:
    handle = HANDLERS[name]
    duration = meter.create_histogram(
        "http.server.request.duration", unit="s", description="Duration of HTTP server requests."
    )

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # health check
            self._reply(200, {"ok": True})

        def do_POST(self) -> None:
            ctx = propagate.extract(dict(self.headers))
            length = int(self.headers.get("Content-Length") or 0)
            started = time.perf_counter()
            self._status = 200
            try:
                self._serve(ctx, length)
            finally:
                duration.record(
                    time.perf_counter() - started,
                    {
                        "http.request.method": "POST",
                        "http.route": self.path,
                        "http.response.status_code": self._status,
                    },
                )

        def _serve(self, ctx, length: int) -> None:
            with tracer.start_as_current_span(
                f"{name} {self.path}", context=ctx, kind=SpanKind.SERVER, record_exception=False
            ) as span:
                span.set_attribute("http.request.method", "POST")
                span.set_attribute("url.path", self.path)
                try:
                    result, attrs = handle(json.loads(self.rfile.read(length) or b"{}"))
                except Exception as exc:
                    span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
                    span.set_attribute("error.type", type(exc).__name__)
                    self._status = 500
                    self._reply(500, {"error": type(exc).__name__})
                    return
                for key, value in attrs.items():
                    span.set_attribute(key, value)
                span.set_attribute("http.response.status_code", 200)
                self._reply(200, result)

        def _reply(self, status: int, payload: dict) -> None:
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout): the work above was still done

        def log_message(self, format: str, *args: object) -> None:  # keep stdout for READY only
            pass

    return Handler


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("name", choices=sorted(HANDLERS))
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--ledger", type=Path, help="payment: where to log every refund booked")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.name == "payment" and args.ledger is not None:
        args.ledger.parent.mkdir(parents=True, exist_ok=True)
        STATE.ledger_file = args.ledger
    provider = tracer_provider(
        f"refund-{args.name}", None, args.out / f"service-{args.name}.jsonl", set_global=True
    )
    tracer = provider.get_tracer("refund_agent.services")
    meters = meter_provider(provider.resource, args.out / "metrics" / f"service-{args.name}.jsonl")
    meter = meters.get_meter("refund_agent.services")
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(args.name, tracer, meter))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"READY {server.server_address[1]}", flush=True)
    try:
        sys.stdin.read()  # the parent closes our stdin to stop us
    finally:
        server.shutdown()
        provider.shutdown()
        meters.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
