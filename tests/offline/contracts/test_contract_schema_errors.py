"""Contracts are validated by ``jsonschema`` against the published schema: the parser refuses what the
schema refuses, and each refusal is the first problem in the file, in the project's words, at its line
and column. What only YAML can get wrong (aliases, nesting) is refused before, located as well."""

from __future__ import annotations

import re
import subprocess
import sys

import jsonschema
import pytest
import yaml
from test_contract_dsl import GOOD

from otel_provenance.errors import ContractError
from otel_provenance.offline.contracts import contract_schema, parse_contract

HEAD = "version: 1\nname: t\nrules:\n"


def _error(text: str) -> str:
    with pytest.raises(ContractError) as caught:
        parse_contract(text, "c.yaml")
    return str(caught.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- a\n", "c.yaml:1:1: expected object, found a list"),
        ("version: 1\nname: t\n", "c.yaml:1:1: missing required key 'rules'"),
        ("version: 1\nname: t\nrules: []\n", "c.yaml:3:8: rules: needs at least 1 item(s)"),
        (HEAD + "  - x\n", "c.yaml:4:5: rules[0]: expected a mapping"),
        (HEAD + "  - {id: r}\n", "c.yaml:4:5: rules[0]: missing required key 'type'"),
        (
            HEAD + "  - {id: r, type: [a]}\n",
            "c.yaml:4:19: rules[0].type: unknown rule type ['a'] (one of: allowed_values, ",
        ),
        (
            HEAD + "  - {id: r, type: required_spans, select: {step: a}, code: bad}\n",
            "c.yaml:4:60: rules[0].code: 'bad' does not match ^[A-Z][A-Z0-9_]*$",
        ),
        (
            HEAD + "  - {id: r, type: required_spans, select: {step: a, attributes: {k: [1]}}}\n",
            "c.yaml:4:69: rules[0].select.attributes.k: expected string or integer or boolean",
        ),
        (
            HEAD + "  - {id: r, type: numeric_budgets, aggregate: sum, max: x, duration: ms}\n",
            'c.yaml:4:57: rules[0].max: expected an exact number: an integer or a string like "1/20"',
        ),
        (
            "version: 1\nname: t\ngate: {min_runs: null}\n",
            "c.yaml:3:18: gate.min_runs: expected integer, found null 'null'",
        ),
    ],
)
def test_validator_errors_are_worded_by_the_project(text: str, message: str) -> None:
    assert _error(text).startswith(message)


def test_a_boolean_is_not_the_version_1() -> None:
    """``true == 1`` in Python; JSON Schema's ``const`` tells booleans from numbers (the old checker
    accepted ``version: true``)."""
    assert _error(GOOD.replace("version: 1", "version: true")) == "c.yaml:1:10: version: must be 1"


def test_the_first_problem_in_the_file_is_reported() -> None:
    # the schema lists `version` first; the file's earlier problem wins all the same
    text = "name: 2\nversion: 3\nrules: []\n"
    assert _error(text) == "c.yaml:1:7: name: expected string, found integer '2'"
    # a mapping's own problem (a key missing) comes after the problems inside it
    text = HEAD + "  - {id: r, type: required_spans, code: bad}\n"
    assert _error(text) == "c.yaml:4:41: rules[0].code: 'bad' does not match ^[A-Z][A-Z0-9_]*$"
    text = HEAD + "  - {id: r, type: required_spans}\n  - {id: s, type: nope}\n"
    assert _error(text) == "c.yaml:4:5: rules[0]: missing required key 'select'"


def _mutations(text: str) -> list[str]:
    """Each line of ``text`` deleted, or its value replaced by values of every other kind."""
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines):
        out.append("\n".join(lines[:i] + lines[i + 1 :]))
        key = re.match(r"^(\s*-?\s*[\w.]+:)", line)
        for value in ("[x]", "{}", '""', "-1", "0", "true", "null", "x", "{a: 1}", '"1/0"'):
            if key:
                out.append("\n".join([*lines[:i], f"{key.group(1)} {value}", *lines[i + 1 :]]))
    return out


def test_the_parser_refuses_what_the_schema_refuses() -> None:
    validator = jsonschema.Draft202012Validator(contract_schema())
    refused = 0
    for text in _mutations(GOOD):
        try:
            invalid = any(validator.iter_errors(yaml.safe_load(text)))
        except yaml.YAMLError:
            invalid = True  # no YAML, no contract
        try:
            parse_contract(text, "c.yaml")
        except ContractError as exc:
            assert exc.line is not None and exc.column is not None, exc
            refused += 1
        else:
            assert not invalid, text
    assert refused > 100


def test_aliases_that_multiply_the_data_are_refused_at_once() -> None:
    lines = ["version: 1", "name: t", "x0: &a0 [a, a, a, a, a, a, a, a, a, a]"]
    lines += [f"x{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    message = _error("\n".join(lines) + "\n")  # 10^9 values once written out
    assert re.fullmatch(r"c\.yaml:\d+:\d+: x\d: aliases repeat more than 10000 values", message)
    assert _error("version: 1\nname: t\ndescription: &a [*a]\n") == (
        "c.yaml:3:14: description: nested too deeply to be a contract (more than 32 levels)"
    )


def test_nesting_deeper_than_any_contract_is_located() -> None:
    text = "version: 1\nname: t\ndescription: " + "[" * 40 + "]" * 40 + "\n"
    message = "c.yaml:3:45: description: nested too deeply to be a contract (more than 32 levels)"
    assert _error(text) == message


def test_jsonschema_is_imported_only_to_word_a_contracts_problem() -> None:
    """It is in the ``cli`` extra: the instrumented application's base install never imports it, the
    commands that read no contract do not pay for it, and a valid contract is passed without it."""
    contract = HEAD + "  - {id: r, type: forbidden_spans, select: {step: a}}\n"
    code = (
        "import sys, otel_provenance, otel_provenance.instrument.decorators, otel_provenance.cli\n"
        "assert 'jsonschema' not in sys.modules, 'imported at start-up'\n"
        "from otel_provenance.errors import ContractError\n"
        "from otel_provenance.offline.contracts import parse_contract\n"
        f"parse_contract({contract!r})\n"
        "assert 'jsonschema' not in sys.modules, 'imported for a valid contract'\n"
        "try:\n"
        f"    parse_contract({contract.replace('forbidden_spans', 'forbidden_spanz')!r})\n"
        "except ContractError:\n"
        "    pass\n"
        "assert 'jsonschema' in sys.modules\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_without_jsonschema_the_gate_says_what_to_install(tmp_path) -> None:
    contract = tmp_path / "c.yaml"
    contract.write_text(GOOD)
    code = "import sys; sys.modules['jsonschema'] = None\nfrom otel_provenance.cli import main\nmain()\n"
    argv = ["gate", "check", "--contract", str(contract), "--release", "v1", str(contract)]
    proc = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "needs jsonschema: pip install 'otel-provenance[cli]'" in proc.stderr
    assert "Traceback" not in proc.stderr
