"""#49: the reports a person reads — terminal, HTML, pull-request comment — lead with the findings that
name a step (a duplicate, a missing step, an order) and end with the route's similarity; the comment
puts the findings before its tables. The machine formats keep the gate's rule-id order."""

from __future__ import annotations

import json

from contract_runs import triage_run
from otel_provenance.offline.contracts import REGISTRY, parse_contract
from otel_provenance.offline.gate import check_release, decide
from otel_provenance.offline.mine import mine_contract
from otel_provenance.offline.report import render_html, render_json, render_markdown, render_text
from otel_provenance.offline.report.reading_order import LAST, READING_ORDER, reading_order
from otel_provenance.offline.report.witnesses import WitnessKeeper

AT = "2026-01-31T12:00:00Z"


def test_every_rule_type_has_its_place() -> None:
    """A new rule type must be placed on purpose: it would otherwise read before the route, unranked."""
    assert set(REGISTRY) == {*READING_ORDER, LAST}
    assert len(READING_ORDER) == len(set(READING_ORDER))


def _failing_release():
    """A release that skips the permission check and writes twice, against a mined contract: it fails
    the route's similarity, a count, a required step and an order."""
    contract = parse_contract(mine_contract([triage_run(f"m{i}") for i in range(3)], "triage"))
    runs = [triage_run(f"bad{i}", skip_check=True, writes=2) for i in range(2)]
    keeper = WitnessKeeper()
    result = decide(check_release(runs, contract, "v1", AT, evaluator=keeper), contract)
    assert result.decision == "fail"
    return result, keeper.runs


def _codes_in(text: str, result) -> list[str]:
    """The failing rules' ids in the order ``text`` first names them."""
    ids = [v.rule.id for v in result.verdicts if v.status == "fail"]
    return sorted(ids, key=text.index)


def test_the_text_html_and_markdown_reports_lead_with_a_step_and_end_with_the_route() -> None:
    result, runs = _failing_release()
    failing = [v for v in result.verdicts if v.status == "fail"]
    expected = [v.rule.id for v in reading_order(failing)]
    assert {v.rule.type for v in failing} >= {"cardinality", "required_spans", "forbidden_paths", LAST}
    assert expected[0].startswith("at_most.") and expected[-1] == "approved_route"
    text = render_text(result)
    assert _codes_in(text, result) == expected
    markdown = render_markdown(result)
    findings = markdown.index("### Findings")
    assert findings < markdown.index("### Rules") < markdown.index("<details>")  # tables after
    assert _codes_in(markdown[findings:], result) == expected
    page = render_html(result, runs)
    section = page[page.index("<h2>Findings</h2>") :]
    assert _codes_in(section, result) == expected
    # the machine formats keep the gate's rule-id order
    report = json.loads(render_json(result))
    listed = [rule["id"] for rule in report["rules"]]
    assert listed == sorted(listed)
