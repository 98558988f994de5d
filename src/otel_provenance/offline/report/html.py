"""A self-contained HTML report: why a release failed, with each drawn run's graph beside its route.

One file that opens from a CI artifact: inline CSS and SVG, no script, and a Content-Security-Policy
that forbids every fetch, so nothing is loaded at view time even if a trace held a hostile value
that slipped past escaping (it cannot: every string goes through ``svg.esc``). The page holds the
text report's facts — decision, counts, the rules as a table, the findings with their trace ids —
and, for the runs ``witnesses.witness_run_ids`` picks, the run's causal graph beside the closest
approved route (``run_view``), with missing, extra, duplicated and blocked steps marked.

Pure: ``render_html(result, runs)`` reads no clock and no file; same evidence → same bytes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Final

from ... import __version__
from ..aggregate import RunFinding
from ..gate import GateResult, RuleVerdict
from ..model import Run
from .run_view import MARK_LABELS, MARKS, RunView, run_view
from .svg import esc, run_figure
from .text import HEADLINES
from .witnesses import witness_run_ids

HTML_FORMAT: Final = "otel-provenance/gate-report-html/v1"
MAX_WITNESSES: Final = 20  # witness lines per finding message; the JSON report has all of them
_CSP: Final = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
)
_MARK_HELP: Final = {
    "missing": "in the approved route, not in this run",
    "duplicated": "a write tool called more than once",
    "blocked": "agent.tool.status = blocked: the call did not happen",
    "extra": "not in the approved route",
    "error": "the call or span reported an error",
}

_SANS: Final = 'system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif'
_MONO: Final = 'ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace'
STYLE: Final = "\n".join(
    (
        f"body{{font:14px/1.45 {_SANS};margin:24px;color:#111827;background:#fff}}",
        "h1{font-size:22px;margin:0 0 4px}",
        "h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #d1d5db}",
        "h3{font-size:15px;margin:18px 0 6px}",
        f"code,.mono{{font-family:{_MONO};font-size:12.5px}}",
        ".decision{padding:1px 8px;border-radius:4px;color:#fff}",
        ".decision.fail,.decision.error{background:#b91c1c}",
        ".decision.pass{background:#15803d}",
        ".decision.insufficient_data{background:#a16207}",
        "dl.facts{display:grid;grid-template-columns:max-content auto;gap:2px 14px;margin:10px 0}",
        "dl.facts dt{color:#4b5563}",
        "dl.facts dd{margin:0}",
        "table{border-collapse:collapse;margin:6px 0}",
        "th,td{border:1px solid #d1d5db;padding:3px 8px;text-align:left;vertical-align:top}",
        "th{background:#f3f4f6}",
        "td.num{text-align:right}",
        "td.status-fail,td.status-error{color:#b91c1c;font-weight:600}",
        "td.status-insufficient_data{color:#a16207;font-weight:600}",
        "td.status-pass{color:#15803d}",
        "ul.witnesses{margin:2px 0 10px;padding-left:22px}",
        ".note{color:#4b5563}",
        "figure{margin:8px 0 4px;overflow-x:auto}",
        "ul.legend{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:4px 18px;margin:6px 0}",
        "ul.legend svg{vertical-align:middle;margin-right:4px}",
        f".run-graph text{{font-family:{_MONO};font-size:11px;fill:#374151}}",
        f".run-graph .panel-title{{font-family:{_SANS};font-size:13px;font-weight:600;fill:#111827}}",
        ".run-graph .step{font-size:12px;font-weight:700;fill:#111827}",
        ".run-graph .marks{font-weight:700}",
        ".node rect{fill:#fff;stroke:#64748b;stroke-width:1.2}",
        ".mark-extra rect{fill:#f3e8ff;stroke:#7e22ce;stroke-width:2}",
        ".marks-extra{fill:#6b21a8}",
        ".mark-error rect{stroke:#dc2626}",
        ".marks-error{fill:#b91c1c}",
        ".mark-blocked rect{fill:#e5e7eb;stroke:#374151;stroke-width:2;stroke-dasharray:2 3}",
        ".marks-blocked{fill:#374151}",
        ".mark-missing rect{fill:#fff7ed;stroke:#c2410c;stroke-width:2;stroke-dasharray:7 4}",
        ".marks-missing{fill:#9a3412}",
        ".mark-missing .step{fill:#9a3412}",
        ".mark-duplicated rect{fill:#fee2e2;stroke:#b91c1c;stroke-width:3}",
        ".marks-duplicated{fill:#991b1b}",
        ".tree-edge{fill:none;stroke:#94a3b8;stroke-width:1.3}",
        ".tree-edge.missing{stroke:#c2410c;stroke-dasharray:5 4}",
        ".flow{fill:none;stroke:#0369a1;stroke-width:1.3}",
        ".arrowhead{fill:#0369a1}",
        ".run-graph .flow-label{fill:#0369a1;font-size:10px}",
        ".run-graph .flagged{fill:#92400e;font-weight:700}",
    )
)


def render_html(result: GateResult, runs: Mapping[str, Run] | None = None) -> str:
    """The report page. ``runs`` holds the spans of the runs to draw (by run id); a drawn run that
    is not there is named with a note instead of a graph."""
    runs = runs or {}
    agg = result.aggregate
    counts = dict(agg.run_counts)
    drawn = witness_run_ids(result)
    anchors = {run_id: f"run-{i}" for i, run_id in enumerate(drawn, 1) if run_id in runs}
    title = f"Trajectory gate: {result.decision} · release {agg.release}"
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta name="generator" content="otel-provenance {esc(__version__)} ({HTML_FORMAT})">',
        f"<title>{esc(title)}</title>",
        f"<style>{STYLE}</style>",
        "</head><body>",
        f'<h1>Trajectory gate: <span class="decision {esc(result.decision)}">'
        f"{esc(result.decision.upper())}</span></h1>",
        f"<p>{esc(HEADLINES[result.decision])}</p>",
        '<dl class="facts">',
        f"<dt>Release</dt><dd><code>{esc(agg.release)}</code></dd>",
        f"<dt>Contract</dt><dd><code>{esc(result.contract.name)}</code>"
        f" · digest <code>{esc(result.contract.digest)}</code>"
        f" · needs {result.contract.min_runs} run(s)</dd>",
        f"<dt>Completed at</dt><dd>{esc(agg.completed_at) if agg.completed_at else 'not recorded'}</dd>",
        f"<dt>Runs</dt><dd>{agg.evaluated} evaluated — {counts['pass']} pass, {counts['fail']} fail, "
        f"{counts['insufficient_data']} insufficient data, {counts['error']} error "
        f"({agg.other_release_runs} run(s) of other releases ignored)</dd>",
        f"<dt>Decision</dt><dd>{esc(result.decision)} — {esc(result.reason)}</dd>",
        "</dl>",
    ]
    if agg.incomplete_inputs:
        out.append("<h2>Incomplete input</h2><ul>")
        out += [f"<li><code>{esc(item)}</code></li>" for item in agg.incomplete_inputs]
        out.append("</ul>")
    out += _rules_table(result)
    out += _findings(result, anchors)
    out += _runs_section(result, drawn, runs, anchors)
    out.append(f'<p class="note">otel-provenance {esc(__version__)} · {HTML_FORMAT}</p>')
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def _rules_table(result: GateResult) -> list[str]:
    out = [
        "<h2>Rules</h2>",
        "<table><thead><tr><th>rule</th><th>code</th><th>type</th><th>status</th><th>failing runs</th>"
        "<th>insufficient runs</th><th>errors</th><th>passing runs</th><th>reason</th></tr></thead><tbody>",
    ]
    for v in result.verdicts:
        c = dict(v.tally.counts)
        out.append(
            f"<tr><td><code>{esc(v.rule.id)}</code></td><td><code>{esc(v.rule.code)}</code></td>"
            f'<td>{esc(v.rule.type)}</td><td class="status-{esc(v.status)}">{esc(v.status)}</td>'
            f'<td class="num">{c["fail"]}</td><td class="num">{c["insufficient_evidence"]}</td>'
            f'<td class="num">{c["error"]}</td><td class="num">{c["pass"]}</td><td>{esc(v.reason)}</td></tr>'
        )
    out.append("</tbody></table>")
    return out


def _findings(result: GateResult, anchors: Mapping[str, str]) -> list[str]:
    sections = (
        ("Findings", "fail", "fail"),
        ("Insufficient evidence", "insufficient_data", "insufficient_evidence"),
        ("Errors", "error", "error"),
    )
    out: list[str] = []
    for title, verdict_status, finding_status in sections:
        verdicts = [v for v in result.verdicts if v.status == verdict_status]
        if not verdicts:
            continue
        out.append(f"<h2>{title}</h2>")
        for verdict in verdicts:
            out.append(f"<h3><code>{esc(verdict.rule.code)}</code> ({esc(verdict.rule.id)})</h3>")
            out += list(_finding_groups(verdict, finding_status, anchors))
    return out


def _finding_groups(verdict: RuleVerdict, status: str, anchors: Mapping[str, str]) -> Iterator[str]:
    groups: dict[str, list[RunFinding]] = {}
    for finding in verdict.tally.findings:
        if finding.status == status:
            groups.setdefault(finding.message, []).append(finding)
    if not groups:
        yield f"<p>{esc(verdict.reason)}.</p>"
    for message, findings in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        yield f"<p>{esc(message)}</p>"
        yield '<ul class="witnesses">'
        for finding in findings[:MAX_WITNESSES]:
            link = f' · <a href="#{anchors[finding.run_id]}">graph</a>' if finding.run_id in anchors else ""
            if not finding.witnesses:
                traces = ", ".join(esc(t) for t in finding.trace_ids)
                yield f'<li class="mono">run {esc(finding.run_id)}: traces {traces}{link}</li>'
            for w in finding.witnesses:
                spans = f" spans {', '.join(esc(s) for s in w.span_ids)}" if w.span_ids else ""
                run = esc(finding.run_id)
                yield f'<li class="mono">trace {esc(w.trace_id)}{spans} (run {run}){link}</li>'
        if len(findings) > MAX_WITNESSES:
            yield f"<li>… and {len(findings) - MAX_WITNESSES} more run(s) (see the JSON report)</li>"
        yield "</ul>"


def _runs_section(
    result: GateResult, drawn: tuple[str, ...], runs: Mapping[str, Run], anchors: Mapping[str, str]
) -> list[str]:
    if not drawn:
        return []
    out = [
        "<h2>Failing runs beside their approved route</h2>",
        '<p class="note">Left: the run\'s causal graph, calls in time order under their parent, '
        "data flow of arguments (source call → consuming call) on the right. Right: the closest "
        "approved route family's canonical route (a family records steps, not their order).</p>",
        _legend(),
    ]
    for run_id in drawn:
        run = runs.get(run_id)
        failing = [
            v.rule
            for v in result.verdicts
            if any(f.run_id == run_id and f.status == "fail" for f in v.tally.findings)
        ]
        rules = ", ".join(f"<code>{esc(r.code)}</code> ({esc(r.id)})" for r in failing)
        if run is None:
            out.append(f"<h3>Run <code>{esc(run_id)}</code></h3><p>Fails {rules}.</p>")
            out.append(
                '<p class="note">Its spans were not available to this report (e.g. <code>gate merge</code> '
                "reads partial results only); <code>gate check --report-html</code> draws it.</p>"
            )
            continue
        anchor = anchors[run_id]
        view = run_view(run, result.contract)
        traces = ", ".join(f"<code>{esc(t)}</code>" for t in view.trace_ids)
        out.append(f'<section id="{anchor}" class="run"><h3>Run <code>{esc(run_id)}</code></h3>')
        out.append(f"<p>Traces {traces}. Fails {rules}.</p>")
        out.append(f"<figure>{run_figure(view, anchor)}</figure>")
        out += _differences(view)
        out.append("</section>")
    return out


def _legend() -> str:
    items = []
    for mark in MARKS:
        items.append(
            f'<li class="node mark-{mark}"><svg width="26" height="16" aria-hidden="true">'
            f'<rect x="1" y="1" width="24" height="14" rx="3"/></svg><b>{esc(MARK_LABELS[mark])}</b>: '
            f"{esc(_MARK_HELP[mark])}</li>"
        )
    items.append(
        '<li><svg width="26" height="16" aria-hidden="true"><path class="flow" d="M1,8 H25"/></svg>'
        "<b>data flow</b>: an argument's value came from that call's result</li>"
    )
    return '<ul class="legend">' + "".join(items) + "</ul>"


def _differences(view: RunView) -> list[str]:
    """The figure's marks and flows as text (greyscale, screen readers, copy-paste)."""
    nodes = view.tree.node_map()
    items: list[str] = []
    for mark in MARKS:
        marked = [n for n in view.tree.nodes if mark in n.marks]
        if marked:
            names = ", ".join(
                f"<code>{esc(n.step)}</code>"
                + (f" (span <code>{esc(n.span_id)}</code>)" if n.span_id else "")
                for n in marked
            )
            items.append(f"<li><b>{esc(MARK_LABELS[mark])}</b>: {names}</li>")
    for node in view.tree.nodes:
        for arg, kind in node.flagged_args:
            items.append(
                f"<li><b>{esc(kind.upper())} ARGUMENT</b> <code>{esc(arg)}</code>"
                f" of <code>{esc(node.step)}</code>"
                f" (span <code>{esc(node.span_id)}</code>): no tool result supplied it</li>"
            )
    for flow in view.flows:
        items.append(
            f"<li>data flow: <code>{esc(nodes[flow.source].step)}</code>"
            f" → <code>{esc(nodes[flow.consumer].step)}</code>"
            f" ({esc(', '.join(flow.args))})</li>"
        )
    for d in view.dangling:
        items.append(
            f"<li><b>DANGLING SOURCE</b>: argument <code>{esc(d.arg)}</code>"
            f" of <code>{esc(nodes[d.consumer].step)}</code>"
            f" names source span <code>{esc(d.source_span_id)}</code>"
            f" ({esc(d.reason.replace('_', ' '))})</li>"
        )
    if view.route is None:
        items.append("<li>The contract approves no route family, so no route is drawn beside the run.</li>")
    return ['<ul class="differences">', *items, "</ul>"]
