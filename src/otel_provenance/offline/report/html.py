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

from ..aggregate import RunFinding
from ..gate import GateResult, RuleVerdict
from ..model import Run
from .page import differences, finish, head, legend
from .run_view import run_view
from .svg import run_figure
from .templating import escape_text as esc
from .text import HEADLINES
from .witnesses import witness_run_ids

HTML_FORMAT: Final = "otel-provenance/gate-report-html/v1"
MAX_WITNESSES: Final = 20  # witness lines per finding message; the JSON report has all of them


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
        *head(title, HTML_FORMAT),
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
    return finish(out, HTML_FORMAT)


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
        legend(),
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
        out += differences(view)
        out.append("</section>")
    return out
