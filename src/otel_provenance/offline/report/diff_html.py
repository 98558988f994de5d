"""``diff A B --report-html``: run B drawn beside run A, and the argument-kind changes per tool call.

The figure is the gate report's (``run_view_against``): B's causal graph with the steps A has and B
lacks as missing placeholders, B's steps A has no place for as extra, duplicated side effects and
blocked calls marked, argument data flow drawn; A's graph beside it. The table below is the text
diff's (``offline.diff``): optimally paired calls and which arguments changed kind. Pure; same
runs → same bytes.
"""

from __future__ import annotations

from typing import Final

from ..diff import Call, RunDiff
from ..model import Run
from .page import differences, finish, head, legend
from .run_view import run_view_against
from .svg import run_figure
from .templating import escape_text as esc

DIFF_HTML_FORMAT: Final = "otel-provenance/diff-report-html/v1"


def render_diff_html(run_a: Run, run_b: Run, diff: RunDiff, source_a: str = "A", source_b: str = "B") -> str:
    view = run_view_against(run_b, run_a)
    changed = sum(1 for p in diff.pairs if p.changed)
    unchanged = len(diff.pairs) - changed
    out = [
        *head(f"Run diff · {diff.run_a} → {diff.run_b}", DIFF_HTML_FORMAT),
        "<h1>Run diff: B beside A</h1>",
        '<dl class="facts">',
        f"<dt>A</dt><dd><code>{esc(source_a)}</code> · run <code>{esc(diff.run_a)}</code></dd>",
        f"<dt>B</dt><dd><code>{esc(source_b)}</code> · run <code>{esc(diff.run_b)}</code></dd>",
        f"<dt>Tool calls</dt><dd>{changed} changed, {len(diff.appeared)} appeared, "
        f"{len(diff.disappeared)} disappeared, {unchanged} unchanged</dd>",
        "</dl>",
        "<h2>Route</h2>",
        legend(),
        f'<section id="run-b" class="run"><figure>{run_figure(view, "run-b", "Run B")}</figure>',
        *differences(view),
        "</section>",
        "<h2>Tool calls by argument kind</h2>",
        "<table><thead><tr><th></th><th>tool</th><th>span in A</th><th>span in B</th>"
        "<th>changes</th></tr></thead><tbody>",
    ]
    for pair in diff.pairs:
        changes = [f"{c.arg}: {c.before} → {c.after}" for c in pair.changes]
        if pair.status_changed:
            changes.append(f"status: {pair.before.status} → {pair.after.status}")
        out.append(
            f"<tr><td>{'changed' if pair.changed else 'same'}</td>"
            f"<td><code>{esc(pair.before.tool)}</code></td>"
            f"<td><code>{esc(pair.before.span_id)}</code></td><td><code>{esc(pair.after.span_id)}</code></td>"
            f"<td>{esc('; '.join(changes))}</td></tr>"
        )
    for label, calls in (("only in A", diff.disappeared), ("only in B", diff.appeared)):
        for call in calls:
            a, b = (call.span_id, "") if label == "only in A" else ("", call.span_id)
            out.append(
                f"<tr><td>{label}</td><td><code>{esc(call.tool)}</code></td><td><code>{esc(a)}</code></td>"
                f"<td><code>{esc(b)}</code></td><td>{esc(_kinds(call))}</td></tr>"
            )
    out.append("</tbody></table>")
    return finish(out, DIFF_HTML_FORMAT)


def _kinds(call: Call) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(call.kinds.items()))
