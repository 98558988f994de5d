"""`otel-provenance fingerprint TRACES…` — one line per run: run id, fingerprint, step count."""

from __future__ import annotations

import argparse
import json

from ..offline.fingerprint import canonical_form, fingerprint
from ._common import EXIT_INSUFFICIENT, EXIT_PASS, IO
from ._traces import TraceInput, add_format, add_run_attribute


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "fingerprint",
        help="canonical form and fingerprint of each run",
        description="Print run id, fingerprint and step count for each run.",
    )
    p.add_argument("traces", nargs="+", metavar="TRACES", help="OTLP JSON(L) or protobuf files, gzip ok")
    p.add_argument("--release", help="only runs whose service.version is RELEASE")
    p.add_argument("--canonical", action="store_true", help="also print each run's canonical form")
    add_run_attribute(p)
    add_format(p)
    p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace, io: IO) -> int:
    source = TraceInput(io, args.traces, args.release, run_attribute=args.run_attribute)
    rows = []
    for run in source.runs():
        form = canonical_form(run)
        rows.append(
            {
                "run_id": run.run_id,
                "fingerprint": fingerprint(run),
                "steps": len(run.spans),
                "canonical": form if args.canonical else None,
            }
        )
    rows.sort(key=lambda r: r["run_id"])
    source.warn_incomplete()
    if args.format == "json":
        for row in rows:
            if row["canonical"] is None:
                del row["canonical"]
        io.out(json.dumps({"complete_input": source.report.complete, "runs": rows}, indent=2, sort_keys=True))
    else:
        for row in rows:
            io.out(f"{row['run_id']}  {row['fingerprint']}  {row['steps']} steps")
            if row["canonical"] is not None:
                for line in row["canonical"].splitlines():
                    io.out("    " + line)
    if not rows:
        io.warn("no runs found (exit 3)")
        return EXIT_INSUFFICIENT
    return source.cap_for_incomplete(EXIT_PASS)
