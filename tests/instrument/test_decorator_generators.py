"""@op.tool on generators and async generators, driven the way a caller drives them.

The wrapper stands between the caller and the tool's own generator: values sent in, exceptions
thrown in and ``close()`` / ``aclose()`` must reach the tool's generator, the span must be current
while the tool's code runs (and only then), each yielded item is remembered under its index, an
exception inside the generator is recorded by type, and the span is ended on every path.
"""

from __future__ import annotations

import asyncio
import collections.abc

import pytest
from opentelemetry import trace
from opentelemetry.trace import StatusCode

import otel_provenance as op
from instrument_helpers import arg_attrs


def _span_id(span) -> str:
    return format(span.context.span_id, "016x")


# --- async generators ------------------------------------------------------------------------------


def test_async_generator_items_are_remembered_under_their_index_and_the_span_id(traced):
    """The third item is found as ``2.id`` from this very span (not ``1.id``, not another span)."""

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    async def pages(query: str, limit: int):
        for i in range(limit):
            yield {"id": f"ticket-{i:04d}"}

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    async def close_ticket(ticket_id: str) -> bool:
        return True

    async def main():
        async with op.run(inputs={"query": "open bugs"}):
            ids = [page["id"] async for page in pages(query="open bugs", limit=4)]
            for ticket in ids[1:]:
                await close_ticket(ticket_id=ticket)
        return ids

    assert asyncio.run(main()) == ["ticket-0000", "ticket-0001", "ticket-0002", "ticket-0003"]
    pages_span = traced.span("pages")
    assert pages_span.attributes["agent.tool.status"] == "ok"
    assert pages_span.end_time is not None
    for n, index in ((0, 1), (1, 2), (2, 3)):
        ticket = arg_attrs(traced.span("close_ticket", n), "ticket_id")
        assert (ticket["kind"], ticket["source_tool"], ticket["source_field"]) == (
            "observed",
            "pages",
            f"{index}.id",
        )
        assert ticket["source_span_id"] == _span_id(pages_span)


def test_async_generator_arguments_are_classified_by_their_names(traced):
    """Positional and keyword arguments reach the classifier by parameter name, with no fault."""

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    async def search(query: str, limit: int = 2):
        for i in range(limit):
            yield f"{query}-{i}"

    async def main():
        async with op.run(inputs={"query": "open bugs"}):
            return [item async for item in search("open bugs", limit=1)]

    assert asyncio.run(main()) == ["open bugs-0"]
    span = traced.span("search")
    assert "agent.violations" not in span.attributes
    assert arg_attrs(span, "query")["kind"] == "observed"
    assert arg_attrs(span, "limit")["kind"] == "assumed"
    assert not any(key.startswith("agent.arg.args.") for key in span.attributes)


def test_async_generator_values_sent_in_reach_the_tool(traced):
    received = []

    @op.tool(tracer_provider=traced.provider)
    async def accumulate(start: int):
        total = start
        while True:
            sent = yield total
            received.append(sent)
            total += sent

    async def main():
        agen = accumulate(10)
        first = await agen.asend(None)
        second = await agen.asend(5)
        third = await agen.asend(7)
        await agen.aclose()
        return first, second, third

    assert asyncio.run(main()) == (10, 15, 22)
    assert received == [5, 7]
    assert traced.span("accumulate").attributes["agent.tool.status"] == "ok"


def test_async_generator_exception_thrown_in_reaches_the_tool_which_may_recover(traced):
    @op.tool(tracer_provider=traced.provider)
    async def feed(n: int):
        i = 0
        while i < n:
            try:
                yield i
            except KeyError as error:
                yield f"recovered from {type(error).__name__}"
            i += 1

    async def main():
        agen = feed(3)
        first = await agen.__anext__()
        recovered = await agen.athrow(KeyError("k"))
        rest = [item async for item in agen]
        return first, recovered, rest

    assert asyncio.run(main()) == (0, "recovered from KeyError", [1, 2])
    span = traced.span("feed")
    assert span.attributes["agent.tool.status"] == "ok"
    assert span.status.status_code is not StatusCode.ERROR


def test_async_generator_exception_thrown_in_and_not_caught_is_recorded_by_type(traced):
    @op.tool(tracer_provider=traced.provider)
    async def feed():
        yield 1
        yield 2

    async def main():
        agen = feed()
        await agen.__anext__()
        with pytest.raises(TimeoutError):
            await agen.athrow(TimeoutError("deadline for customer 4711"))

    asyncio.run(main())
    span = traced.span("feed")
    assert span.attributes["agent.tool.status"] == "error"
    assert span.attributes["error.type"] == "TimeoutError"
    assert span.end_time is not None


def test_async_generator_error_inside_is_recorded_by_type_only(traced):
    @op.tool(tracer_provider=traced.provider)
    async def failing():
        yield 1
        raise LookupError("secret-in-message-7781")

    async def main():
        seen = []
        with pytest.raises(LookupError, match="secret-in-message-7781"):
            async for item in failing():
                seen.append(item)
        return seen

    assert asyncio.run(main()) == [1]
    span = traced.span("failing")
    assert span.attributes["agent.tool.status"] == "error"
    assert span.attributes["error.type"] == "LookupError"
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == "LookupError"
    [event] = span.events
    assert dict(event.attributes) == {"exception.type": "LookupError"}
    assert span.end_time is not None


def test_async_generator_closed_mid_way_closes_the_tool_and_ends_the_span_ok(traced):
    closed = []

    @op.tool(tracer_provider=traced.provider)
    async def numbers(limit: int):
        try:
            for i in range(limit):
                yield i
        finally:
            closed.append(True)

    async def main():
        agen = numbers(10)
        items = [await agen.__anext__(), await agen.__anext__()]
        await agen.aclose()
        return items

    assert asyncio.run(main()) == [0, 1]
    assert closed == [True]
    span = traced.span("numbers")
    assert span.attributes["agent.tool.status"] == "ok"
    assert span.status.status_code is not StatusCode.ERROR
    assert span.end_time is not None
    assert len(traced.spans) == 1


def test_async_generator_span_is_current_inside_the_tool_and_not_left_current_in_the_caller(traced):
    """Nested tool calls are children of the generator's span; the caller's context is restored
    after each step (an async generator runs in its caller's context)."""
    inside = []

    @op.tool(tracer_provider=traced.provider)
    async def inner(n: int) -> int:
        return n

    @op.tool(tracer_provider=traced.provider)
    async def outer(limit: int):
        for i in range(limit):
            inside.append(trace.get_current_span().get_span_context().span_id)
            yield await inner(i)

    async def main():
        before = trace.get_current_span()
        after_steps = []
        async for _item in outer(2):
            after_steps.append(trace.get_current_span() is before)
        return after_steps

    assert asyncio.run(main()) == [True, True]
    outer_span = traced.span("outer")
    assert inside == [outer_span.context.span_id] * 2
    children = [s for s in traced.spans if s.name == "execute_tool inner"]
    assert len(children) == 2
    for child in children:
        assert child.parent is not None and child.parent.span_id == outer_span.context.span_id


def test_blocked_async_generator_raises_at_call_and_body_never_starts(traced):
    started = []

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    async def stream_writes(target: str):
        started.append(target)
        yield 1

    async def main():
        async with op.run():
            with pytest.raises(op.ProvenanceError, match="stream_writes"):
                stream_writes("guessed-target")

    asyncio.run(main())
    assert started == []
    span = traced.span("stream_writes")
    assert span.attributes["agent.tool.status"] == "blocked"
    assert span.end_time is not None


# --- generators -------------------------------------------------------------------------------------


def test_generator_items_are_remembered_under_their_index(traced):
    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def rows(table: str):
        for i in range(4):
            yield {"id": f"row-{i}"}

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    def delete(row_id: str) -> None:
        return None

    with op.run(inputs={"table": "orders"}):
        ids = [row["id"] for row in rows("orders")]
        delete(row_id=ids[2])
        delete(row_id=ids[3])
    rows_span = traced.span("rows")
    assert [arg_attrs(traced.span("delete", n), "row_id")["source_field"] for n in (0, 1)] == ["2.id", "3.id"]
    assert arg_attrs(traced.span("delete", 1), "row_id")["source_span_id"] == _span_id(rows_span)


def test_generator_arguments_are_classified_by_their_names(traced):
    """Positional and keyword arguments reach the classifier by parameter name, with no fault."""

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def search(query: str, limit: int = 2):
        for i in range(limit):
            yield f"{query}-{i}"

    with op.run(inputs={"query": "open bugs"}):
        assert list(search("open bugs", limit=1)) == ["open bugs-0"]
    span = traced.span("search")
    assert "agent.violations" not in span.attributes
    assert arg_attrs(span, "query")["kind"] == "observed"
    assert arg_attrs(span, "limit")["kind"] == "assumed"
    assert not any(key.startswith("agent.arg.args.") for key in span.attributes)


def test_generator_values_sent_in_reach_the_tool(traced):
    @op.tool(tracer_provider=traced.provider)
    def accumulate(start: int):
        total = start
        while True:
            sent = yield total
            total += sent

    gen = accumulate(10)
    assert next(gen) == 10
    assert gen.send(5) == 15
    assert gen.send(7) == 22
    gen.close()
    assert traced.span("accumulate").attributes["agent.tool.status"] == "ok"


def test_generator_exception_thrown_in_reaches_the_tool_which_may_recover(traced):
    @op.tool(tracer_provider=traced.provider)
    def feed(n: int):
        i = 0
        while i < n:
            try:
                yield i
            except KeyError as error:
                yield f"recovered from {type(error).__name__}"
            i += 1

    gen = feed(3)
    assert next(gen) == 0
    assert gen.throw(KeyError("k")) == "recovered from KeyError"
    assert list(gen) == [1, 2]
    assert traced.span("feed").attributes["agent.tool.status"] == "ok"


def test_generator_return_value_goes_to_yield_from_and_is_not_remembered(traced):
    """Only yielded items are evidence: the generator's return value is handed to ``yield from``
    (``StopIteration.value``) but is not remembered as a result of the tool."""

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def listing(root: str):
        yield {"name": "a.txt"}
        return {"name": "summary-only.txt"}

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    def delete(path: str) -> None:
        return None

    def consumer():
        summary = yield from listing("data")
        return summary

    with op.run(inputs={"root": "data"}):
        gen = consumer()
        assert next(gen) == {"name": "a.txt"}
        with pytest.raises(StopIteration) as stop:
            next(gen)
        assert stop.value.value == {"name": "summary-only.txt"}
        with pytest.raises(op.ProvenanceError):
            delete(path="summary-only.txt")
    assert traced.span("listing").attributes["agent.tool.status"] == "ok"
    assert traced.span("delete").attributes["agent.tool.status"] == "blocked"


# --- idempotency key presence ------------------------------------------------------------------------


class _Unmeasurable(collections.abc.Mapping):
    """A mapping whose size cannot be taken (a lazy remote record, say)."""

    def __getitem__(self, key):
        raise KeyError(key)

    def __iter__(self):
        return iter(())

    def __len__(self):
        raise RuntimeError("size unknown")


@pytest.mark.parametrize(
    ("key", "present"),
    [("k", True), ("req-1", True), ("", False), (None, False), ([], False), (["x"], True), ({"a": 1}, True)],
)
def test_idempotency_key_present_when_passed_and_not_empty(traced, key, present):
    @op.tool(idempotency_key="key", tracer_provider=traced.provider)
    def charge(amount: int, key=None) -> None:
        return None

    charge(1, key=key)
    assert traced.span("charge").attributes["agent.idempotency.present"] is present


def test_idempotency_key_whose_size_cannot_be_taken_counts_as_present(traced):
    @op.tool(idempotency_key="key", tracer_provider=traced.provider)
    def charge(amount: int, key=None) -> None:
        return None

    charge(1, key=_Unmeasurable())
    assert traced.span("charge").attributes["agent.idempotency.present"] is True
