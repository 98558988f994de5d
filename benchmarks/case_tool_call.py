"""Case 1 — tool-call overhead: ``@op.tool`` in a run with a 10,000-value ledger vs a bare OTel span.

Subject: a read tool with 3 passed arguments (one observed from the listing, two assumed) inside an
``op.run`` whose ledger already holds a 10,000-entry listing; spans go through
``ProvenanceSpanProcessor(SimpleSpanProcessor(no-op exporter))``. Baseline: the same function body
inside ``tracer.start_as_current_span`` carrying the same GenAI attributes
(``gen_ai.operation.name``, ``gen_ai.tool.name``, ``gen_ai.tool.call.id``, ``gen_ai.tool.type``)
through ``SimpleSpanProcessor(no-op exporter)``. Each sample is ``calls`` calls in a fresh run.

Peers (when the ``bench`` extra is installed), timed in the same rotation as ``@op.tool`` and the bare
span, on the bare span's provider: OpenInference's ``@tracer.tool`` (records the input and output as
JSON) and ``opentelemetry-util-genai``'s ``TelemetryHandler.tool`` with content capture on
(``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY``: the arguments and the result as
JSON on the span). ``@op.tool`` is held to <= 1.0x util-genai's handler: provenance should cost no
more than the official content capture it replaces.

The blocked path — a write tool called with an unsourced argument, which is refused before its
body runs and exports an ERROR span — against the allowed call in the same rotation (#45: <= 1.5x)
and, informational, against the bare span. Also (informational): the tool call against a bare span
carrying all the attributes the tool span carries, which separates what the SDK charges for those
attributes from the package's own work; the *floor* — a span of this package's scope carrying those
attributes through ``ProvenanceSpanProcessor`` with no provenance work at all — against the
4-attribute bare span, which is what any ``@op.tool`` pays before it classifies anything; and the
tool call with a MeterProvider recording the package's tool-call metrics (an InMemoryMetricReader,
never collected while timing) against the same call with the no-op MeterProvider — the per-call cost of
the metrics (issue #19).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import random
from collections.abc import Callable

from opentelemetry.metrics import NoOpMeterProvider
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.trace import SpanKind

import otel_provenance as op
from otel_provenance import semconv as sc
from otel_provenance.instrument.spans import metrics as tool_metrics
from otel_provenance.instrument.spans.span_transforms import OWN_SCOPE

from .harness import CPU_CLOCK, Result, interleaved_medians, paired_medians, ratio_result
from .online import bare_provider, wrapped_provider

LISTING_SIZE = 10_000
CASE = "1 tool call"


def _body(path: str, offset: int, reason: str) -> dict:
    return {"lines": 120, "encoding": "utf-8", "truncated": offset > 0}


def run(quick: bool) -> list[Result]:
    calls = 50 if quick else 2_000
    repeat = 3 if quick else 9
    provider, exporter = wrapped_provider()
    bare, bare_exporter = bare_provider()
    files = [f"src/pkg{i % 50}/module_{i}.py" for i in range(LISTING_SIZE)]

    @op.tool(side_effect="read", tracer_provider=provider)
    def list_files(root: str) -> dict:
        return {"root": root, "files": files}

    @op.tool(side_effect="read", tracer_provider=provider)
    def read_file(path: str, offset: int, reason: str) -> dict:
        return _body(path, offset, reason)

    @op.tool(side_effect="write", tracer_provider=provider)
    def delete_file(path: str, offset: int, reason: str) -> dict:
        raise AssertionError("a blocked tool's body must never run")

    tracer = bare.get_tracer("benchmarks")

    def bare_read_file(path: str, offset: int, reason: str) -> dict:
        attributes = {
            sc.GEN_AI_OPERATION_NAME: sc.EXECUTE_TOOL,
            sc.GEN_AI_TOOL_NAME: "read_file",
            sc.GEN_AI_TOOL_CALL_ID: f"call_{random.getrandbits(64):016x}",
            sc.GEN_AI_TOOL_TYPE: "function",
        }
        with tracer.start_as_current_span(
            "execute_tool read_file", kind=SpanKind.INTERNAL, attributes=attributes
        ):
            return _body(path, offset, reason)

    scope: list[op.run] = []  # type: ignore[valid-type]

    def fresh_run() -> None:
        """Untimed: leave the previous run, enter a new one and fill its ledger with the listing."""
        while scope:
            scope.pop().__exit__(None, None, None)
        current = op.run(inputs={"root": "/srv/repo"})
        current.__enter__()
        scope.append(current)
        list_files(root="/srv/repo")
        assert len(current.ledger) >= LISTING_SIZE, "the listing was not remembered"

    picks = [files[(i * 7919) % LISTING_SIZE] for i in range(calls)]

    def many(fn: Callable[..., object]) -> Callable[[], None]:
        def go() -> None:
            for path in picks:
                fn(path, 0, "check the imports")

        return go

    def many_blocked() -> None:
        for path in picks:
            with contextlib.suppress(op.ProvenanceError):
                delete_file("/etc/" + path, 0, "clean up")

    try:
        fresh_run()
        tool_attributes = _attributes_of_one_call(files[1])
        kinds = "/".join(
            str(tool_attributes.get(sc.arg_attr(n, sc.ARG_KIND_SUFFIX))) for n in ("path", "offset", "reason")
        )

        def bare_same_attributes(path: str, offset: int, reason: str) -> dict:
            with tracer.start_as_current_span(
                "execute_tool read_file", kind=SpanKind.INTERNAL, attributes=tool_attributes
            ):
                return _body(path, offset, reason)

        own_tracer = provider.get_tracer(OWN_SCOPE, op.__version__)

        def floor_read_file(path: str, offset: int, reason: str) -> dict:
            """A span of ours carrying what the tool span carries, with no provenance work at all."""
            with own_tracer.start_as_current_span(
                "execute_tool read_file", kind=SpanKind.INTERNAL, attributes=tool_attributes
            ):
                return _body(path, offset, reason)

        least_work_read_file = _least_work(own_tracer, files, tool_attributes)
        peers = _peers(bare, many)
        subjects = {"tool": many(read_file), "bare": many(bare_read_file), FLOOR: many(floor_read_file)}
        medians = interleaved_medians(
            {**subjects, LEAST_WORK: many(least_work_read_file), **peers},
            repeat,
            setup=fresh_run,
            clock=CPU_CLOCK,
        )
        tool_s, bare_s = medians["tool"], medians["bare"]
        # the blocked call, the allowed one and the bare span in one rotation: #45 holds a blocked
        # call to <= 1.5x an allowed one, and the bare span keeps the blocked row's own baseline
        sides = interleaved_medians(
            {"blocked": many_blocked, "allowed": many(read_file), "bare": many(bare_read_file)},
            repeat,
            setup=fresh_run,
            clock=CPU_CLOCK,
        )
        blocked_s, allowed_s, bare2_s = sides["blocked"], sides["allowed"], sides["bare"]
        tool3_s, same_s = paired_medians(
            many(read_file), many(bare_same_attributes), repeat, setup=fresh_run, clock=CPU_CLOCK
        )
        reader = InMemoryMetricReader()
        meters = MeterProvider(metric_readers=[reader])

        def metered(provider: object) -> Callable[[], None]:
            calls_ = many(read_file)

            def go() -> None:
                tool_metrics.use_meter_provider(provider)  # type: ignore[arg-type]
                calls_()

            return go

        metrics_s, no_metrics_s = paired_medians(
            metered(meters), metered(NoOpMeterProvider()), repeat, setup=fresh_run, clock=CPU_CLOCK
        )
        recorded = reader.get_metrics_data()
    finally:
        tool_metrics.use_meter_provider(None)
        while scope:
            scope.pop().__exit__(None, None, None)
    assert recorded is not None and recorded.resource_metrics, "the metrics were not recorded"
    assert exporter.spans > 0 and bare_exporter.spans > 0, "spans did not reach the exporters"
    peer_rows = []
    if UTIL_GENAI in medians:
        peer_rows.append(
            ratio_result(
                CASE + " (vs util-genai handler.tool)",
                tool_s / calls,
                medians[UTIL_GENAI] / calls,
                max_ratio=1.0,
                note="same run; handler.tool with content capture on, bare provider",
                extra={"calls_per_sample": calls, "samples": repeat},
            )
        )
    for peer, label in (
        (UTIL_GENAI, "util-genai handler.tool"),
        (OPENINFERENCE, "OpenInference @tracer.tool"),
    ):
        if peer in medians:
            peer_rows.append(
                ratio_result(
                    f"1 peer {label}",
                    medians[peer] / calls,
                    bare_s / calls,
                    max_ratio=None,
                    note="vs the bare span, same run; records arguments and result",
                    extra={"calls_per_sample": calls, "samples": repeat},
                )
            )
    missing = [p for p in (UTIL_GENAI, OPENINFERENCE) if p not in medians]
    return [
        ratio_result(
            CASE,
            tool_s / calls,
            bare_s / calls,
            max_ratio=1.5,
            note=f"per call; args {kinds}"
            + (f"; peers not installed: {', '.join(missing)} (pip install -e '.[bench]')" if missing else ""),
            extra={"calls_per_sample": calls, "samples": repeat, "ledger_values": LISTING_SIZE},
        ),
        *peer_rows,
        ratio_result(
            "1 floor: a span of ours, no provenance",
            medians[FLOOR] / calls,
            bare_s / calls,
            max_ratio=None,
            note=f"the tool span's {len(tool_attributes)} attributes through ProvenanceSpanProcessor, "
            "same run: what the SDK and the wrapper charge before any provenance work",
            extra={"calls_per_sample": calls, "samples": repeat},
        ),
        ratio_result(
            "1 least work: the floor plus lookups and digests",
            medians[LEAST_WORK] / calls,
            bare_s / calls,
            max_ratio=None,
            note="the floor's span plus the least the tool span's attributes need (3 dictionary lookups, "
            "3 keyed digests, the 3 result leaves remembered), same run: a lower bound for any "
            "implementation that sets these attributes",
            extra={"calls_per_sample": calls, "samples": repeat},
        ),
        ratio_result(
            CASE + " (blocked)",
            blocked_s / calls,
            bare2_s / calls,
            max_ratio=None,
            note="refused before the body runs; ERROR span exported",
            extra={"calls_per_sample": calls, "samples": repeat},
        ),
        ratio_result(
            CASE + " (blocked vs allowed)",
            blocked_s / calls,
            allowed_s / calls,
            max_ratio=1.5,
            note="a refused write vs the allowed read, same rotation",
            extra={"calls_per_sample": calls, "samples": repeat},
        ),
        ratio_result(
            CASE + " (vs same attributes)",
            tool3_s / calls,
            same_s / calls,
            max_ratio=None,
            note=f"baseline span carries the tool span's {len(tool_attributes)} attributes",
            extra={"calls_per_sample": calls, "samples": repeat, "attributes": len(tool_attributes)},
        ),
        ratio_result(
            CASE + " (metrics on)",
            metrics_s / calls,
            no_metrics_s / calls,
            max_ratio=None,
            note="SDK MeterProvider recording the tool-call metrics vs the no-op provider",
            extra={"calls_per_sample": calls, "samples": repeat},
        ),
    ]


UTIL_GENAI = "util-genai"
FLOOR = "floor"
LEAST_WORK = "least work"
OPENINFERENCE = "openinference"
_CAPTURE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


def _least_work(tracer, files: list[str], attributes: dict) -> Callable[..., dict]:
    """A read tool doing only what its span's attributes need: each argument looked up in an index of
    the listing (one dictionary lookup) and digested with a key (BLAKE2b, as the package does), the
    span opened with the tool span's attributes, the result's leaves remembered in the index. No
    projections, echoes, trust, budgets or bookkeeping: a lower bound for #45's targets, not a design."""
    index: dict[str, tuple] = {path: ("list_files", "files", i) for i, path in enumerate(files)}
    key = os.urandom(16)

    def read_file(path: str, offset: int, reason: str) -> dict:
        own = dict(attributes)
        for name, value in (("path", path), ("offset", offset), ("reason", reason)):
            text = value if type(value) is str else str(value)
            found = index.get(text)
            own[sc.arg_attr(name, sc.ARG_KIND_SUFFIX)] = sc.KIND_OBSERVED if found else sc.KIND_ASSUMED
            digest = hashlib.blake2b(text.encode(), key=key, digest_size=16).hexdigest()
            own[sc.arg_attr(name, sc.ARG_DIGEST_SUFFIX)] = digest
        own[sc.TOOL_CALL_ID] = f"call_{random.getrandbits(64):016x}"
        span_name = "execute_tool read_file"
        with tracer.start_as_current_span(span_name, kind=SpanKind.INTERNAL, attributes=own) as span:
            result = _body(path, offset, reason)
            for field, value in result.items():
                index[str(value)] = ("read_file", field, None)
            span.set_attribute(sc.TOOL_STATUS, sc.TOOL_STATUS_OK)
            return result

    return read_file


def _peers(provider, many: Callable) -> dict[str, Callable[[], None]]:
    """The same tool body through the peers installed (the ``bench`` extra), on ``provider``."""
    peers: dict[str, Callable[[], None]] = {}
    try:
        from opentelemetry.util.genai.handler import TelemetryHandler
    except ImportError:
        pass
    else:
        previous = os.environ.get(_CAPTURE)
        os.environ[_CAPTURE] = "SPAN_ONLY"  # read when the handler is made
        try:
            handler = TelemetryHandler(tracer_provider=provider)
        finally:
            if previous is None:
                os.environ.pop(_CAPTURE, None)
            else:
                os.environ[_CAPTURE] = previous

        def genai_read_file(path: str, offset: int, reason: str) -> dict:
            with handler.tool("read_file", tool_type="function") as invocation:
                invocation.tool_call_id = f"call_{random.getrandbits(64):016x}"
                if invocation.should_capture_content:
                    invocation.arguments = {"path": path, "offset": offset, "reason": reason}
                result = _body(path, offset, reason)
                if invocation.should_capture_content:
                    invocation.tool_result = result
                return result

        with handler.tool("probe") as probe:
            assert probe.should_capture_content, "util-genai content capture is not on"
        peers[UTIL_GENAI] = many(genai_read_file)
    try:
        from openinference.instrumentation import OITracer, TraceConfig
    except ImportError:
        pass
    else:
        oi = OITracer(provider.get_tracer("openinference"), config=TraceConfig())

        @oi.tool
        def read_file(path: str, offset: int, reason: str) -> dict:
            return _body(path, offset, reason)

        peers[OPENINFERENCE] = many(read_file)
    return peers


def _attributes_of_one_call(path: str) -> dict:
    """The attributes the benchmark's call exports (in the current run), read back from a real span."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(memory)))
    probe = op.tool(name="read_file", side_effect="read", tracer_provider=provider)(_body)
    probe(path, 0, "check the imports")
    (span,) = memory.get_finished_spans()
    return dict(span.attributes or {})
