"""Report targets keep their type (#36): a FIFO gets the bytes, a symlink stays a link and its target
is written, ``/dev/stdout`` is the process's stdout, and a target that cannot take a report is
refused — never replaced by a regular file.

Only ``/dev/stdout`` and ``/dev/null`` of the real ``/dev`` are used; every other special file is
made in ``tmp_path``.
"""

from __future__ import annotations

import io
import json
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from contract_runs import export_runs, triage_run
from otel_provenance.cli import run as cli_run

GATE = ("gate", "check", "--release", "any", "--completed-at", "2026-01-01T00:00:00Z")


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return cli_run(list(argv), out, err), out.getvalue(), err.getvalue()


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path]:
    traces = tmp_path / "approved.jsonl"
    export_runs([triage_run(f"a-{i}") for i in range(5)], str(traces))
    contract = tmp_path / "contract.yaml"
    assert _cli("mine", "--approved", str(traces), "-o", str(contract))[0] == 0
    return traces, contract


def _gate(traces: Path, contract: Path, *report: str) -> tuple[int, str, str]:
    return _cli(*GATE, "--contract", str(contract), *report, str(traces))


def test_a_fifo_gets_the_report_and_stays_a_fifo(setup: tuple[Path, Path], tmp_path: Path) -> None:
    traces, contract = setup
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    try:
        code, _, err = _gate(traces, contract, "--report-json", str(fifo))
        assert code in (0, 2, 3), err
        assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
        data, _ = reader.communicate(timeout=20)
    finally:
        reader.kill()
        reader.wait()
    assert json.loads(data)  # the whole report came through the FIFO
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_a_symlink_is_followed_and_stays_a_link(setup: tuple[Path, Path], tmp_path: Path) -> None:
    traces, contract = setup
    real = tmp_path / "reports" / "gate.json"
    real.parent.mkdir()
    real.write_text("{}")
    os.chmod(real, 0o640)
    link = tmp_path / "latest.json"
    link.symlink_to(real)
    code, _, err = _gate(traces, contract, "--report-json", str(link))
    assert code in (0, 2, 3), err
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert json.loads(real.read_text()) != {}
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    dangling = tmp_path / "next.json"  # a link to a file not made yet: the file is made, as `>` does
    dangling.symlink_to(tmp_path / "reports" / "next-real.json")
    assert _gate(traces, contract, "--report-json", str(dangling))[0] in (0, 2, 3)
    assert dangling.is_symlink() and json.loads((tmp_path / "reports" / "next-real.json").read_text())
    # mine's -o (a contract) and routes approve take the same path
    contract_link = tmp_path / "contract-link.yaml"
    contract_link.symlink_to(contract)
    assert _cli("mine", "--approved", str(traces), "-o", str(contract_link))[0] == 0
    assert contract_link.is_symlink() and "rules" in contract.read_text()


def test_targets_that_cannot_take_a_report_are_refused(setup: tuple[Path, Path], tmp_path: Path) -> None:
    traces, contract = setup
    directory = tmp_path / "a-directory"
    directory.mkdir()
    code, _, err = _gate(traces, contract, "--report-json", str(directory))
    assert code == 1 and "is a directory" in err
    assert directory.is_dir()
    sock_path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(sock_path))
        code, _, err = _gate(traces, contract, "--report-json", str(sock_path))
    assert code == 1 and "is a socket" in err
    assert stat.S_ISSOCK(os.lstat(sock_path).st_mode)


def _subprocess_cli(*argv: str, stdout: int | object = subprocess.PIPE) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "from otel_provenance.cli import main; main()", *argv],
        stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_dev_stdout_is_the_process_stdout(setup: tuple[Path, Path], tmp_path: Path) -> None:
    traces, contract = setup
    before = os.lstat("/dev/stdout")
    gate = [*GATE, "--contract", str(contract), str(traces)]
    proc = _subprocess_cli(*gate, "--junit", "/dev/stdout", "--format", "json")
    assert proc.returncode in (0, 2, 3), proc.stderr
    junit, _, printed = proc.stdout.partition("</testsuites>\n")
    assert "<testsuite " in junit  # the report, written before what is printed
    assert isinstance(json.loads(printed), dict)  # and then the printed report, whole
    # stdout redirected to a file: the report lands in that file, the file is not swapped under the shell
    out = tmp_path / "out.txt"
    with out.open("w") as f:
        proc = _subprocess_cli(*gate, "--junit", "/dev/stdout", stdout=f)
    assert proc.returncode in (0, 2, 3), proc.stderr
    text = out.read_text()
    junit, _, printed = text.partition("</testsuites>\n")
    assert "<testsuite " in junit and "decision:" in printed.lower()
    # /dev/null takes the bytes and stays the device
    assert _gate(traces, contract, "--report-json", "/dev/null")[0] in (0, 2, 3)
    assert stat.S_ISCHR(os.lstat("/dev/null").st_mode)
    after = os.lstat("/dev/stdout")
    assert (stat.S_IFMT(after.st_mode), after.st_ino) == (stat.S_IFMT(before.st_mode), before.st_ino)


def test_fetch_output_to_a_fifo_and_a_symlink(setup: tuple[Path, Path], tmp_path: Path) -> None:
    traces, _ = setup
    real = tmp_path / "spans-real.jsonl"
    link = tmp_path / "spans.jsonl"
    link.symlink_to(real)
    code, _, err = _cli("fetch", "--release", "v1", str(traces), "-o", str(link))
    assert code == 0, err
    assert link.is_symlink() and real.read_text().count("\n") >= 1
    fifo = tmp_path / "spans.fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    try:
        code, _, err = _cli("fetch", "--release", "v1", str(traces), "-o", str(fifo))
        assert code == 0, err
        data, _ = reader.communicate(timeout=20)
    finally:
        reader.kill()
        reader.wait()
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert data.decode() == real.read_text()


def test_a_full_device_is_an_error_and_stays_a_device(setup: tuple[Path, Path], tmp_path: Path) -> None:
    traces, contract = setup
    full = tmp_path / "full"  # a twin of /dev/full (char 1:7) made here; the real one is never touched
    try:
        os.mknod(full, stat.S_IFCHR | 0o600, os.makedev(1, 7))
        os.close(os.open(full, os.O_WRONLY))
    except OSError as exc:  # not root, or tmp is mounted nodev
        pytest.skip(f"cannot make a device node here: {exc}")
    code, _, err = _gate(traces, contract, "--report-html", str(full))
    assert code == 1 and "cannot write (No space left on device)" in err
    assert stat.S_ISCHR(os.lstat(full).st_mode)


@pytest.mark.parametrize("refused", ["--report-html", "--report-json"])
def test_the_reports_of_one_command_are_put_in_place_together_or_not_at_all(
    setup: tuple[Path, Path], tmp_path: Path, refused: str
) -> None:
    """One report that cannot be written (a directory) and one that can: neither is put in place, and
    no temporary file is left — a reader never finds one report of the set without the other."""
    traces, contract = setup
    out = tmp_path / "out"
    out.mkdir()
    (out / "a-directory").mkdir()
    targets = {"--report-html": out / "gate.html", "--report-json": out / "gate.json"}
    targets[refused] = out / "a-directory"
    code, _, err = _gate(traces, contract, *[str(a) for pair in targets.items() for a in pair])
    assert code == 1 and "a-directory: is a directory" in err, err
    assert sorted(p.name for p in out.iterdir()) == ["a-directory"]


CLI = (sys.executable, "-c", "from otel_provenance.cli import main; main()")


def _gate_process(traces: Path, contract: Path, target: Path, deadline: str) -> subprocess.CompletedProcess:
    """The CLI in a process of its own, bounded here: a report target that hangs it fails the test."""
    return subprocess.run(
        [*CLI, *GATE, "--contract", str(contract), "--report-json", str(target), str(traces)],
        env={**os.environ, "OTEL_PROVENANCE_WRITE_DEADLINE": deadline},
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def test_a_fifo_nobody_reads_is_an_error_after_the_deadline_not_a_hang(
    setup: tuple[Path, Path], tmp_path: Path
) -> None:
    """#50: a report target that is a FIFO with no reader: the open no longer waits for ever."""
    traces, contract = setup
    fifo = tmp_path / "nobody.fifo"
    os.mkfifo(fifo)
    done = _gate_process(traces, contract, fifo, "0.5")
    assert done.returncode == 1, done.stderr
    assert (
        f"{fifo}: a FIFO that nobody opened for reading within 0.5 s (OTEL_PROVENANCE_WRITE_DEADLINE)"
        in done.stderr
    )
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_reader_that_takes_nothing_is_an_error_after_the_deadline(tmp_path: Path) -> None:
    """A reader that opened the FIFO and sleeps: the report (bigger than a pipe holds) stops there."""
    many = tmp_path / "many.jsonl"
    export_runs([triage_run(f"m-{i}", writes=3) for i in range(300)], str(many))
    fifo = tmp_path / "sleepy.fifo"
    os.mkfifo(fifo)
    sleeper = subprocess.Popen(
        [sys.executable, "-c", f"import time; f = open({str(fifo)!r}, 'rb'); time.sleep(60)"]
    )
    try:
        done = subprocess.run(
            [*CLI, "audit", "--format", "json", "--report-json", str(fifo), str(many)],
            env={**os.environ, "OTEL_PROVENANCE_WRITE_DEADLINE": "0.5"},
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
    finally:
        sleeper.kill()
        sleeper.wait()
    assert done.returncode == 1, done.stderr[-2000:]
    assert f"{fifo}: cannot write (its reader took nothing for 0.5 s)" in done.stderr


@pytest.mark.parametrize("value", ["0", "-1", "soon", "inf"])
def test_a_write_deadline_that_means_nothing_is_refused_by_name(
    setup: tuple[Path, Path], tmp_path: Path, value
) -> None:
    traces, contract = setup
    fifo = tmp_path / "any.fifo"
    os.mkfifo(fifo)
    done = _gate_process(traces, contract, fifo, value)
    assert done.returncode == 1 and "OTEL_PROVENANCE_WRITE_DEADLINE" in done.stderr, done.stderr
