"""The contract's seal: what a cut would lose (issue #36: 9 of 233 line-boundary cuts of the demo's
contract were still valid contracts, and passed the failing release).

``dump_document`` (what ``mine`` and ``routes approve`` write with) seals a contract near its top with
the line it ends with. A copy cut short keeps the seal and loses its last line, so loading it fails
naming the seal; a person's edits keep the last line and load; a contract without a seal loads, with
a note."""

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
    assert lines[:3] == ["version: 1", "name: refunds", "seal: '# end of contract'"]
    assert lines[-1] == "# end of contract"
    contract = parse_contract(text)
    assert contract.notes == ()
    assert dump_document(dict(contract.document)) == text  # re-writing gives the same bytes


def test_an_unsealed_contract_loads_with_a_note() -> None:
    contract = parse_contract(yaml.safe_dump(DOCUMENT))
    assert len(contract.rules) == 2
    assert contract.notes and "has no seal" in contract.notes[0]
    assert contract.digest == parse_contract(dump_document(DOCUMENT)).digest  # the seal is not content


@pytest.mark.parametrize("cut_inside_a_line", [False, True])
def test_every_cut_of_a_sealed_contract_is_refused(cut_inside_a_line: bool) -> None:
    text = dump_document(DOCUMENT)
    ends = [i for i, ch in enumerate(text) if ch == "\n"][:-1]  # every line boundary but the whole text
    cuts = range(1, len(text) - 1) if cut_inside_a_line else [e + 1 for e in ends]
    for k in cuts:
        with pytest.raises(ContractError):
            parse_contract(text[:k], source="cut.yaml")


def test_a_cut_that_drops_a_whole_rule_names_the_seal_and_its_line() -> None:
    text = dump_document(DOCUMENT)
    cut = text[: text.index("- id: once.refund")]
    with pytest.raises(ContractError) as caught:
        parse_contract(cut, source="c.yaml")
    assert "c.yaml:3:" in str(caught.value)
    assert "the contract's seal says it ends with the line '# end of contract'" in str(caught.value)
    assert "cut short" in str(caught.value)


def test_cuts_that_would_be_valid_contracts_are_refused_by_the_seal() -> None:
    """Without the seal some cuts are valid contracts (fewer rules); with it each is refused by name."""
    lines = dump_document(DOCUMENT).splitlines(keepends=True)
    valid_unsealed = 0
    for k in range(4, len(lines)):  # past the seal's own line
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


def test_a_persons_edits_keep_the_last_line_and_load_as_written() -> None:
    text = dump_document(DOCUMENT)
    tightened = text.replace("  max: 1", "  max: 5")
    assert parse_contract(tightened).rule("once.refund").params["max"] == 5
    start = text.index("- id: needs.fraud")
    one_rule_removed = text[:start] + text[text.index("- id: once.refund") :]
    assert [r.id for r in parse_contract(one_rule_removed).rules] == ["once.refund"]


def test_a_rule_added_after_the_end_line_is_refused_saying_to_put_it_back_last() -> None:
    text = dump_document(DOCUMENT)
    appended = text + "- id: extra\n  type: cardinality\n  select: {step: x}\n  max: 1\n"
    with pytest.raises(ContractError, match=r"that line was moved \(put it back last\)"):
        parse_contract(appended)


def test_a_cut_right_after_an_indented_end_line_inside_a_description_is_refused() -> None:
    """#50: a rule's description (a block scalar) that holds the end line, indented; a copy cut right
    after it is valid YAML and a valid contract — one rule short. The end line counts only at the
    start of a line, as the contract writes it."""
    block = "  description: |\n    The check every refund needs.\n    # end of contract\n    Kept.\n"
    text = dump_document(DOCUMENT)  # as a person edits it: a literal block after the rule's limits
    text = text.replace("  min: 1\n", "  min: 1\n" + block, 1)
    assert "    # end of contract\n" in text
    assert [r.id for r in parse_contract(text).rules] == ["needs.fraud", "once.refund"]  # whole: loads
    lines = text.splitlines(keepends=True)
    for k in range(1, len(lines)):
        with pytest.raises(ContractError):
            parse_contract("".join(lines[:k]), source="cut.yaml")
    cut = text[: text.index("    # end of contract\n") + len("    # end of contract\n")]
    with pytest.raises(ContractError, match="seal says it ends with the line"):
        parse_contract(cut, source="cut.yaml")
