"""SARIF 2.1.0: one result per finding (rule × run), rule metadata from the contract, located at the
rule's line in the contract file and, logically, at the trace and spans that prove it. A rule
bounded by a failing-run rate that failed or is undecided adds one result of its own (the rate's
verdict and the further runs that could decide it), located at the rule."""

from __future__ import annotations

import hashlib
from typing import Any, Final

from ... import __version__
from ..aggregate import canonical_json
from ..gate import GateResult, RuleVerdict
from .json_report import rate_json

SARIF_SCHEMA: Final = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
_LEVELS: Final = {"fail": "error", "insufficient_evidence": "warning", "error": "error"}
_RATE_LEVELS: Final = {"fail": "error", "insufficient_data": "warning"}  # by a rate rule's verdict


def render_sarif(result: GateResult, contract_uri: str | None = None) -> str:
    rules = sorted(result.contract.rules, key=lambda r: r.id)
    index = {r.id: i for i, r in enumerate(rules)}
    driver = {
        "name": "otel-provenance",
        "version": __version__,
        "rules": [
            {
                "id": r.id,
                "name": r.code,
                "shortDescription": {"text": f"{r.code}: {r.type}"},
                "fullDescription": {
                    "text": r.description or f"{r.type} rule {r.id} of contract {result.contract.name}"
                },
                "properties": {"type": r.type, "code": r.code},
            }
            for r in rules
        ],
    }
    results: list[dict[str, Any]] = []
    for verdict in result.verdicts:
        if verdict.rate is not None and verdict.status in _RATE_LEVELS:
            results.append(_rate_result(verdict, index[verdict.rule.id], contract_uri))
        for finding in verdict.tally.findings:
            rule = verdict.rule
            location: dict[str, Any] = {
                "logicalLocations": [
                    {
                        "kind": "resource",
                        "fullyQualifiedName": f"trace/{w.trace_id}" + (f"/span/{s}" if s else ""),
                    }
                    for w in finding.witnesses
                    for s in (w.span_ids or ("",))
                ]
                or [{"kind": "resource", "fullyQualifiedName": f"run/{finding.run_id}"}],
            }
            if contract_uri:
                location["physicalLocation"] = {
                    "artifactLocation": {"uri": contract_uri},
                    "region": {"startLine": max(rule.line, 1)},
                }
            identity = f"{rule.id}\n{finding.run_id}\n{finding.message}".encode()
            results.append(
                {
                    "ruleId": rule.id,
                    "ruleIndex": index[rule.id],
                    "level": _LEVELS[finding.status],
                    "kind": "fail",
                    "message": {"text": f"{rule.code} ({rule.id}) {finding.message}"},
                    "locations": [location],
                    "partialFingerprints": {"otelProvenanceFinding/v1": hashlib.sha256(identity).hexdigest()},
                    "properties": {
                        "run_id": finding.run_id,
                        "trace_ids": list(finding.trace_ids),
                        "status": finding.status,
                        "rule_verdict": verdict.status,
                    },
                }
            )
    properties: dict[str, Any] = {"decision": result.decision, "release": result.aggregate.release}
    if (more := result.further_runs) is not None:
        properties["further_runs"] = {"to_pass": more[0], "to_fail": more[1]}
    run: dict[str, Any] = {"tool": {"driver": driver}, "results": results, "properties": properties}
    if result.aggregate.completed_at:
        run["invocations"] = [
            {"executionSuccessful": result.decision != "error", "endTimeUtc": result.aggregate.completed_at}
        ]
    return canonical_json({"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]})


def _rate_result(verdict: RuleVerdict, rule_index: int, contract_uri: str | None) -> dict[str, Any]:
    """A rate rule's release-level verdict (fail, or undecided with the runs that could decide it):
    one result located at the rule, beside the per-run results of its failing runs."""
    rule, rate = verdict.rule, verdict.rate
    assert rate is not None
    location: dict[str, Any] = {
        "logicalLocations": [{"kind": "resource", "fullyQualifiedName": f"rule/{rule.id}"}]
    }
    if contract_uri:
        location["physicalLocation"] = {
            "artifactLocation": {"uri": contract_uri},
            "region": {"startLine": max(rule.line, 1)},
        }
    identity = f"{rule.id}\nrate\n{verdict.status}".encode()
    return {
        "ruleId": rule.id,
        "ruleIndex": rule_index,
        "level": _RATE_LEVELS[verdict.status],
        "kind": "fail",
        "message": {"text": f"{rule.code} ({rule.id}) {verdict.reason}"},
        "locations": [location],
        "partialFingerprints": {"otelProvenanceFinding/v1": hashlib.sha256(identity).hexdigest()},
        "properties": {"rule_verdict": verdict.status, "rate": rate_json(rate)},
    }
