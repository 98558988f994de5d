"""``audit --report-html``: the provenance audit as a page, with each failing run drawn.

The verdict, the argument totals and every finding as a table (the text audit's facts, in its
order), then — for the failing runs the CLI kept (``witnesses.SmallestRuns``: smallest run ids) —
the run's causal graph with argument data flow, blocked calls, duplicated side effects and
assumed/invented arguments marked, and that run's findings. There is no route to compare with: an
audit has no contract. Pure; same runs → same bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from ... import semconv
from ..audit import AuditReport, Finding
from ..model import Run
from .page import differences, finish, head, legend
from .run_view import run_view
from .svg import run_figure
from .templating import escape_text as esc

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
    calls = sum(len(r.calls) for r in report.runs)
    findings = [f for r in report.runs for f in r.findings] + list(report.findings)
    drawn = sorted(r.run_id for r in report.runs if r.run_id in runs and r.verdict.value == "fail")
    anchors = {run_id: f"run-{i}" for i, run_id in enumerate(drawn, 1)}
    out = [
        *head(f"Provenance audit: {verdict}", AUDIT_HTML_FORMAT),
        f'<h1>Provenance audit: <span class="decision {_css(verdict)}">{_HEADLINE[verdict]}</span></h1>',
        '<dl class="facts">',
        f"<dt>Runs</dt><dd>{len(report.runs)} run(s), {calls} tool call(s)</dd>",
        "<dt>Arguments</dt><dd>"
        + ", ".join(f"{n} {esc(k)}" for k, n in totals.items() if n or k != "unknown")
        + "</dd>",
        f"<dt>Findings</dt><dd>{len(findings)}</dd>",
        "<dt>Input</dt><dd>"
        + ("complete" if complete_input else "incomplete: cut-off files cannot prove a pass")
        + "</dd>",
        "</dl>",
        "<h2>Findings</h2>",
        *_findings_table(findings, anchors),
    ]
    if drawn:
        out += ["<h2>Failing runs</h2>", legend()]
    for run_id in drawn:
        view = run_view(runs[run_id], None)
        anchor = anchors[run_id]
        out.append(f'<section id="{anchor}" class="run"><h3>Run <code>{esc(run_id)}</code></h3>')
        out.append(f"<figure>{run_figure(view, anchor, 'Run')}</figure>")
        out += differences(view, route_note=False)
        out.append("</section>")
    return finish(out, AUDIT_HTML_FORMAT)


def _css(verdict: str) -> str:
    return "insufficient_data" if verdict == "insufficient_evidence" else verdict


def _findings_table(findings: list[Finding], anchors: Mapping[str, str]) -> list[str]:
    if not findings:
        return ["<p>No findings.</p>"]
    out = [
        "<table><thead><tr><th>verdict</th><th>code</th><th>run</th><th>tool</th><th>span</th>"
        "<th>message</th></tr></thead><tbody>"
    ]
    for f in findings:
        run = f"<code>{esc(f.run_id)}</code>"
        if f.run_id in anchors:
            run += f' · <a href="#{anchors[f.run_id]}">graph</a>'
        out.append(
            f"<tr><td>{esc(f.verdict.value)}</td><td><code>{esc(f.code)}</code></td><td>{run}</td>"
            f"<td><code>{esc(f.tool or '')}</code></td><td><code>{esc(f.span_id or '')}</code></td>"
            f"<td>{esc(f.message)}</td></tr>"
        )
    out.append("</tbody></table>")
    return out
