"""The canonical JSON report: the complete evidence behind a decision, byte-identical for the same
evidence (sorted keys, no floats — rationals are strings, findings in one canonical order).

A rule bounded by a failing-run rate adds ``rate`` (its counts, the exact tests' tails rounded to
six decimals for reading, and the further runs that could decide it) and, when only such rules hold
the release up, the report adds ``further_runs``; count rules' entries are as they always were."""

from __future__ import annotations

from typing import Any, Final

from ..aggregate import canonical_json, finding_json
from ..contracts.model import Thresholds
from ..contracts.rational import format_rational, format_rounded
from ..gate import GateResult, RateVerdict

REPORT_FORMAT: Final = "otel-provenance/gate-report/v1"
TAIL_PLACES: Final = 6  # decimals of a rounded binomial tail


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
                "thresholds": _thresholds(v.rule.thresholds),
                "findings": [finding_json(f) for f in v.tally.findings],
                **({"rate": rate_json(v.rate)} if v.rate is not None else {}),
            }
            for v in result.verdicts
        ],
        **({"further_runs": _further(more)} if (more := result.further_runs) is not None else {}),
    }


def _thresholds(thresholds: Thresholds) -> dict[str, Any]:
    """A count rule's limits as they always were; a rate rule's rate and confidence instead."""
    limit = (
        {"max_failing_runs": thresholds.max_failing_runs}
        if thresholds.rate is None
        else {
            "max_failing_rate": format_rational(thresholds.rate.max_rate),
            "confidence": format_rational(thresholds.rate.confidence),
        }
    )
    return {**limit, "max_insufficient_fraction": format_rational(thresholds.max_insufficient_fraction)}


def rate_json(rate: RateVerdict) -> dict[str, Any]:
    """A rate rule's counts, the two exact tails (rounded for reading: the decision compared them
    exactly) and the further runs that could decide it (null: none within the search limit, or
    none at all — the reason says which)."""
    j = rate.judgement
    return {
        "runs": j.runs,
        "failing_runs": j.failing,
        "runs_without_evidence": j.unknown,
        "fail_tail": format_rounded(j.fail_tail, TAIL_PLACES),
        "pass_tail": format_rounded(j.pass_tail, TAIL_PLACES),
        "runs_to_pass": rate.runs_to_pass,
        "runs_to_fail": rate.runs_to_fail,
    }


def _further(more: tuple[int | None, int | None]) -> dict[str, int | None]:
    return {"to_pass": more[0], "to_fail": more[1]}


def render_json(result: GateResult) -> str:
    return canonical_json(report_data(result))
