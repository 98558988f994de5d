"""`otel-provenance audit TRACES…` — offline provenance check of every tool call.

Exit 0 pass · 2 fail (a blocked call, a dangling source, a budget exceeded) · 3 insufficient data
(no runs, no tool calls, uninstrumented tool spans, unknown kinds, or incomplete input) · 1 error.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from .. import semconv
from ..offline.audit import AuditReport, Budgets, Finding, RunAudit, ToolBudget, Verdict, aggregate
from ..offline.engines.fold import audit_fold
from ..offline.report.audit_html import render_audit_html
from ..offline.report.witnesses import MAX_RUNS
from ._common import EXIT_FAIL, EXIT_INSUFFICIENT, EXIT_PASS, IO, UsageError
from ._sources import add_source_arguments
from ._traces import TraceInput, add_format, add_release_attribute, add_run_attribute
from ._writefile import write_text

_EXIT = {Verdict.PASS: EXIT_PASS, Verdict.FAIL: EXIT_FAIL, Verdict.INSUFFICIENT: EXIT_INSUFFICIENT}
_LABEL = {Verdict.PASS: "PASS", Verdict.FAIL: "FAIL", Verdict.INSUFFICIENT: "INSUFFICIENT"}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "audit",
        help="offline provenance check of tool-call arguments",
        description="Report each tool call's arguments by kind, blocked calls, dangling sources and "
        "budget overruns. Exit 0 pass, 2 fail, 3 insufficient data, 1 error.",
    )
    p.add_argument(
        "traces",
        nargs="+",
        metavar="TRACES",
        help="OTLP JSON(L) or protobuf files, gzip ok (paths, globs or fsspec URLs)",
    )
    p.add_argument("--release", help="only runs whose service.version is RELEASE")
    add_release_attribute(p)
    p.add_argument("--max-assumed", type=_count, metavar="N", help="assumed arguments allowed per call")
    p.add_argument("--max-invented", type=_count, metavar="N", help="invented arguments allowed per call")
    p.add_argument(
        "--budget",
        action="append",
        default=[],
        metavar="TOOL=N",
        help="assumed arguments allowed per call of TOOL (repeatable; overrides --max-assumed)",
    )
    p.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="ARG",
        help="argument name that may be assumed or invented without counting (repeatable)",
    )
    p.add_argument(
        "--report-html", metavar="FILE", help="write a self-contained HTML page drawing failing runs"
    )
    add_source_arguments(p, "dask", "pool")
    add_run_attribute(p)
    add_format(p)
    p.set_defaults(handler=_handle)


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def budgets_from_args(args: argparse.Namespace) -> Budgets:
    allow = frozenset(args.allow)
    default = ToolBudget(args.max_assumed, args.max_invented, allow)
    tools: dict[str, ToolBudget] = {}
    for spec in args.budget:
        tool, sep, number = spec.rpartition("=")
        if not sep or not tool:
            raise UsageError(f"--budget expects TOOL=N, got {spec!r}")
        try:
            limit = _count(number)
        except argparse.ArgumentTypeError as exc:
            raise UsageError(f"--budget {spec!r}: {exc}") from None
        tools[tool] = ToolBudget(limit, args.max_invented, allow)
    return Budgets(default, tools)


def _handle(args: argparse.Namespace, io: IO) -> int:
    budgets = budgets_from_args(args)
    source = TraceInput(io, args, args.traces, args.release)
    folded = source.fold(audit_fold(budgets, MAX_RUNS if args.report_html else 0))
    report = aggregate(folded.audits)
    source.warn_incomplete()
    code = source.cap_for_incomplete(_EXIT[report.verdict])
    if args.report_html:
        drawn = {run.run_id: run for run in folded.failing}
        write_text(args.report_html, render_audit_html(report, drawn, source.report.complete))
    if args.format == "json":
        doc = report_json(report, source.report.complete)
        doc["exit_code"] = code  # differs from the verdict's only when incomplete input forbids a pass
        io.out(json.dumps(doc, indent=2, sort_keys=True))
    else:
        lines = render_text(report, can_pass=code != EXIT_INSUFFICIENT)
        if code != _EXIT[report.verdict]:  # the last line is the verdict; incomplete input changed it
            lines[-1] = "INSUFFICIENT (the input is incomplete, so this cannot pass)"
        for line in lines:
            io.out(line)
    return code


def _source_text(arg) -> str:
    parts = [arg.source_tool or "?"]
    if arg.source_field:
        parts.append(arg.source_field)
    text = " ".join(parts)
    if arg.source_span_id:
        text += f" (span {arg.source_span_id})"
    return text


def _finding_text(f: Finding) -> str:
    where = f" [trace {f.trace_id} span {f.span_id}]" if f.span_id else ""
    return f"{_LABEL[f.verdict]} {f.code}: {f.message}{where}"


def render_text(report: AuditReport, can_pass: bool = True) -> list[str]:
    """The text report. With ``can_pass`` False (the audit exits 3) no line says PASS: a run without
    findings is shown as ``no finding``, since the audit as a whole proves nothing."""
    lines: list[str] = []
    totals = dict.fromkeys((*semconv.ARG_KINDS, "unknown"), 0)
    review: list[str] = []
    for run in report.runs:
        lines.extend(_run_text(run, totals, review, can_pass))
    calls = sum(len(r.calls) for r in report.runs)
    lines.append(
        f"summary: {len(report.runs)} run(s), {calls} tool call(s); arguments: "
        + ", ".join(f"{n} {k}" for k, n in totals.items() if n or k != "unknown")
    )
    if review:
        lines.append("review (invented arguments): " + ", ".join(review))
    for f in report.findings:
        lines.append(_finding_text(f))
    lines.append(_LABEL[report.verdict])
    return lines


def _run_text(run: RunAudit, totals: dict[str, int], review: list[str], can_pass: bool = True) -> list[str]:
    release = f" release {run.release}" if run.release else ""
    label = _LABEL[run.verdict] if can_pass or run.verdict is not Verdict.PASS else "no finding"
    lines = [f"run {run.run_id}{release}: {label}"]
    if not run.calls:
        lines.append("  (no tool calls)")
    for call in run.calls:
        status = call.status or "absent"
        flag = "  BLOCKED" if call.status == semconv.TOOL_STATUS_BLOCKED else ""
        lines.append(f"  {call.tool}  span {call.span_id}  status {status}{flag}")
        if not call.instrumented:
            lines.append("    (no provenance attributes)")
        elif not call.args:
            lines.append("    (no arguments)")
        for arg in call.args:
            totals[arg.kind] += 1
            if arg.kind == semconv.KIND_OBSERVED:
                lines.append(f"    {arg.name}: observed from {_source_text(arg)}")
            elif arg.kind == semconv.KIND_INVENTED:
                lines.append(f"    {arg.name}: invented (review)")
                review.append(f"{call.tool}.{arg.name} (run {run.run_id} span {call.span_id})")
            else:
                lines.append(f"    {arg.name}: {arg.kind}")
    for f in run.findings:
        lines.append("  " + _finding_text(f))
    return lines


def _finding_json(f: Finding) -> dict[str, Any]:
    return {
        "code": f.code,
        "verdict": f.verdict.value,
        "run_id": f.run_id,
        "trace_id": f.trace_id,
        "span_id": f.span_id,
        "tool": f.tool,
        "args": list(f.args),
        "message": f.message,
    }


def report_json(report: AuditReport, complete_input: bool = True) -> dict[str, Any]:
    return {
        "verdict": report.verdict.value,
        "complete_input": complete_input,
        "findings": [_finding_json(f) for f in report.findings],
        "runs": [
            {
                "run_id": run.run_id,
                "release": run.release,
                "verdict": run.verdict.value,
                "findings": [_finding_json(f) for f in run.findings],
                "calls": [
                    {
                        "tool": c.tool,
                        "span_id": c.span_id,
                        "trace_id": c.trace_id,
                        "status": c.status,
                        "instrumented": c.instrumented,
                        "args": [
                            {
                                "name": a.name,
                                "kind": a.kind,
                                "source_tool": a.source_tool,
                                "source_field": a.source_field,
                                "source_span_id": a.source_span_id,
                                "projection": a.projection,
                            }
                            for a in c.args
                        ],
                    }
                    for c in run.calls
                ],
            }
            for run in report.runs
        ],
    }
