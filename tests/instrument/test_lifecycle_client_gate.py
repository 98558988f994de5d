"""A new client gate, built from the lifecycle's package-public names only (docs/mcp.md, "How to add a
client gate"): a fake RPC client whose ``call(name, args)`` is a coroutine, wrapped the way the MCP
session is. A blocked call never reaches the client; an allowed one is classified against the run's
ledger, and its result is remembered so a later call — through the gate or an ``@op.tool`` function
— is observed from it.
"""

from __future__ import annotations

import ast
import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import otel_provenance as op
from instrument_helpers import Traced, arg_attrs
from otel_provenance.instrument.call.decision import Objection
from otel_provenance.instrument.call.lifecycle import ToolCall, ToolSpec
from otel_provenance.instrument.evidence.ledger import safe_names

INSTRUMENT = Path(__file__).resolve().parents[2] / "src" / "otel_provenance" / "instrument"


class FakeRpcClient:
    """The client being gated: records every request it receives."""

    def __init__(self) -> None:
        self.received: list[tuple[str, dict]] = []

    async def call(self, name: str, args: Mapping[str, Any]) -> Any:
        self.received.append((name, dict(args)))
        if name == "accounts.list":
            return {"accounts": [{"id": "ACCT-1111"}, {"id": "ACCT-2222"}]}
        if name == "accounts.close":
            return {"closed": args["account"], "receipt": "RCPT-7781"}
        raise ConnectionError("no such method")


class GatedRpcClient:
    """The gate: one ToolSpec per remote method, one ToolCall per call."""

    def __init__(
        self, client: FakeRpcClient, side_effects: Mapping[str, str], tracer_provider, checks=()
    ) -> None:
        self._client = client
        self._specs = {
            name: ToolSpec(
                name,
                side_effect=effect,
                tracer_provider=tracer_provider,
                tool_type="extension",
                checks=checks,
            )
            for name, effect in side_effects.items()
        }

    async def call(self, name: str, args: Mapping[str, Any]) -> Any:
        call = ToolCall(self._specs[name], lambda: safe_names(args, "arguments"))  # bind → classify → decide
        await call.ask_async()  # a person, when a check asks for one (else nothing)
        if call.blocked:
            raise call.refuse()  # the span ends as blocked; the client is never called
        call.start()
        result = await call.run_async(self._client.call, name, args)
        call.remember(result)
        call.finish()
        return result


def _gate(traced: Traced, checks=()) -> tuple[FakeRpcClient, GatedRpcClient]:
    client = FakeRpcClient()
    effects = {"accounts.list": "read", "accounts.close": "write", "accounts.audit": "read"}
    return client, GatedRpcClient(client, effects, traced.provider, checks)


def test_a_blocked_call_never_reaches_the_client_and_an_allowed_one_is_classified_and_remembered(traced):
    client, gate = _gate(traced)

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    def file_receipt(receipt: str) -> None:
        return None

    async def agent() -> None:
        listed = await gate.call("accounts.list", {"owner": "ann"})
        await gate.call("accounts.close", {"account": listed["accounts"][1]["id"]})
        with pytest.raises(op.ProvenanceError) as refused:
            await gate.call("accounts.close", {"account": "ACCT-9999"})
        assert refused.value.violations == ("max_assumed:account=assumed",)
        file_receipt(receipt="RCPT-7781")  # observed in the gated call's result

    with op.run(inputs={"owner": "ann"}):
        asyncio.run(agent())

    assert client.received == [
        ("accounts.list", {"owner": "ann"}),
        ("accounts.close", {"account": "ACCT-2222"}),
    ]
    lister = traced.span("accounts.list")
    closed, blocked = traced.span("accounts.close", 0), traced.span("accounts.close", 1)
    assert arg_attrs(lister, "owner")["kind"] == "observed"
    assert lister.attributes["gen_ai.tool.type"] == "extension"
    account = arg_attrs(closed, "account")
    assert (account["kind"], account["source_tool"], account["source_field"]) == (
        "observed",
        "accounts.list",
        "accounts.1.id",
    )
    assert account["source_span_id"] == format(lister.context.span_id, "016x")
    assert closed.attributes["agent.tool.status"] == "ok"
    assert blocked.attributes["agent.tool.status"] == "blocked"
    assert arg_attrs(blocked, "account")["kind"] == "assumed"
    receipt = arg_attrs(traced.span("file_receipt"), "receipt")
    assert (receipt["kind"], receipt["source_tool"]) == ("observed", "accounts.close")
    assert receipt["source_span_id"] == format(closed.context.span_id, "016x")


def test_a_client_failure_ends_the_span_as_an_error_and_reaches_the_caller(traced):
    client, gate = _gate(traced)
    with op.run(), pytest.raises(ConnectionError):
        asyncio.run(gate.call("accounts.audit", {"since": "2026-01-01"}))
    span = traced.span("accounts.audit")
    assert client.received == [("accounts.audit", {"since": "2026-01-01"})]
    assert span.attributes["agent.tool.status"] == "error"
    assert span.attributes["error.type"] == "ConnectionError"


def test_a_driver_that_forgets_to_check_the_decision_still_never_runs_a_blocked_call(traced):
    """``start()`` on a blocked call refuses it: fail closed for a gate that skips ``if call.blocked``."""
    spec = ToolSpec("accounts.close", side_effect="write", tracer_provider=traced.provider)
    call = ToolCall(spec, lambda: {"account": "ACCT-9999"})
    with op.run(), pytest.raises(op.ProvenanceError):
        call.start()
    assert traced.span("accounts.close").attributes["agent.tool.status"] == "blocked"


def _closing_asks(call: ToolCall):
    """A check of the gate's own: closing an account asks a person (any source of evidence may)."""
    if call.spec.name == "accounts.close":
        yield Objection("close_needs_a_person:accounts.close", ask=True)


def test_a_gate_asks_the_approver_when_a_check_asks_and_a_denial_never_reaches_the_client(traced):
    client, gate = _gate(traced, checks=(_closing_asks,))
    answers = iter([True, False])

    async def approver(request: op.ApprovalRequest) -> bool:
        assert request.reasons == ("close_needs_a_person:accounts.close",)
        return next(answers)

    async def agent() -> None:
        listed = await gate.call("accounts.list", {"owner": "ann"})
        await gate.call("accounts.close", {"account": listed["accounts"][0]["id"]})
        with pytest.raises(op.ProvenanceError) as refused:
            await gate.call("accounts.close", {"account": listed["accounts"][1]["id"]})
        assert refused.value.violations == ("close_needs_a_person:accounts.close", "approval:denied")

    with op.run(inputs={"owner": "ann"}, approver=approver):
        asyncio.run(agent())
    assert [r[0] for r in client.received] == ["accounts.list", "accounts.close"]
    approved, denied = traced.span("accounts.close", 0), traced.span("accounts.close", 1)
    assert "agent.guard.approval" not in traced.span("accounts.list").attributes
    assert approved.attributes["agent.guard.approval"] == "approved"
    assert denied.attributes["agent.guard.approval"] == "denied"
    assert denied.attributes["agent.tool.status"] == "blocked"


def test_a_driver_that_forgets_to_ask_still_never_runs_a_call_unapproved(traced):
    """``start()`` asks a call whose approval was never asked (synchronously): fail closed."""
    spec = ToolSpec(
        "accounts.close", side_effect="read", tracer_provider=traced.provider, checks=[_closing_asks]
    )
    with op.run(approver=lambda request: False):
        call = ToolCall(spec, lambda: {"account": "ACCT-9999"})
        assert not call.blocked  # not yet: nobody has been asked
        with pytest.raises(op.ProvenanceError, match="approval:denied"):
            call.start()
    assert traced.span("accounts.close").attributes["agent.guard.approval"] == "denied"


def _private_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (
            node.level or (node.module or "").startswith("otel_provenance")
        ):
            found += [
                f"{node.module}.{a.name}"
                for a in node.names
                if a.name.startswith("_") and not a.name.startswith("__")
            ]
    return found


@pytest.mark.parametrize("module", sorted(str(p.relative_to(INSTRUMENT)) for p in INSTRUMENT.glob("**/*.py")))
def test_no_instrument_module_imports_another_modules_private_names(module):
    """Gates and processors meet through package-public names (``ToolSpec``, ``ToolCall``, ...): a
    leading underscore means "this module only"."""
    assert _private_imports(INSTRUMENT / module) == []
