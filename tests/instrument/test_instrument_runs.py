"""Run scoping (1,000 asyncio runs, 8 threads), retries, idempotency, advisory vs enforce."""

from __future__ import annotations

import asyncio
import contextvars
import threading

import pytest

import otel_provenance as op
from instrument_helpers import arg_attrs, settings
from otel_provenance.instrument.base.settings import ENV_ENFORCE, reset_settings
from otel_provenance.instrument.call.current import current_ledger, retry_attempt


def test_one_thousand_concurrent_asyncio_runs_never_see_each_other(traced):
    @op.tool(side_effect="read", tracer_provider=traced.provider)
    async def fetch(key: str) -> dict:
        await asyncio.sleep(0)
        return {"secret": f"value-of-{key}"}

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    async def use(secret: str) -> None:
        await asyncio.sleep(0)

    async def one_run(i: int) -> str:
        async with op.run(inputs={"key": f"key-{i:04d}"}, run_id=f"run-{i:04d}"):
            await fetch(key=f"key-{i:04d}")
            await asyncio.sleep(0)
            await use(secret=f"value-of-key-{i:04d}")  # observed in this run
            other = (i + 1) % 1000
            with pytest.raises(op.ProvenanceError):
                await use(secret=f"value-of-key-{other:04d}")  # observed only in another run
        return "ok"

    async def main():
        return await asyncio.gather(*(one_run(i) for i in range(1000)))

    assert asyncio.run(main()) == ["ok"] * 1000
    uses = [s for s in traced.spans if s.name == "execute_tool use"]
    assert len(uses) == 2000
    fetch_ids = {
        s.attributes["agent.run.id"]: format(s.context.span_id, "016x")
        for s in traced.spans
        if s.name == "execute_tool fetch"
    }
    for span in uses:
        attrs = arg_attrs(span, "secret")
        if span.attributes["agent.tool.status"] == "ok":
            assert attrs["kind"] == "observed"
            assert attrs["source_span_id"] == fetch_ids[span.attributes["agent.run.id"]]
        else:
            assert attrs["kind"] == "assumed"
    assert sum(s.attributes["agent.tool.status"] == "blocked" for s in uses) == 1000


def test_eight_threads_with_their_own_runs(traced):
    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def read(name: str) -> list[str]:
        return [f"{name}-row-{j}" for j in range(50)]

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    def write(row: str) -> None:
        return None

    failures: list[str] = []
    barrier = threading.Barrier(8)

    def worker(i: int) -> None:
        with op.run(inputs={"name": f"table{i}"}):
            read(f"table{i}")
            barrier.wait()
            for j in range(20):
                try:
                    write(f"table{i}-row-{j}")
                except op.ProvenanceError:
                    failures.append(f"own {i}")
                try:
                    write(f"table{(i + 1) % 8}-row-{j}")
                    failures.append(f"foreign {i}")
                except op.ProvenanceError:
                    pass

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert len({s.attributes["agent.run.id"] for s in traced.spans}) == 8


def test_run_is_inherited_by_tasks_and_copied_contexts_not_leaked_after_exit():
    with op.run() as run:
        ledger = current_ledger()
        assert ledger is run.ledger
        assert contextvars.copy_context().run(current_ledger) is ledger

        async def in_task():
            return current_ledger()

        assert asyncio.run(in_task()) is ledger
    assert current_ledger() is None


def test_nested_runs_restore_the_outer_run():
    with op.run(run_id="outer") as outer:
        with op.run(run_id="inner"):
            assert current_ledger() is not outer.ledger
        assert current_ledger() is outer.ledger


def test_retry_number_counts_repeats_with_the_same_arguments(traced):
    attempts = {"n": 0}

    @op.tool(side_effect="write", idempotency_key="request_id", tracer_provider=traced.provider)
    def refund(order_id: str, request_id: str | None = None) -> str:
        attempts["n"] += 1
        if attempts["n"] == 1:
            raise TimeoutError("gateway timeout")
        return "done"

    with op.run(inputs={"order_id": "ORD-55120", "request_id": "req-8f3a1c"}):
        with pytest.raises(TimeoutError):
            refund("ORD-55120")
        refund("ORD-55120")
        refund("ORD-55120", request_id="req-8f3a1c")
        with retry_attempt(5):
            refund("ORD-55120", request_id="req-8f3a1c")
    spans = [s for s in traced.spans if s.name == "execute_tool refund"]
    assert [s.attributes["agent.retry.number"] for s in spans] == [0, 1, 0, 5]
    assert [s.attributes["agent.idempotency.present"] for s in spans] == [False, False, True, True]
    assert spans[0].attributes["error.type"] == "TimeoutError"


def test_retries_are_counted_per_run(traced):
    @op.tool(tracer_provider=traced.provider)
    def ping(host: str) -> None:
        return None

    for _ in range(2):
        with op.run():
            ping("db.internal")
            ping("db.internal")
    assert [s.attributes["agent.retry.number"] for s in traced.spans] == [0, 1, 0, 1]


def test_read_tools_are_tagged_not_blocked_by_default(traced):
    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def lookup(customer: str) -> None:
        return None

    with op.run():
        lookup("guessed-customer")
    span = traced.span("lookup")
    assert span.attributes["agent.tool.status"] == "ok"
    assert arg_attrs(span, "customer")["kind"] == "assumed"
    assert "agent.violations" not in span.attributes
    assert "agent.budget.max_assumed" not in span.attributes


def test_explicit_budget_on_read_tool_is_advisory_unless_enforced(traced, caplog):
    @op.tool(side_effect="read", budget=op.Budget(max_assumed=0), tracer_provider=traced.provider)
    def soft(customer: str) -> None:
        return None

    @op.tool(
        side_effect="read", budget=op.Budget(max_assumed=0, enforce=True), tracer_provider=traced.provider
    )
    def hard(customer: str) -> None:
        return None

    with op.run():
        soft("guessed-customer-1")
        with pytest.raises(op.ProvenanceError):
            hard("guessed-customer-2")
    soft_span = traced.span("soft")
    assert soft_span.attributes["agent.tool.status"] == "ok"
    assert tuple(soft_span.attributes["agent.violations"]) == ("max_assumed:customer=assumed",)
    assert "advisory" in caplog.text and "guessed-customer" not in caplog.text


def test_global_advisory_switch_lets_write_tools_run_but_tags_them(traced, monkeypatch):
    ran = []

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    def drop_table(table: str) -> None:
        ran.append(table)

    monkeypatch.setenv(ENV_ENFORCE, "false")
    reset_settings()
    try:
        with op.run():
            drop_table("customers")
    finally:
        monkeypatch.delenv(ENV_ENFORCE)
        reset_settings()
    assert ran == ["customers"]
    span = traced.span("drop_table")
    assert span.attributes["agent.tool.status"] == "ok"
    assert tuple(span.attributes["agent.violations"]) == ("max_assumed:table=assumed",)
    with settings(enforce=True), op.run(), pytest.raises(op.ProvenanceError):
        drop_table("customers")
    assert ran == ["customers"]


# -- one run, one trace: the invoke_agent root span ---------------------------------------------------


def _tools(provider):
    @op.tool(side_effect="read", tracer_provider=provider)
    def lookup(key: str) -> dict:
        return {"id": f"id-{key}"}

    @op.tool(side_effect="write", tracer_provider=provider)
    def act(target: str) -> None:
        return None

    return lookup, act


def test_a_run_without_a_current_span_is_one_trace_under_invoke_agent(traced):
    lookup, act = _tools(traced.provider)
    for i in range(2):
        with op.run(inputs={"key": f"k{i}"}, agent_name="refunds", tracer_provider=traced.provider) as run:
            act(target=lookup(key=f"k{i}")["id"])
    roots = [s for s in traced.spans if s.name == "invoke_agent refunds"]
    assert len(roots) == 2 and len({r.context.trace_id for r in roots}) == 2
    for root in roots:
        assert root.parent is None
        assert root.attributes["gen_ai.operation.name"] == "invoke_agent"
        assert root.attributes["gen_ai.agent.name"] == "refunds"
        members = [s for s in traced.spans if s.context.trace_id == root.context.trace_id]
        assert sorted(s.name for s in members) == [
            "execute_tool act",
            "execute_tool lookup",
            "invoke_agent refunds",
        ]
        assert all(s.parent.span_id == root.context.span_id for s in members if s is not root)
    assert roots[-1].attributes["agent.run.id"] == run.run_id


def test_inside_an_open_span_the_run_nests_and_adds_no_span(traced):
    lookup, _ = _tools(traced.provider)
    tracer = traced.provider.get_tracer("app")
    with tracer.start_as_current_span("request") as request, op.run(tracer_provider=traced.provider):
        lookup(key="a")
    assert sorted(s.name for s in traced.spans) == ["execute_tool lookup", "request"]
    assert traced.span("lookup").parent.span_id == request.get_span_context().span_id


def test_root_span_off_and_unnamed_agent(traced):
    lookup, _ = _tools(traced.provider)
    with op.run(root_span=False, tracer_provider=traced.provider):
        lookup(key="a")
    assert [s.name for s in traced.spans] == ["execute_tool lookup"]
    with op.run(tracer_provider=traced.provider):
        lookup(key="b")
    root = next(s for s in traced.spans if s.name == "invoke_agent")
    assert "gen_ai.agent.name" not in root.attributes
    with pytest.raises(op.ConfigurationError, match=r"op.run\(root_span=...\)"):
        op.run(root_span="no")
    with pytest.raises(op.ConfigurationError, match=r"op.run\(agent_name=...\)"):
        op.run(agent_name="")


def test_a_failed_run_records_the_error_type_only(traced):
    _, act = _tools(traced.provider)
    with pytest.raises(op.ProvenanceError), op.run(agent_name="a", tracer_provider=traced.provider):
        act(target="guessed-value-123")
    root = next(s for s in traced.spans if s.name == "invoke_agent a")
    assert root.status.status_code.name == "ERROR"
    assert root.attributes["error.type"] == "otel_provenance.errors.ProvenanceError"
    assert "guessed-value-123" not in repr(root.attributes) + str(root.status.description)


def test_async_runs_get_their_own_root_spans(traced):
    @op.tool(side_effect="read", tracer_provider=traced.provider)
    async def fetch(key: str) -> dict:
        await asyncio.sleep(0)
        return {"v": key}

    async def one(i: int) -> None:
        async with op.run(agent_name="a", tracer_provider=traced.provider):
            await fetch(key=f"k{i}")
            await asyncio.sleep(0)
            await fetch(key=f"k{i}")

    async def main() -> None:
        await asyncio.gather(*(one(i) for i in range(20)))

    asyncio.run(main())
    roots = {s.context.span_id: s for s in traced.spans if s.name == "invoke_agent a"}
    assert len(roots) == 20
    tools = [s for s in traced.spans if s.name == "execute_tool fetch"]
    assert len(tools) == 40 and all(s.parent.span_id in roots for s in tools)
    by_root: dict[int, int] = {}
    for s in tools:
        by_root[s.parent.span_id] = by_root.get(s.parent.span_id, 0) + 1
    assert set(by_root.values()) == {2}
