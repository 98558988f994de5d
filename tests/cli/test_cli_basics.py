"""CLI plumbing: usage errors exit 1 (never 0 or 2), help exits 0."""

import io

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
