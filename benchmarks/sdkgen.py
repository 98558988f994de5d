"""Short agent runs written by an independent writer: the official OpenTelemetry SDK and its OTLP JSON
file exporter (``opentelemetry-exporter-otlp-json-file``), for case 4's short-run rows.

:mod:`.tracegen` renders OTLP/JSON itself; this module does not write a byte of JSON. Spans are SDK
spans (``TracerProvider.get_tracer(...).start_span``) with the attributes ``@op.tool`` writes on a tool
span — the GenAI ones, the provenance of every argument (kind, source tool, field, span, projection,
digest), the budget counters, the retry number — and the official ``FileSpanExporter`` writes them,
one ``ExportTraceServiceRequest`` per line, 512 finished spans per line (a batch processor of a busy
agent), with 8 runs in flight so that a run's spans are spread over lines shared with other runs.

A run is a support agent's: an ``invoke_agent`` root span and 5–39 tool calls (6–40 spans), on one of
four routes (answer from the knowledge base, refund, escalate, and — rarely — a refund without the
entitlement check), padded to its length with further knowledge-base searches or order look-ups.
Everything is drawn from one seeded generator (ids too), so a seed always gives the same spans; the
time stamps are synthetic. ``write_jsonl`` returns the number of spans written.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider

from otel_provenance import semconv as sc

SERVICE = "support-agent"
SCOPE = "support-agent.tools"
BATCH_SPANS = 512
IN_FLIGHT = 8
MIN_SPANS, MAX_SPANS = 6, 40

# tool -> (side effect, data domain or None, argument names)
_TOOLS: dict[str, tuple[str, str | None, tuple[str, ...]]] = {
    "ticket.get": ("read", None, ("ticket_id",)),
    "customer.get": ("read", None, ("customer_id",)),
    "kb.search": ("read", None, ("query",)),
    "order.list": ("read", None, ("customer_id",)),
    "order.get": ("read", None, ("order_id",)),
    "entitlement.check": ("read", None, ("customer_id", "order_id")),
    "refund.create": ("write", "payments", ("order_id", "amount")),
    "reply.send": ("write", "email", ("ticket_id", "body")),
    "escalate": ("write", "support", ("ticket_id", "reason")),
    "ticket.update": ("write", "support", ("ticket_id", "status")),
}
# (weight, route, the step repeated to pad the run to its length)
_ROUTES = (
    (50, ("ticket.get", "customer.get", "kb.search", "reply.send", "ticket.update"), "kb.search"),
    (
        30,
        ("ticket.get", "customer.get", "order.list", "order.get", "entitlement.check", "refund.create",
         "reply.send", "ticket.update"),
        "order.get",
    ),
    (15, ("ticket.get", "customer.get", "kb.search", "escalate", "ticket.update"), "kb.search"),
    (
        5,
        ("ticket.get", "customer.get", "order.list", "order.get", "refund.create", "reply.send",
         "ticket.update"),
        "order.get",
    ),
)  # fmt: skip
_WEIGHTS = [r[0] for r in _ROUTES]
_FREE_TEXT = frozenset({"body", "reason", "query", "status"})  # the model's own words: assumed, allowed
_YIELDS = {  # what each tool's result holds that later calls take as arguments
    "ticket.get": ("ticket_id", "customer_id"),
    "order.list": ("order_id",),
    "order.get": ("order_id", "amount"),
}


class _SeededIds:
    """The SDK's ``IdGenerator`` interface, drawing from the run generator's seeded ``Random``."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def generate_span_id(self) -> int:
        return self.rng.getrandbits(64) | 1

    def generate_trace_id(self) -> int:
        return self.rng.getrandbits(128) | 1

    def is_trace_id_random(self) -> bool:
        return True


class _Batches(SpanProcessor):
    """A span processor that hands every ``BATCH_SPANS`` finished spans to the exporter, on the calling
    thread (the SDK's ``BatchSpanProcessor`` does the same on a timer thread; this keeps the lines
    deterministic)."""

    def __init__(self, exporter: Any) -> None:
        self.exporter, self.batch, self.count = exporter, [], 0

    def on_end(self, span: Any) -> None:
        self.batch.append(span)
        self.count += 1
        if len(self.batch) == BATCH_SPANS:
            self.force_flush()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        if self.batch:
            self.exporter.export(self.batch)
            self.batch = []
        return True

    def shutdown(self) -> None:
        self.force_flush()
        self.exporter.shutdown()


def _tool_steps(rng: random.Random) -> list[str]:
    """A route, one payment in ten retried, padded with its repeated step to the run's length."""
    _, route, pad = rng.choices(_ROUTES, _WEIGHTS)[0]
    steps = list(route)
    if "refund.create" in steps and rng.random() < 0.1:
        steps.insert(steps.index("refund.create"), "refund.create")
    calls = max(rng.randint(MIN_SPANS, MAX_SPANS) - 1, len(steps))  # one span is the root
    while len(steps) < calls:
        steps.insert(steps.index(pad) + 1, pad)
    return steps


def _digest(rng: random.Random) -> str:
    return hashlib.blake2b(rng.getrandbits(64).to_bytes(8, "big"), digest_size=16).hexdigest()


def _tool_attributes(
    rng: random.Random, tool: str, run_id: str, retry: int, sources: dict[str, tuple[str, str]]
) -> dict[str, Any]:
    """The attributes ``@op.tool`` writes on a tool span (argument provenance, budgets, behaviour)."""
    side_effect, domain, args = _TOOLS[tool]
    attrs: dict[str, Any] = {sc.DIGEST_KEY_ID: "key-2026-12"}
    allowed: list[str] = []
    for arg in args:
        if arg in _FREE_TEXT:
            attrs[sc.arg_attr(arg, sc.ARG_KIND_SUFFIX)] = sc.KIND_ASSUMED
            allowed.append(arg)
        else:
            source_tool, source_span = sources.get(arg, ("input", ""))
            attrs[sc.arg_attr(arg, sc.ARG_KIND_SUFFIX)] = sc.KIND_OBSERVED
            attrs[sc.arg_attr(arg, sc.ARG_SOURCE_TOOL_SUFFIX)] = source_tool
            attrs[sc.arg_attr(arg, sc.ARG_SOURCE_FIELD_SUFFIX)] = arg
            if source_span:
                attrs[sc.arg_attr(arg, sc.ARG_SOURCE_SPAN_ID_SUFFIX)] = source_span
            attrs[sc.arg_attr(arg, sc.ARG_PROJECTION_SUFFIX)] = "exact"
        attrs[sc.arg_attr(arg, sc.ARG_DIGEST_SUFFIX)] = _digest(rng)
    attrs[sc.GEN_AI_TOOL_CALL_ID] = f"call_{rng.getrandbits(64):016x}"
    attrs["gen_ai.tool.type"] = "function"
    attrs[sc.SIDE_EFFECT] = side_effect
    if domain is not None:
        attrs[sc.DATA_DOMAIN] = domain
    attrs[sc.RUN_ID] = run_id
    attrs[sc.RETRY_NUMBER] = retry
    attrs[sc.IDEMPOTENCY_PRESENT] = side_effect == "write"
    attrs[sc.BUDGET_ASSUMED] = 0  # the free-text arguments are allowed, so none is counted
    attrs[sc.BUDGET_INVENTED] = 0
    attrs[sc.BUDGET_UNTRUSTED] = 0
    if side_effect == "write":
        attrs[sc.BUDGET_MAX_ASSUMED] = 0
        attrs[sc.BUDGET_MAX_UNTRUSTED] = 0
    if allowed:
        attrs[sc.BUDGET_ALLOWED] = allowed
    attrs[sc.GEN_AI_TOOL_NAME] = tool
    attrs[sc.GEN_AI_OPERATION_NAME] = sc.EXECUTE_TOOL
    attrs[sc.TOOL_STATUS] = "ok"
    return attrs


def _run(tracer: Any, rng: random.Random, index: int, steps: list[str]) -> Iterator[None]:
    """Finishes one span of run ``index`` per step: its tool calls in order, then the root."""
    t = 1_764_000_000_000_000_000 + index * 1_000_000_000
    run_id = f"run-{index:08d}"
    root_attributes = {
        sc.GEN_AI_OPERATION_NAME: "invoke_agent",
        "gen_ai.agent.name": "support",
        sc.RUN_ID: run_id,
    }
    root = tracer.start_span("invoke_agent support", attributes=root_attributes, start_time=t)
    context = trace.set_span_in_context(root)
    sources: dict[str, tuple[str, str]] = {}
    for i, tool in enumerate(steps):
        retry = 1 if tool == "refund.create" and steps[i - 1] == "refund.create" else 0
        t += 1_000
        attributes = _tool_attributes(rng, tool, run_id, retry, sources)
        span = tracer.start_span(f"execute_tool {tool}", context=context, attributes=attributes, start_time=t)
        t += rng.randint(20_000, 900_000)
        span.end(end_time=t)
        span_id = format(span.get_span_context().span_id, "016x")
        for arg in _YIELDS.get(tool, ()):
            sources[arg] = (tool, span_id)
        yield
    root.end(end_time=t + 1_000)
    yield


def write_jsonl(
    path: Path, seed: int, release: str, *, spans: int | None = None, runs: int | None = None
) -> int:
    """Write an OTLP JSON Lines file with the official exporter; the number of spans written.
    Stops after the run that reaches ``spans`` spans, or after ``runs`` runs (whole runs only)."""
    from opentelemetry.exporter.otlp.json.file import FileSpanExporter  # the bench extra

    if (spans is None) == (runs is None):
        raise ValueError("give exactly one of spans= or runs=")
    rng = random.Random(seed)
    path.unlink(missing_ok=True)  # the exporter appends
    batches = _Batches(FileSpanExporter(path))
    provider = TracerProvider(
        resource=Resource({sc.SERVICE_NAME: SERVICE, sc.SERVICE_VERSION: release}),
        id_generator=_SeededIds(rng),
    )
    provider.add_span_processor(batches)
    tracer = provider.get_tracer(SCOPE, "1.0.0")
    started = planned = 0
    active: list[Iterator[None]] = []

    def want_more() -> bool:
        return started < runs if runs is not None else planned < (spans or 0)

    while True:
        while len(active) < IN_FLIGHT and want_more():
            steps = _tool_steps(rng)
            active.append(_run(tracer, rng, started, steps))
            started += 1
            planned += len(steps) + 1
        if not active:
            break
        i = rng.randrange(len(active))
        for _ in range(rng.randint(1, 3)):
            if next(active[i], StopIteration) is StopIteration:
                active[i] = active[-1]
                active.pop()
                break
    provider.shutdown()
    return batches.count
