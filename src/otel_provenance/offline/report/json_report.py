"""The canonical JSON report: the complete evidence behind a decision, byte-identical for the same
evidence (sorted keys, no floats — rationals are strings, findings in one canonical order)."""

from __future__ import annotations

from typing import Any, Final

from ..aggregate import canonical_json, finding_json
from ..contracts.rational import format_rational
from ..gate import GateResult

REPORT_FORMAT: Final = "otel-provenance/gate-report/v1"


def report_data(result: GateResult) -> dict[str, Any]:
    agg = result.aggregate
    return {
        "format": REPORT_FORMAT,
        "decision": result.decision,
        "reason": result.reason,
        "release": agg.release,
        "completed_at": agg.completed_at,
        "contract": {
            "name": result.contract.name,
            "digest": result.contract.digest,
            "min_runs": result.contract.min_runs,
        },
        "incomplete_inputs": list(agg.incomplete_inputs),
        "runs": {
            "evaluated": agg.evaluated,
            **dict(agg.run_counts),
            "other_releases": agg.other_release_runs,
            "other_releases_by_release": dict(agg.other_releases),
        },
        "rules": [
            {
                "id": v.rule.id,
                "type": v.rule.type,
                "code": v.rule.code,
                "status": v.status,
                "reason": v.reason,
                "counts": dict(v.tally.counts),
                "thresholds": {
                    "max_failing_runs": v.rule.thresholds.max_failing_runs,
                    "max_insufficient_fraction": format_rational(v.rule.thresholds.max_insufficient_fraction),
                },
                "findings": [finding_json(f) for f in v.tally.findings],
            }
            for v in result.verdicts
        ],
    }


def render_json(result: GateResult) -> str:
    return canonical_json(report_data(result))
