"""Ctrl-C ``gate check --jobs 2`` N times (default 50, #37) at random moments of its life — starting
up, loading, reading, judging, writing its reports; each must stop within a few seconds with exit 1,
leave no worker process and no report file. The test suite does it at fixed moments
(``tests/cli/test_cli_interrupt.py``); this is the longer check.

    .venv/bin/python scripts/interrupt_check.py [N [SEED]]

First the command runs to its end three times to learn how long it takes; each interrupt then
comes at a moment drawn uniformly from its whole run (seeded: the seed is printed, and given again
draws the same moments). A run that ends before its signal is drawn again and counted apart. A
signal in the first tenth of a second, while Python starts and imports the command's first module,
ends as any Python program does then (death by SIGINT: silent in the first milliseconds, then
with a KeyboardInterrupt traceback): counted apart, and held to the same bounds — stopped in time,
no process, no report. So is one in Python's own teardown, after the command put its reports in
place and printed its verdict: death by SIGINT, nothing more said, the reports whole.
"""

from __future__ import annotations

import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "cli")]

from test_cli_interrupt import CLI, interrupt_once, make_input, sigint_as_a_terminal_gives_it  # noqa: E402


def _whole_run(contract: Path, traces: Path, out_dir: Path) -> float:
    """Seconds one uninterrupted ``gate check --jobs 2`` takes, reports written."""
    out_dir.mkdir(exist_ok=True)
    argv = [*CLI, "gate", "check", "--contract", contract, "--release", "v1", "--jobs", "2", traces]
    argv += ["--report-html", out_dir / "gate.html", "--report-json", out_dir / "gate.json"]
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, check=False)
    took = time.monotonic() - started
    if done.returncode not in (0, 2, 3):
        raise SystemExit(f"the uninterrupted run failed ({done.returncode}): {done.stderr.decode()}")
    return took


def main() -> int:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else time.time_ns() % 1_000_000
    draw = random.Random(seed)
    sigint_as_a_terminal_gives_it()
    with tempfile.TemporaryDirectory() as tmp:
        contract, traces = make_input(Path(tmp))
        length = min(_whole_run(contract, traces, Path(tmp) / f"whole{i}") for i in range(3))
        print(f"seed {seed}; an uninterrupted run takes {length:.1f} s; moments drawn from 0 to that")
        sent = finished = early = late = 0
        while sent < repeats:
            delay = draw.uniform(0.0, length)
            started = time.monotonic()
            out_dir = Path(tmp) / f"out{sent}-{finished}"
            outcome = interrupt_once(contract, traces, out_dir, group=sent % 2 == 0, delay=delay)
            if outcome == "finished":
                finished += 1
                continue
            sent += 1
            early += outcome == "before the command"
            late += outcome == "at its exit"
            took = time.monotonic() - started
            print(f"{sent}/{repeats} ok: Ctrl-C at {delay:.2f} s ({took:.1f} s in all)", flush=True)
        print(f"{repeats} interrupts, each stopped in time, nothing left; {finished} run(s) ended first")
        print(f"{early} came before the command's first line (Python's own ending)")
        print(f"{late} came in Python's teardown, reports in place, verdict printed (death by SIGINT)")
        print(f"the other {repeats - early - late} said 'interrupted' and exited 1")
    return 0


if __name__ == "__main__":
    sys.exit(main())
