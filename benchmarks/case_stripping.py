"""Case 2 — stripping cost: one finished span through the processor vs straight to the exporter.

The span is made by the real SDK: 30 attributes (5 forbidden content keys, one nested map that
itself holds a forbidden key) and 3 events (a tool message with content, an exception with message
and stack trace, a plain checkpoint). Subject: ``ProvenanceSpanProcessor(SimpleSpanProcessor(exporter))
.on_end(span)``; baseline: ``SimpleSpanProcessor(exporter).on_end(span)`` — the same exporter path
without the wrapper. The target row's exporter encodes each span to OTLP protobuf bytes in memory
(what every OTLP exporter does before it sends); an informational row uses a no-op exporter (the
wrapper's cost over the cheapest possible export), and another hands on a plain HTTP client span
(6 attributes, nothing to remove) — what most spans an application exports are, each paying the
wrapper's checks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import SpanKind

import otel_provenance as op
from otel_provenance import semconv as sc

from .harness import Result, paired_medians, ratio_result
from .online import NoopExporter

CASE = "2 stripping"
FORBIDDEN = (
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "gen_ai.input.messages",
    "input.value",
    "output.value",
)


class EncodingExporter(SpanExporter):
    """Encodes spans to OTLP protobuf bytes and drops them: an OTLP exporter minus the network."""

    def __init__(self) -> None:
        self.bytes = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.bytes += len(encode_spans(spans).SerializeToString())
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass


def finished_span() -> ReadableSpan:
    """The benchmark's span: 30 attributes (5 forbidden, 1 nested map), 3 events, ended."""
    tracer = TracerProvider().get_tracer("benchmarks")
    attributes: dict[str, object] = {key: f"secret {key} " * 8 for key in FORBIDDEN}
    attributes["http.request.meta"] = {"method": "POST", "input.value": "secret body", "retries": 2}
    attributes.update(
        {
            sc.GEN_AI_OPERATION_NAME: sc.EXECUTE_TOOL,
            sc.GEN_AI_TOOL_NAME: "fetch_invoice",
            sc.GEN_AI_TOOL_CALL_ID: "call_0123456789abcdef",
            sc.GEN_AI_TOOL_TYPE: "function",
            sc.SIDE_EFFECT: "read",
            sc.DATA_DOMAIN: "payments",
            sc.RETRY_NUMBER: 0,
            sc.TOOL_STATUS: "ok",
            sc.RUN_ID: "run-0001",
            sc.DIGEST_KEY_ID: "k-0123456789ab",
            sc.BUDGET_ASSUMED: 1,
            sc.arg_attr("invoice_id", sc.ARG_KIND_SUFFIX): sc.KIND_OBSERVED,
            sc.arg_attr("invoice_id", sc.ARG_SOURCE_TOOL_SUFFIX): "list_invoices",
            sc.arg_attr("invoice_id", sc.ARG_SOURCE_FIELD_SUFFIX): "invoices.3.id",
            sc.arg_attr("invoice_id", sc.ARG_PROJECTION_SUFFIX): "exact",
            sc.arg_attr("format", sc.ARG_KIND_SUFFIX): sc.KIND_ASSUMED,
            "gen_ai.request.model": "gpt-4o",
            "gen_ai.usage.input_tokens": 812,
            "gen_ai.usage.output_tokens": 96,
            "server.address": "billing.internal",
            "server.port": 8443,
            "http.response.status_code": 200,
            "deployment.environment": "prod",
            "tenant.tier": "gold",
        }
    )
    assert len(attributes) == 30
    span = tracer.start_span("execute_tool fetch_invoice", attributes=attributes)  # type: ignore[arg-type]
    span.add_event("gen_ai.tool.message", {"message.content": "secret reply " * 10, "role": "tool"})
    span.add_event(
        "exception",
        {
            "exception.type": "TimeoutError",
            "exception.message": "secret timeout detail",
            "exception.stacktrace": "Traceback ... secret ...",
        },
    )
    span.add_event("checkpoint", {"step": 3})
    span.end()
    return span


def plain_span() -> ReadableSpan:
    """An HTTP client span, as an HTTP instrumentation ends it: 6 attributes, no content, no events —
    what most spans an application exports look like, and each passes through the wrapper."""
    tracer = TracerProvider().get_tracer("opentelemetry.instrumentation.httpx", "0.50b0")
    span = tracer.start_span(
        "GET",
        kind=SpanKind.CLIENT,
        attributes={
            "http.request.method": "GET",
            "url.full": "https://billing.internal:8443/v1/invoices?status=open",
            "server.address": "billing.internal",
            "server.port": 8443,
            "http.response.status_code": 200,
            "network.protocol.version": "1.1",
        },
    )
    span.end()
    return span


def run(quick: bool) -> list[Result]:
    repeat = 3 if quick else 9
    results = []
    for label, span, exporter_type, target, spans in (
        # The target row: a real exporter's work (OTLP encoding) is the baseline. Against a no-op
        # exporter no wrapper that must hand on a *copy* can reach 1.3x: the copy alone costs twice
        # a no-op export (see docs/benchmarks.md). That row is kept, informational.
        (" (OTLP-encoding exporter)", finished_span(), EncodingExporter, 1.3, 50 if quick else 1_000),
        (" (no-op exporter)", finished_span(), NoopExporter, None, 200 if quick else 5_000),
        # The span most often handed on: nothing to remove, the wrapper's checks alone (informational)
        (
            ", a plain HTTP span (OTLP-encoding exporter)",
            plain_span(),
            EncodingExporter,
            None,
            100 if quick else 2_000,
        ),
    ):
        wrapped = op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter_type()))
        direct = SimpleSpanProcessor(exporter_type())

        def through(processor: object, spans: int = spans, span: ReadableSpan = span) -> Callable[[], None]:
            on_end = processor.on_end  # type: ignore[attr-defined]

            def go() -> None:
                for _ in range(spans):
                    on_end(span)

            return go

        subject_s, baseline_s = paired_medians(through(wrapped), through(direct), repeat)
        results.append(
            ratio_result(
                CASE + label,
                subject_s / spans,
                baseline_s / spans,
                max_ratio=target,
                note="per span, on_end path",
                extra={"spans_per_sample": spans, "samples": repeat},
            )
        )
    return results
