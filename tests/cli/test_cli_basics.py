"""CLI plumbing: usage errors exit 1 (never 0 or 2), help exits 0."""

import io
import json
import subprocess
import sys

import pytest

from otel_provenance.cli import run


def _run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = run(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def test_no_command_is_a_usage_error():
    code, _, err = _run()
    assert code == 1
    assert "usage" in err.lower()


def test_unknown_command_exits_1():
    code, _, err = _run("frobnicate")
    assert code == 1
    assert "invalid choice" in err


def test_help_exits_0():
    code, out, _ = _run("--help")
    assert code == 0
    assert "gate" in out


def test_version_exits_0():
    code, out, _ = _run("--version")
    assert code == 0 and out.startswith("otel-provenance ")


@pytest.mark.parametrize(
    ("argv", "says", "codes"),
    [
        (["gate", "check"], "decide the release", ["0  pass", "2  fail", "3  insufficient data", "1  error"]),
        (["gate", "merge"], "--shard I/N --partial OUT", ["0  pass", "2  fail", "3  insufficient"]),
        (["routes", "list"], "List the contract's route families", ["0  done", "1  error"]),
        (["routes", "approve"], "Mark route family FAMILY_ID approved", ["0  done", "1  error"]),
    ],
)
def test_help_says_what_the_command_does_and_its_exit_codes(argv, says, codes):
    out, err = io.StringIO(), io.StringIO()
    assert run([*argv, "--help"], out, err) == 0
    text = out.getvalue()
    assert says in text
    assert "exit codes:" in text
    for code in codes:
        assert code in text


def test_a_command_loads_only_its_own_module_and_help_lists_them_all():
    """Start-up is paid on every gate in CI: ``gate check`` over files loads the gate, not the audit's
    pages, the mining or SigNoz's HTTP client; ``--help`` and a misspelt command still know all."""
    probe = (
        "import io, sys\n"
        "from otel_provenance.cli import run\n"
        "run(sys.argv[1:], io.StringIO(), io.StringIO())\n"
        "loaded = {m.rpartition('.')[2] for m in sys.modules if m.startswith('otel_provenance.cli.')}\n"
        "commands = {'audit', 'diff', 'fetch', 'fingerprint', 'gate', 'keygen', 'mine', 'routes'}\n"
        "print(sorted(loaded & commands))\n"
        "print('httpx' in sys.modules)\n"
    )

    def loaded(*argv: str) -> list[str]:
        command = [sys.executable, "-c", probe, *argv]
        proc = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.split("\n")[:2]

    assert loaded("gate", "check", "--help") == ["['gate']", "False"]
    assert loaded("keygen") == ["['keygen']", "False"]
    every = ["audit", "diff", "fetch", "fingerprint", "gate", "keygen", "mine", "routes"]
    assert loaded("--help")[0] == str(every)
    code, out, _ = _run("--help")
    assert code == 0 and all(f"\n    {name}" in out for name in every)
    code, _, err = _run("gaet")
    assert code == 1 and "did you mean gate?" in err


def test_a_gate_check_loads_only_what_its_flags_use(tmp_path):
    """What a gate imports is paid on every CI run: a plain ``gate check`` over a JSON Lines file
    loads no JUnit writer, no process pool, no package metadata, no protobuf, no spelling helper —
    each comes with the flag or the input that needs it (``--junit`` here)."""
    contract = tmp_path / "c.yaml"
    contract.write_text(
        "version: 1\nname: t\nrules:\n  - {id: r, type: forbidden_spans, select: {step: a}}\n"
    )
    span = {"traceId": "0" * 31 + "1", "spanId": "0" * 15 + "1", "name": "a", "startTimeUnixNano": "1",
            "endTimeUnixNano": "2"}  # fmt: skip
    line = {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {}, "spans": [span]}]}]}
    traces = tmp_path / "t.jsonl"
    traces.write_text(json.dumps(line) + "\n")
    lazy = ["xml.etree.ElementTree", "concurrent.futures", "multiprocessing", "importlib.metadata",
            "google.protobuf", "difflib", "logging"]  # fmt: skip
    probe = (
        "import io, sys\n"
        "from otel_provenance.cli import run\n"
        "code = run(sys.argv[1:], io.StringIO(), io.StringIO())\n"
        f"print(code, sorted(m for m in {lazy!r} if m in sys.modules))\n"
    )

    def loaded(*extra: str) -> str:
        argv = ["gate", "check", "--contract", str(contract), "--release", "v1", str(traces), *extra]
        proc = subprocess.run(
            [sys.executable, "-c", probe, *argv], capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.strip()

    assert loaded() == "3 []"  # one run of no release: insufficient data, and nothing extra loaded
    assert loaded("--junit", str(tmp_path / "j.xml")) == "3 ['xml.etree.ElementTree']"
