"""Stripping and classification under OpenLLMetry's LangChain instrumentation, installed (interop extra)
and driven for real with a LangChain fake chat model and tools: no canary reaches the OTLP bytes.

Its own file because the instrumentor changes LangChain for the rest of the process and cannot be
undone there (uninstrumented and instrumented again, it records nothing): it is marked ``last`` so it
runs after every other test (tests/conftest.py), and mutmut, which runs the suite more than once in one
process, leaves this file out (``[tool.mutmut]`` in pyproject.toml).
"""

from __future__ import annotations

import secrets

import pytest
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from test_strip_frameworks import ALLOWLIST, _canary, _span_bytes

import otel_provenance as op
from otel_provenance.instrument.spans.redaction import StripOptions

pytestmark = pytest.mark.last


class _Switch(SpanProcessor):
    """The instrumentor binds one provider for the process: route its spans to the current set-up."""

    def __init__(self) -> None:
        self.current: SpanProcessor | None = None
        self.provider: TracerProvider | None = None

    def on_start(self, span, parent_context=None) -> None:
        if self.current is not None:
            self.current.on_start(span, parent_context=parent_context)

    def on_end(self, span) -> None:
        if self.current is not None:
            self.current.on_end(span)


@pytest.fixture(scope="module")
def langchain_switch():
    instrumentation = pytest.importorskip("opentelemetry.instrumentation.langchain")

    switch = _Switch()
    provider = TracerProvider()
    provider.add_span_processor(switch)
    switch.provider = provider
    instrumentor = instrumentation.LangchainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    yield switch
    instrumentor.uninstrument()


def _drive_langchain(switch: _Switch, options: StripOptions | None, canaries: list[str]):
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.tools import tool

    exporter = InMemorySpanExporter()
    sink = SimpleSpanProcessor(exporter)
    switch.current = sink if options is None else op.ProvenanceSpanProcessor(sink, options=options)
    arg, result, system, question, answer = (_canary() for _ in range(5))
    canaries += [arg, result, system, question, answer]

    @tool
    def lookup_account(account: str) -> dict:
        """Look up an account."""
        return {"account": account, "note": result}

    try:
        assert lookup_account.invoke({"account": arg})["note"] == result
        model = GenericFakeChatModel(messages=iter([AIMessage(content=answer)]))
        prompt = ChatPromptTemplate.from_messages([("system", system), ("human", "{q}")])
        assert (prompt | model | StrOutputParser()).invoke({"q": question}) == answer
    finally:
        switch.current = None
    return exporter.get_finished_spans()


def test_openllmetry_langchain_instrumentation_leaks_nothing(langchain_switch):
    seen: list[str] = []
    control = _drive_langchain(langchain_switch, None, seen)
    raw = _span_bytes(control)
    assert all(c.encode() in raw for c in seen), "control: the instrumentation must record the content"
    assert any("gen_ai.task.input" in s.attributes for s in control)

    for options in (StripOptions(), ALLOWLIST):
        canaries: list[str] = []
        spans = _drive_langchain(langchain_switch, options, canaries)
        assert {s.name for s in spans} >= {"execute_tool lookup_account", "RunnableSequence.workflow"}
        data = _span_bytes(spans)
        leaked = [c for c in canaries if c.encode() in data]
        assert leaked == [], f"{options.mode}: {len(leaked)} canaries leaked"
        tool_span = next(s for s in spans if s.name == "execute_tool lookup_account")
        assert tool_span.attributes["gen_ai.tool.name"] == "lookup_account"  # identity survives


def test_openllmetry_langchain_tool_spans_are_classified(langchain_switch):
    """The callback's wrapper (input_str, tags, metadata, kwargs) is not the call: only its inputs are."""
    from langchain_core.tools import tool

    from otel_provenance import semconv as sc

    account = "ACC-" + secrets.token_hex(6)

    @tool
    def find_account(customer: str) -> dict:
        """Find a customer's account."""
        return {"account_id": account}

    @tool
    def close_account(account_id: str) -> str:
        """Close an account."""
        return "closed"

    exporter = InMemorySpanExporter()
    langchain_switch.current = op.ProvenanceSpanProcessor(
        SimpleSpanProcessor(exporter), foreign_argument_names={"close_account": ["account_id"]}
    )
    try:
        with langchain_switch_root(langchain_switch):
            find_account.invoke({"customer": "cust-1"})
            close_account.invoke({"account_id": account})
            close_account.invoke({"account_id": "ACC-guessed"})
    finally:
        langchain_switch.current = None
    closes = [s for s in exporter.get_finished_spans() if s.name == "execute_tool close_account"]
    kinds = [s.attributes[sc.arg_attr("account_id", sc.ARG_KIND_SUFFIX)] for s in closes]
    assert kinds == [sc.KIND_OBSERVED, sc.KIND_ASSUMED]
    assert closes[0].attributes[sc.arg_attr("account_id", sc.ARG_SOURCE_TOOL_SUFFIX)] == "find_account"
    finds = [s for s in exporter.get_finished_spans() if s.name == "execute_tool find_account"]
    assert sc.arg_attr("arguments.0", sc.ARG_KIND_SUFFIX) in finds[0].attributes  # no schema: position
    assert not any("input_str" in k or "kwargs" in k for s in finds + closes for k in s.attributes)
    assert account.encode() not in _span_bytes(exporter.get_finished_spans())


def langchain_switch_root(switch: _Switch):
    """One trace for the three tool calls: a root span from the instrumented provider's tracer."""
    from opentelemetry import trace

    return trace.get_tracer("agent", tracer_provider=switch.provider).start_as_current_span("agent")


def test_op_tool_inside_an_openllmetry_langchain_tool_is_one_call(langchain_switch, tmp_path):
    """LangChain's ``@tool`` over ``@op.tool``, with OpenLLMetry's instrumentation on: its tool span and
    ``@op.tool``'s are one call, online and offline (this version's span is named when it starts, so
    ``@op.tool`` adopts it). Each call is classified once: the second is no retry of the first."""
    from langchain_core.tools import tool

    from interop import otlp_json_spans
    from otel_provenance import semconv as sc
    from otel_provenance.offline.readers import iter_runs

    exporter = InMemorySpanExporter()
    provider = langchain_switch.provider

    @tool
    @op.tool(tracer_provider=provider)
    def find_account(customer: str) -> dict:
        """Find a customer's account."""
        return {"account_id": "ACC-1"}

    @tool
    @op.tool(side_effect="write", tracer_provider=provider)
    def close_account(account_id: str) -> str:
        """Close an account."""
        return "closed"

    langchain_switch.current = op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter))
    try:
        with op.run(run_id="r", tracer_provider=provider):
            find_account.invoke({"customer": "cust-1"})
            close_account.invoke({"account_id": "ACC-1"})
    finally:
        langchain_switch.current = None
    path = tmp_path / "t.jsonl"
    path.write_bytes(otlp_json_spans(exporter.get_finished_spans()) + b"\n")
    (run,) = iter_runs([path])
    calls = [s for s in run.spans if s.is_tool]
    assert [s.tool_name for s in calls] == ["find_account", "close_account"]
    assert [s.attributes[sc.RETRY_NUMBER] for s in calls] == [0, 0]
    assert calls[1].attributes[sc.arg_attr("account_id", sc.ARG_KIND_SUFFIX)] == sc.KIND_OBSERVED
    assert calls[1].attributes[sc.arg_attr("account_id", sc.ARG_SOURCE_SPAN_ID_SUFFIX)] == calls[0].span_id
