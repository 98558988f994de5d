"""What a run has spent through a policy (#34): ``run_sum`` and ``run_count`` count only calls that ran,
per ``op.run``, and runs in threads or asyncio tasks never share totals. Through ``@op.tool`` with the
real SDK, and through ``ToolCall`` where a call is refused after the policy counted it."""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

import otel_provenance as op
from instrument_helpers import Traced, settings
from otel_provenance.instrument.call.decision import Objection
from otel_provenance.instrument.call.lifecycle import ToolCall, ToolSpec
from otel_provenance.instrument.call.policy import policy_checks

LIMIT = op.Policy(arguments={"amount": {"run_sum": 500}})
THREE = op.Policy(run_count=3)


def refunds(traced: Traced, policy: op.Policy = LIMIT, **options):
    """A read tool ``refund(amount)`` under ``policy``, and the amounts of the calls that ran."""
    ran: list[object] = []

    @op.tool(side_effect="read", policy=policy, tracer_provider=traced.provider, **options)
    def refund(amount=None, flag: str = "") -> None:
        ran.append(amount)

    return refund, ran


def attempt(tool, *args, **kwargs) -> tuple[str, ...]:
    """Call ``tool``; the violations it was blocked for (empty if it ran)."""
    try:
        tool(*args, **kwargs)
    except op.ProvenanceError as blocked:
        return blocked.violations
    return ()


def test_a_run_sum_counts_the_calls_that_ran_and_a_blocked_call_adds_nothing(traced):
    refund, ran = refunds(traced)
    with op.run():
        assert attempt(refund, amount=200) == ()
        assert attempt(refund, amount=400) == ("policy:amount:run_sum",)  # 600 > 500: adds nothing
        assert attempt(refund, amount=300) == ()  # 500: exactly the limit
        assert attempt(refund, amount=1) == ("policy:amount:run_sum",)
        assert attempt(refund, amount=0) == ()
    assert ran == [200, 300, 0]


def test_a_call_blocked_by_another_check_adds_nothing(traced):
    policy = op.Policy(arguments={"amount": {"maximum": 300, "run_sum": 500}})
    refund, ran = refunds(traced, policy)
    with op.run():
        assert attempt(refund, amount=400) == ("policy:amount:maximum",)  # would fit the sum: not counted
        assert attempt(refund, amount=300) == ()
        assert attempt(refund, amount=200) == ()
    assert ran == [300, 200]


def test_a_call_blocked_by_its_budget_adds_nothing(traced):
    @op.tool(side_effect="write", policy=LIMIT, tracer_provider=traced.provider)
    def refund(order: str, amount: int) -> None:
        return None

    with op.run(inputs={"order": "ORD-1001", "amount": 500}):
        assert attempt(refund, order="ORD-9999", amount=500) == ("max_assumed:order=assumed",)
        assert attempt(refund, order="ORD-1001", amount=500) == ()


def test_a_call_refused_after_the_policy_counted_it_gives_it_back(traced):
    """A check after the policy (the contract's guard, an approval that was denied) blocks the call:
    ``refuse`` gives back what the policy had counted."""

    def no_flagged_calls(call):
        return [Objection("flagged:flag")] if call.arguments.get("flag") else []

    spec = ToolSpec(
        "refund",
        side_effect="read",
        tracer_provider=traced.provider,
        checks=(*policy_checks((LIMIT,)), no_flagged_calls),
    )
    with op.run():
        refused = ToolCall(spec, lambda: {"amount": 400, "flag": "yes"})
        assert refused.blocked and refused.violations == ("flagged:flag",)
        refused.refuse()
        second = ToolCall(spec, lambda: {"amount": 500})  # 400 given back: 500 fits
        assert not second.blocked
        third = ToolCall(spec, lambda: {"amount": 1})
        assert third.violations == ("policy:amount:run_sum",)


def test_an_asked_call_is_counted_until_it_is_refused(traced):
    """An ask may be approved and run, so it counts while a person decides; a denial refuses it."""
    ask = op.Policy(arguments={"amount": {"maximum": 100, "run_sum": 500}}, on_violation="ask")
    spec = ToolSpec(
        "refund", side_effect="read", tracer_provider=traced.provider, checks=policy_checks((ask,))
    )
    with op.run():
        asked = ToolCall(spec, lambda: {"amount": 400})
        assert asked.decision.asks == ("policy:amount:maximum",) and not asked.blocked
        waiting = ToolCall(spec, lambda: {"amount": 200})  # 400 + 200 > 500 while the first waits
        assert waiting.decision.asks == ("policy:amount:maximum", "policy:amount:run_sum")
        waiting.refuse()
        asked.refuse()  # denied
        assert ToolCall(spec, lambda: {"amount": 100}).decision.asks == ()


def test_a_give_back_that_fails_is_logged_and_the_others_still_run(traced, caplog):
    """Refusing must not fail the host: a check whose give-back raises is named in a warning (the
    tool, the exception's type, never its message) and the policy's count is given back anyway."""

    def broken_undo(call):
        def undo():
            raise RuntimeError("secret-undo-canary")

        call.on_refuse.append(undo)
        return [Objection("flagged:flag")] if call.arguments.get("flag") else []

    spec = ToolSpec(
        "refund",
        side_effect="read",
        tracer_provider=traced.provider,
        checks=(broken_undo, *policy_checks((LIMIT,))),
    )
    with op.run(), caplog.at_level(logging.WARNING, logger="otel_provenance"):
        ToolCall(spec, lambda: {"amount": 400, "flag": "yes"}).refuse()
        assert not ToolCall(spec, lambda: {"amount": 500}).blocked  # the 400 was given back
    warnings = [r.getMessage() for r in caplog.records if "could not undo" in r.getMessage()]
    assert warnings == ["refund: could not undo a check's count (RuntimeError)"]


def test_refusing_twice_gives_back_once(traced):
    def always(call):
        return [Objection("always:x")]

    spec = ToolSpec(
        "refund",
        side_effect="read",
        tracer_provider=traced.provider,
        checks=(*policy_checks((THREE,)), always),
    )
    calm = ToolSpec(
        "refund", side_effect="read", tracer_provider=traced.provider, checks=policy_checks((THREE,))
    )
    with op.run():
        ToolCall(calm, dict).start().end()  # one call ran
        call = ToolCall(spec, dict)
        call.refuse()
        call.refuse()
        assert [ToolCall(calm, dict).violations for _ in range(3)] == [(), (), ("policy:calls:run_count",)]


def test_a_run_count_allows_that_many_calls_that_ran(traced):
    policy = op.Policy(run_count=3, arguments={"to": {"patterns": [r".+@example\.com"]}})

    @op.tool(side_effect="read", policy=policy, tracer_provider=traced.provider)
    def email(to: str) -> None:
        return None

    with op.run():
        outcomes = [attempt(email, to=to) for to in ("a@example.com", "b@evil.com", "c@example.com")]
        outcomes += [attempt(email, to="d@example.com"), attempt(email, to="e@example.com")]
    assert outcomes == [(), ("policy:to:pattern",), (), (), ("policy:calls:run_count",)]


def test_a_run_count_of_zero_never_lets_the_tool_run(traced):
    refund, ran = refunds(traced, op.Policy(run_count=0))
    with op.run():
        assert attempt(refund, amount=1) == ("policy:calls:run_count",)
    assert attempt(refund, amount=1) == ("policy:calls:run_count",)  # outside a run too
    assert ran == []


@pytest.mark.parametrize(
    ("arguments", "why"),
    [
        ({}, "not passed"),
        ({"amount": "100"}, "text"),
        ({"amount": -100}, "negative"),
        ({"amount": None}, "None"),
    ],
)
def test_a_run_sum_needs_a_number_it_can_add(traced, arguments, why):
    """What a call without a usable amount spends is unknown (a default may refund in full), and a
    negative one would lower the total: both fail."""
    refund, ran = refunds(traced)
    with op.run():
        assert attempt(refund, **arguments) == ("policy:amount:run_sum",), why
    assert ran == []


def test_the_limit_can_be_read_from_the_run_inputs(traced):
    refund, ran = refunds(
        traced, op.Policy(arguments={"amount": {"run_sum": op.Input("order.lines.1.amount")}})
    )
    with op.run(inputs={"order": {"id": "ORD-1001", "lines": [{"amount": 5}, {"amount": 120}]}}):
        assert [attempt(refund, amount=a) for a in (100, 30, 20)] == [(), ("policy:amount:run_sum",), ()]
    with op.run(inputs={"order": {"id": "ORD-1002", "lines": [{"amount": 5}, {"amount": 10}]}}):
        assert attempt(refund, amount=11) == ("policy:amount:run_sum",)
    assert ran == [100, 20]


@pytest.mark.parametrize(
    "inputs",
    [
        None,
        {"order": {"id": "ORD-1"}},
        {"order": {"amount": "120"}},
        {"order": {"amount": True}},
        {"order": []},
    ],
)
def test_a_limit_the_run_does_not_declare_as_a_number_fails_closed(traced, caplog, inputs):
    refund, ran = refunds(traced, op.Policy(arguments={"amount": {"run_sum": op.Input("order.amount")}}))
    with op.run(inputs=inputs):
        assert attempt(refund, amount=1) == ("policy:amount:run_sum",)
    assert ran == []
    said = "refund: policy run_sum of amount: the run declares no number at input 'order.amount'"
    assert said in caplog.text  # the tool and the argument, as outside a run


def test_outside_a_run_each_call_is_judged_alone(traced, caplog):
    refund, ran = refunds(traced, op.Policy(arguments={"amount": {"run_sum": 500}}, run_count=1))
    assert [attempt(refund, amount=a) for a in (400, 400, 501)] == [(), (), ("policy:amount:run_sum",)]
    assert ran == [400, 400]
    by_input, _ = refunds(traced, op.Policy(arguments={"amount": {"run_sum": op.Input("amount")}}))
    assert attempt(by_input, amount=1) == ("policy:amount:run_sum",)  # no run, no inputs


def test_each_run_has_its_own_totals_and_a_nested_run_spends_the_enclosing_runs(traced):
    """A nested run (a sub-agent) is part of the run it is entered in: one trace, one run (#50)."""
    refund, _ = refunds(traced)
    with op.run():
        assert attempt(refund, amount=400) == ()
        with op.run():
            assert attempt(refund, amount=200) == ("policy:amount:run_sum",)  # 400 + 200 in the run
            assert attempt(refund, amount=100) == ()
        assert attempt(refund, amount=1) == ("policy:amount:run_sum",)  # the sub-agent spent the rest
    with op.run():
        assert attempt(refund, amount=500) == ()


def test_totals_are_per_tool_and_per_policy_object(traced):
    first, _ = refunds(traced, name="first")
    second, _ = refunds(traced, name="second")
    other_policy, _ = refunds(traced, op.Policy(arguments={"amount": {"run_sum": 500}}), name="third")
    with op.run():
        assert [attempt(t, amount=500) for t in (first, second, other_policy)] == [(), (), ()]
        assert attempt(first, amount=1) == ("policy:amount:run_sum",)


def test_advisory_mode_counts_the_calls_it_lets_run(traced):
    refund, ran = refunds(traced)
    with settings(enforce=False), op.run():
        for amount in (400, 400, 400):
            refund(amount=amount)
    assert ran == [400, 400, 400]
    spans = [s for s in traced.spans if s.name == "execute_tool refund"]
    assert [tuple(s.attributes.get("agent.violations", ())) for s in spans] == [
        (),
        ("policy:amount:run_sum",),
        ("policy:amount:run_sum",),
    ]


# -- concurrency ---------------------------------------------------------------------------------------


def test_runs_in_threads_never_share_totals(traced):
    refund, ran = refunds(traced)
    start = threading.Barrier(8)

    def one_run(_: int) -> list[tuple[str, ...]]:
        start.wait()
        with op.run():
            return [attempt(refund, amount=100) for _ in range(7)]

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(one_run, range(8)))
    assert all(r == [()] * 5 + [("policy:amount:run_sum",)] * 2 for r in results)
    assert len(ran) == 40


def test_runs_in_asyncio_tasks_never_share_totals(traced):
    ran: list[int] = []

    @op.tool(side_effect="read", policy=LIMIT, tracer_provider=traced.provider)
    async def refund(amount: int) -> None:
        await asyncio.sleep(0)
        ran.append(amount)

    async def one_run() -> list[bool]:
        async with op.run():
            outcomes = []
            for _ in range(4):
                try:
                    await refund(amount=150)
                    outcomes.append(True)
                except op.ProvenanceError:
                    outcomes.append(False)
            return outcomes

    async def main():
        return await asyncio.gather(*(one_run() for _ in range(10)))

    assert asyncio.run(main()) == [[True, True, True, False]] * 10
    assert len(ran) == 30


def test_concurrent_calls_of_one_run_never_spend_more_than_the_limit(traced):
    """Threads that share one run (its context copied into each) race for the last of the limit:
    a call is counted as it is let through, so exactly as many run as fit."""
    inside = threading.Event()
    release = threading.Event()
    ran: list[int] = []

    @op.tool(side_effect="read", policy=LIMIT, tracer_provider=traced.provider)
    def refund(amount: int) -> None:
        inside.set()
        release.wait(5)  # every let-through call is still running while the others are judged
        ran.append(amount)

    with op.run():
        context = contextvars.copy_context()
        start = threading.Barrier(12)

        def call(_: int) -> tuple[str, ...]:
            start.wait()
            return context.copy().run(attempt, refund, amount=100)

        with ThreadPoolExecutor(12) as pool:
            futures = [pool.submit(call, i) for i in range(12)]
            inside.wait(5)
            blocked = [f.result() for f in futures if f.done()]
            release.set()
            outcomes = [f.result() for f in futures]
    assert outcomes.count(()) == 5 and len(ran) == 5
    assert outcomes.count(("policy:amount:run_sum",)) == 7
    assert all(b == ("policy:amount:run_sum",) for b in blocked)


@hypothesis_settings(max_examples=60, deadline=None)
@given(amounts=st.lists(st.integers(0, 300), max_size=12), limit=st.integers(0, 1000))
def test_the_calls_that_run_are_exactly_those_that_fit(amounts, limit):
    """Whatever the amounts: a call runs iff it fits beside the calls that ran before it."""
    traced = Traced()
    refund, ran = refunds(traced, op.Policy(arguments={"amount": {"run_sum": limit}}))
    expected, total = [], 0
    for amount in amounts:
        if total + amount <= limit:
            expected.append(amount)
            total += amount
    with op.run():
        for amount in amounts:
            attempt(refund, amount=amount)
    assert ran == expected
    assert sum(ran) <= limit


def test_the_warning_for_a_missing_input_names_the_path_never_a_value(traced, caplog):
    caplog.set_level(logging.WARNING)
    refund, _ = refunds(traced, op.Policy(arguments={"amount": {"run_sum": op.Input("order.total")}}))
    with op.run(inputs={"order": {"amount": 31337}}):
        attempt(refund, amount=27182)
    assert "order.total" in caplog.text
    assert "31337" not in caplog.text and "27182" not in caplog.text


# -- #50: the second way in — fractions, a checked argument that is not the first, calls outside a run --
def test_a_fraction_of_one_is_spent_too(traced):
    """An amount between 0 and 1 adds to the total like any other: two halves and a bit spend 1."""
    refund, ran = refunds(traced, op.Policy(arguments={"amount": {"run_sum": 1}}))
    with op.run():
        assert [attempt(refund, amount=a) for a in (0.5, 0.5, 0.25)] == [(), (), ("policy:amount:run_sum",)]
    assert ran == [0.5, 0.5]


def test_outside_a_run_a_spending_argument_after_another_checked_one_is_still_judged(traced):
    """The policy checks ``flag`` first (a pattern, no total) and ``amount`` after it: outside a run the
    amount is still judged alone — missing, negative or over the limit, it fails."""
    policy = op.Policy(arguments={"flag": {"patterns": ["[a-z]*"]}, "amount": {"run_sum": 500}})
    refund, ran = refunds(traced, policy)
    assert attempt(refund, amount=501, flag="x") == ("policy:amount:run_sum",)
    assert attempt(refund, amount=-5, flag="x") == ("policy:amount:run_sum",)  # would lower a total
    assert attempt(refund, flag="x") == ("policy:amount:run_sum",)  # what it spends is unknown
    assert attempt(refund, amount=500, flag="x") == ()
    assert ran == [500]


def test_the_warning_for_an_input_limit_outside_a_run_names_the_tool_and_the_argument(traced, caplog):
    refund, _ = refunds(traced, op.Policy(arguments={"amount": {"run_sum": op.Input("order.total")}}))
    assert attempt(refund, amount=1) == ("policy:amount:run_sum",)
    said = "refund: policy run_sum of amount: the run declares no number at input 'order.total'"
    assert [r.getMessage() for r in caplog.records if "run_sum" in r.getMessage()] == [
        f"{said}, so the check fails"
    ]


def test_a_policy_from_a_document_with_a_key_it_does_not_know_is_refused_by_name():
    with pytest.raises(
        op.ConfigurationError, match=r"Policy\.max_calls: unknown key \(allowed: schema, arguments"
    ):
        op.Policy.from_document({"arguments": {"amount": {"maximum": 5}}, "max_calls": 3})
    with pytest.raises(op.ConfigurationError, match=r"^Policy: expected a mapping of policy fields$"):
        op.Policy.from_document(["run_count", 3])


def test_in_a_run_a_spending_argument_after_another_checked_one_is_still_counted(traced):
    """As outside a run: ``flag`` comes first in the policy and has no total; ``amount`` after it is
    still summed over the run."""
    policy = op.Policy(arguments={"flag": {"patterns": ["[a-z]*"]}, "amount": {"run_sum": 500}})
    refund, ran = refunds(traced, policy)
    with op.run():
        assert attempt(refund, amount=300, flag="x") == ()
        assert attempt(refund, amount=300, flag="x") == ("policy:amount:run_sum",)
    assert ran == [300]


def test_the_run_count_of_one_tool_is_not_spent_by_another(traced):
    """Two tools, each allowed one call per run: a call of the first leaves the second's count alone."""
    first, _ = refunds(traced, op.Policy(run_count=1), name="first")
    second, _ = refunds(traced, op.Policy(run_count=1), name="second")
    with op.run():
        assert [attempt(first, amount=1), attempt(second, amount=1)] == [(), ()]
        assert attempt(first, amount=1) == ("policy:calls:run_count",)


class Approves:
    """An approver that says yes and records the reasons it was asked for."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, ...]] = []

    def __call__(self, request: op.ApprovalRequest) -> bool:
        self.asked.append(request.reasons)
        return True


def test_an_ask_policys_spending_limits_ask_outside_a_run_too(traced):
    """``on_violation="ask"`` holds for ``run_sum`` and ``run_count`` whether or not a run counts:
    outside a run the call judged alone over its limit goes to the approver, who lets it run."""
    policy = op.Policy(arguments={"amount": {"run_sum": 500}}, run_count=0, on_violation="ask")
    refund, ran = refunds(traced, policy)
    approver = Approves()
    with settings(approver=approver):
        assert attempt(refund, amount=600) == ()
    assert ran == [600]
    assert approver.asked == [("policy:amount:run_sum", "policy:calls:run_count")]


def test_an_ask_policys_run_count_asks_in_a_run(traced):
    refund, ran = refunds(traced, op.Policy(run_count=1, on_violation="ask"))
    approver = Approves()
    with op.run(approver=approver):
        assert [attempt(refund, amount=1), attempt(refund, amount=2)] == [(), ()]
    assert ran == [1, 2]
    assert approver.asked == [("policy:calls:run_count",)]


def test_outside_a_run_a_call_that_spends_nothing_or_a_fraction_is_within_its_limit(traced):
    refund, ran = refunds(traced, op.Policy(arguments={"amount": {"run_sum": 500}}))
    assert [attempt(refund, amount=a) for a in (0, 0.5)] == [(), ()]
    assert ran == [0, 0.5]
