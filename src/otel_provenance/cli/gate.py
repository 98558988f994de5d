"""`otel-provenance gate check|merge`: evaluate a release against a contract and decide.

``gate check --contract C --release R TRACES…`` exits 0 pass · 2 fail · 3 insufficient data ·
1 error. With ``--shard I/N --partial OUT`` it evaluates only its shard of the runs and writes a
partial result (exit 0 once written: a partial is not a verdict); ``gate merge --contract C
PARTIAL…`` combines partials into exactly the reports and exit code one unsharded check gives. A
partial records its shard: a merge with a shard missing or given twice is exit 1, never a decision.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from ..offline.aggregate import Aggregate, run_places
from ..offline.contracts.dsl import load_contract
from ..offline.contracts.model import Contract
from ..offline.engines.fold import gate_fold
from ..offline.engines.source import FileSource
from ..offline.evaluate import evaluate_safely
from ..offline.gate import GateResult, Shard, decide
from ..offline.model import Run
from ..offline.outcome import Outcome
from ..offline.report.evaluations import RunRef, gate_evaluations
from ..offline.report.formats import GATE, ReportContext
from ..offline.report.witnesses import WitnessKeeper, witness_run_ids
from ._common import EXIT_PASS, IO, UsageError
from ._export import Target, add_export_arguments, export, prepare, wants_export, with_run_refs
from ._reports import add_report_arguments, emit, wants
from ._sources import add_source_arguments, chosen_backend, read_limits
from ._traces import TraceInput, add_release_attribute, add_run_attribute
from ._writefile import write_text

_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z")


_RERUN = "give one partial of every shard 1/N … N/N (gate check --shard I/N --partial OUT)"

_GATE_EXIT_CODES = """exit codes:
  0  pass: every rule within its threshold
  2  fail: a rule exceeded its failing-run threshold (the findings list the traces)
  3  insufficient data: too few runs, evidence missing, or a failing-run rate not yet
     decided at its confidence (the report says how many more runs could decide; never a pass)
  1  error: usage, unreadable input, invalid contract, internal error"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("gate", help="evaluate a release against a trajectory contract")
    actions = p.add_subparsers(dest="gate_action", metavar="ACTION", parser_class=type(p))
    check = actions.add_parser(
        "check",
        help="evaluate a release and decide (exit 0/2/3/1)",
        description=(
            "Evaluate every run of release R (its spans' service.version) in TRACES, or\n"
            "read from SigNoz with --signoz, against the contract's rules; decide the release."
        ),
        epilog=_GATE_EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument("--contract", required=True, metavar="C", help="the contract YAML file")
    check.add_argument(
        "--release", required=True, metavar="R", help="service.version of the release under test"
    )
    add_release_attribute(check)
    check.add_argument(
        "traces",
        nargs="*",
        metavar="TRACES",
        help="OTLP files (JSON Lines, JSON or protobuf; gzip is fine): paths, globs or fsspec URLs",
    )
    add_source_arguments(check, "signoz", "dask", "pool")
    add_run_attribute(check)
    check.add_argument("--shard", metavar="I/N", help="evaluate only shard I of N (needs --partial)")
    check.add_argument(
        "--partial", metavar="OUT", help="write a partial result for `gate merge` instead of deciding"
    )
    _common_options(check)
    add_export_arguments(check)
    check.set_defaults(handler=_check)
    merge = actions.add_parser(
        "merge",
        help="combine partial results of sharded checks and decide",
        description="Combine the partial results of `gate check --shard I/N --partial OUT`; decide.",
        epilog=_GATE_EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    merge.add_argument("--contract", required=True, metavar="C", help="the contract YAML file")
    merge.add_argument("partials", nargs="+", metavar="PARTIAL", help="files written by gate check --partial")
    _common_options(merge, completed_at=False)
    add_export_arguments(merge)
    merge.set_defaults(handler=_merge)
    p.set_defaults(handler=_missing_action)


def _common_options(p: argparse.ArgumentParser, completed_at: bool = True) -> None:
    if completed_at:
        p.add_argument(
            "--completed-at",
            metavar="UTC",
            help="completion time to record, e.g. 2026-01-31T12:00:00Z (the clock is never read)",
        )
    add_report_arguments(p, GATE)


def _missing_action(args: argparse.Namespace, io: IO) -> int:
    raise UsageError("gate: choose an action: check or merge")


def _check(args: argparse.Namespace, io: IO) -> int:
    if args.completed_at is not None and not _TIMESTAMP.fullmatch(args.completed_at):
        raise UsageError("gate check: --completed-at must be a UTC time like 2026-01-31T12:00:00Z")
    if (args.shard is None) != (args.partial is None):
        raise UsageError("gate check: --shard and --partial go together")
    shard = None
    if args.shard is not None:
        try:
            shard = Shard.parse(args.shard)
        except ValueError as exc:
            raise UsageError(f"gate check: {exc}") from None
    if shard is not None and wants_export(args):
        raise UsageError(
            "gate check: a --partial is not a verdict: export the findings from `gate merge` "
            "(each partial records where its runs live)"
        )
    targets = prepare(args, "gate check")
    contract = _load(args.contract, io)
    try:
        source = TraceInput(io, args, args.traces, keep=shard.owns if shard is not None else None)
    except UsageError as exc:
        raise UsageError(f"gate check: {exc}") from None
    # In this process, the keeper holds the few runs the HTML report draws; a pool of processes or a
    # Dask cluster evaluates elsewhere, so those runs are read again afterwards.
    in_process = chosen_backend(args) in ("files", "signoz")
    keeper = WitnessKeeper() if wants(args, "html", GATE) and args.partial is None and in_process else None
    fold = gate_fold(
        contract,
        args.release,
        args.completed_at,
        shard,
        keeper or evaluate_safely,
        release_attribute=args.release_attribute,
    )
    refs: dict[str, RunRef] = {}
    if targets or shard is not None:  # a partial keeps where its runs live, for gate merge's export
        aggregate, refs = source.fold(with_run_refs(fold, args.release, args.release_attribute))
    else:
        aggregate = source.fold(fold)
    source.warn_incomplete()
    aggregate = aggregate.with_incomplete_inputs(str(item) for item in source.report.incomplete)
    if shard is not None:
        places = {run: (ref.trace_id, ref.span_id) for run, ref in refs.items() if ref.trace_id}
        write_text(args.partial, aggregate.for_shard(shard.index, shard.count).to_json(places))
        io.out(
            f"PARTIAL: shard {args.shard} of release {args.release}: {aggregate.evaluated} run(s) evaluated; "
            f"no decision until `otel-provenance gate merge` combines every shard."
        )
        return EXIT_PASS
    if keeper is not None:
        drawn: dict[str, Run] | None = keeper.runs
    elif wants(args, "html", GATE) and args.partial is None:
        drawn = _witness_runs(args, aggregate, contract)
    else:
        drawn = None
    return _decide_and_report(aggregate, contract, args, io, drawn, targets, refs)


def _witness_runs(args: argparse.Namespace, aggregate: Aggregate, contract: Contract) -> dict[str, Run]:
    """Read again just the runs the HTML report draws (when they were evaluated elsewhere)."""
    wanted = set(witness_run_ids(decide(aggregate, contract)))
    source = FileSource(
        args.traces,
        keep=wanted.__contains__,
        release_attribute=args.release_attribute,
        run_attribute=args.run_attribute,
        limits=read_limits(),
    )
    return {run.run_id: run for run in source.runs()}


def _load(path: str, io: IO) -> Contract:
    """The contract, its notes (e.g. "no seal") said once on stderr."""
    contract = load_contract(path)
    for note in contract.notes:
        io.warn(f"{path}: {note}")
    return contract


def _merge(args: argparse.Namespace, io: IO) -> int:
    targets = prepare(args, "gate merge")
    contract = _load(args.contract, io)
    partials = []
    refs: dict[str, RunRef] = {}
    for path in args.partials:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"gate merge: cannot read {path} ({type(exc).__name__})") from None
        partial = Aggregate.from_json(text, path)
        if not partial.shard_count:
            raise UsageError(f"gate merge: {path} is not a shard's partial result: {_RERUN}")
        partials.append(partial)
        if targets:
            refs.update((run, RunRef(*place)) for run, place in run_places(text, path).items())
    merged = partials[0]
    try:
        for partial in partials[1:]:
            merged = merged.merge(partial)
    except ValueError as exc:
        raise UsageError(f"gate merge: {exc}") from None
    if merged.missing_shards:  # a missing shard may hold the failing run: never decide without it
        n = merged.shard_count
        raise UsageError(
            f"gate merge: incomplete set of partial results: missing shard(s) "
            f"{', '.join(f'{i}/{n}' for i in merged.missing_shards)} "
            f"(given: {', '.join(f'{i}/{n}' for i in merged.shards)}); {_RERUN}"
        )
    if merged.contract_digest != contract.digest:
        raise UsageError(
            f"gate merge: the partials were produced with a different contract than {args.contract}"
        )
    return _decide_and_report(merged, contract, args, io, None, targets, refs)


def _decide_and_report(
    aggregate: Aggregate,
    contract: Contract,
    args: argparse.Namespace,
    io: IO,
    runs: dict[str, Run] | None = None,
    targets: list[Target] | None = None,
    refs: dict[str, RunRef] | None = None,
) -> int:
    """Decide, write the requested reports, print one to stdout, then export the findings if asked
    (``targets``; ``refs`` places each run's verdict). ``runs`` holds the spans the HTML report draws
    (``gate merge`` has none: its HTML report names those runs without drawing them)."""
    result: GateResult = decide(aggregate, contract)
    emit(args, io, GATE, result, ReportContext(runs=runs, contract_path=Path(args.contract).as_posix()))
    code = Outcome.of(result.decision).exit_code
    return export(targets, io, gate_evaluations(result, refs or {}), code) if targets else code
