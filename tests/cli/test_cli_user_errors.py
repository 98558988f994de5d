"""What a user's mistakes get: a message naming the problem and exit 1, never a pass (review findings)."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from offline_helpers import reference_runs, write_jsonl
from otel_provenance.cli import run


def cli(*argv: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


def _torn(tmp_path: Path) -> Path:
    good, _ = reference_runs()
    path = write_jsonl(good, tmp_path / "good.jsonl")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 40])  # the writer was killed mid-line
    return path


def test_mining_a_cut_off_file_writes_no_contract(tmp_path):
    out = tmp_path / "contract.yaml"
    code, _, err = cli("mine", "--approved", _torn(tmp_path), "-o", out)
    assert code == 1 and "incomplete" in err
    assert not out.exists()


def test_audit_of_a_cut_off_file_does_not_print_pass(tmp_path):
    code, out, _ = cli("audit", _torn(tmp_path))
    assert code == 3
    assert out.splitlines()[-1].startswith("INSUFFICIENT")


def test_a_misspelled_run_id_in_diff_is_a_usage_error(tmp_path):
    good, bad = reference_runs()
    a, b = write_jsonl(good, tmp_path / "a.jsonl"), write_jsonl(bad, tmp_path / "b.jsonl")
    code, _, err = cli("diff", a, b, "--run-a", "deadbeef")
    assert code == 1 and "no run with id deadbeef" in err


def test_a_missing_contract_names_the_problem(tmp_path):
    good, _ = reference_runs()
    traces = write_jsonl(good, tmp_path / "a.jsonl")
    code, _, err = cli("gate", "check", "--contract", tmp_path / "nope.yaml", "--release", "v1", traces)
    assert code == 1 and "No such file or directory" in err


def test_unreadable_files_are_named_for_what_they_are(tmp_path):
    cases = {
        b"{oops}\n": "invalid JSON",
        b"hello world\n": "neither OTLP JSON nor OTLP protobuf",
        b'\xef\xbb\xbf{"resourceSpans":[]}\n': "byte-order mark",
        b'{"foo":1}\n': "no resourceSpans",
    }
    for i, (data, message) in enumerate(cases.items()):
        path = tmp_path / f"f{i}.jsonl"
        path.write_bytes(data)
        code, _, err = cli("audit", path)
        assert code == 1 and message in err, (data, err)
    # a file of another signal is no error, but it holds no traces: left out, said, and no pass
    logs = tmp_path / "logs.jsonl"
    logs.write_bytes(b'{"resourceLogs":[]}\n')
    code, _, err = cli("audit", logs)
    assert code == 3 and f"{logs}: a logs file (resourceLogs), not traces (left out)" in err, err


@pytest.mark.parametrize(
    ("module", "argv"),
    [
        ("yaml", ["gate", "check", "--help"]),  # when the command is loaded
        ("httpx", ["fetch", "--help"]),
        # when the gate reaches SigNoz: a gate over files loads no HTTP client
        (
            "httpx",
            ["gate", "check", "--contract", "c.yaml", "--release", "v1", "--signoz", "http://127.0.0.1:9"],
        ),
    ],
    ids=["yaml-gate", "httpx-fetch", "httpx-gate-signoz"],
)
def test_without_the_cli_extra_the_command_says_what_to_install(module, argv, tmp_path):
    """The base install (for instrumented apps) has no YAML or HTTP client; the CLI names the extra."""
    rules = "[{id: r, type: required_spans, select: {step: t}}]"
    (tmp_path / "c.yaml").write_text(f"name: c\nversion: 1\nrules: {rules}\n")
    code = (
        f"import sys; sys.modules[{module!r}] = None\n"  # as if not installed: import raises
        "from otel_provenance.cli import main\n"
        "main()\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert proc.returncode == 1
    assert "pip install 'otel-provenance[cli]'" in proc.stderr
    assert ("PyYAML" if module == "yaml" else "httpx") in proc.stderr
    assert "Traceback" not in proc.stderr
