"""``audit --report-html``: the provenance audit as a page, with each failing run drawn.

The verdict, the argument totals and every finding as a table (the text audit's facts, in its
order), then — for the failing runs the CLI kept (``witnesses.SmallestRuns``: smallest run ids) —
the run's causal graph with argument data flow, blocked calls, duplicated side effects and
assumed/invented arguments marked, and that run's findings. There is no route to compare with: an
audit has no contract. This module chooses what is shown; ``templates/audit.html.j2`` is its
markup. Pure; same runs → same bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from ... import semconv
from ..audit import AuditReport
from ..model import Run
from .page import DrawnRun, differences, render_page
from .run_view import run_view
from .svg import figure

AUDIT_HTML_FORMAT: Final = "otel-provenance/audit-report-html/v1"
_HEADLINE: Final = {"pass": "PASS", "fail": "FAIL", "insufficient_evidence": "INSUFFICIENT"}


def render_audit_html(
    report: AuditReport, runs: Mapping[str, Run] | None = None, complete_input: bool = True
) -> str:
    """The page. An incomplete input cannot pass: a pass then reads INSUFFICIENT, as the exit code."""
    runs = runs or {}
    verdict = report.verdict.value
    if verdict == "pass" and not complete_input:
        verdict = "insufficient_evidence"
    totals = dict.fromkeys((*semconv.ARG_KINDS, "unknown"), 0)
    for run in report.runs:
        for call in run.calls:
            for arg in call.args:
                totals[arg.kind] = totals.get(arg.kind, 0) + 1
    findings = [f for r in report.runs for f in r.findings] + list(report.findings)
    drawn = sorted(r.run_id for r in report.runs if r.run_id in runs and r.verdict.value == "fail")
    anchors = {run_id: f"run-{i}" for i, run_id in enumerate(drawn, 1)}
    return render_page(
        "audit.html.j2",
        title=f"Provenance audit: {verdict}",
        page_format=AUDIT_HTML_FORMAT,
        verdict_class=_css(verdict),
        headline=_HEADLINE[verdict],
        run_count=len(report.runs),
        calls=sum(len(r.calls) for r in report.runs),
        arguments=", ".join(f"{n} {k}" for k, n in totals.items() if n or k != "unknown"),
        complete_input=complete_input,
        findings=[(f, anchors.get(f.run_id)) for f in findings],
        drawn=[_drawn(runs[run_id], anchors[run_id]) for run_id in drawn],
    )


def _css(verdict: str) -> str:
    return "insufficient_data" if verdict == "insufficient_evidence" else verdict


def _drawn(run: Run, anchor: str) -> DrawnRun:
    view = run_view(run, None)
    return DrawnRun(run.run_id, anchor, figure(view, anchor, "Run"), differences(view, route_note=False))
