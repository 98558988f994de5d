"""Finer points of rule semantics: optimal matching, exact numbers, three-valued selectors."""

from __future__ import annotations

from contract_runs import READ, WRITE, RunBuilder, triage_run
from otel_provenance import semconv
from otel_provenance.offline.contracts import Match, Selector, parse_contract
from otel_provenance.offline.evaluate import evaluate
from otel_provenance.offline.model import Run


def _status(body: str, run: Run) -> tuple[str, list[str]]:
    contract = parse_contract(f"version: 1\nname: t\nrules:\n  - id: r\n    {body}\n")
    (rule,) = evaluate(run, contract).rules
    return rule.status.value, [f.message for f in rule.findings]


ONE_TO_ONE = (
    "type: forbidden_paths\n    to: {step: ticket.update}\n"
    "    unless_preceded_by: {step: permissions.check}\n    one_to_one: true"
)


def _interleaved(order: list[str]) -> Run:
    b = RunBuilder("interleaved")
    for step in order:
        b.add(step, attrs=WRITE if step == "ticket.update" else READ)
    return b.run()


def test_one_to_one_needs_a_guard_per_write_matched_optimally() -> None:
    # check, update, check, update: a greedy match that gave the second update the first check
    # would leave the first update unguarded; the optimal match pairs each update with its own check.
    ok = _interleaved(["permissions.check", "ticket.update", "permissions.check", "ticket.update"])
    assert _status(ONE_TO_ONE, ok)[0] == "pass"
    bad = _interleaved(["permissions.check", "ticket.update", "ticket.update"])
    status, messages = _status(ONE_TO_ONE, bad)
    assert status == "fail"
    assert messages == [
        "ticket.update occurred 2 time(s) but only 1 had their own preceding permissions.check."
    ]
    plain = ONE_TO_ONE.replace("\n    one_to_one: true", "")
    assert _status(plain, bad)[0] == "pass"  # without one_to_one, one check guards both


def test_forbidden_path_from_a_source() -> None:
    body = (
        "type: forbidden_paths\n    from: {step: web.fetch}\n"
        "    to: {attributes: {agent.side_effect: write}}\n    unless_preceded_by: {step: human.approve}"
    )
    assert _status(body, triage_run())[0] == "pass"  # no web.fetch: no path
    tainted = triage_run(extra=[("web.fetch", READ)])
    status, messages = _status(body, tainted)
    assert status == "fail"
    assert "is not preceded by human.approve after web.fetch" in messages[0]
    approved = triage_run(extra=[("web.fetch", READ), ("human.approve", READ)])
    assert _status(body, approved)[0] == "pass"
    never = "type: forbidden_paths\n    from: {step: web.fetch}\n    to: {step: ticket.update}"
    assert _status(never, tainted)[0] == "fail"


def test_numeric_budgets_are_exact() -> None:
    body = (
        "type: numeric_budgets\n    select: {step: ticket.update}\n    attribute: cost\n"
        '    aggregate: max\n    max: "0.3"'
    )
    # 0.1 + 0.2 style trouble cannot happen: 0.3 as a double is slightly below the rational 3/10
    assert _status(body, triage_run(update_attrs={"cost": 0.3}))[0] == "pass"
    assert _status(body, triage_run(update_attrs={"cost": 0.30000000000000004}))[0] == "fail"
    status, messages = _status(body, triage_run(update_attrs={"cost": 1}))
    assert status == "fail" and "is 1; the contract permits at most 0.3 per run." in messages[0]
    duration = (
        "type: numeric_budgets\n    select: {step: ticket.update}\n    duration: ns\n"
        "    aggregate: max\n    max: 50"
    )
    assert _status(duration, triage_run())[0] == "pass"  # the builder's spans last 50 ns
    assert _status(duration.replace("max: 50", "max: 49"), triage_run())[0] == "fail"


def test_attribute_comparisons_are_typed() -> None:
    def constraint(op: str, value: str) -> str:
        return (
            "type: attribute_constraints\n    select: {step: ticket.update}\n    attribute: score\n"
            f"    op: '{op}'\n    value: {value}"
        )

    run = triage_run(update_attrs={"score": 0.5})
    assert _status(constraint("=", '"0.5"'), run)[0] == "pass"
    assert _status(constraint(">", '"1/3"'), run)[0] == "pass"
    assert _status(constraint("<", '"1/2"'), run)[0] == "fail"
    assert _status(constraint("=", "true"), triage_run(update_attrs={"score": 1}))[0] == "fail"
    assert _status(constraint("=", "1"), triage_run(update_attrs={"score": True}))[0] == "fail"
    assert _status(constraint(">=", "0"), triage_run(update_attrs={"score": "high"}))[0] == "fail"
    exists = (
        "type: attribute_constraints\n    select: {step: ticket.update}\n    attribute: score\n    op: exists"
    )
    assert _status(exists, triage_run())[0] == "fail"
    assert _status(exists, run)[0] == "pass"


def test_selectors_are_three_valued() -> None:
    run = triage_run(extra=[("mystery.tool", {})])
    writes = Selector(attributes=((semconv.SIDE_EFFECT, "write"),))
    verdicts = {
        s.name: writes.match(s, s.attributes.get(semconv.GEN_AI_TOOL_NAME, s.name)) for s in run.spans
    }
    assert verdicts["execute_tool ticket.update"] is Match.MATCH
    assert verdicts["execute_tool ticket.fetch"] is Match.NOT
    assert verdicts["execute_tool mystery.tool"] is Match.UNKNOWN
    assert verdicts["ticket.triage"] is Match.NOT  # not a tool span: absence is no match
    assert writes.describe() == "span[agent.side_effect=write]"


def test_near_route_passes_by_similarity_and_far_route_fails() -> None:
    from otel_provenance.offline.mine import mine_contract

    contract_text = mine_contract([triage_run(f"u{i}") for i in range(3)], "t")
    contract = parse_contract(contract_text)

    def route(run: Run) -> str:
        return next(r for r in evaluate(run, contract).rules if r.rule_id == "approved_route").status.value

    assert route(triage_run("same")) == "pass"
    assert route(triage_run("near", writes=2)) == "pass"  # 12/14 similar ≥ 4/5
    far = triage_run("far", extra=[("a.step", READ), ("b.step", READ), ("c.step", READ)])
    assert route(far) == "fail"


def test_required_edges_minimum_and_root_placement() -> None:
    body = (
        "type: required_edges\n    parent: {step: permissions.check}\n"
        "    child: {step: ticket.update}\n    min: 0"
    )
    status, messages = _status(body, triage_run())
    assert (
        status == "fail"
        and "is not a child of permissions.check; its parent is ticket.triage." in messages[0]
    )
    assert _status(body, triage_run(update_under_check=True))[0] == "pass"
    assert _status(body, triage_run(writes=0))[0] == "pass"  # min 0: no update, nothing to place
    assert _status(body.replace("min: 0", "min: 1"), triage_run(writes=0))[0] == "fail"


def test_selectors_differing_only_in_a_value_type_pick_their_own_spans() -> None:
    """``1`` and ``true`` are different attribute values (``values_equal``) though equal in Python: a
    rule selecting ``custom.flag: true`` judges the same run whether or not another rule of the
    contract selects ``custom.flag: 1`` — the run's evidence keeps their selections apart."""
    b = RunBuilder("typed")
    b.add("refund", attrs={**WRITE, "custom.flag": 1})
    run = b.run()
    as_true = (
        "  - {id: b_true, type: forbidden_spans, select: {step: refund, attributes: {custom.flag: true}}}\n"
    )
    as_one = "  - {id: a_one, type: forbidden_spans, select: {step: refund, attributes: {custom.flag: 1}}}\n"
    alone = evaluate(run, parse_contract("version: 1\nname: t\nrules:\n" + as_true))
    both = evaluate(run, parse_contract("version: 1\nname: t\nrules:\n" + as_one + as_true))
    assert {r.rule_id: r.status.value for r in alone.rules} == {"b_true": "pass"}
    assert {r.rule_id: r.status.value for r in both.rules} == {"a_one": "fail", "b_true": "pass"}
