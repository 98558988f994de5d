"""CLI plumbing: usage errors exit 1 (never 0 or 2), help exits 0."""

import io

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
