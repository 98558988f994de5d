"""The contract's seal: what a cut would lose (issue #36: 9 of 233 line-boundary cuts of the demo's
contract were still valid contracts, and passed the failing release).

``dump_document`` (what ``mine`` and ``routes approve`` write with) seals a contract near its top: the
rule count and the digest of everything else. A copy cut short keeps the seal and loses what it
vouches for, so loading it fails naming the seal; a contract without a seal loads, with a note."""

from __future__ import annotations

import pytest
import yaml

from otel_provenance.errors import ContractError
from otel_provenance.offline import dump_document, parse_contract

DOCUMENT = {
    "version": 1,
    "name": "refunds",
    "description": "two rules",
    "gate": {"min_runs": 1, "max_failing_runs": 0, "max_insufficient_fraction": "1/20"},
    "rules": [
        {"id": "needs.fraud", "type": "required_spans", "select": {"step": "fraud.check"}, "min": 1},
        {"id": "once.refund", "type": "cardinality", "select": {"step": "payment.refund"}, "max": 1},
    ],
}


def test_a_written_contract_is_sealed_and_loads_without_a_note() -> None:
    text = dump_document(DOCUMENT)
    lines = text.splitlines()
    assert lines[:4] == ["version: 1", "name: refunds", "seal:", "  rules: 2"]
    contract = parse_contract(text)
    assert contract.notes == ()
    assert yaml.safe_load(text)["seal"]["digest"] == contract.digest  # the seal holds the contract's digest
    assert dump_document(dict(contract.document)) == text  # re-writing gives the same bytes


def test_an_unsealed_contract_loads_with_a_note() -> None:
    contract = parse_contract(yaml.safe_dump(DOCUMENT))
    assert len(contract.rules) == 2
    assert contract.notes and "has no seal" in contract.notes[0]
    assert contract.digest == parse_contract(dump_document(DOCUMENT)).digest  # the seal is not content


def test_every_line_boundary_cut_of_a_sealed_contract_is_refused() -> None:
    lines = dump_document(DOCUMENT).splitlines(keepends=True)
    for k in range(1, len(lines)):
        with pytest.raises(ContractError):
            parse_contract("".join(lines[:k]), source="cut.yaml")


def test_a_cut_that_drops_a_whole_rule_names_the_count() -> None:
    text = dump_document(DOCUMENT)
    cut = text[: text.index("- id: once.refund")]
    with pytest.raises(ContractError) as caught:
        parse_contract(cut, source="c.yaml")
    assert "c.yaml:4:" in str(caught.value)
    assert "the contract has 1 rule(s) but its seal says 2: cut short or edited" in str(caught.value)


def test_cuts_that_would_be_valid_contracts_are_refused_by_the_seal() -> None:
    """Without the seal some cuts are valid contracts (fewer rules); with it each is refused by name."""
    lines = dump_document(DOCUMENT).splitlines(keepends=True)
    valid_unsealed = 0
    for k in range(5, len(lines)):  # past the seal's own lines
        cut = "".join(lines[:k])
        unsealed = {key: v for key, v in (yaml.safe_load(cut) or {}).items() if key != "seal"}
        try:
            parse_contract(yaml.safe_dump(unsealed))
        except ContractError:
            continue
        valid_unsealed += 1
        with pytest.raises(ContractError, match="seal"):
            parse_contract(cut)
    assert valid_unsealed > 0


def test_an_edit_is_refused_until_the_seal_is_deleted() -> None:
    edited = dump_document(DOCUMENT).replace("  max: 1", "  max: 5")
    with pytest.raises(ContractError, match=r"delete the seal to load it unsealed"):
        parse_contract(edited)
    document = yaml.safe_load(edited)
    del document["seal"]
    assert parse_contract(yaml.safe_dump(document)).rule("once.refund").params["max"] == 5


def test_a_seal_cut_between_its_two_lines_is_refused() -> None:
    lines = dump_document(DOCUMENT).splitlines(keepends=True)
    without_digest = "".join(lines[:4] + lines[5:])
    with pytest.raises(ContractError, match="digest"):
        parse_contract(without_digest)
