"""``diff A B --report-html``: run B drawn beside run A, and the argument-kind changes per tool call.

The figure is the gate report's (``run_view_against``): B's causal graph with the steps A has and B
lacks as placeholders marked ONLY IN A, B's steps A has no place for as ONLY IN B, duplicated side effects and
blocked calls marked, argument data flow drawn; A's graph beside it. The table below is the text
diff's (``offline.diff``): optimally paired calls and which arguments changed kind. This module
chooses what is shown; ``templates/diff.html.j2`` is its markup. Pure; same runs → same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ..diff import Call, RunDiff
from ..model import Run
from .page import MARK_HELP, differences, legend, render_page
from .run_view import MARK_EXTRA, MARK_LABELS, MARK_MISSING, run_view_against
from .svg import figure

DIFF_HTML_FORMAT: Final = "otel-provenance/diff-report-html/v1"
# Two runs, neither of them the norm: a step is only in one of them, not "missing" or "extra".
DIFF_LABELS: Final = {**MARK_LABELS, MARK_MISSING: "ONLY IN A", MARK_EXTRA: "ONLY IN B"}
_DIFF_HELP: Final = {
    **MARK_HELP,
    MARK_MISSING: "a step of run A that run B lacks (in A, and a placeholder in B)",
    MARK_EXTRA: "a step of run B with no place in run A",
}


@dataclass(frozen=True, slots=True)
class CallRow:
    """A row of the table: a pair of calls (changed or the same), or a call only one run made."""

    label: str
    tool: str
    span_a: str
    span_b: str
    changes: str


def render_diff_html(run_a: Run, run_b: Run, diff: RunDiff, source_a: str = "A", source_b: str = "B") -> str:
    view = run_view_against(run_b, run_a)
    changed = sum(1 for p in diff.pairs if p.changed)
    rows = []
    for pair in diff.pairs:
        changes = [f"{c.arg}: {c.before} → {c.after}" for c in pair.changes]
        if pair.status_changed:
            changes.append(f"status: {pair.before.status} → {pair.after.status}")
        label = "changed" if pair.changed else "same"
        a, b = pair.before, pair.after
        rows.append(CallRow(label, a.tool, a.span_id, b.span_id, "; ".join(changes)))
    for call in diff.disappeared:
        rows.append(CallRow("only in A", call.tool, call.span_id, "", _kinds(call)))
    for call in diff.appeared:
        rows.append(CallRow("only in B", call.tool, "", call.span_id, _kinds(call)))
    return render_page(
        "diff.html.j2",
        title=f"Run diff · {diff.run_a} → {diff.run_b}",
        page_format=DIFF_HTML_FORMAT,
        diff=diff,
        source_a=source_a,
        source_b=source_b,
        changed=changed,
        unchanged=len(diff.pairs) - changed,
        figure=figure(view, "run-b", "Run B", DIFF_LABELS),
        differences=differences(view, labels=DIFF_LABELS),
        legend=legend(DIFF_LABELS, _DIFF_HELP),
        rows=rows,
    )


def _kinds(call: Call) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(call.kinds.items()))
