"""Every stall on a Dask cluster ends within its deadline (issue #36: six hangs had none).

Each case runs the real command in its own process against a real counterpart — a TCP listener
that accepts and never answers, a ``LocalCluster`` without workers, one whose only worker is frozen
with SIGSTOP, and malformed addresses — and checks that it *ends*, with exit 1 and a message, within
``--dask-deadline`` plus generous slack (process start-up and imports on a busy machine). These are
"it ends" checks, not speed checks."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed")

from blocking_agent import write_runs  # noqa: E402

DEADLINE = 5
SLACK = 90  # start-up of a fresh interpreter with Dask imported, on a shared two-core machine


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_runs(tmp_path_factory.mktemp("dask") / "v1.jsonl", "v1", 1, "good")


def _command(address: str, traces: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-c", "from otel_provenance.cli import main; main()", "fingerprint"]
    argv += ["--dask-scheduler", address]
    argv += ["--dask-deadline", str(DEADLINE), *extra, str(traces)]
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=DEADLINE + SLACK, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the command against {address} did not end within {DEADLINE} s + {SLACK} s slack")


@pytest.fixture
def silent_listener() -> Iterator[str]:
    """Accepts connections and never says a word."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except TimeoutError:
                continue
            except OSError:
                return

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    server.close()


def test_a_scheduler_that_never_answers(silent_listener: str, traces: Path) -> None:
    done = _command(silent_listener, traces)
    assert done.returncode == 1, done.stderr
    assert f"cannot reach the Dask scheduler at {silent_listener}" in done.stderr


def test_a_scheduler_without_workers(traces: Path) -> None:
    with distributed.LocalCluster(n_workers=0, dashboard_address=None, silence_logs=40) as cluster:
        done = _command(cluster.scheduler_address, traces)
    assert done.returncode == 1, done.stderr
    assert "has no workers" in done.stderr


def test_a_frozen_worker(traces: Path) -> None:
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
        ) as cluster,
        distributed.Client(cluster, set_as_default=False) as client,
    ):
        [pid] = client.run(os.getpid).values()
        os.kill(pid, signal.SIGSTOP)
        try:
            done = _command(cluster.scheduler_address, traces)
        finally:
            os.kill(pid, signal.SIGCONT)
    assert done.returncode == 1, done.stderr
    assert "did not finish" in done.stderr and f"within the deadline ({DEADLINE} s)" in done.stderr


@pytest.mark.parametrize(
    "address",
    ["tcp://127.0.0.1:notaport", "localhost", "foo://bar", "tcp://[::1", "tcp://", "inproc://x", "tcp://h:0"],
)
def test_a_malformed_address_is_refused_before_connecting(address: str, traces: Path) -> None:
    done = _command(address, traces)
    assert done.returncode == 1, done.stderr
    assert f"not a Dask scheduler address: {address!r}" in done.stderr
    assert "internal error" not in done.stderr
