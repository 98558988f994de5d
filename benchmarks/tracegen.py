"""Deterministic agent traces for the offline benchmarks: OTLP JSON Lines files or in-memory runs.

One seeded model of a refund agent produces every run: a root span, LLM ``chat`` spans, tool spans
with this package's provenance vocabulary, and an HTTP client span under the payment call. Runs
have 10–50 spans. The route is one of four templates (the approved route 80 %, one without the
fraud check 10 %, one with a retried payment 7 %, one without policy and fraud checks 3 %) with one
knowledge-base search, padded to its length with LLM chat turns, so the number of distinct routes
stays bounded (4 × 41 lengths) however many runs are drawn — as in a real agent, where route
variety saturates.

The file writer renders OTLP/JSON directly (no SDK, no ``json.dumps`` per span) and interleaves
several runs in flight, flushing one ``ExportTraceServiceRequest`` line per 512 finished spans, the
way a ``BatchSpanProcessor`` of a busy agent does: a run's spans are spread over consecutive lines
shared with other runs, children end (and are exported) before their parents.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from otel_provenance import semconv as sc

SERVICE = "refund-agent"
SCOPE = ("otel_provenance", "0.1.0")
BATCH_SPANS = 512
IN_FLIGHT = 8
MIN_SPANS, MAX_SPANS = 10, 50

# (tool name, side effect, argument names) of the approved route, in order.
_CORE = (
    ("policy.retrieve", "read", ("policy_id",)),
    ("order.lookup", "read", ("order_id",)),
    ("fraud.check", "read", ("order_id", "customer_id")),
    ("refund.calculate", "none", ("order_id", "amount")),
    ("payment.refund", "write", ("order_id", "amount")),
    ("customer.notify", "write", ("customer_id", "template")),
)
_SEARCH = ("kb.search", "read", ("query",))
# (weight, template name, core steps kept, payment attempts)
_TEMPLATES = (
    (80, "approved", frozenset(range(6)), 1),
    (10, "no-fraud-check", frozenset({0, 1, 3, 4, 5}), 1),
    (7, "payment-retry", frozenset(range(6)), 2),
    (3, "v2", frozenset({1, 3, 4, 5}), 2),
)
_WEIGHTS = [t[0] for t in _TEMPLATES]


class SpanRecord(NamedTuple):
    trace_id: str
    span_id: str
    parent_id: str  # "" for the root
    name: str
    kind: int  # OTLP numbering: 1 internal, 3 client
    start_ns: int
    end_ns: int
    attributes: tuple[tuple[str, Any], ...]


def run_records(
    rng: random.Random, index: int, release: str, span_range: tuple[int, int] = (MIN_SPANS, MAX_SPANS)
) -> list[SpanRecord]:
    """The spans of run ``index`` in the order they end (children before their parent)."""
    trace_id = f"{rng.getrandbits(128) | 1:032x}"
    run_id = f"run-{index:08d}"

    def new_id() -> str:
        return f"{rng.getrandbits(64) | 1:016x}"

    template = rng.choices(_TEMPLATES, _WEIGHTS)[0]
    _, _, kept, payment_attempts = template
    total = rng.randint(*span_range)
    steps: list[tuple[str, str, tuple[str, ...]] | None] = []  # None: an LLM chat turn
    for i, step in enumerate(_CORE):
        if i in kept:
            steps.extend([step] * (payment_attempts if step[0] == "payment.refund" else 1))
    steps.insert(2, _SEARCH)
    while 1 + len(steps) + payment_attempts < total:  # pad with chat turns, deterministically
        steps.insert(len(steps) % 5, None)
    root_id = new_id()
    t0 = 1_764_000_000_000_000_000 + index * 1_000_000_000
    t = t0 + 1_000
    out: list[SpanRecord] = []
    attempt = 0
    previous_tool: tuple[str, str] | None = None
    for step in steps:
        span_id = new_id()
        start, end = t, t + 50_000
        t = end + 1_000
        if step is None:
            attrs: tuple[tuple[str, Any], ...] = (
                (sc.GEN_AI_OPERATION_NAME, "chat"),
                ("gen_ai.request.model", "gpt-4o"),
                ("gen_ai.usage.input_tokens", 812),
                (sc.RUN_ID, run_id),
            )
            out.append(SpanRecord(trace_id, span_id, root_id, "chat gpt-4o", 1, start, end, attrs))
            continue
        tool, side_effect, args = step
        retry = 0
        if tool == "payment.refund":
            retry, attempt = attempt, attempt + 1
        attr_list: list[tuple[str, Any]] = [
            (sc.GEN_AI_OPERATION_NAME, sc.EXECUTE_TOOL),
            (sc.GEN_AI_TOOL_NAME, tool),
            (sc.GEN_AI_TOOL_CALL_ID, f"call_{rng.getrandbits(64):016x}"),
            (sc.SIDE_EFFECT, side_effect),
            (sc.TOOL_STATUS, "ok"),
            (sc.RETRY_NUMBER, retry),
            (sc.RUN_ID, run_id),
            (sc.BUDGET_ASSUMED, 0),
        ]
        for arg in args:
            if previous_tool is not None:
                attr_list.append((sc.arg_attr(arg, sc.ARG_KIND_SUFFIX), sc.KIND_OBSERVED))
                attr_list.append((sc.arg_attr(arg, sc.ARG_SOURCE_SPAN_ID_SUFFIX), previous_tool[1]))
            else:
                attr_list.append((sc.arg_attr(arg, sc.ARG_KIND_SUFFIX), sc.KIND_ASSUMED))
        if side_effect == "write":
            attr_list.append((sc.IDEMPOTENCY_PRESENT, tool != "payment.refund" or payment_attempts == 1))
        if tool == "payment.refund":
            http_start = start + 5_000
            out.append(
                SpanRecord(
                    trace_id,
                    new_id(),
                    span_id,
                    "POST /payments",
                    3,
                    http_start,
                    end - 5_000,
                    (
                        ("http.request.method", "POST"),
                        ("http.response.status_code", 200),
                        (sc.RUN_ID, run_id),
                    ),
                )
            )
        name = f"execute_tool {tool}"
        out.append(SpanRecord(trace_id, span_id, root_id, name, 1, start, end, tuple(attr_list)))
        previous_tool = (tool, span_id)
    root_attrs = (
        (sc.GEN_AI_OPERATION_NAME, "invoke_agent"),
        ("gen_ai.agent.name", "refund"),
        (sc.RUN_ID, run_id),
    )
    out.append(SpanRecord(trace_id, root_id, "", "invoke_agent refund", 1, t0, t + 1_000, root_attrs))
    return out


# --- OTLP JSON Lines ------------------------------------------------------------------------------

_PREFIX_CACHE: dict[str, str] = {}


def _attribute_json(key: str, value: Any) -> str:
    prefix = _PREFIX_CACHE.get(key)
    if prefix is None:
        prefix = _PREFIX_CACHE[key] = '{"key":"' + key + '","value":{'
    t = type(value)
    if t is str:
        return f'{prefix}"stringValue":"{value}"}}}}'
    if t is bool:
        return f'{prefix}"boolValue":{"true" if value else "false"}}}}}'
    return f'{prefix}"intValue":"{value}"}}}}'


def span_json(rec: SpanRecord) -> str:
    parent = f'"parentSpanId":"{rec.parent_id}",' if rec.parent_id else ""
    attrs = ",".join([_attribute_json(k, v) for k, v in rec.attributes])
    return (
        f'{{"traceId":"{rec.trace_id}","spanId":"{rec.span_id}",{parent}"name":"{rec.name}",'
        f'"kind":{rec.kind},"startTimeUnixNano":"{rec.start_ns}","endTimeUnixNano":"{rec.end_ns}",'
        f'"attributes":[{attrs}],"status":{{}}}}'
    )


def _line_head(release: str) -> str:
    resource = ",".join(
        [_attribute_json(sc.SERVICE_NAME, SERVICE), _attribute_json(sc.SERVICE_VERSION, release)]
    )
    return (
        f'{{"resourceSpans":[{{"resource":{{"attributes":[{resource}]}},"scopeSpans":[{{"scope":'
        f'{{"name":"{SCOPE[0]}","version":"{SCOPE[1]}"}},"spans":['
    )


_LINE_TAIL = "]}]}]}\n"


def interleaved(
    seed: int, release: str, *, spans: int | None = None, runs: int | None = None
) -> Iterator[SpanRecord]:
    """Finished spans of many runs in export order: ``IN_FLIGHT`` runs progress at random rates.

    Stops after the run that reaches ``spans`` spans, or after ``runs`` runs (whole runs only).
    """
    if (spans is None) == (runs is None):
        raise ValueError("give exactly one of spans= or runs=")
    rng = random.Random(seed)
    started = planned = 0
    active: list[list[SpanRecord]] = []

    def want_more() -> bool:
        return started < runs if runs is not None else planned < (spans or 0)

    while True:
        while len(active) < IN_FLIGHT and want_more():
            records = run_records(rng, started, release)
            records.reverse()  # pop() from the end gives export order
            active.append(records)
            started += 1
            planned += len(records)
        if not active:
            return
        i = rng.randrange(len(active))
        records = active[i]
        for _ in range(min(len(records), rng.randint(1, 3))):
            yield records.pop()
        if not records:
            active[i] = active[-1]
            active.pop()


def write_jsonl(
    path: Path, seed: int, release: str, *, spans: int | None = None, runs: int | None = None
) -> int:
    """Write an OTLP JSON Lines file; returns the number of spans written."""
    head = _line_head(release)
    count = 0
    batch: list[str] = []
    with open(path, "w", encoding="ascii", buffering=1 << 20) as fh:
        for rec in interleaved(seed, release, spans=spans, runs=runs):
            batch.append(span_json(rec))
            count += 1
            if len(batch) == BATCH_SPANS:
                fh.write(head + ",".join(batch) + _LINE_TAIL)
                batch.clear()
        if batch:
            fh.write(head + ",".join(batch) + _LINE_TAIL)
    return count


# --- in-memory runs (the offline model) ------------------------------------------------------------


def model_runs(
    seed: int, release: str, count: int, span_range: tuple[int, int] = (MIN_SPANS, MAX_SPANS)
) -> list:
    """``count`` runs as ``offline.model.Run`` objects, built directly (no file, no reader)."""
    from otel_provenance.offline.model import Attributes, Span, SpanKind
    from otel_provenance.offline.runs import make_run

    rng = random.Random(seed)
    resource = Attributes({sc.SERVICE_NAME: SERVICE, sc.SERVICE_VERSION: release})
    kinds = {1: SpanKind.INTERNAL, 3: SpanKind.CLIENT}
    runs = []
    for index in range(count):
        spans = [
            Span(
                trace_id=r.trace_id,
                span_id=r.span_id,
                parent_span_id=r.parent_id or None,
                name=r.name,
                kind=kinds[r.kind],
                start_ns=r.start_ns,
                end_ns=r.end_ns,
                attributes=Attributes.adopt(dict(r.attributes)),
                resource=resource,
                scope_name=SCOPE[0],
                scope_version=SCOPE[1],
            )
            for r in run_records(rng, index, release, span_range)
        ]
        runs.append(make_run(f"run-{index:08d}", spans))
    return runs
