"""A self-contained HTML report: why a release failed, with each drawn run's graph beside its route.

One file that opens from a CI artifact: inline CSS and SVG, no script, and a Content-Security-Policy
that forbids every fetch, so nothing is loaded at view time even if a trace held a hostile value
that slipped past escaping (it cannot: the template environment escapes every value it writes,
``templating``). The page holds the text report's facts and reads why first: the decision and
counts; each finding — those that name a step first (``reading_order``) — with, right under its
message, the first of its runs (of those ``witnesses.witness_run_ids`` picks) drawn beside the
closest approved route (``run_view``), with missing, extra, duplicated and blocked steps marked,
then its trace ids; the rules as a table last.
Runs drawn exactly alike are drawn once and counted.

This module chooses what the page shows; ``templates/gate.html.j2`` is its markup. Pure:
``render_html(result, runs)`` reads no clock and no file; same evidence → same bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Final

from ..aggregate import RunFinding
from ..contracts.model import Rule
from ..gate import GateResult, RuleVerdict
from ..model import Run
from .layout import layered
from .page import DrawnRun, differences, render_page
from .reading_order import reading_order
from .run_view import RunView, run_view
from .svg import figure
from .text import HEADLINES, listed
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
    drawn: DrawnRun | None = None  # the first of its runs drawn here, right under the message


@dataclass(frozen=True, slots=True)
class RuleFindings:
    verdict: RuleVerdict
    groups: tuple[FindingGroup, ...]  # most runs first


@dataclass(frozen=True, slots=True)
class Section:
    title: str
    rules: tuple[RuleFindings, ...]


def render_html(result: GateResult, runs: Mapping[str, Run] | None = None) -> str:
    """The report page: the decision, then each finding with a failing run drawn beside its closest
    approved route, then the rules. ``runs`` holds the spans of the runs to draw (by run id); a
    drawn run that is not there is named with a note instead of a graph. Runs drawn exactly alike
    are drawn once, with the others counted and named."""
    runs = runs or {}
    agg = result.aggregate
    drawn, anchors = _drawn_once(result, runs)
    findings, placed = _findings(result, anchors, {d.anchor: d for d in drawn if d.figure is not None})
    return render_page(
        "gate.html.j2",
        title=f"Trajectory gate: {result.decision} · release {agg.release}",
        page_format=HTML_FORMAT,
        result=result,
        agg=agg,
        counts=dict(agg.run_counts),
        headline=HEADLINES[result.decision],
        rules=[(v, dict(v.tally.counts)) for v in result.verdicts],
        findings=findings,
        drawn=[d for d in drawn if d.anchor not in placed],  # not drawn under a finding
        any_figure=any(d.figure is not None for d in drawn),
    )


def _drawn_once(result: GateResult, runs: Mapping[str, Run]) -> tuple[list[DrawnRun], dict[str, str]]:
    """The drawn runs, those drawn alike merged into the first (``same``), and each run id's anchor."""
    drawn: list[DrawnRun] = []
    anchors: dict[str, str] = {}
    first: dict[tuple, int] = {}  # a figure's shape -> its index in drawn
    for run_id in witness_run_ids(result):
        run = runs.get(run_id)
        if run is None:
            drawn.append(_drawn(result, run_id, None, ""))
            continue
        view = run_view(run, result.contract)
        key = (_shape(view), tuple(rule.id for rule in _failing(result, run_id)))
        if key in first:
            kept = drawn[first[key]]
            drawn[first[key]] = replace(kept, same=(*kept.same, run_id))
            anchors[run_id] = kept.anchor or ""
            continue
        first[key] = len(drawn)
        anchors[run_id] = anchor = f"run-{len(first)}"
        drawn.append(_drawn(result, run_id, view, anchor))
    return drawn, anchors


def _shape(view: RunView) -> tuple:
    """What a run's figure shows, with its ids left out: equal shapes are drawn alike."""
    order = {p.key: i for i, p in enumerate(layered(view.tree.roots, view.tree.child_map()))}
    nodes = sorted((order.get(n.key, -1), n.step, n.detail, n.marks, n.args) for n in view.tree.nodes)
    edges = sorted(
        (order.get(k, -1), tuple(order.get(c, -1) for c in kids)) for k, kids in view.tree.children
    )
    flows = sorted((order.get(f.source, -1), order.get(f.consumer, -1), f.args) for f in view.flows)
    dangling = sorted((d.arg, order.get(d.consumer, -1), d.reason) for d in view.dangling)
    route = (view.route.kind, view.route.id, view.route.similarity) if view.route is not None else None
    return (tuple(nodes), tuple(edges), tuple(flows), tuple(dangling), route)


def _findings(
    result: GateResult, anchors: Mapping[str, str], figures: Mapping[str | None, DrawnRun]
) -> tuple[list[Section], set[str | None]]:
    """The sections of findings, each group with the first of its runs not drawn above; the anchors
    drawn under a finding."""
    placed: set[str | None] = set()
    sections = []
    for title, verdict_status, finding_status in _SECTIONS:
        verdicts = [v for v in reading_order(result.verdicts) if v.status == verdict_status]
        if verdicts:
            rules = []
            for v in verdicts:
                groups = []
                for group in _finding_groups(v, finding_status, anchors):
                    anchor = next(
                        (w.anchor for w in group.lines if w.anchor in figures and w.anchor not in placed),
                        None,
                    )
                    if anchor is not None:
                        placed.add(anchor)
                        group = replace(group, drawn=figures[anchor])
                    groups.append(group)
                rules.append(RuleFindings(v, tuple(groups)))
            sections.append(Section(title, tuple(rules)))
    return sections, placed


def _finding_groups(
    verdict: RuleVerdict, status: str, anchors: Mapping[str, str]
) -> tuple[FindingGroup, ...]:
    groups: dict[str, list[RunFinding]] = {}
    shown = listed(verdict, status)
    for finding in verdict.tally.findings:
        if finding.status in shown:
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


def _failing(result: GateResult, run_id: str) -> tuple[Rule, ...]:
    return tuple(
        v.rule
        for v in reading_order(result.verdicts)
        if any(f.run_id == run_id and f.status == "fail" for f in v.tally.findings)
    )


def _drawn(result: GateResult, run_id: str, view: RunView | None, anchor: str) -> DrawnRun:
    failing = _failing(result, run_id)
    if view is None:
        return DrawnRun(run_id, failing=failing)
    return DrawnRun(run_id, anchor, figure(view, anchor), differences(view), view.trace_ids, failing)
