"""MCP (#34): a ``ToolPolicy(policy=...)`` judges the values of a tool call's arguments before the
request is sent — a refused call never reaches the real server (its own record says so), and its
error result names the argument and the check, never the value."""

from __future__ import annotations

import functools
import json
import os
import secrets
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

import otel_provenance as op
from canary import assert_absent, exported_bytes
from instrument_helpers import Traced

SERVER = Path(__file__).resolve().parents[2] / "examples" / "mcp_billing" / "billing_server.py"


async def _with_session(record: Path, body, **wrap):
    params = StdioServerParameters(
        command=sys.executable, args=[str(SERVER)], env={**os.environ, "BILLING_RECORD": str(record)}
    )
    with open(record.with_suffix(".stderr"), "w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await body(op.provenance_session(session, **wrap))


def _text(result) -> str:
    return result.content[0].text


def _is_error(result) -> bool:
    return bool(getattr(result, "is_error", None) or getattr(result, "isError", None))


def test_a_tool_policy_refuses_a_value_before_the_request_is_sent(tmp_path):
    record = tmp_path / "received.jsonl"
    traced = Traced()
    secret_reason = "sk-" + secrets.token_hex(10)
    policy = op.Policy(
        arguments={"reason": {"patterns": ["duplicate|damaged"]}},
        run_count=1,
    )

    async def agent(session):
        with op.run(inputs={"customer": "acme"}):
            listed = await session.call_tool("list_invoices", {"customer": "acme"})
            first = json.loads(_text(listed))["invoices"][0]["id"]
            bad = await session.call_tool("refund_invoice", {"invoice_id": first, "reason": secret_reason})
            good = await session.call_tool("refund_invoice", {"invoice_id": first, "reason": "duplicate"})
            again = await session.call_tool("refund_invoice", {"invoice_id": first, "reason": "damaged"})
        return bad, good, again

    bad, good, again = anyio.run(
        functools.partial(
            _with_session,
            record,
            agent,
            tools={"refund_invoice": op.ToolPolicy(policy=policy)},
            tracer_provider=traced.provider,
        )
    )
    assert _is_error(bad) and not _is_error(good) and _is_error(again)
    assert "policy:reason:pattern" in _text(bad) and secret_reason not in _text(bad)
    assert "policy:calls:run_count" in _text(again)
    received = [json.loads(line) for line in record.read_text().splitlines()]
    assert [(c["tool"], c["arguments"].get("reason")) for c in received] == [
        ("list_invoices", None),
        ("refund_invoice", "duplicate"),
    ]
    spans = [s for s in traced.spans if s.name == "execute_tool refund_invoice"]
    assert [s.attributes["agent.tool.status"] for s in spans] == ["blocked", "ok", "blocked"]
    assert_absent([secret_reason], exported_bytes(traced.spans))


def test_tool_policy_takes_a_policy_or_a_list_of_them():
    one = op.Policy(run_count=1)
    assert op.ToolPolicy(policy=one).policy == (one,)
    assert op.ToolPolicy(policy=[one, one]).policy == (one, one)
    assert op.ToolPolicy().policy == ()
    with pytest.raises(op.ConfigurationError, match=r"ToolPolicy.policy: expected an op.Policy"):
        op.ToolPolicy(policy={"run_count": 1})
