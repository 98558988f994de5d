"""The default stripping mode (``hybrid``) against every key #36 found leaking, and the measurement
behind choosing it (docs/stripping.md, "Choosing the default").

* PydanticAI's own instrumentation, driven for real with a ``FunctionModel`` in every
  instrumentation version it supports (``InstrumentationSettings(version=2 … 6)``): no canary — the
  instructions, tool and output-schema descriptions in ``model_request_parameters`` included —
  reaches the bytes of the JSON Lines file exporter or the OTLP encodings.
* Spans and log records written with the plain OTel SDK exactly as the other libraries write them
  (Azure AI Agents' ``gen_ai.event.content`` and its events, Langfuse, Haystack, MLflow, the memory
  and newer GenAI keys, ``exception.message`` in an event not named ``exception``): no canary.
* The measurement: a corpus of planted canaries and of an application's own non-content keys, run
  through each mode; the counts asserted here are the ones the docs print.

Logfire, driven for real in a subprocess (it sets process-wide providers), is in
``test_strip_logfire.py``.
"""

from __future__ import annotations

import json
import secrets
import warnings
from collections.abc import Callable

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

import otel_provenance as op
from canary import assert_absent, exported_bytes
from interop import otlp_json_logs, require, require_logs_sdk
from otel_provenance.instrument.spans.export import JsonLinesSpanExporter
from otel_provenance.instrument.spans.redaction import DEFAULT_STRIP_MODE, StripOptions


def _canary() -> str:
    return "cnry" + secrets.token_hex(10)


def _provider(options: StripOptions | None) -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    if options is None:  # control: no stripping
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    else:
        provider.add_span_processor(
            op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter), options=options)
        )
    return provider, exporter


def test_hybrid_is_the_default_everywhere(monkeypatch):
    from otel_provenance.instrument.configure import strip_options_from_env

    monkeypatch.delenv("OTEL_PROVENANCE_STRIP", raising=False)
    assert DEFAULT_STRIP_MODE == "hybrid"
    assert StripOptions().mode == "hybrid"
    assert strip_options_from_env().mode == "hybrid"
    assert op.ProvenanceSpanProcessor().options.mode == "hybrid"
    monkeypatch.setenv("OTEL_PROVENANCE_STRIP", "denylist")
    assert strip_options_from_env().mode == "denylist"


# --- PydanticAI's own instrumentation, every version ----------------------------------------------


def _pydantic_ai_versions() -> tuple[int, ...]:
    """The instrumentation versions the installed pydantic-ai accepts, read from its signature."""
    require("pydantic_ai")
    import typing

    from pydantic_ai.models.instrumented import InstrumentationSettings

    return typing.get_args(typing.get_type_hints(InstrumentationSettings.__init__)["version"])


@pytest.mark.parametrize("version", [2, 3, 4, 5, 6])
def test_pydantic_ai_instrumentation_leaks_nothing_in_any_version(version, tmp_path):
    if version not in _pydantic_ai_versions():
        pytest.fail(f"pydantic-ai no longer accepts instrumentation version {version}: update the list")
    from pydantic import BaseModel, Field
    from pydantic_ai import Agent, Tool
    from pydantic_ai.capabilities import Instrumentation
    from pydantic_ai.messages import ModelResponse, ToolCallPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.models.instrumented import InstrumentationSettings

    c = {
        k: _canary()
        for k in ("instructions", "tool_doc", "out_doc", "prompt", "arg", "result", "out", "desc")
    }

    class Answer(BaseModel):
        answer: str = Field(description=f"the answer {c['out_doc']}")

    def respond(messages, info):
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("lookup", {"order": c["arg"]}, tool_call_id="call_1")])
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"answer": c["out"]}, "call_2")])

    path = tmp_path / "spans.jsonl"
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(
        op.ProvenanceSpanProcessor(
            SimpleSpanProcessor(JsonLinesSpanExporter(path)), SimpleSpanProcessor(memory)
        )
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # versions 2-4 are deprecated upstream
        settings = InstrumentationSettings(tracer_provider=provider, version=version)

    def lookup(order: str) -> str:
        return f"shipped {c['result']}"

    agent = Agent(
        FunctionModel(respond),
        tools=[Tool(lookup, description=f"Looks an order up {c['tool_doc']}")],
        name="refunds",
        description=f"handles refunds {c['desc']}",
        instructions=f"be brief {c['instructions']}",
        output_type=Answer,
        capabilities=[Instrumentation(settings=settings)],
    )
    assert agent.run_sync(f"refund {c['prompt']}").output.answer == c["out"]
    provider.shutdown()
    spans = memory.get_finished_spans()
    scopes = {span.instrumentation_scope.name for span in spans}
    assert scopes == {"pydantic-ai"}
    names = {span.name for span in spans}
    assert any(name.startswith("chat") for name in names)
    assert_absent(list(c.values()), [path.read_bytes(), *exported_bytes(spans)])
    # what the spans still say: operation, tool and agent names, models, token counts
    tool = next(span for span in spans if span.attributes.get("gen_ai.operation.name") == "execute_tool")
    assert tool.attributes["gen_ai.tool.name"] == "lookup"
    assert tool.attributes["gen_ai.agent.name"] == "refunds"
    chat = next(span for span in spans if span.attributes.get("gen_ai.operation.name") == "chat")
    assert "model_request_parameters" not in chat.attributes
    assert chat.attributes["gen_ai.usage.input_tokens"] > 0


def test_pydantic_ai_control_run_carries_the_canaries():
    """Without the processor the same run's spans hold ``model_request_parameters`` with the
    instructions and tool description: the test above would see a leak."""
    require("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import Instrumentation
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.models.test import TestModel

    secret = _canary()
    provider, exporter = _provider(None)
    settings = InstrumentationSettings(tracer_provider=provider)
    agent = Agent(TestModel(), instructions=secret, capabilities=[Instrumentation(settings=settings)])
    agent.run_sync("hi")
    chat = next(s for s in exporter.get_finished_spans() if "model_request_parameters" in s.attributes)
    assert secret in chat.attributes["model_request_parameters"]


# --- the other keys #36 lists, as their libraries write them --------------------------------------


def _azure(tracer, c) -> None:
    # Azure AI Agents tracing (azure-ai-agents): message JSON in gen_ai.event.content on gen_ai.* events
    with tracer.start_as_current_span(
        "process_thread_run", attributes={"gen_ai.system": "az.ai.agents", "gen_ai.operation.name": "process"}
    ) as span:
        for event in (
            "gen_ai.developer.message",
            "gen_ai.run.step.tool_calls",
            "gen_ai.run.step.message_creation",
            "gen_ai.user.message",
        ):
            span.add_event(
                event, {"gen_ai.event.content": json.dumps({"content": c()}), "gen_ai.thread.id": "t1"}
            )
        span.add_event("run.progress", {"gen_ai.event.content": json.dumps({"content": c()})})


def _memory(tracer, c) -> None:
    attributes = {
        "gen_ai.operation.name": "search_memory",
        "gen_ai.memory.store.id": "store-1",
        "gen_ai.memory.query.text": c(),
        "gen_ai.memory.records": json.dumps([{"id": "r1", "content": c()}]),
    }
    tracer.start_span("search_memory store-1", attributes=attributes).end()


def _genai_newer(tracer, c) -> None:
    tracer.start_span(
        "execute_tool lookup",
        attributes={
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "lookup",
            "gen_ai.tool.input": c(),
        },
    ).end()
    tracer.start_span(
        "invoke_agent refunds",
        attributes={
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "refunds",
            "gen_ai.agent.invocation_input": c(),
            "gen_ai.agent.description": c(),
        },
    ).end()


def _langfuse(provider, c) -> None:
    tracer = provider.get_tracer("langfuse-sdk", "3.0.0")
    attributes = {
        "langfuse.observation.type": "generation",
        "langfuse.observation.input": json.dumps([{"role": "user", "content": c()}]),
        "langfuse.observation.output": c(),
        "langfuse.observation.metadata.note": c(),
        "langfuse.trace.input": c(),
        "langfuse.trace.output": c(),
        "langfuse.trace.metadata.customer": c(),
    }
    tracer.start_span("generation", attributes=attributes).end()


def _haystack(provider, c) -> None:
    tracer = provider.get_tracer("haystack")
    attributes = {
        "haystack.component.name": "prompt_builder",
        "haystack.component.type": "PromptBuilder",
        "haystack.component.input": json.dumps({"query": c()}),
        "haystack.component.output": json.dumps({"prompt": c()}),
    }
    tracer.start_span("haystack.component.run", attributes=attributes).end()
    tracer.start_span(
        "haystack.pipeline.run",
        attributes={"haystack.pipeline.input_data": c(), "haystack.pipeline.output_data": c()},
    ).end()


def _mlflow(provider, c) -> None:
    tracer = provider.get_tracer("mlflow.tracing")
    attributes = {"mlflow.spanType": '"CHAT_MODEL"', "mlflow.chat.messages": json.dumps([{"content": c()}])}
    tracer.start_span("ChatModel", attributes=attributes).end()


def _exception_in_other_events(tracer, c) -> None:
    with tracer.start_as_current_span(
        "execute_tool refund", attributes={"gen_ai.operation.name": "execute_tool"}
    ) as s:
        s.add_event("tool.failed", {"exception.type": "ValueError", "exception.message": f"order {c()}"})
    with tracer.start_as_current_span("GET /orders/{id}", attributes={"http.route": "/orders/{id}"}) as s:
        s.add_event("retry", {"exception.type": "TimeoutError", "exception.message": c(), "attempt": 2})
        s.add_event("failed", {"exception.stacktrace": f"Traceback ... {c()}"})


def _vercel_ai_sdk(provider, c) -> None:
    # #50: the Vercel AI SDK's telemetry (its tracer is named "ai"; no gen_ai.* key on these shapes)
    tracer = provider.get_tracer("ai")
    tracer.start_span(
        "ai.generateText",
        attributes={"operation.name": "ai.generateText", "ai.model.id": "gpt-4o", "ai.prompt": c(),
                    "ai.response.text": c(), "ai.telemetry.metadata.customer": c()},
    ).end()  # fmt: skip
    tracer.start_span(
        "ai.toolCall",
        attributes={"ai.toolCall.name": "pay", "ai.toolCall.args": c(), "ai.toolCall.result": c()},
    ).end()
    provider.get_tracer("@vercel/otel").start_span(
        "ai.generateText.doGenerate",
        attributes={"ai.prompt.messages": c(), "ai.response.toolCalls": c(), "ai.response.object": c()},
    ).end()


def _logfire_events(provider, c) -> None:
    # #50: Logfire's LLM integrations write the messages as "events" on a span of scope "logfire"
    template = "Chat Completion with {request_data[model]!r}"
    provider.get_tracer("logfire").start_span(
        template,
        attributes={"logfire.msg_template": template, "events": json.dumps([{"content": c()}])},
    ).end()


def _foreign_error_type(provider, c) -> None:
    # #50: a library that writes str(error) into error.type, on an AI span and on an application's
    provider.get_tracer("openinference.instrumentation.acme").start_span(
        "llm", attributes={"openinference.span.kind": "LLM", "error.type": f"ValueError: prompt {c()!r}"}
    ).end()
    with provider.get_tracer("app").start_as_current_span("POST /refund") as span:
        span.set_attributes({"http.route": "/refund", "error.type": f"declined: card {c()} over limit"})
        span.set_status(StatusCode.ERROR, "declined")


PRODUCERS: dict[str, Callable] = {
    "azure-ai-agents": lambda p, c: _azure(p.get_tracer("azure.ai.agents"), c),
    "gen_ai-memory": lambda p, c: _memory(p.get_tracer("app"), c),
    "gen_ai-newer-keys": lambda p, c: _genai_newer(p.get_tracer("app"), c),
    "langfuse": _langfuse,
    "haystack": _haystack,
    "mlflow": _mlflow,
    "exception-in-other-events": lambda p, c: _exception_in_other_events(p.get_tracer("app"), c),
    "vercel-ai-sdk": _vercel_ai_sdk,
    "logfire-events": _logfire_events,
    "foreign-error-type": _foreign_error_type,
}


@pytest.mark.parametrize("producer", sorted(PRODUCERS))
def test_each_key_the_issue_lists_leaves_no_canary_in_the_default_mode(producer):
    canaries: list[str] = []

    def c() -> str:
        canaries.append(_canary())
        return canaries[-1]

    control, raw = _provider(None)
    PRODUCERS[producer](control, c)
    planted = list(canaries)
    blob = b"".join(exported_bytes(raw.get_finished_spans()))
    assert all(value.encode() in blob for value in planted), "control: the canaries are on the wire"
    canaries.clear()
    provider, exporter = _provider(StripOptions())
    PRODUCERS[producer](provider, c)
    assert canaries
    assert_absent(canaries, exported_bytes(exporter.get_finished_spans()))


def test_log_records_of_the_new_keys_and_events_leave_no_canary():
    require_logs_sdk()  # before the imports: the oldest supported SDK has none of these names
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor

    canaries = [_canary() for _ in range(5)]
    exporter = InMemoryLogRecordExporter()
    provider = LoggerProvider()
    provider.add_log_record_processor(op.ProvenanceLogRecordProcessor(SimpleLogRecordProcessor(exporter)))
    logger = provider.get_logger("azure.ai.agents")
    logger.emit(event_name="gen_ai.developer.message", body={"content": canaries[0]})
    logger.emit(event_name="gen_ai.run.step.tool_calls", attributes={"gen_ai.event.content": canaries[1]})
    app = provider.get_logger("app")
    app.emit(body="step done", attributes={"gen_ai.memory.query.text": canaries[2], "n": 1})
    app.emit(body={"logfire.msg": canaries[3]}, attributes={"langfuse.trace.input": canaries[4]})
    records = exporter.get_finished_logs()
    assert len(records) == 2  # both Azure events are content events: gone whole
    assert_absent(canaries, [otlp_json_logs(records)])


# --- the measurement: leaks and kept application keys, per mode -----------------------------------

#: Content under keys no list names yet, on spans AI libraries make: what a deny-list misses until it
#: catches up (shapes taken from libraries' habits: a vendor namespace, an unprefixed payload).
UNLISTED_AI_KEYS = (
    "acme_llm.request.body",
    "genkit:input",
    "agent_input",
    "vendor.completion.text",
    "llm.request.raw_messages",
)
#: An application's own non-content keys on its own (non-AI) spans.
APP_KEYS = {"http.route": "/orders/{id}", "order.count": 3, "app.region": "eu-west-1", "cache.hit": True}


def _corpus(provider, c) -> int:
    """Plant canaries under every listed and unlisted content key; return how many app keys were set."""
    for produce in PRODUCERS.values():
        produce(provider, c)
    tracer = provider.get_tracer("app")
    for key in UNLISTED_AI_KEYS:  # on a span an AI instrumentation made
        tracer.start_span("chat", attributes={"gen_ai.operation.name": "chat", key: c()}).end()
        provider.get_tracer("openinference.instrumentation.acme").start_span(
            "llm", attributes={key: c()}
        ).end()
    # the application's own spans: its keys, and one content key the deny-list knows
    for _ in range(3):
        tracer.start_span("handle order", attributes={**APP_KEYS, "input.value": c()}).end()
    return 3 * len(APP_KEYS)


def _measure(options: StripOptions) -> tuple[int, int, int, int]:
    """(canaries planted, canaries leaked, app keys set, app keys kept) for ``options``."""
    canaries: list[str] = []

    def c() -> str:
        canaries.append(_canary())
        return canaries[-1]

    provider, exporter = _provider(options)
    app_keys = _corpus(provider, c)
    spans = exporter.get_finished_spans()
    blob = b"".join(exported_bytes(spans))
    leaked = sum(value.encode() in blob for value in canaries)
    kept = sum(
        span.attributes.get(key) == value
        for span in spans
        if span.name == "handle order"
        for key, value in APP_KEYS.items()
    )
    return len(canaries), leaked, app_keys, kept


def test_measurement_behind_the_default(capsys):
    """The numbers in docs/stripping.md: hybrid leaks none and keeps every application key."""
    results = {mode: _measure(StripOptions(mode=mode)) for mode in ("hybrid", "denylist", "allowlist")}
    with capsys.disabled():
        for mode, (planted, leaked, keys, kept) in results.items():
            print(f"\n{mode}: {leaked} of {planted} canaries leave; {kept} of {keys} application keys kept")
    planted = results["hybrid"][0]
    assert results["hybrid"] == (planted, 0, 12, 12)
    # the unlisted keys, and Logfire's "events": too generic a name to deny (it would take an
    # application's own "app.events.count"); the default mode judges that span by the allow-list
    assert results["denylist"] == (planted, 2 * len(UNLISTED_AI_KEYS) + 1, 12, 12)
    assert results["allowlist"] == (planted, 0, 12, 3)  # only http.route is on the allow-list
