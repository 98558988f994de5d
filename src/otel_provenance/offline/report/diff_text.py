"""``diff`` as text (the terminal) and as JSON (``--format json``, ``--report-json``).

Pure functions of a :class:`~.formats.DiffReport`: the two runs' calls paired, and — when there was
nothing to compare — why, said plainly (a diff of nothing is never a clean result).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..diff import Call, RunDiff
from .text import printable

if TYPE_CHECKING:
    from .formats import DiffReport


def render_diff_text(report: DiffReport) -> str:
    if report.nothing is not None:
        return printable(f"nothing to compare: {report.nothing}") + "\n"
    assert report.diff is not None
    lines = [f"A: {report.source_a} run {report.diff.run_a}", f"B: {report.source_b} run {report.diff.run_b}"]
    lines += diff_lines(report.diff)
    return "".join(printable(line) + "\n" for line in lines)


def render_diff_json(report: DiffReport) -> str:
    payload = diff_json(report.diff) if report.diff is not None else {}
    if report.nothing is not None:
        payload["nothing_to_compare"] = report.nothing
    else:
        payload["complete_input"] = report.complete
    return json.dumps(payload, indent=2, sort_keys=True) + "\n"


def diff_lines(result: RunDiff) -> list[str]:
    lines: list[str] = []
    unchanged = 0
    for pair in result.pairs:
        if not pair.changed:
            unchanged += 1
            lines.append(f"= {pair.before.tool}  span {pair.before.span_id} → {pair.after.span_id}")
            continue
        lines.append(f"~ {pair.before.tool}  span {pair.before.span_id} → {pair.after.span_id}")
        for change in pair.changes:
            lines.append(f"    {change.arg}: {change.before} → {change.after}")
        if pair.status_changed:
            lines.append(f"    status: {pair.before.status} → {pair.after.status}")
        if pair.budget_changed:
            lines.append(f"    budget: {pair.before.budget} → {pair.after.budget}")
    for call in result.disappeared:
        lines.append(f"- {call.tool}  span {call.span_id}  (only in A){_kinds(call)}")
    for call in result.appeared:
        lines.append(f"+ {call.tool}  span {call.span_id}  (only in B){_kinds(call)}")
    changed = sum(1 for p in result.pairs if p.changed)
    lines.append(
        f"{changed} changed, {len(result.appeared)} appeared, {len(result.disappeared)} disappeared, "
        f"{unchanged} unchanged"
    )
    return lines


def _kinds(call: Call) -> str:
    return ("  " + ", ".join(f"{k}={v}" for k, v in sorted(call.kinds.items()))) if call.kinds else ""


def _call_json(call: Call) -> dict[str, Any]:
    return {
        "tool": call.tool,
        "span_id": call.span_id,
        "trace_id": call.trace_id,
        "status": call.status,
        "args": dict(sorted(call.kinds.items())),
        "over_budget": list(call.over),
    }


def diff_json(result: RunDiff) -> dict[str, Any]:
    return {
        "run_a": result.run_a,
        "run_b": result.run_b,
        "identical": result.identical,
        "pairs": [
            {
                "a": _call_json(p.before),
                "b": _call_json(p.after),
                "changed": p.changed,
                "changes": [{"arg": c.arg, "before": c.before, "after": c.after} for c in p.changes],
                "status": {"before": p.before.status, "after": p.after.status} if p.status_changed else None,
            }
            for p in result.pairs
        ],
        "appeared": [_call_json(c) for c in result.appeared],
        "disappeared": [_call_json(c) for c in result.disappeared],
    }
