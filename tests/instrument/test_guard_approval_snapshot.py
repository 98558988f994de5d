"""What a person approved is what runs (#50, red team round 4): the approver is shown a copy of the
arguments all the way down, so its edits never reach the tool's body; and an approval holds only for
the values it was given — arguments that changed while the person decided (another thread holding
the same list, or the approver itself) make it a denial, and the body never runs.

Through ``@op.tool``, ``op.run(approver=...)`` and the real SDK, sync and async tools."""

from __future__ import annotations

import asyncio
import threading

import pytest

import otel_provenance as op
from instrument_helpers import Traced
from otel_provenance import semconv as sc

ORDER = {"order_id": "ord-50301", "lines": [{"sku": "sku-1", "amount": 40}]}


def _order() -> dict:
    return {"order_id": ORDER["order_id"], "lines": [dict(line) for line in ORDER["lines"]]}


def _refund_tool(traced: Traced, received: list, *, is_async: bool = False):
    if is_async:

        @op.tool(side_effect="write", needs_approval=True, tracer_provider=traced.provider)
        async def refund(order: dict) -> str:
            received.append(repr(order))
            return "refunded"

    else:

        @op.tool(side_effect="write", needs_approval=True, tracer_provider=traced.provider)
        def refund(order: dict) -> str:
            received.append(repr(order))
            return "refunded"

    return refund


def _call(tool, is_async: bool, **arguments):
    return asyncio.run(tool(**arguments)) if is_async else tool(**arguments)


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_an_approver_editing_the_nested_arguments_it_is_shown_does_not_change_what_the_tool_gets(is_async):
    traced, received = Traced(), []

    def approver(request: op.ApprovalRequest) -> bool:
        order = request.arguments["order"]
        order["lines"][0]["amount"] = 4000  # a nested dict: the copy's, not the call's
        order["lines"].append({"sku": "sku-2", "amount": 1})
        order["order_id"] = "ord-00001"
        return True

    refund = _refund_tool(traced, received, is_async=is_async)
    order = _order()
    with op.run(inputs={"order": _order()}, approver=approver, tracer_provider=traced.provider):
        assert _call(refund, is_async, order=order) == "refunded"
    assert received == [repr(ORDER)]
    assert order == ORDER
    assert traced.span("refund").attributes[sc.GUARD_APPROVAL] == "approved"


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_arguments_changed_by_another_thread_while_a_person_decides_are_not_run(is_async):
    traced, received = Traced(), []
    order = _order()
    shown, changed = threading.Event(), threading.Event()

    def other_thread() -> None:  # holds the same order object, and edits it during the question
        shown.wait(5)
        order["lines"][0]["amount"] = 4000
        changed.set()

    def approver(request: op.ApprovalRequest) -> bool:
        assert request.arguments["order"]["lines"][0]["amount"] == 40  # what the person sees …
        shown.set()
        changed.wait(5)
        return True  # … and approves

    refund = _refund_tool(traced, received, is_async=is_async)
    editor = threading.Thread(target=other_thread)
    editor.start()
    run = op.run(inputs={"order": _order()}, approver=approver, tracer_provider=traced.provider)
    with run, pytest.raises(op.ProvenanceError) as refused:
        _call(refund, is_async, order=order)
    editor.join(5)
    assert received == []  # 4000 was never approved
    said = "the approver answered True, but the call's arguments changed while it was asked (approval:denied)"
    assert said in str(refused.value)
    assert "approval:denied" in refused.value.violations
    span = traced.span("refund")
    assert (span.attributes[sc.TOOL_STATUS], span.attributes[sc.GUARD_APPROVAL]) == ("blocked", "denied")
    assert "4000" not in str(refused.value)


def test_an_argument_that_cannot_be_copied_is_shown_as_it_is_and_runs_when_unchanged():
    traced, received = Traced(), []

    @op.tool(
        side_effect="write",
        needs_approval=True,
        budget=op.Budget(allow={"lock"}),
        tracer_provider=traced.provider,
    )
    def flush(target: str, lock: object) -> str:
        received.append(target)
        return "flushed"

    lock = threading.Lock()  # deepcopy cannot copy a lock
    shown: list[object] = []

    def approver(request: op.ApprovalRequest) -> bool:
        shown.append(request.arguments["lock"])
        return True

    with op.run(inputs={"target": "queue-17"}, approver=approver, tracer_provider=traced.provider):
        assert flush(target="queue-17", lock=lock) == "flushed"
    assert received == ["queue-17"] and shown == [lock]
