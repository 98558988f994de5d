"""What a mutation run found untested in two small verdict modules (docs/testing.md):

* ``blocked_calls``: the boundary between "could be over the limit" and "cannot be", and the words
  and witnesses of its two kinds of insufficient evidence (a reviewer acts on them);
* route similarity: the exact-ratio arithmetic that decides whether two routes are one family.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from contract_runs import triage_run
from otel_provenance import semconv
from otel_provenance.offline.contracts import parse_contract
from otel_provenance.offline.contracts.similarity import more_similar, route_shape, weighted_jaccard
from otel_provenance.offline.evaluate import evaluate

UPDATE = "{step: ticket.update}"


def _blocked_rule(limit: int, select: str | None = UPDATE):
    body = f"type: blocked_calls\n    max: {limit}" + (f"\n    select: {select}" if select else "")
    (rule,) = evaluate_rules(body)
    return rule


def evaluate_rules(body: str, **changes):
    contract = parse_contract(f"version: 1\nname: t\nrules:\n  - id: r\n    {body}\n", "t.yaml")
    return evaluate(triage_run("r", **changes), contract).rules


def _one(body: str, **changes):
    (rule,) = evaluate_rules(body, **changes)
    return rule


def test_calls_without_a_status_that_cannot_reach_the_limit_still_pass():
    silent = {"update_attrs": {semconv.TOOL_STATUS: None}}
    one_allowed = _one(f"type: blocked_calls\n    select: {UPDATE}\n    max: 1", **silent)
    assert one_allowed.status.value == "pass", [f.message for f in one_allowed.findings]
    none_allowed = _one(f"type: blocked_calls\n    select: {UPDATE}\n    max: 0", **silent)
    assert none_allowed.status.value == "insufficient_evidence"


def test_a_call_without_a_status_is_named_with_the_blocked_count_so_far():
    run = triage_run("r", update_attrs={semconv.TOOL_STATUS: None})
    update = next(s for s in run.spans if s.tool_name == "ticket.update")
    (rule,) = evaluate_rules(
        f"type: blocked_calls\n    select: {UPDATE}\n    max: 0", update_attrs={semconv.TOOL_STATUS: None}
    )
    [finding] = rule.findings
    assert finding.message == (
        "1 of the run's ticket.update carry no agent.tool.status (or lack a selector attribute); "
        "blocked calls cannot be counted."
    )
    [witness] = finding.witnesses
    assert witness.span_ids == (update.span_id,) and witness.observed == (("blocked", 0),)


def test_an_incomplete_run_cannot_show_it_has_no_blocked_calls():
    run = triage_run("r", orphan=True, update_attrs={semconv.TOOL_STATUS: "ok"})
    orphan = next(s for s in run.spans if s.tool_name == "late.audit")
    (rule,) = evaluate_rules(
        f"type: blocked_calls\n    select: {UPDATE}\n    max: 0",
        orphan=True,
        update_attrs={semconv.TOOL_STATUS: "ok"},
    )
    assert rule.status.value == "insufficient_evidence"
    [finding] = rule.findings
    assert finding.message == (
        "cannot count blocked ticket.update: the run is incomplete (1 span(s) have a parent that is "
        "not in the trace)."
    )
    [witness] = finding.witnesses
    assert witness.span_ids == (orphan.span_id,) and witness.observed == (("blocked", 0),)


def test_without_a_selector_every_tool_call_is_counted_and_so_named():
    (rule,) = evaluate_rules("type: blocked_calls\n    max: 0", update_attrs={semconv.TOOL_STATUS: "blocked"})
    [finding] = rule.findings
    assert finding.message.startswith("1 of the run's tool calls were blocked by their provenance budget")
    assert finding.witnesses[0].observed == (("blocked", 1),)


# --- similarity -----------------------------------------------------------------------------------


def test_a_repeated_edge_adds_up():
    shape = route_shape({"a": 1, "b": 2}, [(("a", "b"), 1), (("a", "b"), 1)])
    assert shape == Counter({("step", "a"): 1, ("step", "b"): 2, ("edge", "a", "b"): 2})


def test_two_empty_routes_are_identical_and_an_empty_one_shares_nothing_with_another():
    assert weighted_jaccard(Counter(), Counter()) == (1, 1)
    assert weighted_jaccard(Counter({("step", "a"): 1}), Counter()) == (0, 1)
    assert weighted_jaccard(Counter({("step", "a"): 2}), Counter({("step", "a"): 1})) == (1, 2)


ratios = st.tuples(st.integers(0, 50), st.integers(1, 50))


@given(ratios, ratios)
def test_more_similar_is_the_exact_comparison_of_the_two_ratios(x, y):
    assert more_similar(x, y) == (Fraction(*x) > Fraction(*y))
