"""A mined rule never fails a run for being safer than the approved runs (docs/contracts.md).

Before, from runs that never sent an idempotency key, ``mine`` wrote ``allowed_values
agent.idempotency.present: [false]`` under ``MISSING_SAFEGUARD``: the release that added the key failed.
The property, for any approved set: take a run that passes a mined rule, make it safer — an idempotency
key on its writes, a retry attempt fewer, a check step added — and the rule still passes it. The route
rule measures similarity to the approved routes, not safety: a route that changed (a step added or
dropped) is a human's call (``routes approve``), so it is left out of the property except for the
key, which changes no route.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from otel_provenance import semconv
from otel_provenance.offline import Outcome
from otel_provenance.offline.contracts import parse_contract
from otel_provenance.offline.evaluate import evaluate
from otel_provenance.offline.mine import mine_contract
from otel_provenance.offline.model import Attributes, Run, Span

TOOLS = ("lookup", "check", "refund", "notify")
WRITES = ("refund",)


@st.composite
def runs(draw: st.DrawFn, run_id: str) -> Run:
    """An agent run: an invoke_agent root, then tool calls (with retries of a write marked by
    ``agent.retry.number``), every write with or without an idempotency key."""
    trace = f"{abs(hash(run_id)) % 16**32:032x}"
    root = Span(trace, "f" * 16, None, "invoke_agent a", 1, 0, 10_000,
                attributes=Attributes({semconv.GEN_AI_OPERATION_NAME: semconv.INVOKE_AGENT}))  # fmt: skip
    spans = [root]
    steps = draw(st.lists(st.sampled_from(TOOLS), min_size=1, max_size=6))
    keyed = draw(st.booleans())
    t = 1
    for step in steps:
        attempts = draw(st.integers(1, 3)) if step in WRITES else 1
        for retry in range(attempts):
            attributes = {
                semconv.GEN_AI_OPERATION_NAME: semconv.EXECUTE_TOOL,
                semconv.GEN_AI_TOOL_NAME: step,
                semconv.SIDE_EFFECT: "write" if step in WRITES else "read",
                semconv.RETRY_NUMBER: retry,
                semconv.TOOL_STATUS: semconv.TOOL_STATUS_OK,
            }
            if step in WRITES:
                attributes[semconv.IDEMPOTENCY_PRESENT] = keyed
            spans.append(Span(trace, f"{t:016x}", root.span_id, f"execute_tool {step}", 1, t * 10, t * 10 + 5,
                              attributes=Attributes(attributes)))  # fmt: skip
            t += 1
    return Run(run_id, tuple(spans))


def _with(span: Span, **changes: object) -> Span:
    attributes = dict(span.attributes.items_sorted())
    attributes.update(changes)
    return replace(span, attributes=Attributes(attributes))


def keyed(run: Run) -> Run:
    """Every write sends an idempotency key."""
    spans = tuple(
        _with(s, **{semconv.IDEMPOTENCY_PRESENT: True})
        if s.attributes.get(semconv.SIDE_EFFECT) == "write"
        else s
        for s in run.spans
    )
    return Run(run.run_id, spans)


def fewer_retries(run: Run) -> Run:
    """The last retry attempt (``agent.retry.number`` > 0) is gone."""
    retries = [s for s in run.spans if s.attributes.get(semconv.RETRY_NUMBER, 0) > 0]
    if not retries:
        return run
    return Run(run.run_id, tuple(s for s in run.spans if s is not retries[-1]))


def with_a_check(run: Run) -> Run:
    """A read-only check step the approved runs never made, before everything else."""
    root = run.spans[0]
    check = Span(root.trace_id, "e" * 16, root.span_id, "execute_tool verify_identity", 1, 1, 2,
                 attributes=Attributes({semconv.GEN_AI_OPERATION_NAME: semconv.EXECUTE_TOOL,
                                        semconv.GEN_AI_TOOL_NAME: "verify_identity",
                                        semconv.SIDE_EFFECT: "read", semconv.RETRY_NUMBER: 0,
                                        semconv.TOOL_STATUS: semconv.TOOL_STATUS_OK}))  # fmt: skip
    return Run(run.run_id, (*run.spans, check))


def _passing(run: Run, contract) -> set[str]:
    return {r.rule_id for r in evaluate(run, contract).rules if r.status is Outcome.PASS}


@settings(max_examples=150)
@given(st.data())
def test_a_safer_run_never_fails_a_mined_rule_it_passed(data: st.DataObject) -> None:
    approved = [data.draw(runs(f"a{i}")) for i in range(data.draw(st.integers(1, 4)))]
    contract = parse_contract(mine_contract(approved, "c"))  # the writes say so: agent.side_effect
    candidate = data.draw(st.sampled_from(approved) | runs("c0"))
    before = _passing(candidate, contract)
    for safer in (keyed, fewer_retries, with_a_check):
        after = _passing(safer(candidate), contract)
        lost = before - after - ({"approved_route"} if safer is not keyed else set())
        assert not lost, (safer.__name__, lost)


def test_a_key_added_to_an_approved_route_passes_a_contract_mined_without_one() -> None:
    """The done-when of #32 in one line: approved runs never sent a key; the release that does passes."""
    approved = [keyed_run(f"a{i}", key=False) for i in range(3)]
    text = mine_contract(approved, "c", writes=WRITES)
    assert semconv.IDEMPOTENCY_PRESENT not in text  # no "only false" safeguard rule
    contract = parse_contract(text)
    assert evaluate(keyed_run("r", key=True), contract).status == "pass"
    # and where every approved write sent one, a release that stops sending it fails
    contract = parse_contract(mine_contract([keyed_run(f"a{i}", key=True) for i in range(3)], "c"))
    result = evaluate(keyed_run("r", key=False), contract)
    assert result.status == "fail"
    (failed,) = [r for r in result.rules if r.status is Outcome.FAIL]
    assert failed.code == "MISSING_SAFEGUARD"


def keyed_run(run_id: str, key: bool) -> Run:
    trace = f"{abs(hash(run_id)) % 16**32:032x}"
    root = Span(trace, "f" * 16, None, "invoke_agent a", 1, 0, 100,
                attributes=Attributes({semconv.GEN_AI_OPERATION_NAME: semconv.INVOKE_AGENT}))  # fmt: skip
    refund = Span(trace, "1" * 16, root.span_id, "execute_tool refund", 1, 10, 20,
                  attributes=Attributes({semconv.GEN_AI_OPERATION_NAME: semconv.EXECUTE_TOOL,
                                         semconv.GEN_AI_TOOL_NAME: "refund", semconv.SIDE_EFFECT: "write",
                                         semconv.IDEMPOTENCY_PRESENT: key}))  # fmt: skip
    return Run(run_id, (root, refund))
