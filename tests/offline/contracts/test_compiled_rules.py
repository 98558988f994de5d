"""The compiled contract gives the checkers' results, byte for byte.

Each rule's compiled pass test (``RuleType.compile``) may only ever say "pass" where its checker would
find nothing. Generated runs (blocked calls, retries written as integers, booleans or not at all,
argument kinds, safeguard values of every type, missing parents) are judged by generated contracts
(a mined one, with its routes and prerequisites, plus rules of every type) twice: by
``evaluate_safely`` — the compiled path — and with :func:`check_rule`, the checkers alone.
The results must be equal, findings and all.
"""

from __future__ import annotations

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contract_runs import MISSING_PARENT, RunBuilder
from otel_provenance import semconv
from otel_provenance.offline.contracts import parse_contract
from otel_provenance.offline.evaluate import check_rule, evaluate_safely
from otel_provenance.offline.mine import mine_contract

STEPS = ("fetch", "check", "update", "notify")
ARGS = ("id", "body")
values = st.sampled_from([True, False, 0, 1, 2, "yes", "payments", None])
retry = st.sampled_from([0, 1, 2, True, None])
status = st.sampled_from(["ok", "ok", "blocked", "error", None])
kind = st.sampled_from(["observed", "observed", "assumed", "invented", "untrusted", "guessed", None])

span_spec = st.fixed_dictionaries(
    {
        "step": st.sampled_from(STEPS),
        "tool": st.booleans() | st.just(True),
        "retry": retry,
        "status": status,
        "side_effect": st.sampled_from(["read", "write", None]),
        "idempotent": values,
        "domain": st.sampled_from(["payments", "email", None]),
        "kinds": st.lists(kind, min_size=0, max_size=2),
        "assumed": st.sampled_from([0, 1, None, True]),  # True: a counter of the wrong type, never 1
        "allowed": st.sampled_from([None, "body", ("body", "id")]),
        "orphan": st.integers(0, 9).map(lambda n: n == 0),
    }
)


def _run(name: str, specs: list[dict]) -> object:
    b = RunBuilder(name)
    for spec in specs:
        attrs: dict = {}
        for key, value in (
            (semconv.RETRY_NUMBER, spec["retry"]),
            (semconv.TOOL_STATUS, spec["status"]),
            (semconv.SIDE_EFFECT, spec["side_effect"]),
            (semconv.IDEMPOTENCY_PRESENT, spec["idempotent"]),
            (semconv.DATA_DOMAIN, spec["domain"]),
            (semconv.BUDGET_ASSUMED, spec["assumed"]),
            (semconv.BUDGET_ALLOWED, spec["allowed"]),
        ):
            if value is not None:
                attrs[key] = value
        for arg, arg_kind in zip(ARGS, spec["kinds"], strict=False):
            if arg_kind is not None:
                attrs[semconv.arg_attr(arg, semconv.ARG_KIND_SUFFIX)] = arg_kind
        parent = MISSING_PARENT if spec["orphan"] else None
        b.add(spec["step"], tool=spec["tool"], attrs=attrs, parent_id=parent)
    return b.run()


runs = st.lists(st.lists(span_spec, min_size=0, max_size=7), min_size=1, max_size=4)
IDEMPOTENT, DOMAIN, RETRY = semconv.IDEMPOTENCY_PRESENT, semconv.DATA_DOMAIN, semconv.RETRY_NUMBER
side = st.sampled_from(["read", "write"])
selector = st.one_of(
    st.builds(lambda s: {"step": s}, st.sampled_from(STEPS)),
    st.builds(lambda s, w: {"step": s, "attributes": {semconv.SIDE_EFFECT: w}}, st.sampled_from(STEPS), side),
    st.builds(lambda w: {"attributes": {semconv.SIDE_EFFECT: w}}, side),
)
small = st.integers(0, 2)


def rule(kind: str, *parts: st.SearchStrategy, **fixed: object) -> st.SearchStrategy:
    """A rule of type ``kind``: a selector, then ``fixed`` params and one drawn dict per part."""
    return st.builds(
        lambda select, *drawn: {
            "type": kind,
            "select": select,
            **fixed,
            **{k: v for d in drawn for k, v in d.items()},
        },
        selector,
        *parts,
    )


def n(key: str, low: int = 0) -> st.SearchStrategy:
    return small.map(lambda v: {key: v + low})


rules = st.one_of(
    rule("required_spans", n("min", 1)),
    rule("forbidden_spans"),
    rule("cardinality", n("exact")),
    rule("cardinality", n("min"), n("max", 2)),
    rule("cardinality", n("min")),
    rule("retry_budgets", n("max_retries")),
    rule("provenance_budgets", n("max_assumed"), n("max_invented"), n("max_untrusted")),
    rule("provenance_budgets", n("max_assumed"), allow=["body"]),
    rule(
        "allowed_values",
        st.sampled_from([{"values": [True]}, {"values": [True, False]}]),
        attribute=IDEMPOTENT,
    ),
    rule(
        "allowed_values", st.sampled_from([{"values": ["payments"]}, {"values": ["email"]}]), attribute=DOMAIN
    ),
    rule("attribute_constraints", attribute=IDEMPOTENT, op="exists"),
    rule("attribute_constraints", n("value"), attribute=RETRY, op="<"),
    rule("attribute_constraints", attribute=DOMAIN, op="!=", value="email"),
    rule("blocked_calls", n("max")),
    st.builds(lambda m: {"type": "blocked_calls", "max": m}, small),
    st.builds(
        lambda to, guard, start, one: {
            "type": "forbidden_paths",
            "to": to,
            **({"unless_preceded_by": guard} if guard is not None else {}),
            **({"from": start} if start is not None or guard is None else {}),
            **({"one_to_one": one} if one is not None else {}),
        },
        selector,
        st.none() | selector,  # no guard: then a path from ``from`` is forbidden outright
        st.none() | selector,  # no source: paths from the run's start (the mined prerequisites)
        st.sampled_from([None, True, False]),
    ).map(lambda r: r if "from" not in r or r["from"] is not None else {**r, "from": r["to"]}),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(approved=runs, release=runs, extra=st.lists(rules, min_size=1, max_size=8))
def test_the_compiled_contract_gives_the_checkers_results(approved, release, extra) -> None:
    approved_runs = [_run(f"a{i}", specs) for i, specs in enumerate(approved)]
    try:
        document = yaml.safe_load(mine_contract(approved_runs, "generated"))
    except ValueError:  # nothing to mine (no tool span): the extra rules alone
        document = {"version": 1, "name": "generated", "rules": []}
    document["rules"] += [{"id": f"extra{i}", **rule} for i, rule in enumerate(extra)]
    document.pop("seal", None)
    contract = parse_contract(yaml.safe_dump(document))
    for run in [_run(f"r{i}", specs) for i, specs in enumerate(release)] + approved_runs:
        assert evaluate_safely(run, contract) == evaluate_safely(run, contract, rule_evaluator=check_rule)
