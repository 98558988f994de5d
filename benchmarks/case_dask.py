"""Case 6 — ``gate check --dask-scheduler`` on a 2-worker ``LocalCluster`` vs one process (≤ 0.8×, #46).

Data: one OTLP JSON Lines file of 1,000,000 spans from :mod:`.tracegen` (seed 2, as case 4) and the
contract of case 4. Both sides run ``gate check`` in a fresh process (:mod:`.worker`), timed from
the outside including process start; the Dask side connects to a cluster of 2 worker processes
(1 thread each) started before timing, as a user's cluster would be. Both must print the same
report (checked). The engine runs the steps of ``--jobs N`` (#46): each worker indexes, converts and
folds its own partitions and sends back compact partials and the spans of runs that cross a
partition's edge; the client joins the indexes and folds those runs.

A task stream recorded on the scheduler gives the compute time of each stage (index, fold) per
partition: what ``docs/benchmarks.md`` projects the scaling with workers from. On a machine shared
with other jobs wall times say little (the kernel's autogroup gives a session one share of the
cores, however many processes it runs), so each sample also logs the CPU each process spent: the
command's, each worker's and the scheduler's (in this process). The command's CPU plus the busier
worker's is the critical path, which estimates the wall time on free cores.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

from . import tracegen
from .case_gate import RELEASE, _size, make_contract
from .harness import Result

CASE = "6 dask"
STAGES = ("plan", "index", "links", "spec", "fold")


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _gate(
    contract: Path, path: Path, report: Path, *extra: str, env: dict[str, str] | None = None
) -> tuple[float, float]:
    """Wall time and CPU time of ``gate check`` in a fresh process (``benchmarks.worker``), from the
    outside (the cluster's processes are alive, so only the command is counted among the children)."""
    cpu0 = _children_cpu()
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.worker", "gate", str(contract), RELEASE, str(path),
         "--report-json", str(report), *extra],
        capture_output=True, text=True, check=False, cwd=Path(__file__).resolve().parent.parent,
        env={**os.environ, **(env or {})},
    )  # fmt: skip
    seconds = time.perf_counter() - t0
    cpu = _children_cpu() - cpu0
    result = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 else {}
    if result.get("exit") not in (0, 2, 3):
        raise RuntimeError(f"gate check {' '.join(extra)} failed: {proc.stderr[-2000:]} {result}")
    return seconds, cpu


_worker_cpu = lambda: time.process_time()  # noqa: E731  (a lambda is sent by value: workers need not import benchmarks)


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def run(quick: bool, workdir: Path, log=print) -> list[Result]:
    try:
        import distributed
    except ImportError:
        log("  case 6 skipped: pip install 'otel-provenance[dask]'")
        return []
    n = 5_000 if quick else 1_000_000
    contract = make_contract(workdir, 40 if quick else 500)
    path = workdir / f"spans-{n}.jsonl"
    if not path.exists():
        tracegen.write_jsonl(path, seed=2, release=RELEASE, spans=n)
    partition = "512KiB" if quick else "64MiB"
    samples = 1  # at 1M spans one sample each, as case 4
    single: list[float] = []
    spread: list[float] = []
    stages: dict[str, list[float]] = defaultdict(list)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
        ) as cluster,
        distributed.Client(cluster, set_as_default=False) as client,
    ):
        address = ("--dask-scheduler", cluster.scheduler_address)
        env = {"DASK_OTEL_PROVENANCE__PARTITION_SIZE": partition}
        one, many = workdir / "one.json", workdir / "many.json"
        for i in range(samples):
            for what in ("single", "dask") if i % 2 == 0 else ("dask", "single"):
                if what == "single":
                    wall, cpu = _gate(contract, path, one)
                    single.append(wall)
                    log(f"  one process: {wall:.1f} s wall, {cpu:.1f} s CPU; load {_load()}")
                    continue
                workers0, here0 = client.run(_worker_cpu), time.process_time()
                with distributed.get_task_stream(client) as stream:
                    wall, cpu = _gate(contract, path, many, *address, env=env)
                spread.append(wall)
                here = time.process_time() - here0
                workers = sorted(v - workers0[k] for k, v in client.run(_worker_cpu).items())
                log(
                    f"  2 Dask workers: {wall:.1f} s wall; CPU: command {cpu:.1f} s, workers "
                    f"{' / '.join(f'{w:.1f}' for w in workers)} s, scheduler {here:.1f} s; critical path "
                    f"{cpu + workers[-1]:.1f} s; load {_load()}"
                )
                if i == 0:
                    for task in stream.data:
                        stage = str(task["key"]).removeprefix("otel-provenance-").rsplit("-", 1)[0]
                        for action in task["startstops"]:
                            if action["action"] == "compute":
                                stages[stage].append(action["stop"] - action["start"])
            log(f"  {_size(n)} spans: one process {single[-1]:.1f} s, 2 Dask workers {spread[-1]:.1f} s")
        if many.read_bytes() != one.read_bytes():
            raise RuntimeError("gate check --dask-scheduler wrote a different report than one process")
    per_stage = {
        stage: {"tasks": len(stages[stage]), "seconds": round(sum(stages[stage]), 3)}
        for stage in STAGES
        if stage in stages
    }
    for stage, cost in per_stage.items():
        each = cost["seconds"] / max(1, cost["tasks"])
        log(f"    {stage}: {cost['tasks']} task(s), {cost['seconds']:.1f} s compute, {each:.2f} s each")
    sub, base = statistics.median(spread), statistics.median(single)
    return [
        Result(
            case=f"{CASE} gate check {_size(n)} spans, 2 workers vs 1 process",
            unit="s",
            median=sub,
            baseline=base,
            ratio=sub / base,
            target="<= 0.8x",
            passed=sub <= 0.8 * base,
            note=f"LocalCluster 2 processes; {partition} partitions; same report; incl. process start",
            extra={"spans": n, "samples": samples, "partition_size": partition, "stages": per_stage},
        )
    ]
