"""Case 4 — evaluator throughput, memory and parallelism of ``otel-provenance gate check``.

Data: OTLP JSON Lines files of 100,000 and 1,000,000 spans from :mod:`.tracegen` (runs of 10–50
spans, 8 runs in flight, 512 spans per line), and the same sizes of short runs (6–40 spans) written
by an independent writer, the official OpenTelemetry SDK and its OTLP JSON file exporter
(:mod:`.sdkgen`, with the bench extra). Contract, for each: mined with ``otel-provenance mine`` from
500 approved runs of the same agent (another seed), then every pending route family approved with
``routes approve`` — the flow a user follows. The release then passes nearly every rule on nearly
every run: a handful of runs take a route no approved family is similar enough to, so the gate
exits 2 with a few findings — the steady state of a CI gate, not a worst case of findings.

Every measurement runs in a fresh process (:mod:`.worker`), so its peak RSS is its own:

- throughput: ``gate check`` wall time vs parsing the same file line by line with the fastest JSON
  parser installed (target ≤ 3×), interleaved;
- memory: peak RSS of ``gate check`` on the 1M-span file vs the 100k-span file (target ≤ 1.2×);
- parallel: ``gate check --jobs 2`` vs one ``gate check``, both timed from the outside including
  process start (target ≤ 0.75×, #46).
"""

from __future__ import annotations

import io
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from otel_provenance.cli import run as cli_run

from . import tracegen
from .harness import Result, ratio_result

CASE = "4 gate"
RELEASE = "v1"


def _worker(*args: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.worker", *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(__file__).resolve().parent.parent,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark worker {args[0]} failed: {proc.stderr[-2000:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    if result["exit"] not in (0, 2, 3):
        raise RuntimeError(f"worker {args[0]} exited {result['exit']}: {result.get('stderr', '')}")
    return result


def _cli(*argv: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    code = cli_run(list(argv), out, err)
    if code != 0:
        raise RuntimeError(f"otel-provenance {' '.join(argv[:2])} exited {code}: {err.getvalue()}")
    return out.getvalue()


def make_contract(workdir: Path, approved_runs: int, writer=tracegen, name: str = "contract") -> Path:
    """Mine a contract from approved runs and approve every route family, as a user would."""
    approved = workdir / f"{name}-approved.jsonl"
    writer.write_jsonl(approved, seed=7, release=RELEASE, runs=approved_runs)
    contract = workdir / f"{name}.yaml"
    listing = _cli("mine", "--approved", str(approved), "-o", str(contract))
    for line in listing.splitlines():
        family, _, status = line.partition("  ")
        if family.startswith("route-") and status.lstrip().startswith("pending"):
            _cli("routes", "approve", "--contract", str(contract), family)
    return contract


def _sdk_writer(log):
    """The short runs' writer, or None (with a note) without the official exporter (the bench extra)."""
    try:
        import opentelemetry.exporter.otlp.json.file  # noqa: F401

        from . import sdkgen
    except ImportError:
        log("  short runs skipped: pip install -e '.[bench]' (the official OTLP JSON file exporter)")
        return None
    return sdkgen


def run(quick: bool, workdir: Path, log=print) -> list[Result]:
    small, large = (1_000, 4_000) if quick else (100_000, 1_000_000)
    results: list[Result] = []
    flavours = [("", tracegen, "spans")]  # today's long runs (10–50 spans), then short ones (6–40)
    sdk = _sdk_writer(log)
    if sdk is not None:
        flavours.append((" short runs", sdk, "short"))
    for label, writer, name in flavours:
        stem = "contract" if name == "spans" else name
        contract = make_contract(workdir, 40 if quick else 500, writer, stem)
        files = {}
        for n, seed in ((small, 1), (large, 2)):
            files[n] = workdir / f"{name}-{n}.jsonl"
            t0 = time.perf_counter()
            written = writer.write_jsonl(files[n], seed=seed, release=RELEASE, spans=n)
            size_mb = files[n].stat().st_size / 1e6
            log(f"  generated {written} spans ({size_mb:.0f} MB) in {time.perf_counter() - t0:.1f} s")
        results.extend(_throughput(label, contract, files, small, large, quick, log))
        if name == "spans":
            results.append(_parallel(contract, files[small], workdir, samples=1 if quick else 5, log=log))
    return results


def _throughput(label: str, contract: Path, files: dict[int, Path], small: int, large: int, quick: bool, log):
    """``gate check`` vs the orjson parse at both sizes, interleaved; peak RSS large vs small."""
    results: list[Result] = []
    samples = {small: 1 if quick else 3, large: 1}
    gate: dict[int, list[dict]] = {small: [], large: []}
    for n in (small, large):
        parse: list[dict] = []
        for i in range(samples[n]):
            pair = [("gate", gate[n]), ("parse", parse)]
            for what, out in pair if i % 2 == 0 else reversed(pair):
                args = (str(contract), RELEASE, str(files[n])) if what == "gate" else (str(files[n]),)
                out.append(_worker(what, *args))
            log(
                f"  {n} spans{label}: gate {gate[n][-1]['seconds']:.1f} s (exit {gate[n][-1]['exit']}), "
                f"parse {parse[-1]['seconds']:.1f} s"
            )
        results.append(
            ratio_result(
                f"{CASE} check {_size(n)} spans{label}",
                statistics.median(r["seconds"] for r in gate[n]),
                statistics.median(r["seconds"] for r in parse),
                max_ratio=3,
                note=f"vs {parse[0]['parser']} line by line; exit {gate[n][0]['exit']}; "
                f"{samples[n]} sample(s)",
                extra={
                    "spans": n,
                    "samples": samples[n],
                    "exit": gate[n][0]["exit"],
                    "baseline_parser": parse[0]["parser"],
                },
            )
        )
    rss = {n: max(r["maxrss_kb"] for r in gate[n]) * 1024 for n in (small, large)}
    results.append(
        ratio_result(
            f"{CASE} peak RSS {_size(large)} vs {_size(small)}{label}",
            rss[large],
            rss[small],
            max_ratio=1.2,
            unit="B",
            note="fresh process each; VmHWM",
        )
    )
    return results


def _parallel(contract: Path, path: Path, workdir: Path, samples: int, log) -> Result:
    single: list[float] = []
    sharded: list[float] = []
    for i in range(samples):
        order = (_one_process, _two_shards) if i % 2 == 0 else (_two_shards, _one_process)
        for fn in order:
            seconds = fn(contract, path, workdir)
            (single if fn is _one_process else sharded).append(seconds)
        log(f"  parallel: 2 shards {sharded[-1]:.1f} s, one process {single[-1]:.1f} s")
    sub, base = statistics.median(sharded), statistics.median(single)
    return Result(
        case=f"{CASE} --jobs 2 vs 1 ({path.stem.split('-')[-1]} spans)",
        unit="s",
        median=sub,
        baseline=base,
        ratio=sub / base,
        target="<= 0.75x",
        passed=sub <= 0.75 * base,
        note="gate check --jobs 2 (shards merged in memory); wall time incl. process start",
        extra={"samples": samples},
    )


def _one_process(contract: Path, path: Path, workdir: Path) -> float:
    t0 = time.perf_counter()
    _worker("gate", str(contract), RELEASE, str(path))
    return time.perf_counter() - t0


def _two_shards(contract: Path, path: Path, workdir: Path) -> float:
    """``gate check --jobs 2``: two shard processes, merged in memory (same result as one process)."""
    t0 = time.perf_counter()
    result = _worker("gate", str(contract), RELEASE, str(path), "--jobs", "2")
    if result["exit"] not in (0, 2):
        raise RuntimeError(f"gate check --jobs 2 failed: {result}")
    return time.perf_counter() - t0


def _size(n: int) -> str:
    return f"{n // 1_000_000}M" if n >= 1_000_000 and n % 1_000_000 == 0 else f"{n // 1000}k"
