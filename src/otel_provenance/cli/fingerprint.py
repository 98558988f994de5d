"""`otel-provenance fingerprint TRACES…` — one line per run: run id, fingerprint, step count."""

from __future__ import annotations

import argparse
import json

from ..offline.engines.fold import fingerprint_fold
from ._common import EXIT_INSUFFICIENT, EXIT_PASS, IO
from ._sources import add_source_arguments
from ._traces import TraceInput, add_format, add_run_attribute, add_traces_and_release


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "fingerprint",
        help="canonical form and fingerprint of each run",
        description="Print run id, fingerprint and step count for each run.",
    )
    add_traces_and_release(p)
    p.add_argument("--canonical", action="store_true", help="also print each run's canonical form")
    add_source_arguments(p, "dask", "pool")
    add_run_attribute(p)
    add_format(p)
    p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace, io: IO) -> int:
    source = TraceInput(io, args, args.traces, args.release)
    rows = [
        {"run_id": run_id, "fingerprint": print_, "steps": steps, "canonical": form}
        for run_id, print_, steps, form in source.fold(fingerprint_fold(args.canonical))
    ]
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
