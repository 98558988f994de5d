"""A server's own span of a tool call is not a second tool call (``model.mark_echoes``).

An MCP 2.x server exports a ``tools/call`` span of kind ``SERVER`` with ``gen_ai.operation.name =
execute_tool`` below the caller's span. When the agent's and the server's traces land in one backend,
each call would count twice, the server's half without provenance — and, without ``agent.run.id``,
the server's ``service.version`` would make the run's release disagree.

The first test drives the real thing: the example MCP server in its own process, traced by the plain
SDK and the official OTLP/HTTP exporter, called through ``provenance_session`` whose spans go out by
the same exporter; both land on one loopback OTLP receiver, as on one SigNoz.
"""

from __future__ import annotations

import importlib.metadata
import io
import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

from otel_provenance import semconv
from otel_provenance.cli import run as cli_run
from otel_provenance.offline.model import Attributes, Run, Span, SpanKind
from otel_provenance.offline.runs import make_run
from otel_provenance.offline.stepkey import step_key
from otlp_receiver import OtlpReceiver

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
TOOL = {semconv.GEN_AI_OPERATION_NAME: semconv.EXECUTE_TOOL}

SERVER = Path(__file__).resolve().parents[2] / "examples" / "mcp_billing" / "billing_server.py"
LAUNCHER = textwrap.dedent(
    """
    import os, runpy, sys
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    resource = Resource.create({"service.name": "billing-mcp", "service.version": "9.1.0"})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=os.environ["TRACES_URL"])))
    trace.set_tracer_provider(provider)
    sys.argv = [os.environ["SERVER"]]
    runpy.run_path(os.environ["SERVER"], run_name="__main__")
    """
)


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli_run(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def _mcp_2() -> None:
    pytest.importorskip("mcp")
    if int(importlib.metadata.version("mcp").split(".")[0]) < 2:
        pytest.skip("mcp 1.x servers export no tools/call span")


def test_an_mcp_servers_own_span_of_each_call_is_not_a_second_tool_call(tmp_path: Path) -> None:
    _mcp_2()
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    import otel_provenance as op
    from otel_provenance.instrument.mcp import provenance_session

    launcher = tmp_path / "traced_server.py"
    launcher.write_text(LAUNCHER)
    with OtlpReceiver("/v1/traces") as receiver:
        url = receiver.url + "/v1/traces"
        provider = TracerProvider(
            resource=Resource.create({"service.name": "agent", "service.version": "2.0.0"})
        )
        provider.add_span_processor(
            op.ProvenanceSpanProcessor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=url)))
        )
        env = {
            **os.environ,
            "TRACES_URL": url,
            "SERVER": str(SERVER),
            "BILLING_RECORD": str(tmp_path / "got"),
        }
        params = StdioServerParameters(command=sys.executable, args=[str(launcher)], env=env)

        async def agent() -> None:
            with open(tmp_path / "server.stderr", "w") as errlog:
                async with (
                    stdio_client(params, errlog=errlog) as (read, write),
                    ClientSession(read, write) as raw,
                ):
                    await raw.initialize()
                    session = provenance_session(raw, tracer_provider=provider)
                    with op.run(inputs={"customer": "acme"}):
                        listed = await session.call_tool("list_invoices", {"customer": "acme"})
                        assert not listed.is_error, listed
                        first = json.loads(listed.content[0].text)["invoices"][0]["id"]
                        await session.call_tool("refund_invoice", {"invoice_id": first, "reason": "dup"})

        anyio.run(agent)
        provider.shutdown()
        wire = b"".join(receiver.bodies["/v1/traces"])
    traces = tmp_path / "both.pb"
    traces.write_bytes(wire)

    from otel_provenance.offline.readers import read_spans

    spans = list(read_spans([str(traces)]))
    servers = [s for s in spans if s.kind == SpanKind.SERVER and s.is_tool]
    assert sorted(s.name for s in servers) == ["tools/call list_invoices", "tools/call refund_invoice"]
    ours = [s for s in spans if s.name.startswith("execute_tool ")]
    assert len(ours) == 2 and {s.trace_id for s in servers} == {
        s.trace_id for s in ours
    }  # joined its caller's

    code, out, err = cli("audit", "--verbose", str(traces))
    assert code == 0, out + err
    # the server's initialize and tools/list are traces of their own with no tool call: no agent runs
    assert "summary: 1 run(s), 2 tool call(s); arguments: 2 observed, 1 assumed, 0 invented" in out
    assert "left out 3 trace(s) that are no agent run" in err
    (agent_run,) = [block for block in out.split("\nrun ") if "release 2.0.0" in block]
    assert "release 2.0.0: PASS" in agent_run and agent_run.count(" status ok") == 2
    assert "no provenance attributes" not in out

    code, out, err = cli("fingerprint", str(traces), "--canonical", "--format", "json")
    assert code == 0, err
    (canonical,) = [r["canonical"] for r in json.loads(out)["runs"] if "refund_invoice" in r["canonical"]]
    # each call is one tool step; the server's span stays below it, a step named by its span name
    expected = [
        '"list_invoices"',
        '  "tools/call list_invoices"',
        '"refund_invoice"',
        '  "tools/call refund_invoice"',
    ]
    assert canonical.splitlines() == expected


def _span(
    span_id: str, parent: str | None, name: str, kind: SpanKind, attrs: dict, version: str = "2.0.0"
) -> Span:
    start = int(span_id, 16)
    return Span(
        TRACE,
        span_id,
        parent,
        name,
        kind,
        start,
        start + 1,
        attributes=Attributes(attrs),
        resource=Attributes({semconv.SERVICE_VERSION: version}),
    )


def _tool(span_id: str, parent: str | None, tool: str, kind: SpanKind = SpanKind.INTERNAL, version="2.0.0"):
    name = f"tools/call {tool}" if kind == SpanKind.SERVER else f"execute_tool {tool}"
    return _span(span_id, parent, name, kind, {**TOOL, semconv.GEN_AI_TOOL_NAME: tool}, version)


AGENT = _span(
    "0000000000000001",
    None,
    "invoke_agent billing",
    SpanKind.INTERNAL,
    {"gen_ai.operation.name": "invoke_agent"},
)


def _tools(run: Run) -> list[str]:
    return [s.name for s in run.spans if s.is_tool]


def test_the_echo_stays_in_the_run_as_a_span_named_by_its_own_name() -> None:
    client = _tool("0000000000000002", AGENT.span_id, "refund")
    send = _span("0000000000000003", client.span_id, "MCP send tools/call refund", SpanKind.CLIENT, {})
    server = _tool("0000000000000004", send.span_id, "refund", SpanKind.SERVER, version="9.1.0")
    run = make_run("r", [AGENT, client, send, server])
    assert _tools(run) == ["execute_tool refund"]
    echo = run.spans[-1]
    assert echo.echo and echo.span_id == server.span_id and len(run.spans) == 4
    assert step_key(echo) == "tools/call refund"
    # the agent's spans say 2.0.0; the server's echo (9.1.0) is not one of them
    assert run.release == "2.0.0" and not run.attribution.disagrees


def test_a_server_tool_span_below_another_tool_or_no_tool_is_a_tool_call() -> None:
    client = _tool("0000000000000002", AGENT.span_id, "refund")
    other = _tool("0000000000000003", client.span_id, "notify", SpanKind.SERVER)
    alone = _tool("0000000000000004", AGENT.span_id, "lookup", SpanKind.SERVER)
    orphan = _tool("0000000000000005", "00000000000000ff", "lookup", SpanKind.SERVER)
    root = _tool("0000000000000006", None, "lookup", SpanKind.SERVER)
    run = Run("r", (AGENT, client, other, alone, orphan, root))
    assert _tools(run) == [s.name for s in run.spans[1:]]
    assert not any(s.echo for s in run.spans)


def test_only_the_nearest_tool_ancestor_decides() -> None:
    outer = _tool("0000000000000002", AGENT.span_id, "refund")
    inner = _tool("0000000000000003", outer.span_id, "notify")
    server = _tool("0000000000000004", inner.span_id, "refund", SpanKind.SERVER)
    nested = _tool("0000000000000005", server.span_id, "refund", SpanKind.SERVER)
    run = Run("r", (AGENT, outer, inner, server, nested))
    # below notify, a server's refund is another call; below that server span, the same call again
    assert [s.echo for s in run.spans] == [False, False, False, False, True]


def test_a_parent_cycle_is_refused_after_marking_without_hanging() -> None:
    from otel_provenance.errors import InvalidEvidenceError

    a = _span("0000000000000002", "0000000000000003", "loop a", SpanKind.CLIENT, {})
    b = _span("0000000000000003", "0000000000000002", "loop b", SpanKind.CLIENT, {})
    server = _tool("0000000000000004", a.span_id, "refund", SpanKind.SERVER)
    with pytest.raises(InvalidEvidenceError, match="cycle"):
        make_run("r", [a, b, server])
