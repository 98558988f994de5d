"""Ctrl-C during ``gate check --jobs 2`` (#37): the command stops within a second or two with exit 1,
leaves no worker process behind and no report file, whole or partial.

Real signals against a real process: the command runs in a session of its own, and SIGINT goes to
its whole process group — what a terminal's Ctrl-C does — or to the command alone (``kill -INT``),
once its workers are mid-read of a file large enough to keep them busy.
``scripts/interrupt_check.py`` repeats this 50 times.
"""

from __future__ import annotations

import json
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
REPORTS = ["gate.html", "gate.json"]  # what interrupt_once's command writes, sorted


def sigint_as_a_terminal_gives_it() -> None:
    """Let the commands started from here get SIGINT as a terminal's foreground job does.

    A process a non-interactive shell starts in the background (``cmd &``, ``nohup``) inherits SIGINT
    *ignored*, and an ignored signal stays ignored across ``exec``: every command these tests
    interrupt would then never see the signal (and rightly so — a background job is not Ctrl-C'd).
    A handled signal is reset to the default on ``exec``, so giving this process Python's own handler
    gives the commands the disposition a terminal gives them, however the test run was started.
    """
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _sigint_not_ignored():
    before = signal.getsignal(signal.SIGINT)
    sigint_as_a_terminal_gives_it()
    yield
    if before is not None:  # None: a handler not set from Python, left as it is
        signal.signal(signal.SIGINT, before)


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


def interrupt_once(
    contract: Path, traces: Path, out_dir: Path, group: bool = True, delay: float | None = None
) -> str:
    """Start ``gate check --jobs 2``, interrupt it, and check how it ended. ``group``: SIGINT to the
    whole process group (a terminal's Ctrl-C); else to the command alone (``kill -INT``, a
    supervisor), whose workers then hear nothing of it. ``delay``: seconds after the start (any
    moment: starting up, loading, reading, judging, writing); by default half a second into the
    workers' reading. Returns ``"interrupted"``; with a ``delay``, also ``"finished"`` when the
    command ended before the signal was sent (nothing to check), ``"before the command"``, or
    ``"at its exit"``."""
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
        if delay is None:
            deadline = time.monotonic() + 60
            while len(_group(proc.pid)) < 3:  # the command and its two workers
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "the workers never started"
                time.sleep(0.02)
            time.sleep(0.5)  # mid-read
            assert proc.poll() is None, "the input was too small to interrupt mid-work"
        else:
            time.sleep(delay)
            if proc.poll() is not None:
                proc.communicate()
                return "finished"
    except BaseException:
        _kill(proc)
        raise
    out, err, took, left = _interrupt(proc, group)
    stderr = err.decode()
    assert took < STOP_SECONDS, f"stopped {took:.1f} s after Ctrl-C"
    assert not left, f"worker process(es) left running: {left}"
    written = sorted(path.name for path in out_dir.iterdir())
    if written:  # a Ctrl-C in the instant the reports were put in place: all of them, whole
        assert written == REPORTS, f"a report set cut short, or a temp file: {written}"
        json.loads((out_dir / "gate.json").read_text())
        assert (out_dir / "gate.html").read_text().rstrip().endswith("</html>")
    else:
        assert out == b""  # nothing printed before the reports are in place
    if delay is not None and _before_the_command(proc.returncode, stderr, written):
        return "before the command"
    if delay is not None and _at_its_exit(proc.returncode, stderr, out, written):
        return "at its exit"
    assert proc.returncode == 1, (proc.returncode, stderr)
    assert "interrupted" in stderr and "Traceback" not in stderr, stderr
    return "interrupted"


def _interrupt(proc: subprocess.Popen, group: bool) -> tuple[bytes, bytes, float, list[int]]:
    """SIGINT to the command's process group (a terminal's Ctrl-C) or to the command alone; then its
    output, the seconds it took to end, and the processes of its group still alive (killed)."""
    try:
        if group:
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(signal.SIGINT)
        sent = time.monotonic()
        out, err = proc.communicate(timeout=30)
        took = time.monotonic() - sent
    finally:
        _kill(proc)
    left = _group(proc.pid)
    if left:
        os.killpg(proc.pid, signal.SIGKILL)
    return out, err, took, left


def _kill(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _before_the_command(code: int, stderr: str, written: list[str]) -> bool:
    """Interrupted while Python started and imported the command's first module (a tenth of a
    second), before any of the command's code could run: Python's own ending — death by SIGINT (130
    in a shell), silent in the first milliseconds (before Python has a handler for it), then with a
    KeyboardInterrupt traceback through imports alone. Nothing written."""
    if code != -signal.SIGINT or written:
        return False
    frames = [line for line in stderr.splitlines() if line.startswith('  File "')]
    return stderr == "" or (
        stderr.rstrip().endswith("KeyboardInterrupt")
        and not any(line.rstrip().endswith((" in run", " in main")) for line in frames)
    )


def _at_its_exit(code: int, stderr: str, out: bytes, written: list[str]) -> bool:
    """Interrupted in Python's own teardown, after the command had put its reports in place and
    printed its verdict: Python has given SIGINT back to the system's default there, so the process
    ends by the signal (130 in a shell) and says nothing more. Nothing is lost or cut short."""
    return code == -signal.SIGINT and stderr == "" and out != b"" and written == REPORTS


def test_ctrl_c_stops_gate_check_jobs_2_at_once_and_leaves_nothing(tmp_path: Path) -> None:
    contract, traces = make_input(tmp_path)
    for attempt in range(3):
        interrupt_once(contract, traces, tmp_path / f"out{attempt}", group=attempt != 1)


def _cpu_ticks(pgid: int) -> int:
    """User + system CPU clock ticks of the live processes of group ``pgid``, so far."""
    ticks = 0
    for pid in _group(pgid):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        ticks += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
    return ticks


def _loading_ticks() -> int:
    """CPU ticks the command line spends starting and loading (``--help``): measured here, so that
    "mid-work" below means past loading on this machine, however fast or loaded it is."""
    proc = subprocess.Popen([*CLI, "--help"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0
    return round((usage.ru_utime + usage.ru_stime) * os.sysconf("SC_CLK_TCK"))


@pytest.fixture(scope="module")
def big_input(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return make_input(tmp_path_factory.mktemp("interrupt-input"), spans=60_000)


COMMANDS = {
    "gate check": [
        "gate",
        "check",
        "--contract",
        "{contract}",
        "--release",
        "v1",
        "{traces}",
        "--report-json",
        "{out}/gate.json",
    ],
    "audit": ["audit", "{traces}", "--report-json", "{out}/audit.json"],
    "audit --jobs 2": ["audit", "--jobs", "2", "{traces}", "--report-json", "{out}/audit.json"],
    "fingerprint --jobs 2": ["fingerprint", "--jobs", "2", "{traces}"],
    "mine": ["mine", "--approved", "{traces}", "-o", "{out}/contract.yaml"],
}


@pytest.mark.parametrize("command", COMMANDS)
def test_ctrl_c_stops_every_command_mid_work(
    big_input: tuple[Path, Path], tmp_path: Path, command: str
) -> None:
    """#37: "interrupting any command": each command that reads traces, Ctrl-C'd once it has used a
    third of a second of CPU past loading — exit 1, "interrupted", nothing printed or written, no
    process left."""
    contract, traces = big_input
    out = tmp_path / "out"
    out.mkdir()
    argv = [a.format(contract=contract, traces=traces, out=out) for a in COMMANDS[command]]
    threshold = _loading_ticks() + os.sysconf("SC_CLK_TCK") // 3
    proc = subprocess.Popen(
        [*CLI, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 120
        while _cpu_ticks(proc.pid) < threshold:
            assert proc.poll() is None, f"{command} ended before it could be interrupted"
            assert time.monotonic() < deadline, f"{command} never got past loading"
            time.sleep(0.01)
    except BaseException:
        _kill(proc)
        raise
    stdout, stderr, took, left = _interrupt(proc, group=True)
    assert (proc.returncode, stdout) == (1, b""), stderr.decode()
    assert stderr.decode().endswith("otel-provenance: error: interrupted\n"), stderr.decode()
    assert "Traceback" not in stderr.decode()
    assert took < STOP_SECONDS, f"stopped {took:.1f} s after Ctrl-C"
    assert not left, f"process(es) left running: {left}"
    assert list(out.iterdir()) == []


def _run_script(script: str, *argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run a Python ``script`` (which sends its own SIGINT) with the CLI's ``argv``; its output as text."""
    return subprocess.run(
        [sys.executable, "-c", script, *argv], capture_output=True, text=True, timeout=timeout, check=False
    )


_INTERRUPTED_WHILE_LOADING = """
import os, signal, sys

class SignalOnImport:  # a real SIGINT, sent the moment the gate command's module starts loading
    def find_spec(self, name, path=None, target=None):
        if name == "otel_provenance.cli.gate":
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, SignalOnImport())
from otel_provenance.cli import main
main()
"""


def test_ctrl_c_while_the_commands_load_says_interrupted() -> None:
    """Loading the command modules is most of the start-up (about a second): a Ctrl-C then is
    "interrupted", exit 1, like one at any later moment — not a KeyboardInterrupt traceback."""
    done = _run_script(_INTERRUPTED_WHILE_LOADING, "gate", "check", "--help")
    assert (done.returncode, done.stdout, done.stderr) == (1, "", "otel-provenance: error: interrupted\n")


_INTERRUPTED_AT_THE_END = """
import os, signal, sys

class SignalOnFlush:  # a real SIGINT the moment main() flushes the command's finished output
    def __init__(self, stream):
        self.stream, self.sent = stream, False
    def write(self, text):
        return self.stream.write(text)
    def flush(self):
        if not self.sent:
            self.sent = True
            os.kill(os.getpid(), signal.SIGINT)
        self.stream.flush()

sys.stdout = SignalOnFlush(sys.stdout)
from otel_provenance.cli import main
main()
"""


def test_ctrl_c_after_the_command_ended_says_interrupted_not_a_traceback() -> None:
    """Between the command's end and the process's (main() flushing its output), a Ctrl-C is
    Python's default handler's again: it is said as at any other moment, exit 1, no traceback."""
    done = _run_script(_INTERRUPTED_AT_THE_END, "--version")
    assert (done.returncode, done.stderr) == (1, "otel-provenance: error: interrupted\n")
    assert done.stdout.startswith("otel-provenance")  # the command itself had ended: its output is there


_SWALLOWED = """
import gc, os, signal, sys

def swallow(phase, info):  # a real SIGINT whose KeyboardInterrupt Python can only print and drop
    if phase == "start" and "otel_provenance.cli.gate" in sys.modules:  # once the command has begun
        gc.callbacks.remove(swallow)
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(10_000):  # the interrupt is raised here, inside the collector's callback
            pass

gc.callbacks.append(swallow)
from otel_provenance.cli import main
main()
"""


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_ctrl_c_python_swallows_is_still_an_interrupt(tmp_path: Path, jobs: str) -> None:
    """A KeyboardInterrupt raised inside a callback Python only prints (a garbage-collector callback
    here; the import system's module-lock callback at random moments) would be lost, and the command
    would go on to a verdict and its reports: it ends as "interrupted", exit 1, nothing written."""
    contract, traces = make_input(tmp_path, spans=6_000)
    report = tmp_path / "out"
    report.mkdir()
    argv = ["gate", "check", "--contract", contract, "--release", "v1", "--jobs", jobs, traces]
    argv += ["--report-html", report / "gate.html", "--report-json", report / "gate.json"]
    done = _run_script(_SWALLOWED, *map(str, argv), timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (1, "", "otel-provenance: error: interrupted\n")
    assert list(report.iterdir()) == []


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
