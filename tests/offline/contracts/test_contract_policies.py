"""A contract's ``policies:`` section (#34): argument-value policies by tool name, the same fields as
``op.Policy``. The DSL and ``schema.json`` accept and check it (``file:line:column`` errors like every
contract error), the digest covers it, rewriting keeps it — and the offline evaluator never reads it:
values never reach traces, so a contract with policies evaluates exactly as one without."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

import otel_provenance as op
from offline_helpers import write_reference
from otel_provenance.cli import run as cli_run
from otel_provenance.errors import ContractError
from otel_provenance.instrument.call.policy import policies_from_contract
from otel_provenance.offline.contracts import contract_schema, dump_document, load_contract, parse_contract
from otel_provenance.policy_law import PolicyProblem, compile_policy

HEAD = """version: 1
name: refunds
rules:
  - id: no_deletes
    type: forbidden_spans
    select: {step: order.delete}
"""
POLICIES = r"""policies:
  payment.refund:
    arguments:
      amount: {minimum: 0, maximum: "500.5", run_sum: {input: order.amount}}
      currency: {patterns: ["EUR|USD"]}
  customer.notify:
    - run_count: 3
      on_violation: ask
      arguments:
        to: {patterns: ['[^@]+@example\.com'], denied_patterns: ['ceo@.*']}
    - schema:
        type: object
        required: [to, body]
        properties:
          body: {type: string, maxLength: 2000}
"""


def _cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return cli_run(list(argv), out, io.StringIO()), out.getvalue()


def test_a_contract_with_policies_parses_and_they_become_op_policies():
    contract = parse_contract(HEAD + POLICIES, "refunds.yaml")
    policies = policies_from_contract(contract)
    assert sorted(policies) == ["customer.notify", "payment.refund"]
    (refund,) = policies["payment.refund"]
    ask, schema = policies["customer.notify"]
    assert refund.on_violation == "block" and ask.on_violation == "ask" and ask.run_count == 3
    assert refund.law.judge({"amount": 501, "currency": "GBP"}) == [
        "policy:amount:maximum",
        "policy:currency:pattern",
    ]
    assert refund.law.judge({"amount": "500.5"}) == ["policy:amount:minimum", "policy:amount:maximum"]
    assert schema.law.judge({"to": "a@example.com"}) == ["policy:schema:/required"]
    assert policies_from_contract(parse_contract(HEAD)) == {}
    assert policies_from_contract(contract.document).keys() == policies.keys()


def test_a_contract_policy_judges_as_the_same_policy_written_in_code(traced):
    """One law: the contract's policy and ``op.Policy`` with the same fields decide alike."""
    (from_contract,) = policies_from_contract(parse_contract(HEAD + POLICIES))["payment.refund"]
    in_code = op.Policy(
        arguments={
            "amount": {"minimum": 0, "maximum": "500.5", "run_sum": op.Input("order.amount")},
            "currency": {"patterns": ["EUR|USD"]},
        }
    )
    for arguments in ({"amount": 500}, {"amount": 500.5, "currency": "EUR"}, {"amount": -1, "currency": "X"}):
        assert from_contract.law.judge(arguments) == in_code.law.judge(arguments)

    results = []
    for policy in (from_contract, in_code):

        @op.tool(name="payment.refund", side_effect="read", policy=policy, tracer_provider=traced.provider)
        def refund(amount: int, currency: str = "EUR") -> None:
            return None

        outcomes = []
        with op.run(inputs={"order": {"amount": 300}}):
            for amount in (200, 200, 100):
                try:
                    refund(amount=amount)
                    outcomes.append(())
                except op.ProvenanceError as blocked:
                    outcomes.append(blocked.violations)
        results.append(outcomes)
    assert results[0] == results[1] == [(), ("policy:amount:run_sum",), ()]


@pytest.mark.parametrize(
    ("section", "message"),
    [
        (
            "  refund:\n    arguments:\n      amount: {maximum: 0.5}\n",
            "10:25: policies.refund.arguments.amount.maximum: 0.5 is a floating-point number, which is not "
            'exact; write an integer or a string like "1/20" or "0.05"',
        ),
        (
            "  refund:\n    arguments:\n      amount: {maximum: 5, minimum: 10}\n",
            "10:25: policies.refund.arguments.amount.maximum: no value passes: maximum is below minimum",
        ),
        (
            "  refund:\n    arguments:\n      to: {patterns: ['(']}\n",
            "10:23: policies.refund.arguments.to.patterns[0]: not a regular expression: "
            "missing ), unterminated subpattern at 0",
        ),
        (
            "  refund:\n    arguments:\n      to: {patterns: ['a', 5]}\n",
            "10:28: policies.refund.arguments.to.patterns[1]: expected string, found integer '5'",
        ),
        (
            "  refund:\n    schema: {type: objec}\n",
            "9:20: policies.refund.schema.type: not a valid JSON Schema: "
            "'objec' is not valid under any of the given schemas",
        ),
        (
            "  refund:\n    schema:\n      type: object\n      properties:\n        to: {pattern: '('}\n",
            "12:23: policies.refund.schema.properties.to.pattern: "
            "not a valid JSON Schema: '(' is not a 'regex'",
        ),
        (
            "  refund:\n    on_violation: warn\n    run_count: 1\n",
            "9:19: policies.refund.on_violation: 'warn' is not one of 'block', 'ask'",
        ),
        (
            "  refund:\n    on_violation: ask\n",
            "9:5: policies.refund: needs at least one of: schema, arguments, run_count",
        ),
        (
            "  refund:\n    arguments:\n      amount: {maxmum: 5}\n",
            "10:16: policies.refund.arguments.amount: unknown key 'maxmum' (allowed: denied_patterns, "
            "exclusive_maximum, exclusive_minimum, maximum, minimum, patterns, run_sum)",
        ),
        (
            "  refund:\n    arguments:\n      amount: {run_sum: '-1'}\n",
            "10:25: policies.refund.arguments.amount.run_sum: must be at least 0",
        ),
        (
            "  refund:\n    arguments:\n      amount: {run_sum: {input: 'a..b'}}\n",
            "10:25: policies.refund.arguments.amount.run_sum: expected an exact number, "
            "or {input: <dotted path in the run's declared inputs>}",
        ),
        ("  refund: 5\n", "8:11: policies.refund: expected object, found integer '5'"),
        ("  refund: []\n", "8:11: policies.refund: needs at least 1 item(s)"),
        (
            "  refund:\n    - run_count: 1\n    - run_count: -1\n",
            "10:18: policies.refund[1].run_count: must be at least 0",
        ),
        ("  '': {run_count: 1}\n", "8:3: policies: key '': must not be empty"),
        ("  refund:\n    arguments: {}\n", "9:16: policies.refund.arguments: must not be empty"),
        (
            "  refund:\n    arguments:\n      amount: {}\n",
            "10:15: policies.refund.arguments.amount: must not be empty",
        ),
        (
            "  refund:\n    run_count: true\n",
            "9:16: policies.refund.run_count: expected integer, found boolean 'true'",
        ),
        (
            "  refund:\n    run_count: 1\n  refund:\n    run_count: 2\n",
            "10:3: policies: duplicate key 'refund'",
        ),
    ],
)
def test_a_policy_that_cannot_mean_what_it_says_is_a_contract_error_at_its_line(section, message):
    with pytest.raises(ContractError) as refused:
        parse_contract(HEAD + "policies:\n" + section, "refunds.yaml")
    assert str(refused.value) == f"refunds.yaml:{message}"


def test_the_digest_covers_the_policies_and_rewriting_keeps_them():
    plain = parse_contract(HEAD)
    with_policies = parse_contract(HEAD + POLICIES)
    changed = parse_contract(HEAD + POLICIES.replace('"500.5"', '"500"'))
    assert len({plain.digest, with_policies.digest, changed.digest}) == 3
    text = dump_document(dict(with_policies.document))
    again = parse_contract(text)
    assert again.digest == with_policies.digest
    assert dump_document(dict(again.document)) == text  # canonical: the same bytes every time
    assert text.index("rules:") < text.index("policies:")
    assert text.index("customer.notify") < text.index("payment.refund")  # tools by name


def test_routes_approve_keeps_the_policies(tmp_path):
    good, _ = write_reference(tmp_path)
    contract = tmp_path / "contract.yaml"
    assert _cli("mine", "--approved", str(good), "-o", str(contract))[0] == 0
    contract.write_text(_unsealed(contract.read_text()) + POLICIES)  # appended after the end: unsealed
    before = load_contract(contract)
    families = [
        f["id"] for r in before.document["rules"] if r["type"] == "approved_routes" for f in r["families"]
    ]
    assert _cli("routes", "approve", "--contract", str(contract), families[0])[0] == 0
    after = load_contract(contract)
    assert after.document["policies"] == before.document["policies"]


def test_a_contract_with_policies_evaluates_offline_exactly_as_without(tmp_path):
    good, bad = write_reference(tmp_path)
    plain = tmp_path / "plain.yaml"
    assert _cli("mine", "--approved", str(good), "-o", str(plain))[0] == 0
    with_policies = tmp_path / "with-policies.yaml"
    with_policies.write_text(_unsealed(plain.read_text()) + POLICIES.replace("payment.refund", "patch_file"))
    reports = []
    for contract in (plain, with_policies):
        report = tmp_path / f"{contract.stem}.json"
        code, text = _cli(
            "gate", "check", "--contract", str(contract), "--release", "v1",
            "--completed-at", "2026-01-31T12:00:00Z", str(good), str(bad), "--report-json", str(report),
        )  # fmt: skip
        digest = load_contract(contract).digest
        body = report.read_text().replace(digest, "DIGEST").replace(contract.name, "CONTRACT")
        reports.append((code, text.replace(digest, "DIGEST").replace(contract.name, "CONTRACT"), body))
    assert reports[0][0] == 2  # the blocked patch_file run fails the mined rules
    assert reports[0] == reports[1]
    assert "policies" not in json.loads(reports[1][2]).get("contract", {})


# -- one law for both halves --------------------------------------------------------------------------

_NUMBER = st.one_of(
    st.integers(-1000, 1000), st.from_regex(r"-?[0-9]{1,3}(\.[0-9]{1,2}|/[1-9])?", fullmatch=True)
)
_ARGUMENT = st.dictionaries(
    st.sampled_from(["minimum", "exclusive_minimum", "maximum", "exclusive_maximum"]), _NUMBER, max_size=2
) | st.fixed_dictionaries(
    {},
    optional={
        "patterns": st.lists(st.sampled_from(["a+", "[0-9]{2}", "("]), min_size=1, max_size=2),
        "denied_patterns": st.lists(st.sampled_from(["b.*", "x"]), min_size=1, max_size=2),
        "run_sum": st.one_of(
            _NUMBER, st.fixed_dictionaries({"input": st.sampled_from(["a", "a.b", "a..b"])})
        ),
    },
)
_POLICY = st.fixed_dictionaries(
    {},
    optional={
        "arguments": st.dictionaries(st.sampled_from(["amount", "to"]), _ARGUMENT, max_size=2),
        "run_count": st.integers(-1, 5),
        "on_violation": st.sampled_from(["block", "ask", "warn"]),
        "schema": st.sampled_from([{"type": "object"}, {"required": ["to"]}, {"type": "objec"}]),
    },
)


@given(policy=_POLICY)
def test_the_contract_accepts_exactly_the_policies_op_policy_accepts(policy):
    """A policy in a contract is valid iff the same data is a valid ``op.Policy``, and everything
    the law accepts the published schema accepts too (editors and the gate agree)."""
    try:
        compile_policy(policy)
        accepted = True
    except PolicyProblem:
        accepted = False
    try:
        op.Policy.from_document(policy)
        in_code = True
    except op.ConfigurationError:
        in_code = False
    document = {"version": 1, "name": "t", "rules": [], "policies": {"tool": policy}}
    text = json.dumps(
        {**document, "rules": [{"id": "r", "type": "forbidden_spans", "select": {"step": "a"}}]}
    )
    try:
        parse_contract(text)
        in_contract = True
    except ContractError:
        in_contract = False
    assert accepted == in_code == in_contract
    if accepted:
        schema = contract_schema()
        jsonschema.Draft202012Validator(schema).validate(json.loads(text))


def test_the_docs_policy_example_is_a_valid_contract():
    doc = (Path(__file__).parents[3] / "docs" / "contracts.md").read_text(encoding="utf-8")
    section = doc[doc.index("## Argument-value policies") :]
    block = re.search(r"```yaml\n(.*?)```", section, flags=re.DOTALL)
    assert block is not None
    contract = parse_contract(block.group(1), "docs/contracts.md")
    assert policies_from_contract(contract)


def _unsealed(text: str) -> str:
    """The contract without its seal, so text can be appended after its end line (docs/contracts.md)."""
    return re.sub(r"^seal: .*\n", "", text, flags=re.MULTILINE)
