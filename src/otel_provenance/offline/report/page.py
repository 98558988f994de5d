"""The frame both HTML reports share (``gate check --report-html``, ``diff --report-html``): head
with the stylesheet and a Content-Security-Policy that forbids every fetch, the legend of marks,
and a run figure's facts as text."""

from __future__ import annotations

from typing import Final

from ... import __version__
from .run_view import MARK_LABELS, MARKS, RunView
from .templating import escape_text as esc

_CSP: Final = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
)
_MARK_HELP: Final = {
    "missing": "in the route beside it, not in this run",
    "duplicated": "a write tool called more than once",
    "blocked": "agent.tool.status = blocked: the call did not happen",
    "extra": "no place in the route beside it",
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


def head(title: str, page_format: str) -> list[str]:
    return [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta name="generator" content="otel-provenance {esc(__version__)} ({page_format})">',
        f"<title>{esc(title)}</title>",
        f"<style>{STYLE}</style>",
        "</head><body>",
    ]


def finish(out: list[str], page_format: str) -> str:
    out.append(f'<p class="note">otel-provenance {esc(__version__)} · {page_format}</p>')
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def legend() -> str:
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


def differences(view: RunView, route_note: bool = True) -> list[str]:
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
    if view.route is None and route_note:
        items.append("<li>The contract approves no route family, so no route is drawn beside the run.</li>")
    return ['<ul class="differences">', *items, "</ul>"]
