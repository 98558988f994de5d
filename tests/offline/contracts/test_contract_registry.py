"""Rule types are declared once (the registry); the JSON Schema and the docs list the same ones. Contract
values of the wrong type, out-of-range integers and pathological nesting are contract errors (exit 1)
located in the file — never a finding, a crash or a pass."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from otel_provenance.cli import run as cli
from otel_provenance.errors import ContractError
from otel_provenance.offline.contracts import REGISTRY, contract_schema, parse_contract
from otel_provenance.offline.contracts.ruletype import Absence

ROOT = Path(__file__).resolve().parents[3]


def _schema_types() -> set[str]:
    schema = contract_schema()
    return {
        schema["$defs"][ref["$ref"].rsplit("/", 1)[1]]["properties"]["type"]["const"]
        for ref in schema["$defs"]["rule"]["oneOf"]
    }


def _doc_types(page: str) -> set[str]:
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    return set(re.findall(r"^\*\*`([a-z_]+)`\*\* — ", text, flags=re.MULTILINE))


def test_registry_schema_and_docs_list_the_same_rule_types() -> None:
    assert set(REGISTRY) == _schema_types() == _doc_types("contracts.md")
    semantics = (ROOT / "docs" / "contracts.md").read_text(encoding="utf-8")
    table = semantics[semantics.index("### What occurred: blocked calls") :]
    assert {name for name in REGISTRY if f"| `{name}` |" in table} == set(REGISTRY)


def test_every_registered_type_is_complete() -> None:
    for name, rule_type in REGISTRY.items():
        assert rule_type.name == name
        assert re.fullmatch(r"[A-Z][A-Z0-9_]*", rule_type.default_code)
        assert callable(rule_type.checker)
        body = _minimal(name)
        rule = parse_contract(f"version: 1\nname: t\nrules:\n  - id: r\n{body}").rules[0]
        assert rule.code == rule_type.default_code
        assert isinstance(rule_type.absence(rule), Absence)


def _minimal(name: str) -> str:
    """The smallest valid rule of each type, built from the schema's required keys."""
    schema = contract_schema()["$defs"][f"rule_{name}"]
    values = {
        "select": "{step: a}",
        "parent": "{step: a}",
        "child": "{step: b}",
        "ancestor": "{step: a}",
        "descendant": "{step: b}",
        "to": "{step: b}",
        "from": "{step: a}",
        "attribute": "x.y",
        "op": "exists",
        "values": "[1]",
        "max_retries": "0",
        "max": "0",
        "aggregate": "sum",
        "min": "1",
        "max_assumed": "0",
        "similarity": '"1"',
        "families": "[{id: f, status: approved, fingerprints: [x], steps: {a: 1}, edges: []}]",
    }
    keys = [k for k in schema["required"] if k not in ("id", "type")]
    branches = schema.get("anyOf", [])
    if branches and not any(set(b["required"]) <= set(keys) for b in branches):
        keys.extend(branches[0]["required"])
    return f"    type: {name}\n" + "".join(f"    {k}: {values[k]}\n" for k in keys)


WRONG_TYPES = [
    (
        "    type: allowed_values\n    select: {step: a}\n    attribute: agent.idempotency.present\n"
        '    values: ["true"]\n',
        8,
        "agent.idempotency.present is a boolean",
    ),
    (
        "    type: attribute_constraints\n    select: {step: a}\n    attribute: agent.retry.number\n"
        '    op: "="\n    value: "0"\n',
        9,
        "agent.retry.number is an integer",
    ),
    (
        "    type: required_spans\n    select: {step: a, attributes: {agent.side_effect: 1}}\n",
        6,
        "agent.side_effect is a string",
    ),
    (
        "    type: attribute_constraints\n    select: {step: a}\n    attribute: agent.side_effect\n"
        '    op: "<"\n    value: 3\n',
        8,  # at the operator: no value makes '<' hold for a string attribute
        "operator '<' compares numbers, but agent.side_effect is a string",
    ),
]


@pytest.mark.parametrize(("body", "line", "problem"), WRONG_TYPES)
def test_a_value_of_the_wrong_type_is_a_contract_error_at_load(body: str, line: int, problem: str) -> None:
    with pytest.raises(ContractError) as caught:
        parse_contract(f"version: 1\nname: t\nrules:\n  - id: r\n{body}", "c.yaml")
    assert caught.value.line == line and caught.value.column is not None
    assert problem in str(caught.value)


def _gate_with(tmp_path: Path, text: str) -> tuple[int, str]:
    contract = tmp_path / "c.yaml"
    contract.write_text(text)
    traces = tmp_path / "t.jsonl"
    traces.write_text("")
    err = io.StringIO()
    code = cli(
        ["gate", "check", "--contract", str(contract), "--release", "v", str(traces)], io.StringIO(), err
    )
    return code, err.getvalue()


def test_integers_are_bounded(tmp_path: Path) -> None:
    huge = "1" + "0" * 400
    code, err = _gate_with(
        tmp_path,
        f"version: 1\nname: t\ngate:\n  max_failing_runs: {huge}\nrules:\n"
        "  - id: r\n    type: required_spans\n    select: {step: a}\n",
    )
    assert code == 1 and "c.yaml:4:21: gate.max_failing_runs: integer out of range" in err
    code, err = _gate_with(
        tmp_path,
        'version: 1\nname: t\ngate:\n  max_insufficient_fraction: "1/100000000000000000000"\nrules:\n'
        "  - id: r\n    type: required_spans\n    select: {step: a}\n",
    )
    assert code == 1 and "gate.max_insufficient_fraction: exact number out of range" in err


@pytest.mark.parametrize("depth", [200, 20_000])
def test_deep_nesting_is_a_contract_error_naming_the_file(tmp_path: Path, depth: int) -> None:
    code, err = _gate_with(tmp_path, "version: 1\nname: t\ndescription: " + "[" * depth + "]" * depth + "\n")
    assert code == 1
    assert "c.yaml" in err and "internal error" not in err
