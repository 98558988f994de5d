"""JUnit XML: one test case per rule. ``<failure>`` for a rule over its threshold, ``<error>`` for an
internal error, ``<skipped>`` for a rule without enough evidence — so CI dashboards tell the three
apart. A rule bounded by a failing-run rate states its rate verdict (with the further runs that
could decide it) first."""

from __future__ import annotations

from ..gate import GateResult
from .text import listed, proof_lines


def render_junit(result: GateResult) -> str:
    import xml.etree.ElementTree as ET  # loaded when a JUnit file is written, not by every gate

    verdicts = result.verdicts
    suite_name = f"otel-provenance gate: {result.contract.name} @ {result.aggregate.release}"
    counts = {s: sum(1 for v in verdicts if v.status == s) for s in ("fail", "error", "insufficient_data")}
    suites = ET.Element("testsuites", {"name": "otel-provenance"})
    suite = ET.SubElement(
        suites,
        "testsuite",
        {
            "name": suite_name,
            "tests": str(len(verdicts)),
            "failures": str(counts["fail"]),
            "errors": str(counts["error"]),
            "skipped": str(counts["insufficient_data"]),
        },
    )
    if result.aggregate.completed_at:
        suite.set("timestamp", result.aggregate.completed_at)
    for verdict in verdicts:
        case = ET.SubElement(
            suite,
            "testcase",
            {
                "classname": result.contract.name,
                "name": f"{verdict.rule.id} ({verdict.rule.code})",
            },
        )
        tag = {"fail": "failure", "error": "error", "insufficient_data": "skipped"}.get(verdict.status)
        if tag is None:
            continue
        finding_status = {"fail": "fail", "error": "error", "insufficient_data": "insufficient_evidence"}[
            verdict.status
        ]
        details = [f"{verdict.rule.code} ({verdict.rule.id}) {verdict.reason}"] if verdict.rate else []
        for finding in verdict.tally.findings:
            if finding.status in listed(verdict, finding_status):
                details.append(f"{verdict.rule.code} ({verdict.rule.id}) {finding.message}")
                details.extend(proof_lines(finding))
        element = ET.SubElement(case, tag, {"message": verdict.reason, "type": verdict.rule.code})
        element.text = "\n".join(details) if details else verdict.reason
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"
