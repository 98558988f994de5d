"""MCP: a real server process over stdio, a wrapped ``ClientSession``, provenance gating before send.

The server (``examples/mcp_billing/billing_server.py``) declares ``list_invoices`` read-only and
``refund_invoice`` destructive by MCP annotations, and ``tag_invoice`` with no annotations; it appends
every ``tools/call`` it receives to a file, so "never reached the server" is read from the server's
own record. Spans go through ``op.ProvenanceSpanProcessor`` on a real SDK provider.
"""

from __future__ import annotations

import functools
import importlib.metadata
import json
import os
import secrets
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_provenance as op
from canary import assert_absent, exported_bytes
from garbage import garbage_kept, ours
from otel_provenance.instrument.mcp import ToolPolicy, provenance_session, side_effect_of

MCP_MAJOR = int(importlib.metadata.version("mcp").split(".")[0])
SERVER = Path(__file__).resolve().parents[2] / "examples" / "mcp_billing" / "billing_server.py"


class Exported:
    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider()
        self.provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(self.exporter)))

    def tool_spans(self, name: str):
        return [s for s in self.exporter.get_finished_spans() if s.name == f"execute_tool {name}"]


def received(record: Path) -> list[dict]:
    if not record.exists():
        return []
    return [json.loads(line) for line in record.read_text().splitlines()]


async def with_session(record: Path, body, **wrap):
    params = StdioServerParameters(
        command=sys.executable, args=[str(SERVER)], env={**os.environ, "BILLING_RECORD": str(record)}
    )
    # The server's stderr goes to a file beside its record: the test process's own stderr may be a
    # capture without a file descriptor (pytest's, or a mutation runner's).
    with open(record.with_suffix(".stderr"), "w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await body(provenance_session(session, **wrap))


def is_error(result) -> bool:
    """``CallToolResult.is_error`` (mcp 2.x) or ``isError`` (1.x)."""
    return bool(getattr(result, "is_error", None) or getattr(result, "isError", None))


def structured(result):
    """``structured_content`` (mcp 2.x) / ``structuredContent`` (1.x), else the JSON text block."""
    found = getattr(result, "structured_content", None) or getattr(result, "structuredContent", None)
    return found if found is not None else json.loads(result.content[0].text)


def run(record: Path, body, **wrap):
    return anyio.run(functools.partial(with_session, record, body, **wrap))


@pytest.fixture
def record(tmp_path) -> Path:
    return tmp_path / "received.jsonl"


def test_observed_argument_runs_invented_one_never_reaches_the_server(record):
    out = Exported()
    customer = "acme"
    invented_id = "INV-" + secrets.token_hex(4)
    reason = "dup-" + secrets.token_hex(6)

    async def agent(session):
        with op.run(inputs={"customer": customer}):
            listed = await session.call_tool("list_invoices", {"customer": customer})
            first = structured(listed)["invoices"][0]["id"]
            ok = await session.call_tool("refund_invoice", {"invoice_id": first, "reason": reason})
            blocked = await session.call_tool("refund_invoice", {"invoice_id": invented_id, "reason": reason})
        return first, ok, blocked

    first, ok, blocked = run(record, agent, tracer_provider=out.provider)

    assert not is_error(ok) and is_error(blocked)
    message = blocked.content[0].text
    assert "invoice_id=assumed" in message and invented_id not in message and reason not in message
    calls = received(record)
    assert [c["tool"] for c in calls] == ["list_invoices", "refund_invoice"]
    assert calls[1]["arguments"]["invoice_id"] == first
    assert invented_id not in record.read_text()  # the blocked call never reached the server

    (lister,) = out.tool_spans("list_invoices")
    ran, refused = out.tool_spans("refund_invoice")
    assert lister.attributes["agent.side_effect"] == "read"
    assert lister.attributes["agent.arg.customer.kind"] == "observed"
    assert lister.attributes["agent.arg.customer.source_tool"] == "input"
    assert ran.attributes["agent.side_effect"] == "write"
    assert ran.attributes["agent.arg.invoice_id.kind"] == "observed"
    assert ran.attributes["agent.arg.invoice_id.source_tool"] == "list_invoices"
    assert ran.attributes["agent.arg.invoice_id.source_span_id"] == format(lister.context.span_id, "016x")
    assert ran.attributes["agent.tool.status"] == "ok"
    assert refused.attributes["agent.arg.invoice_id.kind"] == "assumed"
    assert refused.attributes["agent.tool.status"] == "blocked"
    for span in (lister, ran, refused):
        assert span.attributes["gen_ai.operation.name"] == "execute_tool"
        assert span.attributes["mcp.method.name"] == "tools/call"
        if MCP_MAJOR >= 2:  # mcp 1.x sessions don't keep the negotiated version
            assert span.attributes["mcp.protocol.version"]
    assert_absent([invented_id, reason, first, "INV-4522"], exported_bytes(out.exporter.get_finished_spans()))


def test_unannotated_tool_is_a_write_and_overrides_win(record):
    out = Exported()

    async def agent(session):
        with op.run():
            unannotated = await session.call_tool("tag_invoice", {"invoice_id": "INV-4521", "label": "x"})
        return unannotated

    blocked = run(record, agent, tracer_provider=out.provider)
    assert is_error(blocked) and received(record) == []
    (span,) = out.tool_spans("tag_invoice")
    assert span.attributes["agent.side_effect"] == "write"

    policy = {"tag_invoice": ToolPolicy(budget=op.Budget(max_assumed=2))}
    allowed = run(record, agent, tracer_provider=out.provider, tools=policy)
    assert not is_error(allowed)
    assert [c["tool"] for c in received(record)] == ["tag_invoice"]

    read_only = {"refund_invoice": ToolPolicy(side_effect="read")}

    async def refund(session):
        with op.run():
            return await session.call_tool("refund_invoice", {"invoice_id": "INV-1", "reason": "r"})

    assert not is_error(run(record, refund, tracer_provider=out.provider, tools=read_only))
    assert out.tool_spans("refund_invoice")[-1].attributes["agent.side_effect"] == "read"


def test_on_blocked_raise_and_mcp_results_feed_op_tool(record):
    out = Exported()
    refunded = []

    @op.tool(side_effect="write", tracer_provider=out.provider)
    def notify(invoice_id: str) -> None:
        refunded.append(invoice_id)

    async def agent(session):
        with op.run(inputs={"customer": "acme"}):
            listed = await session.call_tool("list_invoices", {"customer": "acme"})
            invoice = structured(listed)["invoices"][1]["id"]
            notify(invoice)  # observed from the MCP result
            with pytest.raises(op.ProvenanceError) as caught:
                await session.call_tool("refund_invoice", {"invoice_id": "INV-9", "reason": "r"})
        return invoice, caught.value

    invoice, error = run(record, agent, tracer_provider=out.provider, on_blocked="raise")
    assert refunded == [invoice]
    assert out.tool_spans("notify")[0].attributes["agent.arg.invoice_id.source_tool"] == "list_invoices"
    assert "invoice_id=assumed" in str(error) and "INV-9" not in str(error)
    assert [c["tool"] for c in received(record)] == ["list_invoices"]


def test_a_tool_that_needs_approval_reaches_the_server_only_when_a_person_approves(record):
    """``ToolPolicy(needs_approval=...)``: the approver (async, on the session's loop) is asked before
    the request is sent; a denial is an MCP tool error (or ``ProvenanceError``) and never reaches the
    server. The function gets the arguments by name."""
    out = Exported()
    reason = "dup-" + secrets.token_hex(6)
    asked: list[op.ApprovalRequest] = []

    async def approver(request: op.ApprovalRequest) -> bool:
        asked.append(request)
        return request.arguments["invoice_id"] == "INV-4521"

    policy = {"refund_invoice": ToolPolicy(needs_approval=lambda args: args["invoice_id"] != "INV-0")}

    async def agent(session):
        with op.run(inputs={"customer": "acme"}, approver=approver):
            listed = await session.call_tool("list_invoices", {"customer": "acme"})
            first, second = (i["id"] for i in structured(listed)["invoices"])
            approved = await session.call_tool("refund_invoice", {"invoice_id": first, "reason": reason})
            denied = await session.call_tool("refund_invoice", {"invoice_id": second, "reason": reason})
        return approved, denied

    approved, denied = run(record, agent, tracer_provider=out.provider, tools=policy)
    assert not is_error(approved) and is_error(denied)
    message = denied.content[0].text
    assert "approval:denied" in message and "A person did not approve it." in message
    assert "INV-4522" not in message and reason not in message
    assert [(c["tool"], c["arguments"].get("invoice_id")) for c in received(record)] == [
        ("list_invoices", None),
        ("refund_invoice", "INV-4521"),
    ]
    assert [r.reasons for r in asked] == [("needs_approval:refund_invoice",)] * 2
    lister, ran, refused = out.tool_spans("list_invoices") + out.tool_spans("refund_invoice")
    assert "agent.guard.approval" not in lister.attributes
    assert (ran.attributes["agent.guard.approval"], ran.attributes["agent.tool.status"]) == ("approved", "ok")
    assert (refused.attributes["agent.guard.approval"], refused.attributes["agent.tool.status"]) == (
        "denied",
        "blocked",
    )
    assert asked[1].call_id == refused.attributes["agent.tool.call.id"]
    assert_absent([reason, "INV-4522"], exported_bytes(out.exporter.get_finished_spans()))

    async def raising(session):
        inputs = {"customer": "acme", "invoice_id": "INV-4521"}
        with (
            op.run(inputs=inputs, approver=lambda request: None),
            pytest.raises(op.ProvenanceError) as caught,
        ):
            await session.call_tool("refund_invoice", {"invoice_id": "INV-4521", "reason": reason})
        return caught.value

    error = run(record, raising, tracer_provider=out.provider, tools=policy, on_blocked="raise")
    assert str(error).endswith("the approver answered None (approval:denied)")
    assert len(received(record)) == 2


def test_tool_error_result_ends_the_span_as_tool_error(record):
    out = Exported()

    async def agent(session):
        with op.run(inputs={"customer": "acme"}):
            return await session.call_tool("list_invoices", {"wrong": "acme"})  # server-side validation

    result = run(record, agent, tracer_provider=out.provider)
    assert is_error(result)
    (span,) = out.tool_spans("list_invoices")
    assert span.attributes["error.type"] == "tool_error"
    assert span.attributes["agent.tool.status"] == "error"


def test_tool_error_result_status_names_the_failure_without_the_processor(record):
    """No exception was raised: the span's own status names the failure (not the type of a missing
    exception), before any processor could mend it."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))

    async def agent(session):
        with op.run(inputs={"customer": "acme"}):
            return await session.call_tool("list_invoices", {"wrong": "acme"})

    assert is_error(run(record, agent, tracer_provider=provider))
    (span,) = [s for s in exporter.get_finished_spans() if s.name == "execute_tool list_invoices"]
    assert span.status.status_code.name == "ERROR" and span.status.description == "tool_error"


def test_side_effect_from_annotations():
    from mcp import types

    def tool(annotations):
        return types.Tool.model_validate(
            {"name": "t", "inputSchema": {"type": "object"}, "annotations": annotations}
        )

    assert side_effect_of(tool({"readOnlyHint": True})) == "read"
    assert side_effect_of(tool({"readOnlyHint": False})) == "write"
    assert side_effect_of(tool({"destructiveHint": False})) == "write"
    assert side_effect_of(tool({"destructiveHint": True, "idempotentHint": True})) == "write"
    assert side_effect_of(tool(None)) == "write"


def test_configuration_errors_name_the_problem():
    class NotASession:
        pass

    with pytest.raises(op.ConfigurationError, match="ClientSession"):
        provenance_session(NotASession())
    with pytest.raises(op.ConfigurationError, match="side_effect"):
        ToolPolicy(side_effect="delete")
    with pytest.raises(op.ConfigurationError, match="invented"):
        ToolPolicy(invented="path")
    with pytest.raises(op.ConfigurationError, match="ToolPolicy: needs_approval must be"):
        ToolPolicy(needs_approval="yes")
    assert ToolPolicy(invented=None).invented == frozenset()  # as op.tool(invented=None)


def test_the_example_runs_offline_and_the_guess_never_reaches_the_server(tmp_path):
    import subprocess

    example = SERVER.with_name("agent.py")
    output = tmp_path / "spans.jsonl"
    done = subprocess.run(
        [sys.executable, str(example), str(output)], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "the server received: list_invoices, refund_invoice" in done.stdout
    assert "invoice_id=assumed" in done.stdout and "INV-9999" not in output.read_text()
    names = [
        span["name"]
        for line in output.read_text().splitlines()
        for resource in json.loads(line)["resourceSpans"]
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
    ]
    assert names.count("execute_tool refund_invoice") == 2


def test_a_framework_tool_span_around_the_call_is_adopted(record):
    out = Exported()
    framework = out.provider.get_tracer("framework")
    outer = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "list_invoices"}

    async def agent(session):
        with (
            op.run(inputs={"customer": "acme"}),
            framework.start_as_current_span("execute_tool list_invoices", attributes=outer),
        ):
            return await session.call_tool("list_invoices", {"customer": "acme"})

    assert not is_error(run(record, agent, tracer_provider=out.provider))
    (span,) = out.tool_spans("list_invoices")
    assert span.instrumentation_scope.name == "framework"
    assert span.attributes["agent.arg.customer.kind"] == "observed"
    assert span.attributes["mcp.method.name"] == "tools/call"


def test_a_tool_missing_from_the_listing_is_a_write(record):
    out = Exported()

    async def agent(session):
        with op.run():
            await session.list_tools()  # through the wrapper: fills the cache
            return await session.call_tool("drop_table", {"table": "invoices"})

    result = run(record, agent, tracer_provider=out.provider)
    # its argument names too go by position: no schema of the server declares them
    assert is_error(result) and "arguments.0=assumed" in result.content[0].text
    assert received(record) == []
    # exported as _unlisted: a name no tool of the server carries is the model's output, maybe a value
    (span,) = out.tool_spans("_unlisted")
    assert span.attributes["agent.side_effect"] == "write"
    assert span.attributes["agent.arg.arguments.0.kind"] == "assumed"
    assert out.tool_spans("drop_table") == []


@pytest.mark.parametrize("on_blocked", ["error_result", "raise"])
def test_a_refused_mcp_call_leaves_no_cycle_behind(record, on_blocked):
    """As ``@op.tool``'s refused calls (``test_45b_blocked_path``): refusing an MCP call, as an error
    result or by raising, leaves none of its call objects in cycles for the collector."""
    out = Exported()

    def refuse(step) -> None:
        """Drive one refused call by hand: it awaits nothing (an event loop would keep a task's
        exception in cycles of its own)."""
        try:
            step.send(None)
        except StopIteration as done:
            assert on_blocked == "error_result" and is_error(done.value)
        except op.ProvenanceError:
            assert on_blocked == "raise"
        else:
            pytest.fail("a refused call awaited something")

    async def agent(session):
        with op.run(inputs={"customer": "acme"}):
            await session.call_tool("list_invoices", {"customer": "acme"})  # the tools listed once
            refuse(session.call_tool("refund_invoice", {"invoice_id": "INV-warm", "reason": "r"}))
            with garbage_kept() as garbage:
                for i in range(20):
                    refuse(session.call_tool("refund_invoice", {"invoice_id": f"INV-{i}", "reason": "r"}))
        return garbage

    garbage = run(record, agent, tracer_provider=out.provider, on_blocked=on_blocked)
    assert ours(garbage) == []
    assert [s.attributes["agent.tool.status"] for s in out.tool_spans("refund_invoice")] == ["blocked"] * 21
    assert [c["tool"] for c in received(record)] == ["list_invoices"]  # no refused call was sent


def test_argument_names_the_schema_does_not_declare_go_by_position_unless_a_policy_names_them(record):
    """The names in a call are the model's choice and can be data: a name the tool's listed input
    schema declares (``invoice_id``) or its ``ToolPolicy`` names (``callback``, an egress argument) is
    exported as it is; any other goes by position (``arguments.<i>``), as on foreign tool spans."""
    out = Exported()
    data_name = "jsmith_" + secrets.token_hex(4)

    async def agent(session):
        with op.run():
            arguments = {"invoice_id": "INV-1", "label": "x", "callback": "https://e.example", data_name: "y"}
            return await session.call_tool("tag_invoice", arguments)

    result = run(
        record, agent, tracer_provider=out.provider, tools={"tag_invoice": ToolPolicy(egress={"callback"})}
    )
    assert is_error(result)  # assumed arguments of a write: refused before it was sent
    (span,) = out.tool_spans("tag_invoice")
    for name in ("invoice_id", "label", "callback", "arguments.3"):
        assert f"agent.arg.{name}.kind" in span.attributes, name
    assert_absent([data_name], exported_bytes(out.exporter.get_finished_spans()))
