"""A framework's tool span of ``@op.tool``'s call is the same call, counted once (``model.mark_echoes``).

``@op.tool`` adopts a framework's ``execute_tool`` span when it finds one current (``instrument.adopt``).
OpenInference's OpenAI Agents instrumentation names its tool span only when the span ends, so
``@op.tool`` opens its own span inside it. Before, the processor then classified the outer span as a
second call of the same tool — marked as its retry (``agent.retry.number = 1``) — and, with
``enable_genai_semconv``, every offline check counted each call twice (without it, the offline checks
did not read OpenInference's tool spans at all).

The first tests drive the real SDK, the real instrumentation and a scripted model; the rest build runs
by hand, including a property that the shared walk up the tree agrees with a plain one.
"""

from __future__ import annotations

import asyncio
import io
import secrets
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import otel_provenance as op
from interop import FileSpanExporter, openinference_to_file, require
from otel_provenance import dialects, semconv
from otel_provenance.cli import run as cli_run
from otel_provenance.dialects import openinference, openllmetry
from otel_provenance.offline.model import Attributes, Run, Span, SpanKind, mark_echoes
from otel_provenance.offline.readers import iter_runs

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli_run(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def _agents_run(path: Path, genai: bool, customer: str, order: str) -> None:
    """Two runs of an OpenAI Agents SDK agent whose tools are ``@function_tool`` over ``@op.tool``,
    with OpenInference's instrumentation on, through the ProvenanceSpanProcessor into a file."""
    require("openinference.instrumentation.openai_agents")
    from agents import Agent, RunConfig, Runner, function_tool
    from agents.testing import ScriptedModel, assistant_message, function_call
    from openinference.instrumentation import TraceConfig
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    provider = TracerProvider(resource=Resource.create({"service.name": "agent", "service.version": "1.0"}))
    provider.add_span_processor(
        op.ProvenanceSpanProcessor(SimpleSpanProcessor(FileSpanExporter(path=str(path))))
    )

    @function_tool
    @op.tool(tracer_provider=provider)
    def lookup_order(customer: str) -> str:
        """Find the customer's latest order."""
        return order

    @function_tool
    @op.tool(side_effect="write", tracer_provider=provider)
    def refund(order_id: str) -> str:
        """Refund an order."""
        return "ok"

    instrumentor = OpenAIAgentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider, config=TraceConfig(enable_genai_semconv=genai))
    try:
        for turn in range(2):
            model = ScriptedModel(
                [
                    [function_call("lookup_order", {"customer": customer}, call_id=f"a{turn}")],
                    [function_call("refund", {"order_id": order}, call_id=f"b{turn}")],
                    [assistant_message("done")],
                ]
            )
            agent = Agent(name="support", instructions="Help.", tools=[lookup_order, refund], model=model)
            with op.run(run_id=f"run-{turn}", tracer_provider=provider):
                asyncio.run(
                    Runner.run(agent, "refund my order", run_config=RunConfig(tracing_disabled=False))
                )
            model.assert_complete()
    finally:
        instrumentor.uninstrument()
        provider.shutdown()


@pytest.mark.parametrize("genai", [True, False], ids=["genai-semconv", "openinference-only"])
def test_a_framework_span_around_op_tool_is_one_call_not_a_retry(tmp_path: Path, genai: bool) -> None:
    path = tmp_path / "traces.jsonl"
    customer, order = f"cust-{secrets.token_hex(6)}", f"ORD-{secrets.token_hex(6)}"  # canaries
    _agents_run(path, genai, customer, order)
    data = path.read_bytes()
    assert customer.encode() not in data and order.encode() not in data  # the framework's span too
    runs = list(iter_runs([path]))
    assert [r.run_id for r in runs] == ["run-0", "run-1"]
    for run in runs:
        calls = [s for s in run.spans if s.is_tool]
        assert [s.tool_name for s in calls] == ["lookup_order", "refund"]
        assert all(s.scope_name == "otel_provenance" for s in calls)
        assert [s.attributes[semconv.RETRY_NUMBER] for s in calls] == [0, 0]
        # the framework's span of each call is still there, without provenance of its own
        framework = [s for s in run.spans if s.attributes.get("openinference.span.kind") == "TOOL"]
        assert sorted(s.name for s in framework) == ["lookup_order", "refund"]
        assert all(not any(k.startswith("agent.") for k in s.attributes) for s in framework)
        assert all(s.echo for s in framework)
        # the refund's order id was observed in the lookup's own span, the call that is counted
        refund = calls[1]
        assert refund.attributes["agent.arg.order_id.source_span_id"] == calls[0].span_id
    code, out, _ = cli("audit", str(path))
    assert code == 0, out
    assert "2 run(s), 4 tool call(s)" in out


def test_a_framework_span_around_another_tool_is_still_classified(tmp_path: Path) -> None:
    """Only the same tool's span is the same call: an OpenInference tool that calls an ``@op.tool``
    of another name is a call of its own, and gets its provenance from the processor."""
    path = tmp_path / "traces.jsonl"
    provider, tracer = openinference_to_file(path, "agent", genai=True)

    @op.tool(tracer_provider=provider)
    def fetch_rate(currency: str) -> float:
        return 1.1

    @tracer.tool
    def convert(amount: int, currency: str) -> float:
        return amount * fetch_rate(currency)

    @tracer.tool
    @op.tool(tracer_provider=provider)
    def quote(amount: int) -> str:
        return f"{amount}"

    with op.run(run_id="r", tracer_provider=provider):
        convert(5, "EUR")
        quote(5)
    provider.shutdown()
    (run,) = iter_runs([path])
    calls = {(s.tool_name, s.scope_name != "otel_provenance"): s for s in run.spans if s.is_tool}
    assert sorted(calls) == [("convert", True), ("fetch_rate", False), ("quote", False)]
    assert calls[("convert", True)].attributes["agent.arg.currency.kind"] == "assumed"
    (outer,) = [s for s in run.spans if s.echo]
    assert outer.tool_name == "quote" and outer.scope_name == "agent"


# --- runs built by hand ----------------------------------------------------------------------------


def _span(
    span_id: int,
    parent: int | None,
    tool: str | None,
    *,
    own: bool = False,
    server: bool = False,
    during: tuple[int, int] | None = None,
    call_id: str | None = None,
) -> Span:
    """A span; ``during`` is its (start, end), by default (id, id + 100), so that no two nest in time."""
    attributes: dict[str, object] = {}
    if tool is not None:  # "": a tool span that names no tool
        attributes = {semconv.GEN_AI_OPERATION_NAME: semconv.EXECUTE_TOOL}
        if tool:
            attributes[semconv.GEN_AI_TOOL_NAME] = tool
    if own:
        attributes[semconv.SIDE_EFFECT] = "none"
    if call_id is not None:
        attributes[semconv.GEN_AI_TOOL_CALL_ID] = call_id
    start, end = during or (span_id, span_id + 100)
    return Span(
        TRACE,
        f"{span_id:016x}",
        None if parent is None else f"{parent:016x}",
        f"execute_tool {tool}" if tool else "step",
        SpanKind.SERVER if server else SpanKind.INTERNAL,
        start,
        end,
        attributes=Attributes(attributes),
    )


def _echoes(*spans: Span) -> list[str]:
    return [s.span_id[-1] for s in Run("r", spans).spans if s.echo]


def test_the_outer_span_without_side_effect_is_the_echo_even_at_the_root() -> None:
    assert _echoes(_span(1, None, "quote"), _span(2, 1, "quote", own=True)) == ["1"]
    # through spans that are no tool calls, as the OpenAI Agents SDK's own spans are
    assert _echoes(
        _span(1, None, None), _span(2, 1, "quote"), _span(3, 2, None), _span(4, 3, "quote", own=True)
    ) == ["2"]


def test_a_framework_span_in_a_branch_of_its_own_is_the_twin_of_the_call_it_contains() -> None:
    """OpenInference's LangChain instrumentation: agent → tools → its tool span, while ``@op.tool``'s
    span of the same call sits under another span of the agent. Its time contains ours: one call."""
    agent, tools_node, framework, model, ours = (
        _span(1, None, None, during=(0, 100)),
        _span(2, 1, None, during=(10, 60)),
        _span(3, 2, "refund", during=(11, 59)),
        _span(4, 1, None, during=(12, 58)),
        _span(5, 4, "refund", own=True, during=(20, 50)),
    )
    assert _echoes(agent, tools_node, framework, model, ours) == ["3"]
    # a framework span that does not contain ours in time is another call
    assert _echoes(agent, tools_node, _span(3, 2, "refund", during=(11, 19)), model, ours) == []
    # two calls, two framework spans, two @op.tool spans: each pairs with the tightest one around it
    calls = (
        _span(3, 1, "refund", during=(10, 90)),
        _span(4, 1, "refund", during=(30, 80)),
        _span(5, 1, "refund", own=True, during=(20, 25)),
        _span(6, 1, "refund", own=True, during=(40, 50)),
    )
    assert _echoes(agent, *calls) == ["3", "4"]
    # one framework span is the twin of one call only
    assert _echoes(agent, *calls[:1], *calls[2:]) == ["3"]


def test_the_same_tool_call_id_makes_twins_wherever_the_spans_are() -> None:
    before = _span(2, 1, "refund", call_id="call_7", during=(5, 8))
    ours = _span(3, 1, "refund", own=True, call_id="call_7", during=(20, 50))
    assert _echoes(_span(1, None, None, during=(0, 100)), before, ours) == ["2"]
    other = _span(2, 1, "refund", call_id="call_8", during=(5, 8))
    assert _echoes(_span(1, None, None, during=(0, 100)), other, ours) == []


def test_same_name_calls_that_are_two_calls_stay_two() -> None:
    # a tool that calls itself: both spans are @op.tool's
    assert _echoes(_span(1, None, "walk", own=True), _span(2, 1, "walk", own=True)) == []
    # the outer span is ours and the inner one is not: another instrumentation inside the tool
    assert _echoes(_span(1, None, "walk", own=True), _span(2, 1, "walk")) == []
    # neither is ours: nothing says which one is the call
    assert _echoes(_span(1, None, "walk"), _span(2, 1, "walk")) == []
    # another tool between them: the nearest tool ancestor is not the same tool
    assert _echoes(_span(1, None, "walk"), _span(2, 1, "plan"), _span(3, 2, "walk", own=True)) == []
    # ... even when their times nest, as nested calls' times do
    nested = (
        _span(1, None, "walk", during=(0, 100)),
        _span(2, 1, "plan", own=True, during=(10, 90)),
        _span(3, 2, "walk", own=True, during=(20, 80)),
    )
    assert _echoes(*nested) == []
    # a tool span that names no tool is still the nearest tool span
    assert _echoes(_span(1, None, "walk"), _span(2, 1, ""), _span(3, 2, "walk", own=True)) == []
    # siblings that do not nest in time are two calls
    assert _echoes(_span(1, None, None), _span(2, 1, "walk"), _span(3, 1, "walk", own=True)) == []


def _plain(spans: tuple[Span, ...]) -> set[str]:
    """The rules, each span's nearest tool ancestor walked up on its own, with no sharing."""
    by_id = {(s.trace_id, s.span_id): s for s in spans}

    def nearest_tool(span: Span) -> Span | None:
        parent = by_id.get((span.trace_id, span.parent_span_id))
        for _ in range(len(spans)):
            if parent is None or dialects.is_tool_span(parent.attributes):
                return parent
            parent = by_id.get((parent.trace_id, parent.parent_span_id))
        return None

    echoes = set()
    for span in spans:
        if not dialects.is_tool_span(span.attributes) or span.tool_name is None:
            continue
        parent = nearest_tool(span)
        if parent is None or parent is span or parent.tool_name != span.tool_name:
            continue
        if span.kind == SpanKind.SERVER:
            echoes.add(span.span_id)
    tools = [s for s in spans if dialects.is_tool_span(s.attributes) and s.tool_name is not None]
    framework = [s for s in tools if semconv.SIDE_EFFECT not in s.attributes and s.span_id not in echoes]
    own = sorted(
        (s for s in tools if semconv.SIDE_EFFECT in s.attributes and s.span_id not in echoes),
        key=lambda s: (s.start_ns, s.span_id),
    )
    twins: set[str] = set()
    for span in own:
        free = [f for f in framework if f.tool_name == span.tool_name and f.span_id not in twins]
        call_id = span.attributes.get(semconv.GEN_AI_TOOL_CALL_ID)
        same_id = [f for f in free if call_id and f.attributes.get(semconv.GEN_AI_TOOL_CALL_ID) == call_id]
        outer = nearest_tool(span)
        if same_id:
            twins.add(same_id[0].span_id)
        elif outer is not None:
            if outer is not span and outer in free:
                twins.add(outer.span_id)
        else:
            around = [f for f in free if f.start_ns <= span.start_ns and span.end_ns <= f.end_ns]
            if around:
                twins.add(min(around, key=lambda f: (f.end_ns - f.start_ns, f.span_id)).span_id)
    return echoes | twins


@st.composite
def _trees(draw) -> tuple[Span, ...]:
    """Spans whose parents are any span or none (cycles included), some of them tools of two names,
    at times that may nest, some with tool-call ids."""
    n = draw(st.integers(1, 24))
    spans = []
    for i in range(1, n + 1):
        parent = draw(st.none() | st.integers(1, n + 1))  # n + 1 is a parent that never arrived
        tool = draw(st.sampled_from([None, None, "a", "b", ""]))
        start = draw(st.integers(0, 20))
        during = (start, start + draw(st.integers(0, 20)))
        call_id = draw(st.none() | st.sampled_from(["c1", "c2"]))
        own, server = draw(st.booleans()), draw(st.booleans())
        spans.append(_span(i, parent, tool, own=own, server=server, during=during, call_id=call_id))
    return tuple(spans)


@given(_trees())
def test_the_shared_walk_marks_what_a_plain_walk_marks(spans: tuple[Span, ...]) -> None:
    assert {s.span_id for s in mark_echoes(spans) if s.echo} == _plain(spans)


@pytest.mark.parametrize(
    ("attributes", "tool", "name"),
    [
        (
            {semconv.GEN_AI_OPERATION_NAME: "execute_tool", semconv.GEN_AI_TOOL_NAME: "a", "tool.name": "b"},
            True,
            "a",
        ),
        ({openinference.KIND_KEY: "TOOL", "tool.name": "b"}, True, "b"),
        ({openllmetry.KIND_KEY: "tool", "traceloop.entity.name": "c"}, True, "c"),
        ({semconv.GEN_AI_OPERATION_NAME: "chat", openinference.KIND_KEY: "TOOL"}, False, None),
        ({openinference.KIND_KEY: "LLM"}, False, None),
        ({openllmetry.KIND_KEY: "task", semconv.GEN_AI_TOOL_NAME: 3, "tool.name": "b"}, False, "b"),
        ({}, False, None),
    ],
    ids=["genai", "openinference", "openllmetry", "another-operation", "llm", "not-a-string", "nothing"],
)
def test_both_halves_read_a_tool_span_and_its_name_alike(
    attributes: dict, tool: bool, name: str | None
) -> None:
    """``dialects.is_tool_span``/``tool_name`` decide for the processor online and the checks offline."""
    from otel_provenance.instrument.spans.foreign_calls import foreign_tool_call

    span = Span(TRACE, "0000000000000001", None, "span", attributes=Attributes(attributes))
    assert (dialects.is_tool_span(attributes), span.is_tool, span.tool_name) == (tool, tool, name)
    foreign = foreign_tool_call("span", {**attributes, "input.value": "{}", "output.value": "{}"})
    assert (foreign is not None) is tool
