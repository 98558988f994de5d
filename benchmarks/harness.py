"""The measuring harness: repeat, take medians, compare with a baseline measured in the same run.

Absolute timings vary between machines and runs, so every target is a ratio of two medians taken
side by side, interleaved (A, B, B, A, …) so that a noisy neighbour or a warming cache hurts both
equally.
"""

from __future__ import annotations

import gc
import json
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TextIO

CPU_CLOCK: Callable[[], float] = time.process_time
"""CPU time of this process. For subjects that do all their work on the calling thread (cases 1
and 3) it leaves out the time the process waited for a core, which on a shared machine is most of
the noise; a process's CPU time still grows with cache and memory contention, so ratios stay
same-run comparisons."""


@dataclass(frozen=True, slots=True)
class Result:
    case: str
    unit: str
    median: float
    baseline: float
    ratio: float
    target: str
    passed: bool | None  # None: informational, no target
    note: str = ""
    extra: dict[str, float | str | int] = field(default_factory=dict)

    @property
    def verdict(self) -> str:
        return "info" if self.passed is None else "pass" if self.passed else "FAIL"


def median_time(fn: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def paired_medians(
    subject: Callable[[], object],
    baseline: Callable[[], object],
    repeat: int,
    *,
    setup: Callable[[], object] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[float, float]:
    """Medians of ``subject`` and ``baseline`` timed alternately ``repeat`` times each.

    ``setup`` (untimed) runs before every timed call, e.g. to give each sample a fresh run.
    Garbage collection is paused while timing, so one side does not pay for the other's garbage.
    ``clock``: wall time by default; :data:`CPU_CLOCK` for in-process, single-threaded subjects.
    """
    for fn in (subject, baseline):  # warm both
        if setup is not None:
            setup()
        fn()
    a: list[float] = []
    b: list[float] = []
    for i in range(repeat):
        order = ((subject, a), (baseline, b)) if i % 2 == 0 else ((baseline, b), (subject, a))
        for fn, out in order:
            if setup is not None:
                setup()
            gc.collect()
            gc.disable()
            try:
                t0 = clock()
                fn()
                out.append(clock() - t0)
            finally:
                gc.enable()
    return statistics.median(a), statistics.median(b)


def interleaved_medians(
    subjects: dict[str, Callable[[], object]],
    repeat: int,
    *,
    setup: Callable[[], object] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, float]:
    """Medians of several subjects timed in rotation ``repeat`` times each (A B C, B C A, C A B, …).

    Like :func:`paired_medians` for more than two sides: each round starts with a different
    subject, so a slow minute or a warming cache is spread over all of them alike.
    """
    names = list(subjects)
    for name in names:  # warm every side
        if setup is not None:
            setup()
        subjects[name]()
    samples: dict[str, list[float]] = {name: [] for name in names}
    for i in range(repeat):
        for name in names[i % len(names) :] + names[: i % len(names)]:
            if setup is not None:
                setup()
            gc.collect()
            gc.disable()
            try:
                t0 = clock()
                subjects[name]()
                samples[name].append(clock() - t0)
            finally:
                gc.enable()
    return {name: statistics.median(values) for name, values in samples.items()}


def ratio_result(
    case: str,
    subject_s: float,
    baseline_s: float,
    *,
    max_ratio: float | None,
    unit: str = "s",
    note: str = "",
    extra: dict[str, float | str | int] | None = None,
) -> Result:
    """``max_ratio`` None makes an informational row (no target, never a failure)."""
    ratio = subject_s / baseline_s if baseline_s > 0 else float("inf")
    target = "-" if max_ratio is None else f"<= {max_ratio:g}x"
    passed = None if max_ratio is None else ratio <= max_ratio
    return Result(case, unit, subject_s, baseline_s, ratio, target, passed, note, dict(extra or {}))


def speedup_result(
    case: str,
    subject_s: float,
    baseline_s: float,
    *,
    min_speedup: float,
    unit: str = "s",
    note: str = "",
    extra: dict[str, float | str | int] | None = None,
) -> Result:
    """For "at least N× faster than the baseline" targets; ``ratio`` is subject/baseline."""
    ratio = subject_s / baseline_s if baseline_s > 0 else float("inf")
    return Result(
        case,
        unit,
        subject_s,
        baseline_s,
        ratio,
        f">= {min_speedup:g}x faster",
        ratio * min_speedup <= 1,
        note,
        dict(extra or {}),
    )


def print_table(results: list[Result], out: TextIO) -> None:
    head = ("case", "median", "baseline", "ratio", "target", "result")
    rows = [
        (
            r.case,
            _fmt(r.median, r.unit),
            _fmt(r.baseline, r.unit),
            f"{r.ratio:.2f}",
            r.target,
            r.verdict + (f"  ({r.note})" if r.note else ""),
        )
        for r in results
    ]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows, strict=False)]
    line = "  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True))
    out.write(line.rstrip() + "\n" + "-" * len(line.rstrip()) + "\n")
    for row in rows:
        out.write("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() + "\n")


def write_json(results: list[Result], path: str, meta: dict[str, object]) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump({"meta": meta, "results": [asdict(r) for r in results]}, fh, indent=2, sort_keys=True)
        fh.write("\n")


#: A ratio that changed by more than this share since the baseline is printed as moved.
MOVED = 0.10


def print_comparison(results: list[Result], previous_path: str, out: TextIO) -> None:
    """Every ratio of this run that moved against an earlier ``--json`` file (by more than
    :data:`MOVED` either way, or a verdict that changed), then how many held — information, not a
    gate: the machines are noisy, a move is a prompt to look."""
    with open(previous_path, encoding="utf-8") as fh:
        previous = json.load(fh)
    before = {r["case"]: r for r in previous["results"]}
    commit = previous.get("meta", {}).get("commit", "?")
    out.write(
        f"\ncompared with {previous_path} (commit {commit}; moved: more than {MOVED:.0%} either way):\n"
    )
    held = 0
    for r in results:
        old = before.get(r.case)
        if old is None:
            out.write(f"  new   {r.case}: ratio {r.ratio:.2f} {r.verdict}\n")
            continue
        change = r.ratio / old["ratio"] if old["ratio"] else float("inf")
        was = "pass" if old["passed"] else "info" if old["passed"] is None else "FAIL"
        if abs(change - 1.0) <= MOVED and was == r.verdict:
            held += 1
            continue
        direction = "up" if change > 1.0 else "down"
        out.write(
            f"  {direction:<5} {r.case}: ratio {old['ratio']:.2f} -> {r.ratio:.2f} ({change:.2f}x), "
            f"{was} -> {r.verdict}\n"
        )
    gone = sorted(set(before) - {r.case for r in results})
    out.write(f"  {held} of {len(results)} ratios held")
    out.write(f"; not measured this run: {len(gone)}\n" if gone else "\n")


def _fmt(value: float, unit: str) -> str:
    if unit == "s":
        if value >= 1:
            return f"{value:.2f} s"
        if value >= 1e-3:
            return f"{value * 1e3:.2f} ms"
        return f"{value * 1e6:.1f} us"
    if unit == "B":
        return f"{value / 1e6:.1f} MB" if value >= 1e6 else f"{value:.0f} B"
    if unit == "x":
        return f"{value:.2f}x"
    return f"{value:.3g} {unit}"
