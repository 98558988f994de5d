"""Third-party tool-span ledgers outside ``op.run`` are bounded by bytes and released with their trace.

Before #18 the last 256 traces each kept up to 50k leaves after their spans were exported:
60 util-genai tool spans with 10 MB results grew the process by ~650 MB. Memory is measured with
``tracemalloc`` (allocations still held after the spans are gone), not with timings.
"""

from __future__ import annotations

import gc
import json
import tracemalloc

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_provenance as op
from interop import require
from otel_provenance import semconv as sc
from otel_provenance.instrument.thirdparty import MAX_LEDGER_BYTES

TelemetryHandler = require("opentelemetry.util.genai.handler").TelemetryHandler

MIB = 1 << 20


class _NamesOnly(InMemorySpanExporter):
    """Keeps exported span names only, so the test measures the ledgers, not the exporter."""

    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []

    def export(self, spans):
        self.names += [s.name for s in spans]
        return super().export(())


def _result(size: int, tag: str) -> dict:
    row = "r" * 1000
    return {"rows": [f"{tag}-{i}-{row}" for i in range(size // 1024)]}


def _processor(**kwargs):
    exporter = _NamesOnly()
    wrapper = op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter), **kwargs)
    provider = TracerProvider()
    provider.add_span_processor(wrapper)
    return provider, wrapper, exporter


def _tools_under_open_roots(provider, handler, count: int, result) -> list:
    """``count`` traces, each a root span left open (an agent still running) with one tool span."""
    tracer = provider.get_tracer("agent")
    roots = []
    for _ in range(count):
        root = tracer.start_span("invoke_agent a")
        with trace.use_span(root, end_on_exit=False), handler.tool("fetch_rows") as call:
            call.arguments = {}
            call.tool_result = result
        roots.append(root)
    return roots


def _held_after(action) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        action()
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


def test_sixty_ten_megabyte_results_stay_under_the_byte_budget(monkeypatch):
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")
    provider, wrapper, exporter = _processor()
    handler = TelemetryHandler(tracer_provider=provider)
    big = _result(10 * MIB, "big")

    roots = []

    def sixty_tool_spans_in_sixty_traces() -> None:
        roots.extend(_tools_under_open_roots(provider, handler, 60, big))

    held = _held_after(sixty_tool_spans_in_sixty_traces)
    assert len(exporter.names) == 60 and len(roots) == 60
    # Stated bound: the ledgers' budget (64 MiB) plus slack for the SDK and allocator.
    assert held < MAX_LEDGER_BYTES + 16 * MIB, f"{held / MIB:.0f} MiB held"
    assert wrapper._classifier.retained_bytes <= MAX_LEDGER_BYTES


def test_total_budget_evicts_oldest_traces_and_results_over_a_trace_budget_are_not_kept(monkeypatch):
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")
    provider, wrapper, _exporter = _processor()
    classifier = wrapper._classifier
    classifier._max_bytes = 8 * MIB  # a small total budget, same code path
    handler = TelemetryHandler(tracer_provider=provider)
    roots = _tools_under_open_roots(provider, handler, 12, _result(2 * MIB, "m"))
    assert 0 < classifier.retained_traces < 12
    assert classifier.retained_bytes <= 8 * MIB
    for root in roots:
        root.end()
    assert classifier.retained_traces == 0


def test_a_trace_ledger_is_released_when_its_root_ends(monkeypatch):
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")
    provider, wrapper, _exporter = _processor(foreign_argument_names={"read": ["path"]})
    classifier = wrapper._classifier
    handler = TelemetryHandler(tracer_provider=provider)
    tracer = provider.get_tracer("agent")
    with tracer.start_as_current_span("invoke_agent a"):
        with handler.tool("list") as call:
            call.arguments = {}
            call.tool_result = {"files": ["src/app_module.py"]}
        with handler.tool("read") as call:  # still observed: the trace is open
            call.arguments = {"path": "src/app_module.py"}
        assert classifier.retained_traces == 1 and classifier.retained_bytes > 0
    assert classifier.retained_traces == 0 and classifier.retained_bytes == 0


def test_an_oversized_result_marks_the_ledger_full(monkeypatch):
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")
    exporter = InMemorySpanExporter()
    wrapper = op.ProvenanceSpanProcessor(
        SimpleSpanProcessor(exporter), foreign_argument_names={"read": ["path"]}
    )
    wrapper._classifier._max_trace_bytes = 64 * 1024
    provider = TracerProvider()
    provider.add_span_processor(wrapper)
    handler = TelemetryHandler(tracer_provider=provider)
    with provider.get_tracer("agent").start_as_current_span("invoke_agent a"):
        with handler.tool("list") as call:
            call.arguments = {}
            call.tool_result = json.dumps(_result(256 * 1024, "x"))
        with handler.tool("read") as call:
            call.arguments = {"path": "x-1-" + "r" * 1000}
    read = next(s for s in exporter.get_finished_spans() if s.name == "execute_tool read")
    assert read.attributes[sc.arg_attr("path", sc.ARG_KIND_SUFFIX)] == sc.KIND_ASSUMED
    assert read.attributes[sc.LEDGER_FULL] is True
