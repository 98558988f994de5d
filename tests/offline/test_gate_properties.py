"""Determinism and sharding: the same evidence gives the same bytes and the same exit code."""

from __future__ import annotations

import io
import random
from functools import reduce
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contract_runs import export_runs, triage_run
from otel_provenance.cli import run as cli_run
from otel_provenance.offline import Outcome
from otel_provenance.offline.contracts import parse_contract
from otel_provenance.offline.gate import Shard, check_release, decide
from otel_provenance.offline.model import Attributes, Span
from otel_provenance.offline.report import render_json
from otel_provenance.offline.runs import group_runs

CONTRACT = {
    "version": 1,
    "name": "triage",
    "gate": {"max_insufficient_fraction": "1/3"},
    "rules": [
        {"id": "skipped_check", "type": "required_spans", "select": {"step": "permissions.check"}},
        {"id": "duplicate_write", "type": "cardinality", "select": {"step": "ticket.update"}, "max": 1},
        {
            "id": "idempotent",
            "type": "allowed_values",
            "attribute": "agent.idempotency.present",
            "values": [True],
            "select": {"attributes": {"agent.side_effect": "write", "gen_ai.operation.name": "execute_tool"}},
        },
        {
            "id": "sourced",
            "type": "provenance_budgets",
            "select": {"step": "ticket.update"},
            "max_assumed": 0,
        },
        {
            "id": "guarded",
            "type": "forbidden_paths",
            "to": {"attributes": {"agent.side_effect": "write"}},
            "unless_preceded_by": {"step": "permissions.check"},
        },
    ],
}
VARIANTS = [
    {},
    {"skip_check": True},
    {"writes": 2},
    {"status_kind": "assumed"},
    {"update_attrs": {"agent.idempotency.present": None}},
    {"orphan": True},
]
AT = "2026-01-31T12:00:00Z"

run_specs = st.lists(
    st.tuples(st.sampled_from(range(len(VARIANTS))), st.sampled_from(["v1", "v2"])), min_size=0, max_size=8
)


def _spans(specs: list[tuple[int, str]]) -> list[Span]:
    return [s for i, (v, rel) in enumerate(specs) for s in triage_run(f"run-{i}", rel, **VARIANTS[v]).spans]


def _contract_text(rule_order: list[int], reverse_keys: bool) -> str:
    doc = dict(CONTRACT)
    rules = [CONTRACT["rules"][i] for i in rule_order]
    if reverse_keys:
        rules = [_reverse(r) for r in rules]
        doc = _reverse(doc)
    doc["rules"] = rules
    return yaml.safe_dump(doc, sort_keys=False)


def _reverse(d):
    if isinstance(d, dict):
        return {k: _reverse(d[k]) for k in reversed(list(d))}
    return d


def _reattribute(span: Span) -> Span:
    """The same span with its attribute keys given in reverse order."""
    items = list(reversed(span.attributes.items_sorted()))
    return Span(
        **{f: getattr(span, f) for f in Span.__slots__ if f != "attributes"}, attributes=Attributes(items)
    )


def _report(spans: list[Span], contract_text: str) -> tuple[str, int]:
    contract = parse_contract(contract_text)
    result = decide(check_release(group_runs(spans), contract, "v2", AT), contract)
    return render_json(result), Outcome.of(result.decision).exit_code


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    specs=run_specs,
    seed=st.integers(0, 2**32),
    rule_order=st.permutations(range(5)),
    reverse_keys=st.booleans(),
)
def test_order_of_spans_rules_and_keys_never_changes_the_report(
    specs, seed, rule_order, reverse_keys
) -> None:
    spans = _spans(specs)
    baseline = _report(spans, _contract_text(list(range(5)), False))
    shuffled = [_reattribute(s) for s in spans]
    random.Random(seed).shuffle(shuffled)
    assert _report(shuffled, _contract_text(rule_order, reverse_keys)) == baseline


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs=run_specs, shards=st.integers(1, 4), seed=st.integers(0, 2**32))
def test_sharded_then_merged_equals_unsharded(specs, shards, seed) -> None:
    contract = parse_contract(_contract_text(list(range(5)), False))
    runs = group_runs(_spans(specs))
    whole = check_release(runs, contract, "v2", AT)
    partials = [check_release(runs, contract, "v2", AT, Shard(i, shards)) for i in range(1, shards + 1)]
    random.Random(seed).shuffle(partials)
    if len(partials) >= 3:  # associativity: (a+b)+c == a+(b+c)
        left = partials[0].merge(partials[1]).merge(partials[2])
        right = partials[0].merge(partials[1].merge(partials[2]))
        assert left.to_json() == right.to_json()
    merged = reduce(lambda a, b: a.merge(b), partials)
    assert merged.to_json() == whole.to_json()
    assert render_json(decide(merged, contract)) == render_json(decide(whole, contract))


def test_cli_shards_and_merge_give_the_same_bytes_and_exit_code(tmp_path: Path) -> None:
    runs = [triage_run(f"r{i}", "v2", **VARIANTS[i % len(VARIANTS)]) for i in range(12)]
    traces = tmp_path / "t.jsonl"
    export_runs(runs, str(traces))
    contract = tmp_path / "c.yaml"
    contract.write_text(_contract_text(list(range(5)), False))
    common = ["--contract", str(contract)]
    whole_out = io.StringIO()
    whole_code = cli_run(
        [
            "gate",
            "check",
            *common,
            "--release",
            "v2",
            "--completed-at",
            AT,
            str(traces),
            "--report-json",
            str(tmp_path / "whole.json"),
        ],
        whole_out,
        io.StringIO(),
    )
    partials = []
    for i in (1, 2, 3):
        part = tmp_path / f"p{i}.json"
        out = io.StringIO()
        code = cli_run(
            [
                "gate",
                "check",
                *common,
                "--release",
                "v2",
                "--completed-at",
                AT,
                "--shard",
                f"{i}/3",
                "--partial",
                str(part),
                str(traces),
            ],
            out,
            io.StringIO(),
        )
        assert code == 0 and out.getvalue().startswith("PARTIAL: ")
        partials.append(str(part))
    merged_out = io.StringIO()
    merged_code = cli_run(
        ["gate", "merge", *common, *reversed(partials), "--report-json", str(tmp_path / "merged.json")],
        merged_out,
        io.StringIO(),
    )
    assert whole_code == merged_code == 2
    assert merged_out.getvalue() == whole_out.getvalue()
    assert (tmp_path / "merged.json").read_bytes() == (tmp_path / "whole.json").read_bytes()
    err = io.StringIO()
    assert cli_run(["gate", "merge", *common, partials[0], partials[0]], io.StringIO(), err) == 1
    assert "two partial results" in err.getvalue()
    other = tmp_path / "other.yaml"
    other.write_text(_contract_text(list(range(5)), False).replace("1/3", "1/2"))
    assert cli_run(["gate", "merge", "--contract", str(other), *partials], io.StringIO(), io.StringIO()) == 1
