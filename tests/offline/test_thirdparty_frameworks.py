"""Traces written by real third-party instrumentation — fingerprinted, mined and gated (#12).

Three instrumentations from the package index, each driven offline and exported by the official
OTLP JSON file exporter, none of them touched by this package:

- ``opentelemetry-util-genai``: ``invoke_agent`` spans (with ``gen_ai.conversation.id``) and
  ``execute_tool`` spans from its ``TelemetryHandler``;
- OpenInference's ``OITracer.tool`` decorator with its GenAI conventions on, turns grouped by
  OpenInference's ``using_session`` (``session.id``);
- the OpenAI Agents SDK running an agent on its own ``ScriptedModel`` (no model, no network), its
  tracing bridged to OpenTelemetry by ``openinference-instrumentation-openai-agents``.

Their tool spans carry ``gen_ai.*`` attributes but no ``agent.*`` ones, so they are fingerprinted,
mined and gated by tool identity (routes, required steps) and order (a ``forbidden_paths`` rule);
provenance (``audit``) reports insufficient evidence. A release on the approved route passes (0),
one with another tool or another order fails (2).
"""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest
import yaml
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from interop import FileSpanExporter, openinference_to_file, require
from otel_provenance import semconv
from otel_provenance.cli import run
from otel_provenance.offline.readers import read_spans
from otel_provenance.offline.runs import group_runs

APPROVED = ("lookup_order", "refund")
OTHER_TOOL = ("delete_account", "refund")
OTHER_ORDER = ("refund", "lookup_order")
SESSIONS = 3
TURNS = 2

Writer = Callable[[Path, str, tuple[str, ...]], Path]


def cli(*argv: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


def _provider(path: Path, release: str) -> TracerProvider:
    provider = TracerProvider(resource=Resource.create({"service.name": "agent", "service.version": release}))
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(path=str(path))))
    return provider


def write_util_genai(path: Path, release: str, route: tuple[str, ...]) -> Path:
    TelemetryHandler = require("opentelemetry.util.genai.handler").TelemetryHandler

    provider = _provider(path, release)
    handler = TelemetryHandler(tracer_provider=provider)
    for session in range(SESSIONS):
        for _ in range(TURNS):  # each turn its own trace, one conversation id per session
            with handler.invoke_local_agent(
                agent_name="support", conversation_id=f"{release}-conv-{session}"
            ):
                for name in route:
                    with handler.tool(name, tool_type="function"):
                        pass
    provider.shutdown()
    return path


def write_openinference(path: Path, release: str, route: tuple[str, ...], genai: bool = True) -> Path:
    require("openinference.instrumentation")
    from openinference.instrumentation import OITracer, TraceConfig, using_session

    provider = _provider(path, release)
    tracer = OITracer(provider.get_tracer("support-agent"), config=TraceConfig(enable_genai_semconv=genai))

    @tracer.tool
    def lookup_order(customer: str) -> dict:
        return {"order": "ORD-1"}

    @tracer.tool
    def refund(order_id: str) -> str:
        return "ok"

    @tracer.tool
    def delete_account(customer: str) -> str:
        return "gone"

    tools = {"lookup_order": lambda: lookup_order("c-1"), "refund": lambda: refund("ORD-1")}
    tools["delete_account"] = lambda: delete_account("c-1")
    for session in range(SESSIONS):
        with using_session(f"{release}-session-{session}"):
            for _ in range(TURNS):
                with tracer.start_as_current_span("support turn", openinference_span_kind="agent"):
                    for name in route:
                        tools[name]()
    provider.shutdown()
    return path


def write_openai_agents(path: Path, release: str, route: tuple[str, ...], genai: bool = True) -> Path:
    require("openinference.instrumentation.openai_agents")
    from agents import Agent, RunConfig, Runner, function_tool
    from agents.testing import ScriptedModel, assistant_message, function_call
    from openinference.instrumentation import TraceConfig
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    @function_tool
    def lookup_order(customer: str) -> str:
        """Find the customer's latest order."""
        return "ORD-1"

    @function_tool
    def refund(order_id: str) -> str:
        """Refund an order."""
        return "ok"

    @function_tool
    def delete_account(customer: str) -> str:
        """Delete the customer's account."""
        return "gone"

    arguments = {"lookup_order": {"customer": "c-1"}, "refund": {"order_id": "ORD-1"}}
    arguments["delete_account"] = {"customer": "c-1"}
    provider = _provider(path, release)
    instrumentor = OpenAIAgentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider, config=TraceConfig(enable_genai_semconv=genai))
    try:
        for session in range(SESSIONS):
            for turn in range(TURNS):
                steps = [
                    [function_call(name, arguments[name], call_id=f"call-{session}-{turn}-{i}")]
                    for i, name in enumerate(route)
                ]
                model = ScriptedModel([*steps, [assistant_message("done")]])
                agent = Agent(
                    name="support",
                    instructions="Help the customer.",
                    tools=[lookup_order, refund, delete_account],
                    model=model,
                )
                config = RunConfig(group_id=f"{release}-group-{session}", tracing_disabled=False)
                asyncio.run(Runner.run(agent, "refund my last order", run_config=config))
                model.assert_complete()
    finally:
        instrumentor.uninstrument()
        provider.shutdown()
    return path


FRAMEWORKS: dict[str, Writer] = {
    "util-genai": write_util_genai,
    "openinference": write_openinference,
    "openai-agents": write_openai_agents,
    # without the GenAI conventions: tool spans marked only openinference.span.kind=TOOL
    "openinference-only": partial(write_openinference, genai=False),
    "openai-agents-openinference-only": partial(write_openai_agents, genai=False),
}


def _order_rule(contract: Path) -> None:
    """Tool order is a contract rule (fingerprints ignore sibling time order by design)."""
    doc = yaml.safe_load(contract.read_text())
    doc["rules"].append(
        {
            "id": "refund_after_lookup",
            "type": "forbidden_paths",
            "to": {"step": "refund"},
            "unless_preceded_by": {"step": "lookup_order"},
        }
    )
    doc.pop("seal")  # edited by hand: unsealed (docs/contracts.md, "A contract cut short")
    contract.write_text(yaml.safe_dump(doc, sort_keys=False))


@pytest.mark.parametrize("framework", sorted(FRAMEWORKS))
def test_third_party_traces_are_fingerprinted_mined_and_gated(tmp_path: Path, framework: str) -> None:
    write = FRAMEWORKS[framework]
    approved = write(tmp_path / "approved.jsonl", "v1", APPROVED)
    spans = list(read_spans([approved]))
    tools = [s for s in spans if s.is_tool]
    assert [s.tool_name for s in sorted(tools, key=lambda s: s.start_ns)][:2] == list(APPROVED)
    assert len(tools) == 2 * SESSIONS * TURNS
    for span in spans:  # evidence this package did not write: no agent.run.id, no argument kinds
        assert semconv.RUN_ID not in span.attributes
        assert not any(key.startswith(semconv.ARG_PREFIX) for key in span.attributes)

    code, out, _ = cli("fingerprint", approved, "--format", "json")
    rows = json.loads(out)["runs"]
    assert code == 0 and len(rows) == SESSIONS * TURNS  # one run per trace by default
    assert len({row["fingerprint"] for row in rows}) == 1

    contract = tmp_path / "contract.yaml"
    code, out, err = cli("mine", "--approved", approved, "-o", contract)
    assert code == 0, err
    mined = yaml.safe_load(contract.read_text())
    assert {rule["type"] for rule in mined["rules"]} >= {"approved_routes", "required_spans"}
    _order_rule(contract)

    releases = {"v2": (APPROVED, 0), "v3": (OTHER_TOOL, 2), "v4": (OTHER_ORDER, 2)}
    for release, (route, expected) in releases.items():
        traces = write(tmp_path / f"{release}.jsonl", release, route)
        code, out, err = cli("gate", "check", "--contract", contract, "--release", release, traces)
        assert code == expected, (release, out, err)
    code, out, _ = cli("gate", "check", "--contract", contract, "--release", "v4", tmp_path / "v4.jsonl")
    assert "FORBIDDEN_PATH" in out and "UNAPPROVED_ROUTE" not in out  # the order, not the tools
    code, out, _ = cli("gate", "check", "--contract", contract, "--release", "v3", tmp_path / "v3.jsonl")
    assert "UNAPPROVED_ROUTE" in out

    code, out, _ = cli("audit", approved)
    assert code == 3  # provenance needs agent.arg.* kinds: insufficient evidence, never a pass


@pytest.mark.parametrize(
    ("framework", "attribute"),
    [("util-genai", "gen_ai.conversation.id"), ("openinference", "session.id")],
)
def test_run_attribute_groups_a_session_of_traces_into_one_run(
    tmp_path: Path, framework: str, attribute: str
) -> None:
    write = FRAMEWORKS[framework]
    approved = write(tmp_path / "approved.jsonl", "v1", APPROVED)
    code, out, _ = cli("fingerprint", approved, "--format", "json", "--run-attribute", attribute)
    rows = json.loads(out)["runs"]
    assert code == 0 and len(rows) == SESSIONS
    assert all(row["run_id"].startswith("v1-") for row in rows)
    assert all(row["steps"] == TURNS * (1 + len(APPROVED)) for row in rows)

    contract = tmp_path / "contract.yaml"
    assert cli("mine", "--approved", approved, "-o", contract, "--run-attribute", attribute)[0] == 0
    good = write(tmp_path / "good.jsonl", "v2", APPROVED)
    bad = write(tmp_path / "bad.jsonl", "v3", OTHER_TOOL)
    for release, traces, expected in (("v2", good, 0), ("v3", bad, 2)):
        for jobs in ("1", "2"):
            code, out, err = cli(
                "gate", "check", "--contract", contract, "--release", release, traces,
                "--run-attribute", attribute, "--jobs", jobs,
            )  # fmt: skip
            assert code == expected, (release, jobs, out, err)
            assert f"{SESSIONS} evaluated" in out
    code, out, _ = cli("audit", approved, "--run-attribute", attribute)
    assert code == 3


def test_run_attribute_reads_span_then_resource_and_keeps_agent_run_id_semantics() -> None:
    from otel_provenance.offline.model import Attributes, Span

    def span(trace: int, sid: int, attributes: dict, resource: dict | None = None) -> Span:
        return Span(
            f"{trace:032x}",
            f"{sid:016x}",
            None,
            "s",
            attributes=Attributes(attributes),
            resource=Attributes(resource or {}),
        )

    spans = [
        span(1, 1, {"session.id": "a"}),
        span(2, 2, {}, {"session.id": "a"}),  # on the resource only
        span(3, 3, {"session.id": 7}),  # an integer value names a run too
        span(4, 4, {"session.id": 7, semconv.RUN_ID: 7}),
        span(5, 5, {semconv.RUN_ID: 7}),  # a non-string agent.run.id joins nothing, as before
        span(6, 6, {}),
    ]
    by_session = {r.run_id: len(r.spans) for r in group_runs(spans, run_attribute="session.id")}
    assert by_session == {"a": 2, "7": 2, f"{5:032x}": 1, f"{6:032x}": 1}
    assert len(group_runs(spans)) == 6  # by default: agent.run.id, strings only


def test_openinference_tool_spans_classified_online_are_the_calls_audited_offline(tmp_path: Path) -> None:
    """Without its GenAI conventions OpenInference marks a tool call only with openinference.span.kind
    = TOOL. op.ProvenanceSpanProcessor classifies such spans online; the offline checks read the same
    spans as the tool calls, so what one half tagged the other audits."""
    path = tmp_path / "oi.jsonl"
    provider, tracer = openinference_to_file(path, "support-agent", genai=False)

    @tracer.tool
    def lookup_order(customer: str) -> dict:
        return {"order": "ORD-1"}

    @tracer.tool
    def refund(order: str) -> str:
        return "ok"

    with tracer.start_as_current_span("support turn", openinference_span_kind="agent"):
        refund(lookup_order("c-1")["order"])
    provider.shutdown()

    (run,) = group_runs(list(read_spans([path])))
    calls = [s for s in run.spans if s.is_tool]
    assert [s.tool_name for s in calls] == ["lookup_order", "refund"]
    assert semconv.GEN_AI_OPERATION_NAME not in calls[0].attributes
    code, out, err = cli("audit", "--verbose", path)
    assert code == 0, out + err
    assert "1 run(s), 2 tool call(s); arguments: 1 observed, 1 assumed" in out
    assert f"order: observed from lookup_order order (span {calls[0].span_id})" in out
