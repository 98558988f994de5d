"""CLI plumbing: usage errors exit 1 (never 0 or 2), help exits 0."""

import io
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
