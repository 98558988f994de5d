"""#45: what the call-time guard makes of each rule type is declared once, on the rule type
(``RuleType.at_call``, ``RuleType.reads_attributes``), and the guard and docs/guard.md agree with it."""

from __future__ import annotations

import re
from pathlib import Path

from otel_provenance.instrument.call import rule_views
from otel_provenance.offline.contracts.rules import REGISTRY
from otel_provenance.offline.contracts.ruletype import AtCall

DOCS = Path(__file__).resolve().parents[2] / "docs" / "guard.md"


def _docs_table() -> dict[str, tuple[str, str]]:
    """``rule type -> (decided before the call, when the run ends)`` from docs/guard.md's table."""
    text = DOCS.read_text()
    table = text[text.index("| rule type | decided before the call |") :].split("\n\n", 1)[0]
    rows: dict[str, tuple[str, str]] = {}
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        for name in re.findall(r"`([a-z_]+)`", cells[0]):
            if name in REGISTRY:
                rows[name] = (cells[1], cells[2])
    return rows


def test_every_rule_type_declares_what_the_guard_makes_of_it_and_the_guard_reads_it():
    for name, rule_type in REGISTRY.items():
        assert isinstance(rule_type.at_call, AtCall), name
        decided = rule_type.at_call in (AtCall.STEP, AtCall.RUN)
        assert (name in rule_views.AT_CALL) == decided, name
        assert (name in rule_views.OFFLINE_ONLY) == (rule_type.at_call is AtCall.OFFLINE), name


def test_docs_guard_md_says_what_the_rule_types_declare():
    rows = _docs_table()
    assert set(rows) == set(REGISTRY), "docs/guard.md's table names every rule type once"
    for name, (before, at_end) in rows.items():
        at_call = REGISTRY[name].at_call
        if at_call is AtCall.OFFLINE:
            assert before == "—" and at_end.startswith("offline only"), name
        elif at_call is AtCall.END:
            assert before == "—" and at_end == "yes", name
        else:
            assert before != "—", name


def test_a_rule_only_the_end_decides_never_blocks_a_call(tmp_path):
    """A ``required_spans`` rule the run has not met yet: the call still runs (decided at the end)."""
    import otel_provenance as op
    from instrument_helpers import Traced

    contract = tmp_path / "needs-check.yaml"
    contract.write_text(
        "name: needs-check\nversion: 1\nrules:\n"
        "  - id: checked\n    type: required_spans\n    select: {step: fraud.check}\n"
    )
    traced = Traced()

    @op.tool(name="payment.refund", side_effect="write", tracer_provider=traced.provider)
    def refund(amount: int) -> str:
        return "paid"

    with op.run(inputs={"amount": 1200}, contract=str(contract), tracer_provider=traced.provider):
        assert refund(amount=1200) == "paid"
