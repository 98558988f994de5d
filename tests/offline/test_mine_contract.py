"""Mining: route families, proposed rules with support, stable bytes, schema-valid output, review."""

from __future__ import annotations

import io
import random
from fractions import Fraction
from pathlib import Path

import jsonschema
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contract_runs import WRITE, export_runs, triage_run
from otel_provenance.cli import run as cli_run
from otel_provenance.offline.contracts import contract_schema, load_contract, parse_contract
from otel_provenance.offline.evaluate import evaluate
from otel_provenance.offline.mine import mine_contract, route_families

ESCALATE = {"extra": [("ticket.escalate", WRITE), ("oncall.page", WRITE)]}
VALIDATOR = jsonschema.Draft202012Validator(contract_schema())


def _approved(usual: int = 20, escalating: int = 5):
    return [triage_run(f"u{i}") for i in range(usual)] + [
        triage_run(f"e{i}", **ESCALATE) for i in range(escalating)
    ]


def _families(text: str) -> list[dict]:
    doc = yaml.safe_load(text)
    (rule,) = [r for r in doc["rules"] if r["type"] == "approved_routes"]
    return rule["families"]


def test_dominant_family_is_approved_and_the_rest_pending() -> None:
    runs = _approved()
    text = mine_contract(runs, "triage")
    approved, pending = _families(text)
    assert (approved["status"], approved["runs"]) == ("approved", 20)
    assert (pending["status"], pending["runs"]) == ("pending", 5)
    escalating = {r.trace_ids[0] for r in runs[20:]}
    assert pending["example_trace_ids"] and set(pending["example_trace_ids"]) <= escalating
    assert len(pending["example_trace_ids"]) == 3
    assert not list(VALIDATOR.iter_errors(yaml.safe_load(text)))


def test_proposed_rules_have_support_and_hold_on_every_approved_run() -> None:
    runs = _approved()
    contract = parse_contract(mine_contract(runs, "triage"))
    by_id = {r.id: r for r in contract.rules}
    assert by_id["required.permissions.check"].support == 20
    assert by_id["at_most.ticket.update"].code == "DUPLICATE_SIDE_EFFECT"
    assert by_id["at_most.ticket.update"].params["max"] == 1
    assert by_id["values.ticket.update.agent.idempotency.present"].params["values"] == (True,)
    assert by_id["provenance.ticket.update"].params["max_assumed"] == 0
    assert by_id["retries.ticket.update"].params["max_retries"] == 0
    # only the approved family shapes rules: the escalation's steps are not required
    assert "required.ticket.escalate" not in by_id
    for run in runs[:20]:
        assert evaluate(run, contract).status == "pass"
    # the pending route fails the route rule until approved
    (route,) = [r for r in evaluate(runs[-1], contract).rules if r.rule_id == "approved_route"]
    assert route.status.value == "fail" and "pending approval" in route.findings[0].message


def test_vacuous_rules_are_dropped() -> None:
    runs = [
        triage_run(
            f"u{i}",
            update_attrs={
                "agent.arg.ticket_id.kind": None,
                "agent.arg.status.kind": None,
                "agent.idempotency.present": None,
            },
        )
        for i in range(4)
    ]
    runs[0] = triage_run(
        "u0",
        skip_check=True,
        update_attrs={
            "agent.arg.ticket_id.kind": None,
            "agent.arg.status.kind": None,
            "agent.idempotency.present": None,
        },
    )
    ids = {r.id for r in parse_contract(mine_contract(runs, "t")).rules}
    assert "provenance.ticket.update" not in ids  # no provenance recorded: no budget to propose
    assert "values.ticket.update.agent.idempotency.present" not in ids  # not always present
    assert "required.permissions.check" not in ids  # not in every approved run
    assert "required.ticket.update" in ids


def test_similarity_threshold_merges_near_routes_exactly() -> None:
    runs = [triage_run(f"u{i}") for i in range(6)] + [triage_run(f"d{i}", writes=2) for i in range(2)]
    assert [len(f.members) for f in route_families(runs, Fraction(4, 5))] == [8]
    assert [len(f.members) for f in route_families(runs, Fraction(1))] == [6, 2]
    # 12 shared of 14 total weight: exactly 6/7 — merged at 6/7, split just above it
    assert [len(f.members) for f in route_families(runs, Fraction(6, 7))] == [8]
    assert [len(f.members) for f in route_families(runs, Fraction(6, 7) + Fraction(1, 10**12))] == [6, 2]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32), usual=st.integers(1, 6), escalating=st.integers(0, 4), dup=st.integers(0, 3)
)
def test_same_runs_in_any_order_give_the_same_bytes_and_a_valid_contract(
    seed, usual, escalating, dup
) -> None:
    runs = _approved(usual, escalating) + [triage_run(f"d{i}", writes=2) for i in range(dup)]
    text = mine_contract(runs, "triage")
    shuffled = list(runs)
    random.Random(seed).shuffle(shuffled)
    assert mine_contract(shuffled, "triage") == text
    assert not list(VALIDATOR.iter_errors(yaml.safe_load(text)))


def test_mine_and_routes_cli(tmp_path: Path) -> None:
    traces = tmp_path / "approved.jsonl"
    export_runs(_approved(), str(traces))
    contract = tmp_path / "contract.yaml"
    out = io.StringIO()
    assert (
        cli_run(
            ["mine", "--approved", str(traces), "-o", str(contract), "--name", "triage"], out, io.StringIO()
        )
        == 0
    )
    assert "Mined 25 approved run(s)" in out.getvalue()
    original = contract.read_text()
    assert not list(VALIDATOR.iter_errors(yaml.safe_load(original)))
    pending = _families(original)[1]["id"]

    out = io.StringIO()
    assert cli_run(["routes", "list", "--contract", str(contract)], out, io.StringIO()) == 0
    assert f"{pending}  pending" in out.getvalue()

    err = io.StringIO()
    assert cli_run(["routes", "approve", "--contract", str(contract), "route-nope"], io.StringIO(), err) == 1
    assert contract.read_text() == original

    assert (
        cli_run(["routes", "approve", "--contract", str(contract), pending], io.StringIO(), io.StringIO())
        == 0
    )
    approved_text = contract.read_text()
    assert [f["status"] for f in _families(approved_text)] == ["approved", "approved"]
    # the same document but the approval and the ordering of the writes only the approved family makes
    # (#49: each after the checks all its runs made first); the seal, the end line, is unchanged
    document = yaml.safe_load(approved_text)
    added = {r["id"] for r in document["rules"]} - {r["id"] for r in yaml.safe_load(original)["rules"]}
    writes, checks = ("oncall.page", "ticket.escalate"), ("ticket.classify", "ticket.fetch")
    assert added == {f"{w}.after.{c}" for w in writes for c in checks}
    document["rules"] = [r for r in document["rules"] if r["id"] not in added]
    assert document == yaml.safe_load(original.replace("status: pending", "status: approved"))
    assert approved_text.endswith(original[original.rindex("\n#") :])
    assert (
        cli_run(["routes", "approve", "--contract", str(contract), pending], io.StringIO(), io.StringIO())
        == 0
    )
    assert contract.read_text() == approved_text
    escalating = triage_run("e-new", **ESCALATE)
    route = next(
        r for r in evaluate(escalating, load_contract(contract)).rules if r.rule_id == "approved_route"
    )
    assert route.status.value == "pass"
    assert all(r.status.value == "pass" for r in evaluate(escalating, load_contract(contract)).rules)

    again = tmp_path / "again.yaml"
    assert (
        cli_run(
            ["mine", "--approved", str(traces), "-o", str(again), "--name", "triage"],
            io.StringIO(),
            io.StringIO(),
        )
        == 0
    )
    assert again.read_text() == original

    err = io.StringIO()
    assert cli_run(["mine", "--approved", str(traces), "--similarity", "0.8x"], io.StringIO(), err) == 1
