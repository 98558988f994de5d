"""Worked example for trajectory contracts: a ticket-triage agent traced with the real OTel SDK.

Writes three OTLP JSON Lines files (the official OTLP JSON file exporter's format, written by this
package's ``JsonLinesSpanExporter``, which gives the same bytes) into OUT_DIR:

- ``approved.jsonl`` — release ``v1``, 25 runs a human approved: 20 follow the usual route
  (fetch → classify → check permissions → update ticket → notify customer) and 5 escalate
  (they also page on-call and escalate the ticket before updating it);
- ``release-v2.jsonl`` — 5 runs that skip the permission check and update the ticket with a
  priority the model assumed (no earlier tool returned it);
- ``release-v3.jsonl`` — 5 runs that follow the approved route, but whose write spans no longer
  say whether an idempotency key was sent (``agent.idempotency.present`` is missing).

Then::

    otel-provenance mine --approved OUT_DIR/approved.jsonl -o OUT_DIR/contract.yaml --name ticket-triage
    otel-provenance routes list --contract OUT_DIR/contract.yaml
    otel-provenance gate check --contract OUT_DIR/contract.yaml --release v2 OUT_DIR/release-v2.jsonl  # 2
    otel-provenance gate check --contract OUT_DIR/contract.yaml --release v3 OUT_DIR/release-v3.jsonl  # 3

Spans carry the attributes ``op.tool`` would set (tool name, side effect, retry number, idempotency,
argument kinds); they are written by hand here so the example shows exactly what the gate reads.
Times come from a counter and ids from a seeded generator, so the files are the same on every run.
Only the standard library and the OpenTelemetry SDK are used.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.trace import Span, Tracer, set_span_in_context

from otel_provenance import JsonLinesSpanExporter


class SeededIds(IdGenerator):
    """Deterministic trace and span ids (the SDK's default draws them at random)."""

    def __init__(self, seed: str) -> None:
        self._random = random.Random(seed)

    def generate_span_id(self) -> int:
        return self._random.getrandbits(64) or 1

    def generate_trace_id(self) -> int:
        return self._random.getrandbits(128) or 1


class Clock:
    """Integer nanoseconds that only move forward: each step ends before the next one starts."""

    def __init__(self) -> None:
        self.now = 1_767_225_600_000_000_000  # 2026-01-01T00:00:00Z

    def tick(self, ms: int = 5) -> int:
        self.now += ms * 1_000_000
        return self.now


def tool_step(
    tracer: Tracer,
    parent: Span,
    clock: Clock,
    name: str,
    side_effect: str,
    args: dict[str, str],
    *,
    idempotency: bool | None = None,
    retry: int = 0,
) -> None:
    attributes: dict[str, str | bool | int] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.type": "function",
        "agent.side_effect": side_effect,
        "agent.retry.number": retry,
        "agent.tool.status": "ok",
    }
    if side_effect == "write":
        attributes["agent.data_domain"] = "support"
    if idempotency is not None:
        attributes["agent.idempotency.present"] = idempotency
    for arg, kind in args.items():
        attributes[f"agent.arg.{arg}.kind"] = kind
    span = tracer.start_span(
        f"execute_tool {name}",
        context=set_span_in_context(parent),
        attributes=attributes,
        start_time=clock.tick(),
    )
    span.end(end_time=clock.tick(20))


def triage_run(
    tracer: Tracer, clock: Clock, *, route: str = "usual", idempotency: bool | None = True
) -> None:
    root = tracer.start_span(
        "invoke_agent ticket-triage",
        start_time=clock.tick(),
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "ticket-triage"},
    )
    chat = tracer.start_span(
        "chat gpt-4o-mini",
        context=set_span_in_context(root),
        start_time=clock.tick(),
        attributes={"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 812},
    )
    chat.end(end_time=clock.tick(40))
    tool_step(tracer, root, clock, "ticket.fetch", "read", {"ticket_id": "observed"})
    tool_step(tracer, root, clock, "ticket.classify", "read", {"ticket_id": "observed"})
    if route != "skips_check":
        tool_step(tracer, root, clock, "permissions.check", "read", {"user_id": "observed"})
    if route == "escalates":
        tool_step(
            tracer,
            root,
            clock,
            "ticket.escalate",
            "write",
            {"ticket_id": "observed"},
            idempotency=idempotency,
        )
        tool_step(tracer, root, clock, "oncall.page", "write", {"team": "observed"}, idempotency=idempotency)
    update_args = {"ticket_id": "observed", "status": "observed"}
    if route == "skips_check":
        update_args["priority"] = "assumed"
    tool_step(tracer, root, clock, "ticket.update", "write", update_args, idempotency=idempotency)
    tool_step(
        tracer, root, clock, "customer.notify", "write", {"ticket_id": "observed"}, idempotency=idempotency
    )
    root.end(end_time=clock.tick())


def write_release(path: Path, release: str, runs: list[dict]) -> None:
    exporter = JsonLinesSpanExporter(path)
    provider = TracerProvider(
        resource=Resource.create({"service.name": "ticket-triage", "service.version": release}),
        id_generator=SeededIds(f"{path.name}/{release}"),
        shutdown_on_exit=False,
    )
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("examples.contracts.triage_agent")
    clock = Clock()
    for options in runs:
        triage_run(tracer, clock, **options)
    provider.shutdown()


def main(out_dir: str) -> None:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name in ("approved.jsonl", "release-v2.jsonl", "release-v3.jsonl"):
        (out / name).unlink(missing_ok=True)
    write_release(out / "approved.jsonl", "v1", [{"route": "usual"}] * 20 + [{"route": "escalates"}] * 5)
    write_release(out / "release-v2.jsonl", "v2", [{"route": "skips_check"}] * 5)
    write_release(out / "release-v3.jsonl", "v3", [{"route": "usual", "idempotency": None}] * 5)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: triage_agent.py OUT_DIR")
    main(sys.argv[1])
