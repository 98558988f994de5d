"""`otel-provenance audit TRACES…` — offline provenance check of every tool call.

Exit 0 pass · 2 fail (a blocked call, a dangling source, a budget exceeded) · 3 insufficient data
(no runs, no tool calls, uninstrumented tool spans, unknown kinds, or incomplete input) · 1 error.
"""

from __future__ import annotations

import argparse

from ..offline.audit import Budgets, ToolBudget, aggregate
from ..offline.engines.fold import audit_fold
from ..offline.report.evaluations import audit_evaluations
from ..offline.report.formats import AUDIT, ReportContext
from ..offline.report.witnesses import MAX_RUNS
from ._common import IO, UsageError
from ._export import add_export_arguments, export, prepare
from ._reports import add_report_arguments, emit, wants
from ._sources import add_source_arguments
from ._traces import TraceInput, add_run_attribute, add_traces_and_release


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "audit",
        help="offline provenance check of tool-call arguments",
        description="Report each tool call's arguments by kind, blocked calls, dangling sources and "
        "budget overruns. Exit 0 pass, 2 fail, 3 insufficient data, 1 error.",
    )
    add_traces_and_release(p)
    p.add_argument("--max-assumed", type=_count, metavar="N", help="assumed arguments allowed per call")
    p.add_argument("--max-invented", type=_count, metavar="N", help="invented arguments allowed per call")
    p.add_argument(
        "--max-untrusted",
        type=_count,
        metavar="N",
        help="untrusted arguments (found only in results of tools declared untrusted) allowed per call",
    )
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
        help="argument name that may be assumed without counting against the budget (repeatable); "
        "it exempts assumed arguments only: an invented one always counts",
    )
    p.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="list every run call by call (default: runs without a finding in one line each)",
    )
    add_source_arguments(p, "dask", "pool")
    add_run_attribute(p)
    add_report_arguments(p, AUDIT)
    add_export_arguments(p)
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
    default = ToolBudget(args.max_assumed, args.max_invented, allow, args.max_untrusted)
    tools: dict[str, ToolBudget] = {}
    for spec in args.budget:
        tool, sep, number = spec.rpartition("=")
        if not sep or not tool:
            raise UsageError(f"--budget expects TOOL=N, got {spec!r}")
        try:
            limit = _count(number)
        except argparse.ArgumentTypeError as exc:
            raise UsageError(f"--budget {spec!r}: {exc}") from None
        tools[tool] = ToolBudget(limit, args.max_invented, allow, args.max_untrusted)
    return Budgets(default, tools)


def _handle(args: argparse.Namespace, io: IO) -> int:
    budgets = budgets_from_args(args)
    targets = prepare(args, "audit")
    source = TraceInput(io, args, args.traces, args.release)
    folded = source.fold(audit_fold(budgets, MAX_RUNS if wants(args, "html", AUDIT) else 0))
    report = aggregate(folded.audits)
    source.warn_incomplete()
    code = source.cap_for_incomplete(report.verdict.exit_code)
    drawn = {run.run_id: run for run in folded.failing}
    context = ReportContext(drawn, complete=source.report.complete, exit_code=code, verbose=args.verbose)
    emit(args, io, AUDIT, report, context)
    return export(targets, io, audit_evaluations(report, args.release), code) if targets else code
