"""``numeric_budgets`` in detail: max vs sum, attribute vs duration (and its unit), the label when no
step is selected, spans that cannot be measured — verdicts, messages and witnesses."""

from __future__ import annotations

import pytest

from contract_runs import WRITE, RunBuilder
from otel_provenance.errors import ContractError
from otel_provenance.offline.contracts import parse_contract
from otel_provenance.offline.contracts.outcomes import Witness
from otel_provenance.offline.evaluate import evaluate
from otel_provenance.offline.model import Run


def _rule(body: str, run: Run):
    contract = parse_contract(f"version: 1\nname: t\nrules:\n  - id: r\n    {body}\n")
    (rule,) = evaluate(run, contract).rules
    return rule


def _budget(aggregate: str, limit: str, measure: str = "attribute: cost", select: str | None = None) -> str:
    where = "" if select is None else f"    select: {select}\n"
    return f'type: numeric_budgets\n{where}    {measure}\n    aggregate: {aggregate}\n    max: "{limit}"'


UPDATES = "{step: ticket.update}"


def _costs(*costs: float) -> tuple[Run, list[str]]:
    b = RunBuilder("costs")
    ids = [b.add("ticket.update", attrs={**WRITE, "cost": c}) for c in costs]
    return b.run(), ids


def test_max_judges_the_largest_value_not_the_total():
    run, _ = _costs(0.25, 0.25)
    assert _rule(_budget("max", "0.3", select=UPDATES), run).status.value == "pass"
    assert _rule(_budget("sum", "0.3", select=UPDATES), run).status.value == "fail"


def test_max_names_every_span_over_the_limit_and_the_largest_value():
    run, (_low, mid, high) = _costs(0.25, 0.5, 0.75)
    rule = _rule(_budget("max", "0.4", select=UPDATES), run)
    assert rule.status.value == "fail"
    (finding,) = rule.findings
    assert finding.message == (
        "the largest cost over ticket.update is 0.75; the contract permits at most 0.4 per run."
    )
    assert finding.witnesses == (Witness(run.trace_ids[0], tuple(sorted([mid, high])), (("max", "0.75"),)),)


def test_sum_adds_the_values_from_zero_and_names_every_span():
    run, ids = _costs(0.25, 0.5)
    assert _rule(_budget("sum", "1", select=UPDATES), run).status.value == "pass"
    assert _rule(_budget("sum", "0.75", select=UPDATES), run).status.value == "pass"  # at most: equal is in
    rule = _rule(_budget("sum", "0.7", select=UPDATES), run)
    assert rule.status.value == "fail"
    (finding,) = rule.findings
    assert finding.message == (
        "the sum of cost over ticket.update is 0.75; the contract permits at most 0.7 per run."
    )
    assert finding.witnesses == (Witness(run.trace_ids[0], tuple(sorted(ids)), (("sum", "0.75"),)),)


def test_without_a_selector_spans_lacking_the_attribute_do_not_count_and_the_label_is_all_spans():
    run, _ = _costs(0.5)  # the root span carries no cost: it is not missing evidence
    assert _rule(_budget("sum", "1"), run).status.value == "pass"
    rule = _rule(_budget("sum", "0.25"), run)
    assert rule.status.value == "fail"
    assert rule.findings[0].message == (
        "the sum of cost over all spans is 0.5; the contract permits at most 0.25 per run."
    )


def test_duration_is_measured_in_the_unit_the_contract_names():
    b = RunBuilder("timed")
    b.add("ticket.update", attrs=dict(WRITE))  # RunBuilder spans last 50 ns = 0.00005 ms
    run = b.run()
    assert _rule(_budget("max", "0.00005", "duration: ms", UPDATES), run).status.value == "pass"
    rule = _rule(_budget("max", "0.00004", "duration: ms", UPDATES), run)
    assert rule.status.value == "fail"
    assert rule.findings[0].message == (
        "the largest duration (ms) over ticket.update is 0.00005; the contract permits at most "
        "0.00004 per run."
    )


def test_a_span_of_zero_length_measures_zero():
    b = RunBuilder("instant")
    b.add("ticket.update", attrs=dict(WRITE), start=5_000, end=5_000)
    b.add("ticket.update", attrs=dict(WRITE))
    run = b.run()
    assert _rule(_budget("sum", "50", "duration: ns", UPDATES), run).status.value == "pass"


def test_a_span_without_a_start_time_has_no_duration_and_is_missing_evidence():
    b = RunBuilder("unstarted")
    unstarted = b.add("ticket.update", attrs=dict(WRITE), start=0, end=10)
    b.add("ticket.update", attrs=dict(WRITE), start=1, end=11)  # a start at 1 ns is a real time
    run = b.run()
    rule = _rule(_budget("max", "100", "duration: ns", UPDATES), run)
    assert rule.status.value == "insufficient_evidence"
    (finding,) = rule.findings
    assert finding.message == (
        "1 span(s) of ticket.update have no numeric duration (ns); the budget cannot be checked."
    )
    assert finding.witnesses == (Witness(run.trace_ids[0], (unstarted,)),)


def test_a_span_that_might_be_selected_makes_the_budget_insufficient():
    b = RunBuilder("maybe")
    b.add("ticket.update", attrs={**WRITE, "cost": 0.5})
    maybe = b.add("ticket.update", attrs={"cost": 0.25})  # no agent.side_effect
    run = b.run()
    select = "{step: ticket.update, attributes: {agent.side_effect: write}}"
    rule = _rule(_budget("sum", "1", select=select), run)
    assert rule.status.value == "insufficient_evidence"
    (finding,) = rule.findings
    assert finding.message == "cannot tell whether 1 span(s) are ticket.update[agent.side_effect=write]."
    assert finding.witnesses == (Witness(run.trace_ids[0], (maybe,)),)


def test_a_budget_naming_both_an_attribute_and_a_duration_is_refused_at_the_duration():
    text = (
        "version: 1\nname: t\nrules:\n  - id: r\n    type: numeric_budgets\n    attribute: cost\n"
        "    duration: ms\n    aggregate: sum\n    max: 1\n"
    )
    with pytest.raises(ContractError) as info:
        parse_contract(text)
    assert str(info.value) == "<string>:7:15: rules[0].duration: use either attribute or duration, not both"


RETRY = "agent.retry.number"


def _retries(limit: int, select: str = UPDATES) -> str:
    return f"type: retry_budgets\n    select: {select}\n    max_retries: {limit}"


def _calls(
    *numbers, step: str = "ticket.update", b: RunBuilder | None = None
) -> tuple[RunBuilder, list[str]]:
    b = b or RunBuilder("calls")
    ids = []
    for n in numbers:
        attrs = dict(WRITE) if n is None else {**WRITE, RETRY: n}
        ids.append(b.add(step, attrs=attrs))
    return b, ids


def test_retries_are_the_repeated_calls_or_the_highest_retry_number_whichever_is_more():
    b, ids = _calls(0, 0, 0)
    run = b.run()
    assert _rule(_retries(2), run).status.value == "pass"
    (finding,) = _rule(_retries(1), run).findings
    assert (
        finding.message == "ticket.update was retried 2 time(s) (3 call(s)); the contract permits at most 1."
    )
    assert finding.witnesses == (
        Witness(run.trace_ids[0], tuple(sorted(ids)), (("calls", 3), ("retries", 2))),
    )
    one, _ = _calls(3)
    (finding,) = _rule(_retries(2), one.run()).findings
    assert (
        finding.message == "ticket.update was retried 3 time(s) (1 call(s)); the contract permits at most 2."
    )


def test_each_selected_step_is_counted_on_its_own():
    b, _ = _calls(0, 1)
    b, _ = _calls(0, 1, step="customer.notify", b=b)
    rule = _rule(_retries(0, "{attributes: {agent.side_effect: write}}"), b.run())
    assert [f.message for f in rule.findings] == [
        "customer.notify was retried 1 time(s) (2 call(s)); the contract permits at most 0.",
        "ticket.update was retried 1 time(s) (2 call(s)); the contract permits at most 0.",
    ]
    assert _rule(_retries(1, "{attributes: {agent.side_effect: write}}"), b.run()).status.value == "pass"


def test_calls_without_a_retry_number_leave_retries_uncounted_unless_already_over():
    b, (_, unnumbered, flagged) = _calls(0, None, True)  # a boolean is no retry number
    run = b.run()
    rule = _rule(_retries(5), run)
    assert rule.status.value == "insufficient_evidence"
    (finding,) = rule.findings
    assert finding.message == "2 span(s) lack agent.retry.number; retries cannot be counted."
    assert finding.witnesses == (
        Witness(run.trace_ids[0], tuple(sorted([unnumbered, flagged])), (("missing_attribute", RETRY),)),
    )
    assert _rule(_retries(1), run).status.value == "fail"  # three calls are two retries whatever they say


def test_a_call_that_might_be_selected_leaves_retries_undecided():
    b, _ = _calls(0)
    maybe = b.add("ticket.update", attrs={RETRY: 0})
    run = b.run()
    select = "{step: ticket.update, attributes: {agent.side_effect: write}}"
    (finding,) = _rule(_retries(3, select), run).findings
    assert finding.message == "cannot tell whether 1 span(s) are ticket.update[agent.side_effect=write]."
    assert finding.witnesses == (Witness(run.trace_ids[0], (maybe,)),)


def _kind(name: str) -> str:
    return f"agent.arg.{name}.kind"


def _provenance(limits: str, *calls: dict) -> tuple[Run, object]:
    b = RunBuilder("provenance")
    for attrs in calls:
        b.add("ticket.update", attrs={**WRITE, **attrs})
    run = b.run()
    return run, _rule(f"type: provenance_budgets\n    select: {UPDATES}\n    {limits}", run)


def test_unsourced_arguments_over_their_budget_are_named_with_their_count():
    _, rule = _provenance(
        "max_assumed: 1", {_kind("a"): "assumed", _kind("b"): "assumed", _kind("c"): "observed"}
    )
    (finding,) = rule.findings
    assert (
        finding.message == "ticket.update has 2 assumed argument(s) (a, b); the contract permits at most 1."
    )
    assert finding.witnesses[0].observed == (("arguments", "a,b"), ("assumed", 2))
    _, within = _provenance("max_assumed: 2", {_kind("a"): "assumed", _kind("b"): "assumed"})
    assert within.status.value == "pass"
    _, invented = _provenance("max_invented: 0", {_kind("a"): "invented"})
    assert [f.message for f in invented.findings] == [
        "ticket.update has 1 invented argument(s) (a); the contract permits at most 0."
    ]


def test_the_contract_allow_list_replaces_the_one_the_span_recorded():
    allowed_online = {_kind("a"): "assumed", _kind("b"): "assumed", "agent.budget.allowed": ("a",)}
    assert _provenance("max_assumed: 1", allowed_online)[1].status.value == "pass"
    (finding,) = _provenance("max_assumed: 0", allowed_online)[1].findings
    assert finding.message == (
        "ticket.update has 1 assumed argument(s) (b) (a allowed); the contract permits at most 0."
    )
    (finding,) = _provenance("max_assumed: 0\n    allow: [b]", allowed_online)[1].findings
    assert finding.message == (
        "ticket.update has 1 assumed argument(s) (a) (b allowed); the contract permits at most 0."
    )


def test_counters_left_after_evicted_names_still_fail_a_call_over_budget():
    evicted = {_kind("a"): "observed", "agent.budget.assumed": 2, "agent.budget.invented": 1}
    (finding,) = _provenance("max_assumed: 0\n    max_invented: 0", evicted)[1].findings
    assert finding.message == (
        "ticket.update counts 2 assumed, 1 invented argument(s); the contract permits fewer "
        "(their names were lost with evicted attributes)."
    )
    assert finding.witnesses[0].observed == (("assumed", 2), ("invented", 1))
    (only,) = _provenance("max_assumed: 5\n    max_invented: 0", evicted)[1].findings
    assert only.witnesses[0].observed == (("invented", 1),)


def test_calls_without_usable_provenance_leave_the_budget_unchecked():
    message = (
        "2 tool span(s) carry no (or incomplete) argument provenance (agent.arg.*.kind); the budget "
        "cannot be checked."
    )
    evicted_within = {_kind("a"): "observed", "agent.budget.assumed": 2}
    _, rule = _provenance("max_assumed: 5", {_kind("a"): "weird"}, evicted_within)
    assert rule.status.value == "insufficient_evidence"
    assert [f.message for f in rule.findings] == [message]
    assert _provenance("max_assumed: 0", {"agent.budget.assumed": 0})[1].status.value == "pass"


def test_a_call_without_provenance_does_not_hide_a_later_call_over_budget():
    """A span the budget cannot read is set aside; the spans after it are still judged."""
    unreadable = {_kind("a"): "weird"}
    evicted = {_kind("a"): "observed", "agent.budget.invented": 1}  # counted, names lost, within max 5
    over = {_kind("b"): "assumed"}
    _, rule = _provenance("max_assumed: 0\n    max_invented: 5", unreadable, evicted, over)
    assert rule.status.value == "fail"
    assert [f.message for f in rule.findings] == [
        "ticket.update has 1 assumed argument(s) (b); the contract permits at most 0.",
        "2 tool span(s) carry no (or incomplete) argument provenance (agent.arg.*.kind); the budget "
        "cannot be checked.",
    ]


def test_every_allowed_name_is_listed_in_the_message():
    call = {_kind("a"): "assumed", _kind("b"): "assumed", _kind("c"): "assumed"}
    (finding,) = _provenance("max_assumed: 0\n    allow: [b, a]", call)[1].findings
    assert finding.message == (
        "ticket.update has 1 assumed argument(s) (c) (a, b allowed); the contract permits at most 0."
    )


def test_a_call_that_might_be_selected_leaves_the_provenance_budget_insufficient():
    b = RunBuilder("maybe")
    b.add("ticket.update", attrs={**WRITE, _kind("a"): "observed"})
    maybe = b.add("ticket.update", attrs={_kind("a"): "assumed"})  # no agent.side_effect
    run = b.run()
    select = "{step: ticket.update, attributes: {agent.side_effect: write}}"
    rule = _rule(f"type: provenance_budgets\n    select: {select}\n    max_assumed: 0", run)
    assert rule.status.value == "insufficient_evidence"
    (finding,) = rule.findings
    assert finding.message == "cannot tell whether 1 span(s) are ticket.update[agent.side_effect=write]."
    assert finding.witnesses == (Witness(run.trace_ids[0], (maybe,)),)
