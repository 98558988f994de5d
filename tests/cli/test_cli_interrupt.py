"""Ctrl-C during ``gate check --jobs 2`` (#37): the command stops within a second or two with exit 1,
leaves no worker process behind and no report file, whole or partial.

Real signals against a real process: the command runs in a session of its own, and SIGINT goes to
its whole process group — what a terminal's Ctrl-C does — or to the command alone (``kill -INT``),
once its workers are mid-read of a file large enough to keep them busy.
``scripts/interrupt_check.py`` repeats this 50 times.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import tracegen  # noqa: E402

pytestmark = pytest.mark.skipif(not hasattr(os, "killpg"), reason="process groups are POSIX")

CLI = (sys.executable, "-c", "from otel_provenance.cli import main; main()")
STOP_SECONDS = 3.0  # the issue asks for a second or two; the margin is for a loaded CI machine


def make_input(directory: Path, spans: int = 30_000) -> tuple[Path, Path]:
    """A contract mined from a few approved runs and a trace file that takes seconds to check."""
    approved, traces = directory / "approved.jsonl", directory / "traces.jsonl"
    tracegen.write_jsonl(approved, seed=2, release="v1", spans=2_000)
    tracegen.write_jsonl(traces, seed=1, release="v1", spans=spans)
    contract = directory / "contract.yaml"
    subprocess.run(
        [*CLI, "mine", "--approved", approved, "-o", contract],
        check=True,
        capture_output=True,
    )
    return contract, traces


def _group(pgid: int) -> list[int]:
    """The live processes of process group ``pgid`` (zombies are dead: not counted)."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(entry))
    return members


def interrupt_once(contract: Path, traces: Path, out_dir: Path, group: bool = True) -> None:
    """Start ``gate check --jobs 2``, interrupt it mid-work, and check how it ended. ``group``: SIGINT
    to the whole process group (a terminal's Ctrl-C); else to the command alone (``kill -INT``, a
    supervisor), whose workers then hear nothing of it."""
    out_dir.mkdir(exist_ok=True)
    report = out_dir / "gate.html"
    argv = [*CLI, "gate", "check", "--contract", contract, "--release", "v1", "--jobs", "2", traces]
    argv += ["--report-html", report, "--report-json", out_dir / "gate.json"]
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group, as a shell gives a foreground job
    )
    try:
        deadline = time.monotonic() + 60
        while len(_group(proc.pid)) < 3:  # the command and its two workers
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the workers never started"
            time.sleep(0.02)
        time.sleep(0.5)  # mid-read
        assert proc.poll() is None, "the input was too small to interrupt mid-work"
        if group:
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(signal.SIGINT)
        sent = time.monotonic()
        out, err = proc.communicate(timeout=30)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    left = _group(proc.pid)
    if left:
        os.killpg(proc.pid, signal.SIGKILL)
    stderr = err.decode()
    assert proc.returncode == 1, (proc.returncode, stderr)
    assert "interrupted" in stderr and "Traceback" not in stderr, stderr
    assert took < STOP_SECONDS, f"stopped {took:.1f} s after Ctrl-C"
    assert not left, f"worker process(es) left running: {left}"
    assert list(out_dir.iterdir()) == [], "a report file (or its temporary file) was left"
    assert out == b""


def test_ctrl_c_stops_gate_check_jobs_2_at_once_and_leaves_nothing(tmp_path: Path) -> None:
    contract, traces = make_input(tmp_path)
    for attempt in range(3):
        interrupt_once(contract, traces, tmp_path / f"out{attempt}", group=attempt != 1)


_CLUSTER = """
import sys, distributed
if __name__ == "__main__":
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=40) as cluster:
        print(cluster.scheduler_address, flush=True)
        sys.stdin.read()  # the test closes our stdin to stop us
"""


def test_ctrl_c_stops_gate_check_on_a_dask_cluster_at_once_and_leaves_the_cluster_alone(
    tmp_path: Path,
) -> None:
    """#37: with ``--dask-scheduler`` the command is a client of a cluster the user runs: Ctrl-C stops
    the command within seconds (exit 1, no report), and the cluster lives on."""
    pytest.importorskip("distributed")
    contract, traces = make_input(tmp_path)
    cluster = subprocess.Popen(
        [sys.executable, "-c", _CLUSTER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        address = cluster.stdout.readline().strip()
        assert address.startswith("tcp://"), address
        report = tmp_path / "dask-out"
        report.mkdir()
        argv = [*CLI, "gate", "check", "--contract", contract, "--release", "v1", "--dask-scheduler", address]
        argv += [traces, "--report-json", report / "gate.json"]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        try:
            _wait_for_tasks(address, proc)  # connected, and its tasks on the cluster
            assert proc.poll() is None, proc.communicate()
            os.killpg(proc.pid, signal.SIGINT)
            sent = time.monotonic()
            _, err = proc.communicate(timeout=30)
            took = time.monotonic() - sent
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        assert proc.returncode == 1, err.decode()
        assert "interrupted" in err.decode() and "Traceback" not in err.decode()
        assert took < STOP_SECONDS, f"stopped {took:.1f} s after Ctrl-C"
        assert not _group(proc.pid)
        assert list(report.iterdir()) == []
        assert cluster.poll() is None, "the user's cluster went down with the command"
    finally:
        cluster.stdin.close()
        try:
            cluster.wait(timeout=30)
        except subprocess.TimeoutExpired:
            cluster.kill()


def _wait_for_tasks(address: str, proc: subprocess.Popen) -> None:
    """Until the command's tasks are on the cluster (asked of the scheduler by a client of our own)."""
    import distributed

    with distributed.Client(address, set_as_default=False) as monitor:
        deadline = time.monotonic() + 60
        while not monitor.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks)):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the command never submitted a task"
            time.sleep(0.05)
