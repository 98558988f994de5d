"""Structure rules in detail: ``forbidden_paths`` with ``one_to_one`` (each write its own guard) and
``required_ancestry`` (B only under A) — every verdict branch, its message and its witnesses.

Runs are hand-built (``contract_runs.RunBuilder``: steps follow one another in time unless told
otherwise) and checked through ``parse_contract`` + ``evaluate``, as ``gate check`` does per run.
"""

from __future__ import annotations

from contract_runs import MISSING_PARENT, READ, WRITE, RunBuilder
from otel_provenance.offline.contracts import parse_contract
from otel_provenance.offline.contracts.outcomes import Witness
from otel_provenance.offline.evaluate import evaluate
from otel_provenance.offline.model import Run


def _rule(body: str, run: Run):
    contract = parse_contract(f"version: 1\nname: t\nrules:\n  - id: r\n    {body}\n")
    (rule,) = evaluate(run, contract).rules
    return rule


def _one_to_one(to: str = "{step: ticket.update}", guard: str = "{step: permissions.check}") -> str:
    return f"type: forbidden_paths\n    to: {to}\n    unless_preceded_by: {guard}\n    one_to_one: true"


# a ticket.update whose side effect is not recorded might or might not be a write
WRITES = "{attributes: {agent.side_effect: write}}"
# a permissions.check that does not say it only reads might or might not be the guard
READ_CHECKS = "{step: permissions.check, attributes: {agent.side_effect: read}}"


def test_one_to_one_writes_with_no_guard_at_all_fail_with_counts_in_the_witness():
    b = RunBuilder("no-guard")
    writes = [b.add("ticket.update", attrs=dict(WRITE)) for _ in range(2)]
    run = b.run()
    rule = _rule(_one_to_one(), run)
    assert rule.status.value == "fail"
    (finding,) = rule.findings
    assert finding.message == (
        "ticket.update occurred 2 time(s) but only 0 had their own preceding permissions.check."
    )
    assert finding.witnesses == (
        Witness(run.trace_ids[0], tuple(sorted(writes)), (("count", 2), ("guarded", 0))),
    )


def test_one_to_one_witness_names_only_the_unguarded_write_and_counts_the_guarded_ones():
    b = RunBuilder("one-short")
    b.add("permissions.check", attrs=dict(READ))
    b.add("ticket.update", attrs=dict(WRITE))
    b.add("permissions.check", attrs=dict(READ))
    b.add("ticket.update", attrs=dict(WRITE))
    last = b.add("ticket.update", attrs=dict(WRITE))
    run = b.run()
    rule = _rule(_one_to_one(), run)
    (finding,) = rule.findings
    assert finding.message == (
        "ticket.update occurred 3 time(s) but only 2 had their own preceding permissions.check."
    )
    assert finding.witnesses == (Witness(run.trace_ids[0], (last,), (("count", 3), ("guarded", 2))),)


def test_one_to_one_every_known_write_guarded_but_another_span_might_be_a_write():
    b = RunBuilder("maybe-write")
    b.add("permissions.check", attrs=dict(READ))
    b.add("ticket.update", attrs=dict(WRITE))
    maybe = b.add("ticket.update")  # no agent.side_effect: cannot tell whether it writes
    run = b.run()
    rule = _rule(_one_to_one(to=WRITES), run)
    assert rule.status.value == "insufficient_evidence"
    (finding,) = rule.findings
    assert finding.message == "cannot tell whether 1 span(s) are span[agent.side_effect=write]."
    assert finding.witnesses == (Witness(run.trace_ids[0], (maybe,)),)


def test_one_to_one_an_unguarded_write_beside_a_possible_write_is_insufficient_not_fail():
    """The undecided span might be the write that owns a guard we have not seen: no verdict of fail
    in a complete run while a target is undecided; both spans are named."""
    b = RunBuilder("unguarded-and-maybe")
    lonely = b.add("ticket.update", attrs=dict(WRITE))
    maybe = b.add("ticket.update")
    run = b.run()
    rule = _rule(_one_to_one(to=WRITES), run)
    assert rule.status.value == "insufficient_evidence"
    (finding,) = rule.findings
    assert finding.message == (
        "1 span[agent.side_effect=write] span(s) may lack their own preceding permissions.check: "
        "evidence is missing."
    )
    assert finding.witnesses == (Witness(run.trace_ids[0], tuple(sorted([lonely, maybe]))),)


def test_one_to_one_a_possible_guard_makes_an_unguarded_write_insufficient_in_a_complete_run():
    b = RunBuilder("maybe-guard")
    b.add("permissions.check")  # might be the read-only check, might not
    lonely = b.add("ticket.update", attrs=dict(WRITE))
    run = b.run()
    rule = _rule(_one_to_one(guard=READ_CHECKS), run)
    assert rule.status.value == "insufficient_evidence"
    (finding,) = rule.findings
    assert finding.message == (
        "1 ticket.update span(s) may lack their own preceding permissions.check[agent.side_effect=read]: "
        "evidence is missing."
    )
    assert finding.witnesses == (Witness(run.trace_ids[0], (lonely,)),)


def test_one_to_one_an_unguarded_write_in_an_incomplete_run_is_insufficient():
    b = RunBuilder("incomplete")
    lonely = b.add("ticket.update", attrs=dict(WRITE))
    b.add("late.audit", parent_id=MISSING_PARENT, attrs=dict(READ))  # a lost parent: spans missing
    run = b.run()
    rule = _rule(_one_to_one(), run)
    assert rule.status.value == "insufficient_evidence"
    (finding,) = rule.findings
    assert finding.message == (
        "1 ticket.update span(s) may lack their own preceding permissions.check: evidence is missing."
    )
    assert finding.witnesses == (Witness(run.trace_ids[0], (lonely,)),)


ANCESTRY = (
    "type: required_ancestry\n    ancestor: {step: ticket.triage}\n    descendant: {step: ticket.update}"
)


def test_required_ancestry_names_the_relation_and_the_parent_in_its_violation():
    b = RunBuilder("elsewhere", root="agent.run")
    update = b.add("ticket.update", attrs=dict(WRITE))
    run = b.run()
    rule = _rule(ANCESTRY, run)
    assert rule.status.value == "fail"
    (finding,) = rule.findings
    assert finding.message == "ticket.update is not under ticket.triage; its parent is agent.run."
    assert finding.witnesses == (Witness(run.trace_ids[0], (update,), (("parent_step", "agent.run"),)),)


def test_required_ancestry_minimum_message_says_under():
    run = RunBuilder("no-update").run()
    rule = _rule(ANCESTRY + "\n    min: 1", run)
    assert rule.status.value == "fail"
    assert rule.findings[0].message == (
        "ticket.update under ticket.triage is required at least 1 time(s) but occurred 0 time(s)."
    )


def test_required_ancestry_above_a_lost_span_is_unknown_not_a_violation():
    """The update's parent is present but that parent's own parent was lost: the ancestor could be
    above the gap, so the placement cannot be judged."""
    b = RunBuilder("gap", root="agent.run")
    middle = b.add("ticket.plan", parent_id=MISSING_PARENT, attrs=dict(READ))
    update = b.add("ticket.update", middle, attrs=dict(WRITE))
    run = b.run()
    rule = _rule(ANCESTRY, run)
    assert rule.status.value == "insufficient_evidence"
    (finding,) = rule.findings
    assert finding.message == (
        "cannot tell whether ticket.update is under ticket.triage: 1 span(s) lack an attribute or a parent."
    )
    assert finding.witnesses == (Witness(run.trace_ids[0], (update,)),)


EDGES = "type: required_edges\n    parent: {step: permissions.check}\n    child: {step: ticket.update}"


def _check_then_update(name: str, nested: int, loose: int = 0) -> Run:
    b = RunBuilder(name)
    check = b.add("permissions.check", attrs=dict(READ))
    for _ in range(nested):
        b.add("ticket.update", check, attrs=dict(WRITE))
    for _ in range(loose):
        b.add("ticket.update", attrs=dict(WRITE))
    return b.run()


def test_required_edges_counts_each_placed_child_once_against_the_minimum():
    run = _check_then_update("one-edge", nested=1)
    rule = _rule(EDGES + "\n    min: 2", run)
    assert rule.status.value == "fail"
    (finding,) = rule.findings
    assert finding.message == (
        "ticket.update a child of permissions.check is required at least 2 time(s) but occurred 1 time(s)."
    )
    assert finding.witnesses == (Witness(run.trace_ids[0], (), (("count", 1),)),)
    assert _rule(EDGES + "\n    min: 2", _check_then_update("two-edges", nested=2)).status.value == "pass"


def test_required_edges_parent_selector_with_attributes_is_matched_on_the_parent_span():
    body = (
        "type: required_edges\n    parent: {step: permissions.check, attributes: {agent.side_effect: read}}\n"
        "    child: {step: ticket.update}"
    )
    assert _rule(body, _check_then_update("read-check", nested=1)).status.value == "pass"


def test_required_edges_a_root_child_has_no_parent_to_match():
    body = (
        "type: required_edges\n    parent: {step: permissions.check}\n    child: {step: ticket.triage}\n"
        "    min: 0"
    )
    run = RunBuilder("root-only").run()
    rule = _rule(body, run)
    assert rule.status.value == "fail"
    (finding,) = rule.findings
    assert finding.message == (
        "ticket.triage is not a child of permissions.check; its parent is none (it is a root)."
    )
    assert finding.witnesses == (
        Witness(run.trace_ids[0], (run.spans[0].span_id,), (("parent_step", "none (it is a root)"),)),
    )


def test_a_minimum_short_in_an_incomplete_run_is_insufficient_and_names_the_lost_spans():
    b = RunBuilder("short-incomplete")
    lost = b.add("late.audit", parent_id=MISSING_PARENT, attrs=dict(READ))
    run = b.run()
    rule = _rule(ANCESTRY + "\n    min: 1", run)
    assert rule.status.value == "insufficient_evidence"
    (finding,) = rule.findings
    assert finding.message == (
        "ticket.update under ticket.triage occurred 0 time(s) and the run is incomplete."
    )
    assert finding.witnesses == (Witness(run.trace_ids[0], (lost,), (("count", 0),)),)


FETCH = "{step: web.fetch, attributes: {agent.side_effect: read}}"  # a fetch may not say it only reads
APPROVE = "{step: human.approve, attributes: {agent.side_effect: read}}"


def _paths(guard: bool = True, source: bool = True, to: str = "{step: ticket.update}") -> str:
    body = f"type: forbidden_paths\n    to: {to}"
    if source:
        body += f"\n    from: {FETCH}"
    if guard:
        body += f"\n    unless_preceded_by: {APPROVE}"
    return body


def _steps(*steps: tuple[str, dict | None]) -> tuple[Run, list[str]]:
    b = RunBuilder("paths")
    ids = [b.add(step, attrs=attrs) for step, attrs in steps]
    return b.run(), ids


def test_a_path_with_no_guard_allowed_names_its_source_and_target():
    run, (fetch, update) = _steps(("web.fetch", READ), ("ticket.update", WRITE))
    (finding,) = _rule(_paths(guard=False), run).findings
    assert finding.message == (
        "web.fetch[agent.side_effect=read] happens before ticket.update; the contract forbids that path."
    )
    assert finding.witnesses == (Witness(run.trace_ids[0], tuple(sorted([fetch, update]))),)


def test_only_a_source_before_the_target_starts_a_path():
    run, _ = _steps(("ticket.update", WRITE), ("web.fetch", READ))
    assert _rule(_paths(), run).status.value == "pass"
    assert _rule(_paths(guard=False), run).status.value == "pass"


def test_each_source_before_the_target_needs_a_guard_after_it():
    run, (_, _, second, update) = _steps(
        ("web.fetch", READ), ("human.approve", READ), ("web.fetch", READ), ("ticket.update", WRITE)
    )
    (finding,) = _rule(_paths(), run).findings
    assert finding.message == (
        "ticket.update is not preceded by human.approve[agent.side_effect=read] after "
        "web.fetch[agent.side_effect=read]."
    )
    assert finding.witnesses == (Witness(run.trace_ids[0], tuple(sorted([second, update]))),)
    guarded, _ = _steps(
        ("web.fetch", READ), ("web.fetch", READ), ("human.approve", READ), ("ticket.update", WRITE)
    )
    assert _rule(_paths(), guarded).status.value == "pass"


def test_without_a_source_the_guard_must_precede_the_target_from_the_start_of_the_run():
    run, (update, _) = _steps(("ticket.update", WRITE), ("human.approve", READ))
    (finding,) = _rule(_paths(source=False), run).findings
    assert finding.message == "ticket.update is not preceded by human.approve[agent.side_effect=read]."
    assert finding.witnesses == (Witness(run.trace_ids[0], (update,)),)
    ok, _ = _steps(("human.approve", READ), ("ticket.update", WRITE))
    assert _rule(_paths(source=False), ok).status.value == "pass"


UNKNOWN = (
    "cannot decide whether ticket.update is reached by a forbidden path: {} span(s) lack evidence "
    "(an attribute, or the run is incomplete)."
)


def test_a_possible_source_before_the_target_makes_the_path_undecided():
    run, (_, update) = _steps(("web.fetch", None), ("ticket.update", WRITE))
    rule = _rule(_paths(), run)
    assert rule.status.value == "insufficient_evidence"
    (finding,) = rule.findings
    assert finding.message == UNKNOWN.format(1)
    assert finding.witnesses == (Witness(run.trace_ids[0], (update,)),)
    after, _ = _steps(("ticket.update", WRITE), ("web.fetch", None))
    assert _rule(_paths(), after).status.value == "pass"  # a possible source after it starts no path


def test_a_possible_guard_or_a_lost_span_makes_an_unguarded_path_undecided():
    maybe, _ = _steps(("web.fetch", READ), ("human.approve", None), ("ticket.update", WRITE))
    assert _rule(_paths(), maybe).status.value == "insufficient_evidence"
    early, _ = _steps(("human.approve", None), ("web.fetch", READ), ("ticket.update", WRITE))
    assert _rule(_paths(), early).status.value == "fail"  # a possible guard before the source: no help
    b = RunBuilder("lost")
    b.add("web.fetch", attrs=dict(READ))
    b.add("ticket.update", attrs=dict(WRITE))
    b.add("late.audit", parent_id=MISSING_PARENT, attrs=dict(READ))
    lost = _rule(_paths(), b.run())
    assert lost.status.value == "insufficient_evidence"
    assert [f.message for f in lost.findings] == [UNKNOWN.format(1)]


def test_possible_targets_are_undecided_and_each_span_is_named_once():
    writes = "{step: ticket.update, attributes: {agent.side_effect: write}}"
    run, (_, first, second) = _steps(("web.fetch", READ), ("ticket.update", None), ("ticket.update", None))
    rule = _rule(_paths(to=writes), run)
    assert rule.status.value == "insufficient_evidence"
    (finding,) = rule.findings
    assert finding.message == UNKNOWN.replace(
        "ticket.update", "ticket.update[agent.side_effect=write]"
    ).format(2)
    assert finding.witnesses == (Witness(run.trace_ids[0], tuple(sorted([first, second]))),)


def test_a_target_before_every_source_does_not_stop_the_check_of_later_targets():
    run, (_, fetch, later) = _steps(("ticket.update", WRITE), ("web.fetch", READ), ("ticket.update", WRITE))
    (finding,) = _rule(_paths(guard=False), run).findings
    assert finding.witnesses == (Witness(run.trace_ids[0], tuple(sorted([fetch, later]))),)
