"""Tool spans from real third-party instrumentations: classified, then stripped.

Drives the installed ``opentelemetry-util-genai`` ``TelemetryHandler.tool(...)`` with content capture
on, and OpenInference's ``OITracer.tool`` decorator, through the processor into the real OTLP
encoders. The exported bytes must hold no argument or result value and no marker, and the tool
spans must carry ``agent.arg.*`` kinds with data-flow edges between them.
"""

from __future__ import annotations

import json
import secrets

import pytest

from interop import require

require("openinference.instrumentation")  # the interop extra (newest SDKs only); else skip the module
require("opentelemetry.util.genai.handler")

from openinference.instrumentation import OITracer, TraceConfig  # noqa: E402
from opentelemetry.exporter.otlp.json.common.trace_encoder import encode_spans as encode_json  # noqa: E402
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans as encode_proto  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from opentelemetry.trace import format_span_id  # noqa: E402
from opentelemetry.util.genai.handler import TelemetryHandler  # noqa: E402

import otel_provenance as op  # noqa: E402
from otel_provenance import semconv as sc  # noqa: E402
from otel_provenance.instrument.spans.foreign_calls import foreign_tool_call  # noqa: E402

MARKERS = (b"REDACTED", b"Redacted", b"redacted", b"Scrubbed", b"****", b"redaction")


#: The parameter names of the tools below (util-genai spans carry no schema; see point 9 of #18).
NAMES = {
    "list_files": ["root"],
    "read_file": ["path"],
    "close_ticket": ["ticket_id", "customer"],
    "consume": ["value"],
    "cat": ["lines"],
}


def _provider():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(
        op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter), foreign_argument_names=NAMES)
    )
    return provider, exporter


def _assert_clean(spans, values):
    for blob in (encode_proto(spans).SerializeToString(), json.dumps(encode_json(spans).to_dict()).encode()):
        for value in values:
            assert value.encode() not in blob, value
        for marker in MARKERS:
            assert marker not in blob
    for span in spans:
        for key in span.attributes:
            assert "count" not in key or key.startswith("agent."), key


@pytest.fixture
def capture_content(monkeypatch):
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")


def test_util_genai_tool_spans(capture_content):
    provider, exporter = _provider()
    handler = TelemetryHandler(tracer_provider=provider)
    tracer = provider.get_tracer("agent")
    listed = f"src/{secrets.token_hex(6)}.py"
    guessed = f"/etc/{secrets.token_hex(6)}"
    secret_body = secrets.token_hex(10)
    with tracer.start_as_current_span("invoke_agent coder"):
        with handler.tool("list_files", tool_type="function") as call:
            assert call.should_capture_content
            call.arguments = {"root": "src"}
            call.tool_result = {"files": [listed, "src/other_module.py"]}
        with handler.tool("read_file") as call:
            call.arguments = {"path": listed}
            call.tool_result = {"text": secret_body}
        with pytest.raises(OSError), handler.tool("read_file") as call:
            call.arguments = {"path": guessed}
            raise OSError(f"cannot open {guessed}")
    spans = {
        (s.name, s.attributes.get(sc.ARG_PREFIX + "path.kind")): s for s in exporter.get_finished_spans()
    }
    listing = spans[("execute_tool list_files", None)]
    observed = spans[("execute_tool read_file", "observed")]
    assumed = spans[("execute_tool read_file", "assumed")]

    assert listing.attributes[sc.arg_attr("root", sc.ARG_KIND_SUFFIX)] in sc.ARG_KINDS
    assert observed.attributes[sc.arg_attr("path", sc.ARG_SOURCE_TOOL_SUFFIX)] == "list_files"
    assert observed.attributes[sc.arg_attr("path", sc.ARG_SOURCE_SPAN_ID_SUFFIX)] == format_span_id(
        listing.context.span_id
    )
    assert observed.attributes[sc.arg_attr("path", sc.ARG_SOURCE_FIELD_SUFFIX)] == "files.0"
    assert sc.DIGEST_KEY_ID in observed.attributes
    assert assumed.attributes[sc.BUDGET_ASSUMED] == 1
    assert assumed.status.description == "OSError"
    for span in (listing, observed, assumed):
        assert sc.GEN_AI_TOOL_CALL_ARGUMENTS not in span.attributes
        assert sc.GEN_AI_TOOL_CALL_RESULT not in span.attributes
        assert span.attributes[sc.GEN_AI_OPERATION_NAME] == sc.EXECUTE_TOOL
    _assert_clean(exporter.get_finished_spans(), [listed, guessed, secret_body, "other_module"])


def test_util_genai_content_really_is_on_the_raw_span(capture_content):
    """Control: without the wrapper the same client exports the values we later check are gone."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    handler = TelemetryHandler(tracer_provider=provider)
    value = secrets.token_hex(8)
    with handler.tool("read_file") as call:
        call.arguments = {"path": value}
        call.tool_result = {"text": value + "-result"}
    [span] = exporter.get_finished_spans()
    assert value in span.attributes[sc.GEN_AI_TOOL_CALL_ARGUMENTS]
    assert value + "-result" in span.attributes[sc.GEN_AI_TOOL_CALL_RESULT]
    call = foreign_tool_call(span.name, span.attributes, {"read_file": frozenset({"path"})})
    assert call is not None and call.library == "genai" and call.arguments == {"path": value}
    unnamed = foreign_tool_call(span.name, span.attributes)  # no schema: by position
    assert unnamed is not None and unnamed.arguments == {"arguments.0": value}


@pytest.mark.parametrize("genai_semconv", [False, True])
def test_openinference_tool_decorator(genai_semconv):
    provider, exporter = _provider()
    tracer = OITracer(provider.get_tracer("oi"), config=TraceConfig(enable_genai_semconv=genai_semconv))
    order_id = f"ORD-{secrets.token_hex(5)}"
    invented_id = f"ORD-{secrets.token_hex(5)}"
    email = f"{secrets.token_hex(5)}@example.com"

    @tracer.tool
    def find_order(customer: str) -> dict:
        """Look up a customer's latest order."""
        return {"order": {"id": order_id, "email": email}}

    @tracer.tool
    def refund(order_id: str, amount: int = 10) -> str:
        return f"refunded {order_id}"

    with tracer.start_as_current_span("agent run"):
        find_order("cust-0001")
        refund(order_id)
        refund(invented_id, amount=25)
    spans = [s for s in exporter.get_finished_spans() if s.name == "refund"]
    kinds = [s.attributes[sc.arg_attr("order_id", sc.ARG_KIND_SUFFIX)] for s in spans]
    assert kinds == [sc.KIND_OBSERVED, sc.KIND_ASSUMED]
    assert spans[0].attributes[sc.arg_attr("order_id", sc.ARG_SOURCE_FIELD_SUFFIX)] == "order.id"
    assert spans[0].attributes[sc.arg_attr("order_id", sc.ARG_SOURCE_TOOL_SUFFIX)] == "find_order"
    for span in exporter.get_finished_spans():
        assert "input.value" not in span.attributes and "output.value" not in span.attributes
        assert "tool.description" not in span.attributes
    _assert_clean(exporter.get_finished_spans(), [order_id, invented_id, email, "cust-0001", "refunded"])


def test_openllmetry_shape_positional_and_keyword_arguments():
    provider, exporter = _provider()
    tracer = provider.get_tracer("traceloop")
    path = f"docs/{secrets.token_hex(5)}.md"
    with tracer.start_as_current_span("task"):
        with tracer.start_as_current_span(
            "ls.tool",
            attributes={
                "traceloop.span.kind": "tool",
                "traceloop.entity.name": "ls",
                "traceloop.entity.input": json.dumps({"args": ["docs"], "kwargs": {}}),
                "traceloop.entity.output": json.dumps({"entries": [path]}),
            },
        ):
            pass
        with tracer.start_as_current_span(
            "cat.tool",
            attributes={
                "traceloop.span.kind": "tool",
                "traceloop.entity.name": "cat",
                "traceloop.entity.input": json.dumps({"args": [path], "kwargs": {"lines": 20}}),
            },
        ):
            pass
    spans = {s.name: s for s in exporter.get_finished_spans()}
    cat = spans["cat.tool"]
    assert cat.attributes[sc.arg_attr("args.0", sc.ARG_KIND_SUFFIX)] == sc.KIND_OBSERVED
    assert cat.attributes[sc.arg_attr("args.0", sc.ARG_SOURCE_TOOL_SUFFIX)] == "ls"
    assert cat.attributes[sc.arg_attr("lines", sc.ARG_KIND_SUFFIX)] == sc.KIND_ASSUMED
    _assert_clean(list(spans.values()), [path])


def test_unparseable_or_missing_arguments_still_stripped():
    provider, exporter = _provider()
    tracer = provider.get_tracer("x")
    value = secrets.token_hex(8)
    with tracer.start_as_current_span(
        "execute_tool t",
        attributes={
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.call.arguments": "{not json " + value,
        },
    ):
        pass
    with tracer.start_as_current_span(
        "execute_tool u",
        attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.result": value},
    ):
        pass
    spans = exporter.get_finished_spans()
    assert spans[0].attributes[sc.arg_attr("input", sc.ARG_KIND_SUFFIX)] == sc.KIND_ASSUMED
    assert not any(sc.split_arg_attr(k) for k in spans[1].attributes)
    _assert_clean(spans, [value])


def test_spans_with_own_provenance_are_not_reclassified():
    provider, exporter = _provider()
    tracer = provider.get_tracer("x")
    with tracer.start_as_current_span(
        "execute_tool mine",
        attributes={
            "gen_ai.operation.name": "execute_tool",
            sc.TOOL_STATUS: "ok",
            sc.arg_attr("path", sc.ARG_KIND_SUFFIX): "observed",
            "gen_ai.tool.call.arguments": json.dumps({"path": "x", "other": "y"}),
        },
    ):
        pass
    [span] = exporter.get_finished_spans()
    assert sc.arg_attr("other", sc.ARG_KIND_SUFFIX) not in span.attributes
    assert span.attributes[sc.arg_attr("path", sc.ARG_KIND_SUFFIX)] == "observed"


def test_run_scope_ledger_is_shared_with_op_tool_and_declared_inputs(capture_content):
    provider, exporter = _provider()
    handler = TelemetryHandler(tracer_provider=provider)
    customer = f"cust-{secrets.token_hex(5)}"
    ticket = f"T-{secrets.token_hex(5)}"

    @op.tool(side_effect="read", tracer_provider=provider)
    def open_ticket(customer: str) -> dict:
        return {"ticket": {"id": ticket}}

    with op.run(inputs={"customer": customer}, run_id="run-1"):
        open_ticket(customer=customer)  # our decorator: observed from the run's inputs
        with handler.tool("close_ticket") as call:  # foreign: observed from our tool's result
            call.arguments = {"ticket_id": ticket, "customer": customer}
            call.tool_result = "closed"
    spans = {s.name: s for s in exporter.get_finished_spans()}
    close = spans["execute_tool close_ticket"]
    assert close.attributes[sc.RUN_ID] == "run-1"
    assert close.attributes[sc.arg_attr("ticket_id", sc.ARG_SOURCE_TOOL_SUFFIX)] == "open_ticket"
    assert close.attributes[sc.arg_attr("ticket_id", sc.ARG_SOURCE_SPAN_ID_SUFFIX)] == format_span_id(
        spans["execute_tool open_ticket"].context.span_id
    )
    assert close.attributes[sc.arg_attr("customer", sc.ARG_SOURCE_TOOL_SUFFIX)] == sc.SOURCE_INPUT
    _assert_clean(list(spans.values()), [customer, ticket, "closed"])


def test_foreign_write_tool_gets_violations_but_still_runs(capture_content):
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(
        op.ProvenanceSpanProcessor(
            SimpleSpanProcessor(exporter),
            foreign_side_effects={"wire_money": "write"},
            foreign_argument_names={"wire_money": ["iban", "comment"]},
        )
    )
    handler = TelemetryHandler(tracer_provider=provider)
    ran = []
    with handler.tool("wire_money") as call:
        call.arguments = {"iban": "DE00" + secrets.token_hex(8), "comment": "rent"}
        ran.append(True)
        call.tool_result = {"ok": True}
    [span] = exporter.get_finished_spans()
    assert ran == [True]
    assert span.attributes[sc.SIDE_EFFECT] == "write"
    assert span.attributes[sc.BUDGET_MAX_ASSUMED] == 0
    assert list(span.attributes[sc.VIOLATIONS]) == ["max_assumed:iban=assumed"]
    assert span.attributes[sc.TOOL_STATUS] == sc.TOOL_STATUS_OK


def test_bad_foreign_policy_is_a_configuration_error():
    with pytest.raises(op.ConfigurationError, match="foreign_side_effects"):
        op.ProvenanceSpanProcessor(foreign_side_effects={"t": "delete"})
    with pytest.raises(op.ConfigurationError, match="foreign_budgets"):
        op.ProvenanceSpanProcessor(foreign_budgets={"t": 3})


def test_concurrent_runs_do_not_see_each_others_values(capture_content):
    import asyncio

    provider, exporter = _provider()
    handler = TelemetryHandler(tracer_provider=provider)
    values = {n: f"v{n}-{secrets.token_hex(5)}" for n in range(8)}

    async def agent(n: int) -> None:
        async with op.run(run_id=f"r{n}"):
            with handler.tool("produce") as call:
                call.arguments = {}
                call.tool_result = {"value": values[n]}
            await asyncio.sleep(0)
            with handler.tool("consume") as call:  # another run's value: assumed
                call.arguments = {"value": values[(n + 1) % 8]}
            await asyncio.sleep(0)
            with handler.tool("consume") as call:  # own value: observed
                call.arguments = {"value": values[n]}

    async def main() -> None:
        await asyncio.gather(*(agent(n) for n in range(8)))

    asyncio.run(main())
    consumes = [s for s in exporter.get_finished_spans() if s.name == "execute_tool consume"]
    kinds = sorted(s.attributes[sc.arg_attr("value", sc.ARG_KIND_SUFFIX)] for s in consumes)
    assert kinds == [sc.KIND_ASSUMED] * 8 + [sc.KIND_OBSERVED] * 8
    _assert_clean(exporter.get_finished_spans(), list(values.values()))


def test_util_genai_inference_span_and_content_event(monkeypatch):
    """The official handler with SPAN_AND_EVENT: content on the span and a logs-signal event."""
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
    from opentelemetry.util.genai.types import (
        InputMessage,
        OutputMessage,
        ReasoningPart,
        TextPart,
        ToolCallRequestPart,
    )

    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_AND_EVENT")
    provider, exporter = _provider()
    log_exporter = InMemoryLogRecordExporter()
    logger_provider = LoggerProvider()
    logger_provider.add_log_record_processor(
        op.ProvenanceLogRecordProcessor(SimpleLogRecordProcessor(log_exporter))
    )
    handler = TelemetryHandler(tracer_provider=provider, logger_provider=logger_provider)
    prompt, thought, answer, argument = (secrets.token_hex(9) for _ in range(4))
    with handler.inference("openai", request_model="gpt-x") as call:
        call.input_messages = [InputMessage(role="user", parts=[TextPart(content=prompt)])]
        call.output_messages = [
            OutputMessage(
                role="assistant",
                parts=[
                    ReasoningPart(content=thought),
                    TextPart(content=answer),
                    ToolCallRequestPart(name="lookup", id="c1", arguments={"q": argument}),
                ],
                finish_reason="stop",
            )
        ]
    [span] = exporter.get_finished_spans()
    assert span.attributes["gen_ai.request.model"] == "gpt-x"
    assert "gen_ai.input.messages" not in span.attributes
    _assert_clean([span], [prompt, thought, answer, argument])
    assert log_exporter.get_finished_logs() == ()  # the content event is dropped whole

    # control: the same client without the wrapper did put content on the logs signal
    raw_logs = InMemoryLogRecordExporter()
    raw_provider = LoggerProvider()
    raw_provider.add_log_record_processor(SimpleLogRecordProcessor(raw_logs))
    raw_handler = TelemetryHandler(tracer_provider=TracerProvider(), logger_provider=raw_provider)
    with raw_handler.inference("openai", request_model="gpt-x") as call:
        call.input_messages = [InputMessage(role="user", parts=[TextPart(content=prompt)])]
    assert prompt.encode() in encode_logs(raw_logs.get_finished_logs()).SerializeToString()


def test_model_chosen_argument_names_are_exported_by_position(capture_content):
    """A name in the argument JSON that no schema declares may be data: it never becomes a key."""
    provider, exporter = _provider()
    handler = TelemetryHandler(tracer_provider=provider)
    leaky_name = f"john_smith_ssn_{secrets.randbelow(10**9):09d}"
    with handler.tool("read_file") as call:
        call.arguments = {"path": "README.md", leaky_name: "x"}
    tracer = provider.get_tracer("oi")
    with tracer.start_as_current_span(
        "lookup",
        attributes={
            "openinference.span.kind": "TOOL",
            "tool.name": "lookup",
            "tool.parameters": json.dumps({"type": "object", "properties": {"account": {}}}),
            "input.value": json.dumps({"account": "acc-1", leaky_name: "y"}),
        },
    ):
        pass
    spans = exporter.get_finished_spans()
    keys = [k for s in spans for k in s.attributes]
    assert not any(leaky_name in k for k in keys)
    assert sc.arg_attr("path", sc.ARG_KIND_SUFFIX) in keys  # named by foreign_argument_names
    assert sc.arg_attr("arguments.1", sc.ARG_KIND_SUFFIX) in keys
    assert sc.arg_attr("account", sc.ARG_KIND_SUFFIX) in keys  # named by the span's own schema
    _assert_clean(spans, [leaky_name])
