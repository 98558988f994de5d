"""`otel-provenance diff A B` — what changed between two runs, by argument kind per tool call.

Exit 0 when both runs were read and compared (whatever the differences), 3 when there is nothing to
compare (a side holds no run, or neither run has a tool call) or an input is incomplete, 1 on error
or when a file holds several runs and none was chosen. "Nothing to compare" is said on stdout.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..offline.diff import Call, RunDiff, diff_runs
from ..offline.model import Run
from ..offline.report.diff_html import render_diff_html
from ._common import EXIT_INSUFFICIENT, EXIT_PASS, IO, UsageError
from ._traces import TraceInput, add_format
from ._writefile import write_text


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "diff",
        help="compare two traces by argument kind per tool call",
        description="Pair the tool calls of run A and run B optimally and show which "
        "arguments changed kind, and which calls appeared or disappeared.",
    )
    p.add_argument("a", metavar="A", help="trace file of the first run")
    p.add_argument("b", metavar="B", help="trace file of the second run")
    p.add_argument("--run-a", metavar="ID", help="run id to use from A when it holds several runs")
    p.add_argument("--run-b", metavar="ID", help="run id to use from B when it holds several runs")
    p.add_argument("--report-html", metavar="FILE", help="write a self-contained HTML page: B drawn beside A")
    add_format(p)
    p.set_defaults(handler=_handle)


def _pick(io: IO, path: str, run_id: str | None, flag: str) -> tuple[Run | None, TraceInput]:
    source = TraceInput(io, [path])
    runs = [r for r in source.runs() if run_id is None or r.run_id == run_id]
    source.warn_incomplete()
    if len(runs) > 1:
        shown = ", ".join(r.run_id for r in runs[:5]) + (", …" if len(runs) > 5 else "")
        raise UsageError(f"{path} holds {len(runs)} runs ({shown}); choose one with {flag}")
    if not runs and run_id is not None:  # a run id the user named that is not there: a usage error
        raise UsageError(f"{path}: no run with id {run_id} ({flag})")
    if not runs:
        return None, source
    return runs[0], source


def _handle(args: argparse.Namespace, io: IO) -> int:
    run_a, source_a = _pick(io, args.a, args.run_a, "--run-a")
    run_b, source_b = _pick(io, args.b, args.run_b, "--run-b")
    empty = [
        f"{side} ({path}) holds no run"
        for side, path, r in (("A", args.a, run_a), ("B", args.b, run_b))
        if r is None
    ]
    if run_a is None or run_b is None:
        return _nothing(io, args, "; ".join(empty))
    result = diff_runs(run_a, run_b)
    if not result.pairs and not result.appeared and not result.disappeared:
        return _nothing(io, args, "neither run has a tool call (gen_ai.operation.name=execute_tool)", result)
    if args.report_html:
        write_text(args.report_html, render_diff_html(run_a, run_b, result, args.a, args.b))
    if args.format == "json":
        payload = diff_json(result)
        payload["complete_input"] = source_a.report.complete and source_b.report.complete
        io.out(json.dumps(payload, indent=2, sort_keys=True))
    else:
        io.out(f"A: {args.a} run {result.run_a}")
        io.out(f"B: {args.b} run {result.run_b}")
        for line in render_text(result):
            io.out(line)
    return source_b.cap_for_incomplete(source_a.cap_for_incomplete(EXIT_PASS))


def _nothing(io: IO, args: argparse.Namespace, why: str, result: RunDiff | None = None) -> int:
    """Say plainly that nothing was compared, and exit 3 (never a clean 0)."""
    if args.format == "json":
        payload = diff_json(result) if result is not None else {}
        payload["nothing_to_compare"] = why
        io.out(json.dumps(payload, indent=2, sort_keys=True))
    else:
        io.out(f"nothing to compare: {why}")
    return EXIT_INSUFFICIENT


def render_text(result: RunDiff) -> list[str]:
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
