"""A self-contained HTML report: why a release failed, with each drawn run's graph beside its route.

One file that opens from a CI artifact: inline CSS and SVG, no script, and a Content-Security-Policy
that forbids every fetch, so nothing is loaded at view time even if a trace held a hostile value
that slipped past escaping (it cannot: the template environment escapes every value it writes,
``templating``). The page holds the text report's facts — decision, counts, the rules as a table,
the findings with their trace ids — and, for the runs ``witnesses.witness_run_ids`` picks, the run's
causal graph beside the closest approved route (``run_view``), with missing, extra, duplicated and
blocked steps marked.

This module chooses what the page shows; ``templates/gate.html.j2`` is its markup. Pure:
``render_html(result, runs)`` reads no clock and no file; same evidence → same bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from ..aggregate import RunFinding
from ..gate import GateResult, RuleVerdict
from ..model import Run
from .page import DrawnRun, differences, render_page
from .run_view import run_view
from .svg import figure
from .text import HEADLINES
from .witnesses import witness_run_ids

HTML_FORMAT: Final = "otel-provenance/gate-report-html/v1"
MAX_WITNESSES: Final = 20  # witness lines per finding message; the JSON report has all of them
_SECTIONS: Final = (  # title, verdict status, finding status
    ("Findings", "fail", "fail"),
    ("Insufficient evidence", "insufficient_data", "insufficient_evidence"),
    ("Errors", "error", "error"),
)


@dataclass(frozen=True, slots=True)
class WitnessLine:
    """One line of proof: a witness's trace (and spans), or — for a finding that names no witness —
    the run's traces."""

    run_id: str
    anchor: str | None  # of the run's graph, when the page draws it
    trace_id: str | None = None  # None: the finding names no witness
    spans: str | None = None  # the witness's span ids, when it names any
    traces: str = ""  # the run's trace ids, when it names no witness


@dataclass(frozen=True, slots=True)
class FindingGroup:
    message: str
    lines: tuple[WitnessLine, ...]
    more: int  # runs with this message not listed (see the JSON report)


@dataclass(frozen=True, slots=True)
class RuleFindings:
    verdict: RuleVerdict
    groups: tuple[FindingGroup, ...]  # most runs first


@dataclass(frozen=True, slots=True)
class Section:
    title: str
    rules: tuple[RuleFindings, ...]


def render_html(result: GateResult, runs: Mapping[str, Run] | None = None) -> str:
    """The report page. ``runs`` holds the spans of the runs to draw (by run id); a drawn run that
    is not there is named with a note instead of a graph."""
    runs = runs or {}
    agg = result.aggregate
    drawn = witness_run_ids(result)
    anchors = {run_id: f"run-{i}" for i, run_id in enumerate(drawn, 1) if run_id in runs}
    return render_page(
        "gate.html.j2",
        title=f"Trajectory gate: {result.decision} · release {agg.release}",
        page_format=HTML_FORMAT,
        result=result,
        agg=agg,
        counts=dict(agg.run_counts),
        headline=HEADLINES[result.decision],
        rules=[(v, dict(v.tally.counts)) for v in result.verdicts],
        findings=_findings(result, anchors),
        drawn=[_drawn(result, run_id, runs.get(run_id), anchors) for run_id in drawn],
    )


def _findings(result: GateResult, anchors: Mapping[str, str]) -> list[Section]:
    sections = []
    for title, verdict_status, finding_status in _SECTIONS:
        verdicts = [v for v in result.verdicts if v.status == verdict_status]
        if verdicts:
            rules = (RuleFindings(v, _finding_groups(v, finding_status, anchors)) for v in verdicts)
            sections.append(Section(title, tuple(rules)))
    return sections


def _finding_groups(
    verdict: RuleVerdict, status: str, anchors: Mapping[str, str]
) -> tuple[FindingGroup, ...]:
    groups: dict[str, list[RunFinding]] = {}
    for finding in verdict.tally.findings:
        if finding.status == status:
            groups.setdefault(finding.message, []).append(finding)
    out = []
    for message, findings in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        lines: list[WitnessLine] = []
        for finding in findings[:MAX_WITNESSES]:
            anchor = anchors.get(finding.run_id)
            if not finding.witnesses:
                lines.append(WitnessLine(finding.run_id, anchor, traces=", ".join(finding.trace_ids)))
            for w in finding.witnesses:
                spans = ", ".join(w.span_ids) if w.span_ids else None
                lines.append(WitnessLine(finding.run_id, anchor, w.trace_id, spans))
        out.append(FindingGroup(message, tuple(lines), max(len(findings) - MAX_WITNESSES, 0)))
    return tuple(out)


def _drawn(result: GateResult, run_id: str, run: Run | None, anchors: Mapping[str, str]) -> DrawnRun:
    failing = tuple(
        v.rule
        for v in result.verdicts
        if any(f.run_id == run_id and f.status == "fail" for f in v.tally.findings)
    )
    if run is None:
        return DrawnRun(run_id, failing=failing)
    anchor = anchors[run_id]
    view = run_view(run, result.contract)
    return DrawnRun(run_id, anchor, figure(view, anchor), differences(view), view.trace_ids, failing)
