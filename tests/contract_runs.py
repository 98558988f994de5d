"""Hand-built runs for the contract, mining and gate tests (a helper module, not a test file).

``RunBuilder`` lays spans out one after another in time (each step ends before the next starts),
so "happens before" follows the order steps are added; pass ``start``/``end`` to overlap them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from otel_provenance import semconv
from otel_provenance.offline.model import Attributes, Run, Span, SpanKind


def hex_id(seed: str, length: int) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()[:length]


class RunBuilder:
    def __init__(self, name: str = "run-1", release: str | None = "v1", root: str = "ticket.triage") -> None:
        self.name = name
        self.trace_id = hex_id(f"trace/{name}", 32)
        self.release = release
        self._spans: list[dict[str, Any]] = []
        self._clock = 1_000
        self.root = self.add(root, tool=False, attrs={"test.case": name})

    def add(
        self,
        step: str,
        parent: str | None = None,
        *,
        tool: bool = True,
        attrs: dict[str, Any] | None = None,
        start: int | None = None,
        end: int | None = None,
        parent_id: str | None = None,
    ) -> str:
        span_id = hex_id(f"span/{self.name}/{len(self._spans)}", 16)
        attributes = dict(attrs or {})
        if tool:
            attributes.setdefault(semconv.GEN_AI_OPERATION_NAME, semconv.EXECUTE_TOOL)
            attributes.setdefault(semconv.GEN_AI_TOOL_NAME, step)
        self._clock += 100
        begin = self._clock if start is None else start
        finish = begin + 50 if end is None else end
        self._clock = max(self._clock, finish)
        if parent_id is None and self._spans:
            parent_id = parent if parent is not None else self.root
        self._spans.append(
            dict(
                span_id=span_id,
                parent=parent_id,
                name=(semconv.TOOL_SPAN_PREFIX + step) if tool else step,
                attributes=attributes,
                start=begin,
                end=finish,
            )
        )
        return span_id

    def run(self) -> Run:
        resource = Attributes({semconv.SERVICE_VERSION: self.release} if self.release else {})
        spans = []
        for i, s in enumerate(self._spans):
            end = self._clock + 10 if i == 0 else s["end"]
            spans.append(
                Span(
                    trace_id=self.trace_id,
                    span_id=s["span_id"],
                    parent_span_id=s["parent"],
                    name=s["name"],
                    kind=SpanKind.INTERNAL,
                    start_ns=s["start"],
                    end_ns=end,
                    attributes=Attributes(s["attributes"]),
                    resource=resource,
                )
            )
        return Run(self.trace_id, tuple(sorted(spans, key=lambda sp: (sp.start_ns, sp.span_id))))


WRITE = {semconv.SIDE_EFFECT: "write"}
READ = {semconv.SIDE_EFFECT: "read"}
MISSING_PARENT = "fedcba9876543210"  # a parent span id that is in no run: makes the run incomplete


def _kind(arg: str) -> str:
    return semconv.arg_attr(arg, semconv.ARG_KIND_SUFFIX)


def triage_run(name: str = "run-1", release: str | None = "v1", **changes: Any) -> Run:
    """A ticket-triage agent: fetch → classify → check permissions → update ticket → notify.

    ``changes``: ``skip_check``; ``writes`` (ticket.update calls, retry numbers 0, 1, …);
    ``status_kind`` (provenance of the update's ``status`` argument); ``update_attrs`` (overrides on
    ticket.update; a None value removes the key); ``update_under_check`` (nest the update under the
    check); ``orphan`` (add a span whose parent is missing); ``extra`` (list of (step, attrs) tool
    spans added before the check); ``root`` (name of the root span).
    """
    b = RunBuilder(name, release, root=changes.get("root", "ticket.triage"))
    b.add("ticket.fetch", attrs={**READ, semconv.RETRY_NUMBER: 0, _kind("ticket_id"): "observed"})
    b.add("ticket.classify", attrs={**READ, semconv.RETRY_NUMBER: 0})
    for step, attrs in changes.get("extra", ()):
        b.add(step, attrs=attrs)
    check = None
    if not changes.get("skip_check"):
        check = b.add("permissions.check", attrs={**READ, semconv.RETRY_NUMBER: 0})
    for attempt in range(changes.get("writes", 1)):
        attrs = {
            **WRITE,
            semconv.RETRY_NUMBER: attempt,
            semconv.IDEMPOTENCY_PRESENT: True,
            _kind("ticket_id"): "observed",
            _kind("status"): changes.get("status_kind", "observed"),
        }
        for key, value in changes.get("update_attrs", {}).items():
            if value is None:
                attrs.pop(key, None)
            else:
                attrs[key] = value
        parent = check if changes.get("update_under_check") else None
        b.add(
            "ticket.update",
            parent,
            attrs=attrs,
            parent_id=MISSING_PARENT if changes.get("orphan_update") else None,
        )
    b.add("customer.notify", attrs={**WRITE, semconv.RETRY_NUMBER: 0, semconv.IDEMPOTENCY_PRESENT: True})
    if changes.get("orphan"):
        b.add("late.audit", parent_id=MISSING_PARENT, attrs=READ)
    return b.run()


def export_runs(runs: list[Run], path: str, trace_id: Callable[[Run], int] | None = None) -> None:
    """Write ``runs`` through the real OTel SDK and its official OTLP JSON file exporter.

    Names, attributes, parent links and times are kept; ids are the SDK's own, unless ``trace_id``
    gives each run's trace id (its run id once read: a test that depends on which run ids are
    smallest sets them). A parent that is not in the run is started and never ended, so it is never
    exported — a genuinely incomplete trace.
    """
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.id_generator import RandomIdGenerator
    from opentelemetry.trace import set_span_in_context

    from interop import FileSpanExporter

    class ChosenTraceIds(RandomIdGenerator):
        """The SDK's random ids, except the trace id ``trace_id`` chose for the run being written."""

        chosen: int | None = None

        def generate_trace_id(self) -> int:
            return self.chosen if self.chosen is not None else super().generate_trace_id()

    by_release: dict[str | None, list[Run]] = {}
    for run in runs:
        by_release.setdefault(run.release, []).append(run)
    for release, group in sorted(by_release.items(), key=lambda kv: str(kv[0])):
        resource = Resource.create({semconv.SERVICE_VERSION: release} if release else {})
        ids = ChosenTraceIds()
        provider = TracerProvider(resource=resource, shutdown_on_exit=False, id_generator=ids)
        provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(path=path)))  # appends
        tracer = provider.get_tracer("tests.contract_runs")
        for run in group:
            ids.chosen = trace_id(run) if trace_id is not None else None
            live: dict[str, Any] = {}
            for span in sorted(run.spans, key=lambda s: (s.start_ns, s.span_id)):
                parent_id = span.parent_span_id
                context = None
                if parent_id is not None:
                    if parent_id not in live:  # in the run's trace, but never ended, never exported
                        root = set_span_in_context(live[run.spans[0].span_id])
                        live[parent_id] = tracer.start_span(
                            "lost.parent", context=root, start_time=span.start_ns - 1
                        )
                    context = set_span_in_context(live[parent_id])
                live[span.span_id] = tracer.start_span(
                    span.name,
                    context=context,
                    attributes=dict(span.attributes.items_sorted()),
                    start_time=span.start_ns,
                )
            for span in run.spans:
                live[span.span_id].end(end_time=span.end_ns)
        provider.shutdown()


#: A small triage contract the gate and report tests share, and the completion time they pass.
CONTRACT = """\
version: 1
name: triage
gate:
  min_runs: 2
  max_insufficient_fraction: "1/4"
rules:
  - id: skipped_check
    type: required_spans
    select: {step: permissions.check}
  - id: duplicate_write
    type: cardinality
    code: DUPLICATE_SIDE_EFFECT
    select: {step: ticket.update}
    max: 1
    thresholds: {max_failing_runs: 1}
  - id: idempotent
    type: allowed_values
    select: {attributes: {agent.side_effect: write}}
    attribute: agent.idempotency.present
    values: [true]
"""
AT = "2026-01-31T12:00:00Z"
