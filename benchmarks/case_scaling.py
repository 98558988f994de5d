"""Case 5 — scaling of ``mine`` and ``fingerprint`` with the number of runs (1k, 10k, 100k).

The runs come from :mod:`.tracegen` as in-memory ``Run`` objects (10–20 spans each, built directly,
untimed), so what is timed is the offline core itself — ``fingerprint(run)`` for every run, and
``mine_contract(runs)`` — not the reader, whose scaling case 4 covers (100k vs 1M spans).

Linear means doubling the runs at most doubles the time; the target allows 2.2× per doubling.
Between two sizes ``n1 < n2`` with times ``t1, t2`` the per-doubling factor is
``(t2 / t1) ** (1 / log2(n2 / n1))``.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Callable

from otel_provenance.offline.fingerprint import fingerprint
from otel_provenance.offline.mine import mine_contract

from . import tracegen
from .harness import Result, median_time

CASE = "5 scaling"
SPAN_RANGE = (10, 20)


def per_doubling(n1: int, t1: float, n2: int, t2: float) -> float:
    return (t2 / t1) ** (1 / math.log2(n2 / n1))


def run(quick: bool, log=print) -> list[Result]:
    sizes = (100, 200, 400) if quick else (1_000, 10_000, 100_000)
    repeats = {sizes[0]: 3, sizes[1]: 3, sizes[2]: 1 if quick else 2}
    times: dict[str, dict[int, float]] = {"fingerprint": {}, "mine": {}}
    for n in sizes:
        runs = tracegen.model_runs(seed=5, release="v1", count=n, span_range=SPAN_RANGE)
        work: dict[str, Callable[[], object]] = {
            "fingerprint": lambda runs=runs: [fingerprint(r) for r in runs],
            "mine": lambda runs=runs: mine_contract(runs, "agent"),
        }
        samples: dict[str, list[float]] = {"fingerprint": [], "mine": []}
        for i in range(repeats[n]):  # interleave the two commands
            for name in ("fingerprint", "mine") if i % 2 == 0 else ("mine", "fingerprint"):
                samples[name].append(median_time(work[name], 1))
        for name in samples:
            times[name][n] = statistics.median(samples[name])
        log(f"  {n} runs: fingerprint {times['fingerprint'][n]:.2f} s, mine {times['mine'][n]:.2f} s")
        del runs, work
    results = []
    for name in ("mine", "fingerprint"):
        for n1, n2 in itertools.pairwise(sizes):
            t1, t2 = times[name][n1], times[name][n2]
            factor = per_doubling(n1, t1, n2, t2)
            results.append(
                Result(
                    case=f"{CASE} {name} {_k(n1)}->{_k(n2)} runs",
                    unit="s",
                    median=t2,
                    baseline=t1,
                    ratio=factor,
                    target="<= 2.2x per doubling",
                    passed=factor <= 2.2,
                    note=f"t2/t1 = {t2 / t1:.2f} for {n2 // n1}x runs; ratio is per doubling",
                    extra={"runs_small": n1, "runs_large": n2, "t2_over_t1": t2 / t1},
                )
            )
    return results


def _k(n: int) -> str:
    return f"{n // 1000}k" if n >= 1000 else str(n)
