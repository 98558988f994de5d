"""Ctrl-C ``gate check --jobs 2`` mid-work N times (default 50, #37); each must stop within a few
seconds with exit 1, leave no worker process and no report file. The test suite does it 3 times
(``tests/cli/test_cli_interrupt.py``); this is the longer check.

    .venv/bin/python scripts/interrupt_check.py [N]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "cli")]

from test_cli_interrupt import interrupt_once, make_input  # noqa: E402


def main() -> int:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    with tempfile.TemporaryDirectory() as tmp:
        contract, traces = make_input(Path(tmp))
        for i in range(repeats):
            started = time.monotonic()
            interrupt_once(contract, traces, Path(tmp) / f"out{i}", group=i % 2 == 0)
            print(f"{i + 1}/{repeats} ok ({time.monotonic() - started:.1f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
