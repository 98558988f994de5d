"""`otel-provenance diff A B` — what changed between two runs, by argument kind per tool call.

Exit 0 when both runs were read and compared (whatever the differences), 3 when there is nothing to
compare (a side holds no run, or neither run has a tool call) or an input is incomplete, 1 on error
or when a file holds several runs and none was chosen. "Nothing to compare" is said on stdout.
"""

from __future__ import annotations

import argparse

from ..offline.diff import diff_runs
from ..offline.model import Run
from ..offline.report.formats import DIFF, DiffReport, ReportContext, render
from ._common import EXIT_INSUFFICIENT, EXIT_PASS, IO, UsageError
from ._reports import add_report_arguments, emit
from ._traces import TraceInput


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
    add_report_arguments(p, DIFF)
    p.set_defaults(handler=_handle)


def _pick(io: IO, path: str, run_id: str | None, flag: str) -> tuple[Run | None, TraceInput]:
    source = TraceInput(io, argparse.Namespace(), [path])
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
    complete = source_a.report.complete and source_b.report.complete
    if run_a is None or run_b is None:
        report = DiffReport(run_a, run_b, None, args.a, args.b, complete, nothing="; ".join(empty))
    else:
        result = diff_runs(run_a, run_b)
        nothing = None
        if not result.pairs and not result.appeared and not result.disappeared:
            nothing = "neither run has a tool call (gen_ai.operation.name=execute_tool)"
        report = DiffReport(run_a, run_b, result, args.a, args.b, complete, nothing)
    if report.nothing is not None:  # said plainly on stdout; no page is drawn of nothing
        io.stdout.write(render(DIFF, args.format, report, ReportContext()))
        return EXIT_INSUFFICIENT
    emit(args, io, DIFF, report, ReportContext(complete=complete))
    return source_b.cap_for_incomplete(source_a.cap_for_incomplete(EXIT_PASS))
