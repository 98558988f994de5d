"""`otel-provenance mine --approved TRACES… -o contract.yaml`: propose a contract from approved runs."""

from __future__ import annotations

import argparse
from collections import Counter

from ..offline.contracts.dsl import parse_contract
from ..offline.contracts.rational import parse_rational
from ..offline.mine import DEFAULT_MAX_INSUFFICIENT, DEFAULT_SIMILARITY, NO_TOOL_SPANS, mine_contract
from ._common import EXIT_ERROR, EXIT_PASS, IO, UsageError
from ._sources import add_source_arguments
from ._traces import TraceInput, add_release_attribute, add_run_attribute
from ._writefile import write_text
from .routes import print_families


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("mine", help="mine route families and a proposed contract from approved runs")
    p.add_argument(
        "--approved",
        nargs="+",
        required=True,
        metavar="TRACES",
        help="OTLP files of approved runs (paths, globs or fsspec URLs)",
    )
    p.add_argument("-o", "--output", metavar="FILE", help="write the contract here (default: stdout)")
    p.add_argument("--name", default="agent", help="contract name (default: agent)")
    p.add_argument("--release", help="only runs whose service.version is this")
    add_release_attribute(p)
    p.add_argument(
        "--similarity",
        default=str(DEFAULT_SIMILARITY),
        help="weighted-Jaccard threshold that merges near routes, exact (default: 4/5)",
    )
    p.add_argument(
        "--min-runs", type=int, default=1, help="runs a release needs before it can pass (default: 1)"
    )
    p.add_argument(
        "--write",
        action="append",
        default=[],
        metavar="STEP",
        help="this tool step is a write (repeatable): its per-run bound is reported as "
        "DUPLICATE_SIDE_EFFECT, for traces whose spans carry no agent.side_effect",
    )
    p.add_argument(
        "--max-insufficient",
        default=str(DEFAULT_MAX_INSUFFICIENT),
        help="fraction of runs per rule allowed to lack evidence (default: 1/20)",
    )
    add_source_arguments(p, "dask")
    add_run_attribute(p)
    p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace, io: IO) -> int:
    try:
        similarity = parse_rational(args.similarity)
        max_insufficient = parse_rational(args.max_insufficient)
    except ValueError as exc:
        raise UsageError(f"mine: {exc}") from None
    if not 0 <= similarity <= 1 or not 0 <= max_insufficient <= 1:
        raise UsageError("mine: --similarity and --max-insufficient must be between 0 and 1")
    if args.min_runs < 1:
        raise UsageError("mine: --min-runs must be at least 1")
    source = TraceInput(io, args, args.approved, args.release)
    runs = list(source.runs())
    source.warn_incomplete()
    if not source.report.complete:  # a contract mined from a gap would encode the gap as approved
        io.error("the approved traces are incomplete (see the warning above); no contract was written")
        return EXIT_ERROR
    if not runs:
        io.error(
            "no agent runs found in the approved traces"
            + (f" for release {args.release}{_found_releases(args, io)}" if args.release else "")
            + "; no contract was written"
        )
        return EXIT_ERROR
    if not any(span.is_tool for run in runs for span in run.spans):
        io.error(NO_TOOL_SPANS + "; no contract was written")
        return EXIT_ERROR
    disagreeing = [r for r in runs if r.attribution_for(args.release_attribute).disagrees]
    if args.release and disagreeing:  # a run that is not one release's cannot be its approved behaviour
        found = ", ".join(disagreeing[0].attribution_for(args.release_attribute).found)
        io.error(
            f"{len(disagreeing)} approved run(s) have agent spans that disagree about "
            f"{args.release_attribute} (e.g. run {disagreeing[0].run_id}: {found}); no contract was written"
        )
        return EXIT_ERROR
    notes: list[str] = []
    try:
        text = mine_contract(runs, args.name, similarity, args.min_runs, max_insufficient, args.write, notes)
    except ValueError as exc:
        raise UsageError(f"mine: {exc}") from None
    for note in notes:
        io.warn(note)
    if args.output:
        write_text(args.output, text)
        contract = parse_contract(text, args.output)
        io.out(f"Mined {len(runs)} approved run(s) into {args.output}: {len(contract.rules)} rule(s).")
        print_families(contract, io)
    else:
        io.stdout.write(text)
    return EXIT_PASS


def _found_releases(args: argparse.Namespace, io: IO) -> str:
    """`` (found: 1.0.0 (25 runs), 2.0.0 (5 runs))``: the releases the approved traces do hold, read
    again without ``--release`` (only on this error path), so a mistyped release is seen at once."""
    counts = Counter(
        run.attribution_for(args.release_attribute).label(args.release_attribute)
        for run in TraceInput(io, args, args.approved).runs()
    )
    if not counts:
        return ""
    found = ", ".join(f"{label} ({n} run{'s' if n != 1 else ''})" for label, n in sorted(counts.items()))
    return f" (found: {found})"
