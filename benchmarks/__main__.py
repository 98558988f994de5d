"""``python -m benchmarks [--quick] [--json FILE] [--compare OLD.json] [--cases 1 2 …] [--keep-data DIR]``.

Runs the cases in order, prints progress to stderr and the table to stdout, and writes the table as
JSON with ``--json``. Generated data goes to a temporary directory that is removed afterwards
(``--keep-data DIR`` writes it to DIR instead, for profiling by hand). Exit status: 0 when the
harness ran — failed targets are results, not errors — and 1 if a case could not be measured.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

from .harness import Result, print_comparison, print_table, write_json

CASES = {
    "1": "tool-call overhead",
    "2": "stripping cost",
    "3": "remembering results",
    "4": "evaluator throughput, memory, parallel",
    "5": "mine / fingerprint scaling",
    "6": "gate check on a 2-worker Dask LocalCluster (informational)",
    "7": "the guard: a run under its contract",
    "8": "the guard on realistic work: legitimate tasks run, injected writes blocked",
    "9": "fingerprint memory of a 50,000-deep span chain against file size",
    "10": "AgentDojo v1.2.2 ground truth replayed through the guard (counts; its own venv)",
}
#: Cases run only when named with --cases: 10 makes a venv of its own with AgentDojo's model SDKs.
OPT_IN = frozenset({"10"})


def _log(message: str) -> None:
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


def run_case(case: str, quick: bool, workdir: Path) -> list[Result]:
    if case == "1":
        from . import case_tool_call

        return case_tool_call.run(quick)
    if case == "2":
        from . import case_stripping

        return case_stripping.run(quick)
    if case == "3":
        from . import case_ledger

        return case_ledger.run(quick)
    if case == "4":
        from . import case_gate

        return case_gate.run(quick, workdir, log=_log)
    if case == "7":
        from . import case_guard

        return case_guard.run(quick, workdir)
    if case == "6":
        from . import case_dask

        return case_dask.run(quick, workdir, log=_log)
    if case == "8":
        from . import case_guard_suite

        return case_guard_suite.run(quick, log=_log)
    if case == "9":
        from . import case_depth

        return case_depth.run(quick, workdir)
    if case == "10":
        from . import case_agentdojo

        return case_agentdojo.run(quick, workdir, log=_log)
    from . import case_scaling

    return case_scaling.run(quick, log=_log)


def _compile_package() -> None:
    """Measured subprocesses run this package from compiled bytecode, as an install from a wheel does
    (pip compiles every module when it installs). A checkout installed in editable mode under
    ``PYTHONDONTWRITEBYTECODE`` — how CI and these machines run it — would otherwise compile some 200
    modules in every measured process (~0.1 s of each ``gate check``): a cost of the checkout, not of
    the tool. The bytecode goes where Python looks for it, the package's ``__pycache__`` folders
    (``compileall`` writes them whatever that variable says; git ignores them). Not
    ``PYTHONPYCACHEPREFIX``: under it every module — the standard library's too — is looked for there
    alone, and the rest would be compiled in every process instead. A package that cannot be written
    to (installed read-only) is measured as it is."""
    import otel_provenance

    package = str(Path(otel_provenance.__file__).resolve().parent)
    subprocess.run([sys.executable, "-m", "compileall", "-q", package], check=False, capture_output=True)


def _commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=False,
            cwd=Path(__file__).resolve().parent,
        )
        return out.stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description="Benchmarks with targets.")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, seconds: proves the harness runs")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    parser.add_argument(
        "--cases",
        nargs="+",
        choices=sorted(CASES, key=int),
        default=[case for case in sorted(CASES, key=int) if case not in OPT_IN],
        metavar="N",
        help="cases to run (1-10; default all but 10, which runs only when named)",
    )
    parser.add_argument("--keep-data", metavar="DIR", help="write generated data here and keep it")
    parser.add_argument("--compare", metavar="FILE", help="show ratio changes against an earlier --json file")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    results: list[Result] = []
    failed: list[str] = []
    with tempfile.TemporaryDirectory(prefix="otel-provenance-bench-") as tmp:
        workdir = Path(args.keep_data) if args.keep_data else Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        _compile_package()
        for case in args.cases:
            _log(f"case {case}: {CASES[case]} ...")
            t0 = time.perf_counter()
            try:
                results.extend(run_case(case, args.quick, workdir))
            except Exception:
                failed.append(case)
                _log(f"case {case} could not be measured:\n{traceback.format_exc()}")
            _log(f"case {case}: {time.perf_counter() - t0:.1f} s")
    elapsed = time.perf_counter() - started
    print_table(results, sys.stdout)
    verdicts = [r.verdict for r in results]
    sys.stdout.write(
        f"\n{verdicts.count('pass')} pass, {verdicts.count('FAIL')} fail, {verdicts.count('info')} info; "
        f"total {elapsed:.0f} s\n"
    )
    if args.compare:
        print_comparison(results, args.compare, sys.stdout)
    if args.json:
        meta = {
            "commit": _commit(),
            "quick": args.quick,
            "cases": args.cases,
            "python": platform.python_version(),
            "machine": f"{platform.machine()}, {os.cpu_count()} cpu",
            "seconds": round(elapsed, 1),
            "unmeasured_cases": failed,
            "when_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        write_json(results, args.json, meta)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
