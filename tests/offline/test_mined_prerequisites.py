"""#49: ``mine`` orders each write after the checks every approved run made before it
(``forbidden_paths`` … ``unless_preceded_by``), so the guard can refuse a write whose check was
skipped before it runs. The rules are exactly those the approved runs prove: every one passes every
approved run, and every (write, check) pair left out is broken by some approved run."""

from __future__ import annotations

import io

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from otel_provenance import semconv
from otel_provenance.cli import run as cli
from otel_provenance.offline import Outcome
from otel_provenance.offline.contracts import parse_contract
from otel_provenance.offline.contracts.evidence import RunEvidence
from otel_provenance.offline.evaluate import evaluate_rule
from otel_provenance.offline.mine import mine_contract
from otel_provenance.offline.model import Attributes, Run, Span
from otel_provenance.offline.routes import approve_family

CHECKS = ("policy", "fraud", "lookup")
WRITES = ("refund", "notify")
WRITE_STEPS = (*WRITES, "ship")  # ship: the second route's write


def _call(trace: str, n: int, step: str, start: int, end: int, blocked: bool = False) -> Span:
    attributes = {
        semconv.GEN_AI_OPERATION_NAME: semconv.EXECUTE_TOOL,
        semconv.GEN_AI_TOOL_NAME: step,
        semconv.SIDE_EFFECT: "write" if step in WRITE_STEPS else "read",
        semconv.TOOL_STATUS: semconv.TOOL_STATUS_BLOCKED if blocked else semconv.TOOL_STATUS_OK,
    }
    return Span(
        trace, f"{n:016x}", "f" * 16, f"execute_tool {step}", 1, start, end, attributes=Attributes(attributes)
    )


def _run(run_id: str, calls: list[tuple[str, int, int, bool]]) -> Run:
    trace = f"{abs(hash(run_id)) % 16**32:032x}"
    root = Span(trace, "f" * 16, None, "invoke_agent a", 1, 0, 10**9,
                attributes=Attributes({semconv.GEN_AI_OPERATION_NAME: semconv.INVOKE_AGENT}))  # fmt: skip
    return Run(run_id, (root, *(_call(trace, i + 1, *c) for i, c in enumerate(calls))))


@st.composite
def runs(draw: st.DrawFn, run_id: str) -> Run:
    """Tool calls in any order, some overlapping the one before (a check still running when a write
    begins does not precede it), some blocked (a blocked check guards nothing)."""
    steps = draw(st.lists(st.sampled_from(CHECKS + WRITES), min_size=1, max_size=7))
    calls, t = [], 10
    for step in steps:
        start = t - draw(st.sampled_from((0, 0, 0, 3)))  # sometimes begins before the last call ended
        calls.append((step, start, start + 5, draw(st.booleans()) and draw(st.booleans())))
        t = start + 6
    return _run(run_id, calls)


def _ordering(text: str) -> set[tuple[str, str]]:
    rules = yaml.safe_load(text)["rules"]
    return {
        (r["to"]["step"], r["unless_preceded_by"]["step"]) for r in rules if r["type"] == "forbidden_paths"
    }


def _keeps(run: Run, write: str, check: str) -> bool:
    """Every call of ``write`` that ran has a call of ``check`` that ran and ended before it began."""
    done = [s for s in run.spans if s.is_tool and not s.blocked]
    return all(
        any(c.tool_name == check and c.end_ns <= w.start_ns for c in done)
        for w in done
        if w.tool_name == write
    )


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 10**6), min_size=1, max_size=6, unique=True).flatmap(
    lambda ids: st.tuples(*(runs(f"run-{i}") for i in ids))))  # fmt: skip
def test_the_mined_order_is_exactly_what_every_approved_run_proves(approved):
    text = mine_contract(list(approved), "p", similarity=0)  # one family: every run is approved
    mined = _ordering(text)
    contract = parse_contract(text)
    for rule in (r for r in contract.rules if r.type == "forbidden_paths"):
        for run in approved:  # sound: no approved run fails (or is undecided on) a mined ordering rule
            assert evaluate_rule(rule, RunEvidence(run)).status is Outcome.PASS
    made = {s.tool_name for run in approved for s in run.spans if s.is_tool and not s.blocked}
    for write in (w for w in WRITES if w in made):
        for check in CHECKS:  # complete: each pair every approved run keeps is mined, and no other
            assert ((write, check) in mined) == all(_keeps(run, write, check) for run in approved)
    assert all(check not in WRITES for _, check in mined)  # a write never guards a write


def test_a_blocked_or_overlapping_check_is_no_prerequisite():
    approved = [
        _run("a", [("policy", 10, 15, False), ("fraud", 16, 30, False), ("refund", 20, 25, False)]),
        _run("b", [("policy", 10, 15, False), ("fraud", 16, 18, True), ("refund", 20, 25, False)]),
    ]
    assert _ordering(mine_contract(approved, "p", similarity=0)) == {("refund", "policy")}


def test_the_rules_are_the_same_bytes_for_the_runs_in_any_order_and_name_their_support():
    approved = [_run(f"r{i}", [("policy", 10, 15, False), ("refund", 20, 25, False)]) for i in range(3)]
    text = mine_contract(approved, "p")
    assert text == mine_contract(list(reversed(approved)), "p")
    (rule,) = [r for r in yaml.safe_load(text)["rules"] if r["type"] == "forbidden_paths"]
    assert rule == {
        "id": "refund.after.policy",
        "type": "forbidden_paths",
        "code": "MISSING_PREREQUISITE",
        "support": 3,
        "to": {"step": "refund"},
        "unless_preceded_by": {"step": "policy"},
    }


def _two_families() -> str:
    """Refunds checked by policy then fraud (4 runs); exchanges checked by policy then stock (2)."""
    approved = [_run(f"r{i}", [("policy", 10, 15, False), ("fraud", 16, 18, False), ("refund", 20, 25, False),
                               ("notify", 30, 35, False)]) for i in range(4)]  # fmt: skip
    approved += [_run(f"x{i}", [("policy", 10, 15, False), ("stock", 16, 18, False), ("ship", 20, 25, False),
                                ("notify", 30, 35, False)]) for i in range(2)]  # fmt: skip
    return mine_contract(approved, "p")


def test_routes_approve_drops_the_rules_the_new_family_breaks_and_orders_its_own_writes():
    text = _two_families()
    document = yaml.safe_load(text)
    (routes,) = [r for r in document["rules"] if r["type"] == "approved_routes"]
    pending = next(f for f in routes["families"] if f["status"] == "pending")
    assert pending["prerequisites"] == {"notify": ["policy", "stock"], "ship": ["policy", "stock"]}
    before = _ordering(text)
    assert ("notify", "fraud") in before and not any(w == "ship" for w, _ in before)
    approval = approve_family(parse_contract(text), pending["id"])
    after = _ordering(approval.text)
    assert ("notify", "fraud") not in after  # the exchanges notify without a fraud check
    assert {("notify", "policy"), ("refund", "fraud"), ("refund", "policy")} <= after
    assert {("ship", "policy"), ("ship", "stock")} <= after  # proven by the exchange runs
    assert any(line.startswith("notify.after.fraud: removed (") for line in approval.changes)
    assert any(line.startswith("ship.after.stock: added (") for line in approval.changes)


def test_routes_approve_of_a_contract_mined_before_49_drops_the_ordering_it_cannot_vouch_for():
    document = yaml.safe_load(_two_families())
    for rule in document["rules"]:
        for family in rule.get("families", ()):
            del family["prerequisites"]
    from otel_provenance.offline import dump_document

    text = dump_document(document)
    pending = next(
        f["id"] for r in document["rules"] for f in r.get("families", ()) if f["status"] == "pending"
    )
    after = _ordering(approve_family(parse_contract(text), pending).text)
    assert not any(w == "notify" for w, _ in after)  # the exchanges notify: nothing recorded to keep it
    assert {("refund", "fraud"), ("refund", "policy")} <= after  # the exchanges never refund


def test_routes_list_shows_what_each_write_came_after(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(_two_families())
    out, err = io.StringIO(), io.StringIO()
    assert cli(["routes", "list", "--contract", str(path)], out, err) == 0
    assert "    writes: notify after fraud, policy; refund after fraud, policy" in out.getvalue()
