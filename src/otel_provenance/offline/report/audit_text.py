"""``audit`` as text (the terminal) and as JSON (``--format json``, ``--report-json``).

Pure functions of an ``AuditReport`` and its context (was the input complete; the exit code): the
same audit gives the same bytes. With the exit code 3 (insufficient data) no line says PASS — a run
without findings reads ``no finding`` — and the last line says why the audit cannot pass.

A run with a finding is listed call by call, argument by argument; a run without one is one line with
its counts (``verbose``: every run call by call), and the arguments to review are grouped by tool and
argument: 25 clean runs printed 378 lines before (#49).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from ... import semconv
from ..audit import AuditReport, Finding, RunAudit
from ..outcome import Outcome
from .text import printable

_LABEL = {Outcome.PASS: "PASS", Outcome.FAIL: "FAIL", Outcome.INSUFFICIENT: "INSUFFICIENT"}


def render_audit_text(
    report: AuditReport, can_pass: bool = True, capped: bool = False, verbose: bool = False
) -> str:
    """The text report; ``capped``: the input was incomplete, so the verdict reads INSUFFICIENT;
    ``verbose``: runs without a finding call by call too."""
    lines = audit_lines(report, can_pass, verbose)
    if capped:  # the last line is the verdict; incomplete input changed it
        lines[-1] = "INSUFFICIENT (the input is incomplete, so this cannot pass)"
    return "".join(printable(line) + "\n" for line in lines)


def render_audit_json(report: AuditReport, complete_input: bool = True, exit_code: int | None = None) -> str:
    doc = report_json(report, complete_input)
    if exit_code is not None:
        doc["exit_code"] = exit_code  # differs from the verdict's only when incomplete input forbids a pass
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


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


def audit_lines(report: AuditReport, can_pass: bool = True, verbose: bool = False) -> list[str]:
    """The text report. With ``can_pass`` False (the audit exits 3) no line says PASS: a run without
    findings is shown as ``no finding``, since the audit as a whole proves nothing."""
    lines: list[str] = []
    totals = dict.fromkeys((*semconv.ARG_KINDS, "unknown"), 0)
    review: list[str] = []
    short = 0
    for run in report.runs:
        block = _run_text(run, totals, review, can_pass)
        if verbose or run.findings or len(block) == 1:
            lines.extend(block)
        else:  # a run without a finding: one line, its calls counted
            kinds = Counter(arg.kind for call in run.calls for arg in call.args)
            counted = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))
            lines.append(f"{block[0]} ({len(run.calls)} call(s){'; ' + counted if counted else ''})")
            short += 1
    if short:
        lines.append(f"({short} run(s) without a finding in one line each; --verbose lists their calls)")
    calls = sum(len(r.calls) for r in report.runs)
    lines.append(
        f"summary: {len(report.runs)} run(s), {calls} tool call(s); arguments: "
        + ", ".join(f"{n} {k}" for k, n in totals.items() if n or k != "unknown")
    )
    if review:
        lines.append("review (invented arguments): " + _grouped(review, verbose))
    for f in report.findings:
        lines.append(_finding_text(f))
    lines.append(_LABEL[report.verdict])
    return lines


def _grouped(review: list[tuple[str, str]], verbose: bool) -> str:
    """``tool.arg (run … span …)`` each (``verbose``), else per tool and argument: how many calls, and
    the first as an example."""
    if verbose:
        return ", ".join(f"{name} ({where})" for name, where in review)
    first: dict[str, str] = {}
    counts: Counter[str] = Counter()
    for name, where in review:
        first.setdefault(name, where)
        counts[name] += 1
    return ", ".join(
        f"{name} ({where})" if counts[name] == 1 else f"{name} in {counts[name]} calls (e.g. {where})"
        for name, where in first.items()
    )


def _run_text(
    run: RunAudit, totals: dict[str, int], review: list[tuple[str, str]], can_pass: bool = True
) -> list[str]:
    release = f" release {run.release}" if run.release else ""
    label = _LABEL[run.verdict] if can_pass or run.verdict is not Outcome.PASS else "no finding"
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
            elif arg.kind == semconv.KIND_UNTRUSTED:
                lines.append(f"    {arg.name}: untrusted, from {_source_text(arg)}")
            elif arg.kind == semconv.KIND_INVENTED:
                lines.append(f"    {arg.name}: invented (review)")
                review.append((f"{call.tool}.{arg.name}", f"run {run.run_id} span {call.span_id}"))
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


def _all_findings(report: AuditReport) -> list[Finding]:
    return [*report.findings, *(f for run in report.runs for f in run.findings)]


def report_json(report: AuditReport, complete_input: bool = True) -> dict[str, Any]:
    return {
        "verdict": report.verdict.value,
        "complete_input": complete_input,
        # every finding, the audit-wide ones first, then each run's (also under its run): the list
        # that explains the verdict, so a failing or insufficient verdict never has it empty
        "findings": [_finding_json(f) for f in _all_findings(report)],
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
