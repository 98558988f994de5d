"""Stripping against what real agent stacks write (#18 points 1 and 3).

* OpenLLMetry's LangChain instrumentation driven for real: tests/instrument/test_strip_openllmetry.py.
* One span per surveyed family, reproduced attribute for attribute from the library's source
  (docs/stripping.md lists library, version and keys): no canary with the default deny-list.
* Allow-list mode: the eleven key shapes that no deny-list names find no canary either.
* Key decisions are linear in the number of parts and bounded in length.
"""

from __future__ import annotations

import json
import re
import secrets
import threading

import pytest
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs as encode_logs_proto
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans as encode_spans_proto
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Link

import otel_provenance as op
from interop import logs_sdk
from otel_provenance.instrument.spans.redaction import StripOptions, strip_attributes
from otel_provenance.otlp_encoding import json_line

ALLOWLIST = StripOptions(mode="allowlist")


def _canary() -> str:
    return "cnry" + secrets.token_hex(10)


def _span_bytes(spans) -> bytes:
    return (
        encode_spans_proto(spans).SerializeToString()
        + json_line(encode_spans_proto(spans)).encode()  # the OTLP JSON a file exporter writes
    )


def _provider(options: StripOptions | None, resource: Resource | None = None):
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=resource or Resource.create({}))
    if options is None:  # control: no stripping
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    else:
        provider.add_span_processor(
            op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter), options=options)
        )
    return provider, exporter


# --- one span per surveyed family, reproduced from its source ----------------------------------------


def _families(c) -> dict[str, dict[str, object]]:
    """Attributes each library writes (see docs/stripping.md for versions and source files)."""
    return {
        "openllmetry-langchain-task": {
            "traceloop.span.kind": "task",
            "gen_ai.operation.name": "execute_task",
            "gen_ai.task.name": "ChatPromptTemplate",
            "gen_ai.task.input": json.dumps({"inputs": {"q": c()}}),
            "gen_ai.task.output": json.dumps({"outputs": c()}),
            "traceloop.entity.input": json.dumps({"inputs": {"q": c()}}),
        },
        "openllmetry-mcp": {
            "mcp.method.name": "tools/call",
            "mcp.request.argument": json.dumps({"name": "lookup", "arguments": {"account": c()}}),
            "mcp.response.value": json.dumps({"content": [{"type": "text", "text": c()}]}),
            "traceloop.entity.input": json.dumps({"args": [c()]}),
        },
        "openllmetry-crewai": {
            "crewai.crew.result": c(),
            "crewai.agent.result": c(),
            "crewai.task.result": c(),
            "crewai.crew.tasks_output": c(),
            "crewai.crew.tasks": json.dumps([{"description": c(), "expected_output": c()}]),
            "crewai.agent.goal": c(),
            "crewai.agent.backstory": c(),
            "crewai.task.description": c(),
            "crewai.task.expected_output": c(),
            "crewai.agent.role": "researcher",
        },
        "google-adk-tool": {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "get_weather",
            "gen_ai.tool.description": c(),
            "gcp.vertex.agent.llm_request": "{}",
            "gcp.vertex.agent.llm_response": "{}",
            "gcp.vertex.agent.tool_call_args": json.dumps({"city": c()}),
            "gcp.vertex.agent.tool_response": json.dumps({"result": c()}),
            "gcp.vertex.agent.event_id": "evt-1",
        },
        "google-adk-llm": {
            "gen_ai.system": "gcp.vertex.agent",
            "gen_ai.request.model": "gemini-2.0-flash",
            "gcp.vertex.agent.llm_request": json.dumps({"contents": [{"parts": [{"text": c()}]}]}),
            "gcp.vertex.agent.llm_response": json.dumps({"content": {"parts": [{"text": c()}]}}),
            "gcp.vertex.agent.data": json.dumps([{"parts": [{"text": c()}]}]),
            "gcp.vertex.agent.invocation_id": "inv-1",
        },
        "mlflow": {
            "mlflow.spanType": '"TOOL"',
            "mlflow.spanInputs": json.dumps({"query": c()}),
            "mlflow.spanOutputs": json.dumps({"response": c()}),
            "mlflow.chat.tools": json.dumps([{"function": {"description": c()}}]),
        },
        "openinference-smolagents": {
            "openinference.span.kind": "AGENT",
            "smolagents.task": c(),
            "smolagents.additional_args": json.dumps({"k": c()}),
            "smolagents.max_steps": 10,
            "input.value": c(),
            "output.value": c(),
        },
        "pydantic-ai-logfire": {
            "gen_ai.tool.name": "lookup",
            "tool_arguments": json.dumps({"account": c()}),
            "tool_response": c(),
            "final_result": c(),
            "pydantic_ai.all_messages": json.dumps([{"parts": [{"content": c()}]}]),
        },
        "langsmith-otel": {
            "gen_ai.operation.name": "execute_tool",
            "langsmith.span.kind": "tool",
            "gen_ai.prompt": json.dumps({"input": c()}),
            "gen_ai.completion": json.dumps({"output": c()}),
            "gen_ai.request.extra_body": json.dumps({"messages": [c()]}),
            "gen_ai.serialized.doc": c(),
        },
        "util-genai": {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.call.arguments": json.dumps({"account": c()}),
            "gen_ai.tool.call.result": json.dumps({"note": c()}),
        },
    }


@pytest.mark.parametrize("family", sorted(_families(lambda: "x")))
@pytest.mark.parametrize("mode", ["hybrid", "denylist", "allowlist"])
def test_each_surveyed_family_leaks_nothing(family, mode):
    canaries: list[str] = []

    def c() -> str:
        canaries.append(_canary())
        return canaries[-1]

    attributes = _families(c)[family]
    provider, exporter = _provider(StripOptions(mode=mode))
    provider.get_tracer("family").start_span(family, attributes=attributes).end()
    data = _span_bytes(exporter.get_finished_spans())
    assert canaries and [x for x in canaries if x.encode() in data] == []


def test_deny_list_keeps_identity_of_the_new_families():
    kept = strip_attributes(
        {"crewai.agent.role": "r", "gen_ai.task.name": "t", "gcp.vertex.agent.event_id": "e"}, StripOptions()
    )
    assert kept == {"crewai.agent.role": "r", "gen_ai.task.name": "t", "gcp.vertex.agent.event_id": "e"}


# --- allow-list mode: the key shapes no deny-list names -----------------------------------------------


@logs_sdk
def test_allowlist_removes_the_eleven_key_shapes():
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor

    canaries: list[str] = []

    def c() -> str:
        canaries.append(_canary())
        return canaries[-1]

    resource = Resource.create({"service.name": "svc", "deployment.note": c()})
    for options in (None, ALLOWLIST):
        canaries.clear()
        provider, exporter = _provider(options, resource)
        tracer = provider.get_tracer("shapes", attributes={"scope.note": c()})
        with tracer.start_as_current_span("leaky") as parent:
            pass
        span = tracer.start_span(
            "GET",
            attributes={
                "http.url": f"https://api.example.com/v1/accounts?q={c()}",  # 1 deprecated URL
                "url.full": f"https://u:{c()}@api.example.com:8443/a/{c()}#{c()}",  # 2 user info, path
                "db.statement": f"SELECT * FROM t WHERE k = '{c()}'",  # 3
                "db.query.text": f"SELECT {c()}",  # 4
                "tags": [c(), c()],  # 5 a tags array
                "metadata": json.dumps({"user_note": c()}),  # 6 OpenInference metadata
                "http.response.status_code": 200,
                "gen_ai.request.model": "m-1",
            },
            links=[Link(parent.get_span_context(), {"note": c()})],  # 7 plain link key
        )
        span.add_event("log", {"message": c()})  # 8 plain event key
        span.add_event("error", {"exception.message": c(), "exception.type": "ValueError"})  # 9
        span.end()
        data = _span_bytes(exporter.get_finished_spans())

        log_exporter = InMemoryLogRecordExporter()
        logs = LoggerProvider(resource=resource)
        inner = SimpleLogRecordProcessor(log_exporter)
        logs.add_log_record_processor(
            inner if options is None else op.ProvenanceLogRecordProcessor(inner, options=options)
        )
        logger = logs.get_logger("shapes")
        logger.emit(body=f"user said {c()}", attributes={"comment": c()})  # 10 string body
        logger.emit(body={"note": c()})  # 11 map body with a key on no list
        data += json_line(encode_logs_proto(log_exporter.get_finished_logs())).encode()

        leaked = [x for x in canaries if x.encode() in data]
        if options is None:
            assert len(leaked) == len(canaries), "control: every shape carries its canary"
            continue
        assert leaked == []
        exported = next(s for s in exporter.get_finished_spans() if s.name == "GET")
        assert exported.attributes == {
            "http.url": "https://api.example.com",
            "url.full": "https://api.example.com:8443",
            "http.response.status_code": 200,
            "gen_ai.request.model": "m-1",
        }
        assert [dict(e.attributes) for e in exported.events] == [{}, {"exception.type": "ValueError"}]
        assert dict(exported.resource.attributes)["service.name"] == "svc"


def test_allowlist_value_rules_and_user_keys():
    options = StripOptions(mode="allowlist", allow={"myapp.route", "myapp.cfg"})
    out = strip_attributes(
        {
            "gen_ai.usage.input_tokens": "12 tokens",  # a number key with text: dropped
            "gen_ai.usage.output_tokens": 7,
            "gen_ai.request.model": "line one\nline two",  # not an identifier
            "gen_ai.response.finish_reasons": ["stop"],
            "myapp.route": "/anything goes",
            "myapp.cfg": {"size": 3, "input.value": "x"},  # under a user key: default names still apply
            "agent.arg.account.kind": "assumed",
        },
        options,
    )
    assert out == {
        "gen_ai.usage.output_tokens": 7,
        "gen_ai.response.finish_reasons": ("stop",),
        "myapp.route": "/anything goes",
        "myapp.cfg": {"size": 3},
        "agent.arg.account.kind": "assumed",
    }


def test_configure_strip_allowlist_and_env(monkeypatch, tmp_path):
    from otel_provenance.instrument.configure import strip_options_from_env

    monkeypatch.setenv("OTEL_PROVENANCE_STRIP", "allowlist")
    assert strip_options_from_env().mode == "allowlist"
    assert strip_options_from_env("denylist").mode == "denylist"
    monkeypatch.setenv("OTEL_PROVENANCE_STRIP", "everything")
    with pytest.raises(op.ConfigurationError, match="OTEL_PROVENANCE_STRIP"):
        strip_options_from_env()
    monkeypatch.delenv("OTEL_PROVENANCE_STRIP")
    provider = op.configure(strip="allowlist", exporter="none", set_global=False)
    wrapper = provider._active_span_processor._span_processors[-1]
    assert wrapper.options.mode == "allowlist"
    with pytest.raises(op.ConfigurationError, match="strip"):
        op.configure(strip="allowlist", options=StripOptions(), exporter="none", set_global=False)
    with pytest.raises(op.ConfigurationError, match="mode"):
        StripOptions(mode="maybe")


# --- linear key decisions ---------------------------------------------------------------------------


def test_long_keys_are_forbidden_outright_and_decisions_are_linear():
    key = ".".join(f"p{i}" for i in range(3200))
    assert StripOptions().is_forbidden(key)  # past max_key_length: forbidden without matching
    assert StripOptions().decide(key) == (True, 0)

    # Without the bound, the trie walk is linear: steps grow in proportion to the parts.
    unbounded = StripOptions(max_key_length=10**7)
    steps = {n: unbounded.decide(".".join(f"p{i}" for i in range(n)))[1] for n in (800, 1600, 3200)}
    assert steps[3200] <= 2 * steps[1600] + 10 and steps[1600] <= 2 * steps[800] + 10
    assert steps[3200] <= 2 * 3200  # two probes (exact, wildcard) per part from each start
    # a key of 3,200 parts that *contains* a forbidden name is still found
    assert unbounded.decide(key + ".gen_ai.task.input")[0]
    assert unbounded.decide("x." * 1600 + "crewai.task.result")[0]


@logs_sdk
def test_a_3200_part_log_map_key_does_not_stall_emit():
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor

    exporter = InMemoryLogRecordExporter()
    logs = LoggerProvider()
    logs.add_log_record_processor(op.ProvenanceLogRecordProcessor(SimpleLogRecordProcessor(exporter)))
    key = ".".join(["part"] * 3200)
    done = threading.Event()

    def emit() -> None:
        logs.get_logger("t").emit(body={key: "v", "ok": 1}, attributes={key: "v"})
        done.set()

    worker = threading.Thread(target=emit, daemon=True)
    worker.start()
    worker.join(10)  # generous: a cubic matcher needed ~50 s for this key
    assert done.is_set()
    (record,) = exporter.get_finished_logs()
    assert record.log_record.body == {"ok": 1}
    assert key not in (record.log_record.attributes or {})


def test_docs_list_exactly_the_allowlist_keys_and_the_default_names():
    from pathlib import Path

    from otel_provenance.instrument.spans.allowlist import ALLOWED_KEYS
    from otel_provenance.instrument.spans.redaction import DEFAULT_FORBIDDEN_KEYS

    text = (Path(__file__).parents[2] / "docs" / "stripping.md").read_text()
    section = text.split("### Allow-list mode", 1)[1].split("Value rules:", 1)[0]
    documented = {cell for cell in section.split("`") if "." in cell and re.fullmatch(r"[a-z_][\w.*]*", cell)}
    assert set(ALLOWED_KEYS) <= documented
    assert documented - set(ALLOWED_KEYS) <= {
        "otel_provenance.instrument.spans.allowlist",
        "agent.*",
        "agent.arg.*",
        "agent.violations",
    }
    missing = [name for name in DEFAULT_FORBIDDEN_KEYS if f"`{name}`" not in text]
    assert missing == []
