"""The contract DSL: exact thresholds, and errors that name the line and column."""

from __future__ import annotations

import io
from fractions import Fraction
from pathlib import Path

import jsonschema
import pytest
import yaml

from otel_provenance.cli import run as cli_run
from otel_provenance.errors import ContractError
from otel_provenance.offline.contracts import (
    RULE_TYPES,
    contract_schema,
    dump_document,
    load_contract,
    parse_contract,
)
from otel_provenance.offline.contracts.rational import format_exact, parse_rational

GOOD = """\
version: 1
name: triage
gate:
  min_runs: 2
  max_insufficient_fraction: "1/20"
rules:
  - id: skipped_check
    type: required_spans
    select: {step: permissions.check}
  - id: tokens
    type: numeric_budgets
    attribute: gen_ai.usage.input_tokens
    aggregate: sum
    max: "2500.5"
    thresholds: {max_failing_runs: 1, max_insufficient_fraction: "0.1"}
"""


def test_good_contract_parses_with_exact_thresholds() -> None:
    c = parse_contract(GOOD, "c.yaml")
    assert c.min_runs == 2
    check, tokens = c.rules
    assert check.code == "MISSING_PREREQUISITE" and check.line == 7
    assert check.thresholds.max_insufficient_fraction == Fraction(1, 20)
    assert tokens.params["max"] == Fraction(5001, 2)
    assert tokens.thresholds.max_failing_runs == 1
    assert tokens.thresholds.max_insufficient_fraction == Fraction(1, 10)


@pytest.mark.parametrize(
    ("text", "line", "column", "words"),
    [
        (
            GOOD.replace(
                "    select: {step: permissions.check}",
                "    select: {step: permissions.check}\n    colour: red",
            ),
            10,
            5,
            "unknown key 'colour'",
        ),
        (
            GOOD.replace('max_insufficient_fraction: "1/20"', "max_insufficient_fraction: 0.05"),
            5,
            30,
            "floating-point",
        ),
        (GOOD.replace('max: "2500.5"', "max: 2500.5"), 14, 10, "floating-point"),
        (GOOD.replace("min_runs: 2", "min_runs: two"), 4, 13, "expected integer"),
        (GOOD.replace("name: triage", "name: triage\nname: again"), 3, 1, "duplicate key 'name'"),
        (GOOD.replace("id: tokens", "id: skipped_check"), 10, 9, "duplicate rule id 'skipped_check'"),
        (GOOD.replace("type: numeric_budgets", "type: numeric_budget"), 11, 11, "unknown rule type"),
        (GOOD.replace("aggregate: sum", "aggregate: mean"), 13, 16, "'mean' is not one of"),
        (GOOD.replace("version: 1", "version: 2"), 1, 10, "must be 1"),
        (GOOD.replace("    select: {step: permissions.check}\n", ""), 7, 5, "missing required key 'select'"),
        (
            GOOD + "  - {id: c, type: cardinality, select: {step: x}, min: 3, max: 1}\n",
            16,
            56,
            "greater than max",
        ),
        (
            GOOD + "  - {id: c, type: cardinality, select: {step: x}, exact: 2, max: 3}\n",
            16,
            58,
            "use either exact or min/max, not both",
        ),
        (
            GOOD + "  - {id: c, type: cardinality, select: {step: x}}\n",
            16,
            5,
            "at least one of: min, max, exact",
        ),
        (GOOD + "  - {id: s, type: required_spans, select: {}}\n", 16, 43, "must not be empty"),
        (
            GOOD + "  - {id: a, type: attribute_constraints, select: {step: x}, attribute: y, op: '<', "
            "value: z}\n",
            16,
            91,
            "compares numbers",
        ),
        (GOOD.replace('"1/20"', '"1/0"'), 5, 30, "an exact number"),
        ("version: 1\nname: [unclosed\n", 3, 1, "not valid YAML"),
        # the words name what is wrong, as PyYAML says it whichever composer (libyaml's or its own) ran
        ("version: 1\nname: &n x\ndescription: *m\n", 3, 14, "found undefined alias 'm'"),
        ("version: 1\nrules:\n\t- x\n", 3, 1, "found character '\\t' that cannot start any token"),
        ("", 1, 1, "empty"),
    ],
)
def test_errors_name_line_and_column(text: str, line: int, column: int, words: str) -> None:
    with pytest.raises(ContractError) as info:
        parse_contract(text, "c.yaml")
    err = info.value
    assert words in err.problem
    assert (err.line, err.column) == (line, column), str(err)
    assert str(err).startswith(f"c.yaml:{line}:{column}: ")


def test_rationals_are_exact() -> None:
    assert parse_rational("0.1") == Fraction(1, 10)
    assert parse_rational("1/20") == parse_rational("0.05")
    assert parse_rational(3) == 3
    for bad in (0.05, True, "1e-3", " 1/2", "1/0", "0x10"):
        with pytest.raises(ValueError):
            parse_rational(bad)
    assert format_exact(Fraction(25, 2)) == "12.5"
    assert format_exact(Fraction(1, 3)) == "1/3"
    assert format_exact(Fraction(-1, 40)) == "-0.025"


def test_invalid_contract_fails_closed_in_the_gate(tmp_path: Path) -> None:
    contract = tmp_path / "c.yaml"
    contract.write_text(GOOD.replace('"1/20"', "0.05"))
    out, err = io.StringIO(), io.StringIO()
    code = cli_run(["gate", "check", "--contract", str(contract), "--release", "v1", str(contract)], out, err)
    assert code == 1
    assert f"{contract}:5:30:" in err.getvalue()
    assert out.getvalue() == ""


def test_schema_is_a_valid_json_schema_and_agrees_with_the_parser() -> None:
    schema = contract_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    assert not list(validator.iter_errors(yaml.safe_load(GOOD)))
    assert list(validator.iter_errors(yaml.safe_load(GOOD.replace('"1/20"', "0.05"))))
    assert list(validator.iter_errors(yaml.safe_load(GOOD.replace("aggregate: sum", "aggregate: mean"))))


def test_docs_examples_parse_and_validate() -> None:
    """Every ```yaml block of docs/contracts.md that is a whole contract parses and validates."""
    doc = (Path(__file__).parents[3] / "docs" / "contracts.md").read_text(encoding="utf-8")
    blocks = [b.split("```", 1)[0] for b in doc.split("```yaml\n")[1:]]
    validator = jsonschema.Draft202012Validator(contract_schema())
    contracts = [b for b in blocks if b.startswith("version: 1")]
    assert contracts
    types = set()
    for block in contracts:
        c = parse_contract(block, "docs/contracts.md")
        assert not list(validator.iter_errors(yaml.safe_load(block)))
        types |= {r.type for r in c.rules}
    assert types == set(RULE_TYPES)


def test_dump_is_canonical_and_round_trips(tmp_path: Path) -> None:
    c = parse_contract(GOOD)
    text = dump_document(dict(c.document))
    again = parse_contract(text)
    assert again.digest == c.digest
    assert dump_document(dict(again.document)) == text
    path = tmp_path / "c.yaml"
    path.write_text(text)
    assert load_contract(path).digest == c.digest


def test_digest_ignores_rule_order_and_formatting() -> None:
    c = parse_contract(GOOD)
    swapped = yaml.safe_load(GOOD)
    swapped["rules"].reverse()
    assert parse_contract(yaml.safe_dump(swapped, default_flow_style=True)).digest == c.digest
