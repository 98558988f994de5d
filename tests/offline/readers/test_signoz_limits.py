"""SigNoz reads end on time against a dripping server, never hold a huge answer, and survive key names
the filter grammar cannot express."""

from __future__ import annotations

import io
import logging
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from otel_provenance.cli import run
from otel_provenance.errors import QueryError
from otel_provenance.offline.readers.signoz import SigNozReport, read_signoz
from otel_provenance.offline.readers.signoz_http import REAL_CLOCK
from signoz_clock import FakeClock
from signoz_double import Fault, SigNozDouble, export_spans, window_around_now

QUERY = "/api/v5/query_range"
VERSION = "/api/v1/version"
KEYS = "/api/v1/fields/keys"

CONTRACT = """\
version: 1
name: limits
rules:
  - id: checked
    type: required_spans
    select: {step: fraud.check}
"""


def _six_steps(double: SigNozDouble) -> SigNozDouble:
    export_spans(
        double,
        {"service.name": "agent", "service.version": "v2"},
        lambda t: [t.start_span(f"execute_tool step{i}", attributes={"n": i}).end() for i in range(6)],
    )
    return double


@pytest.fixture
def double():
    with SigNozDouble(version="v0.129.0") as d:
        yield _six_steps(d)


@pytest.fixture
def on_a_fake_clock(monkeypatch: pytest.MonkeyPatch):
    """The double and every SigNoz read of this process on one fake clock. The CLI takes no clock, so the
    reader's default clock is pointed at the fake one for the test (its methods, not the function's
    defaults: those are out of reach when the function is wrapped, as mutation testing wraps it); the
    commands then run in this process (:func:`_run`)."""
    clock = FakeClock()
    for name in ("monotonic", "sleep", "wait"):
        monkeypatch.setattr(REAL_CLOCK, name, getattr(clock, name))
    with SigNozDouble(version="v0.129.0", clock=clock) as d:
        monkeypatch.setenv("SIGNOZ_API_KEY", d.api_key)
        yield _six_steps(d)


def read(double: SigNozDouble, **kwargs):
    start, end = window_around_now()
    kwargs.setdefault("api_key", double.api_key)
    return list(read_signoz(double.url, release="v2", start_ms=start, end_ms=end, **kwargs))


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def _cli(double: SigNozDouble, tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SIGNOZ_API_KEY": double.api_key}
    command = [sys.executable, "-c", "from otel_provenance.cli import main; main()", *argv]
    # The guard only stops a hang from stalling the suite; the assertions are about how the command ended.
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=60, cwd=tmp_path)


DRIPS = {
    "headers, first request": (VERSION, Fault(drip_s=0.05, drip_headers=True)),
    "body, mid-read": (QUERY, Fault(drip_s=0.05)),
}


@pytest.mark.parametrize("where", DRIPS)
def test_fetch_against_a_dripping_server_ends_with_the_deadline_error(
    on_a_fake_clock: SigNozDouble, tmp_path: Path, where: str
) -> None:
    double = on_a_fake_clock
    path, fault = DRIPS[where]
    double.inject(path, *[fault] * 50)
    out = tmp_path / "v2.jsonl"
    code, _, err = _run(
        "fetch", "--signoz", double.url, "--release", "v2", "--since", "1h",
        "--timeout", "0.5", "--deadline", "1.5", "-o", str(out),
    )  # fmt: skip
    assert code == 1, err
    assert "deadline" in err and "no complete answer" in err
    assert not out.exists()


def test_a_real_process_against_a_dripping_server_ends_at_its_deadline(
    double: SigNozDouble, tmp_path: Path
) -> None:
    """The test above once as the command runs, on the machine's clock: the process ends with the
    deadline's error, nothing left reading to hold it up."""
    path, fault = DRIPS["body, mid-read"]
    double.inject(path, *[fault] * 50)
    out = tmp_path / "v2.jsonl"
    done = _cli(
        double, tmp_path, "fetch", "--signoz", double.url, "--release", "v2", "--since", "1h",
        "--timeout", "0.5", "--deadline", "1.5", "-o", str(out),
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "deadline" in done.stderr and "no complete answer" in done.stderr
    assert not out.exists()


@pytest.mark.parametrize("where", DRIPS)
def test_gate_check_against_a_dripping_server_is_an_error_never_a_verdict(
    on_a_fake_clock: SigNozDouble, tmp_path: Path, where: str
) -> None:
    double = on_a_fake_clock
    path, fault = DRIPS[where]
    double.inject(path, *[fault] * 50)
    contract = tmp_path / "contract.yaml"
    contract.write_text(CONTRACT)
    code, out, err = _run(
        "gate", "check", "--contract", str(contract), "--release", "v2",
        "--signoz", double.url, "--since", "1h", "--timeout", "0.5", "--deadline", "1.5",
    )  # fmt: skip
    assert code == 1, out + err
    assert "deadline" in err
    assert "PASS" not in out and "FAIL" not in out


def test_without_faults_the_same_gate_reaches_a_verdict(
    on_a_fake_clock: SigNozDouble, tmp_path: Path
) -> None:
    """The control for the two tests above: the contract and the command are sound."""
    contract = tmp_path / "contract.yaml"
    contract.write_text(CONTRACT)
    code, out, err = _run(
        "gate", "check", "--contract", str(contract), "--release", "v2",
        "--signoz", on_a_fake_clock.url, "--since", "1h", "--timeout", "5", "--deadline", "30",
    )  # fmt: skip
    assert code in (2, 3), out + err  # no fraud.check step: not a pass


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_a_huge_answer_is_refused_without_reading_it_into_memory(double: SigNozDouble, chunked: bool) -> None:
    double.inject(KEYS, Fault(huge_bytes=40 * 2**20, chunked=chunked))
    tracemalloc.start()
    try:
        with pytest.raises(QueryError, match=r"larger than 1 MiB"):
            read(double, max_response_bytes=2**20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 12 * 2**20  # the 40 MB body was never held


def test_an_answer_that_declares_too_many_bytes_is_refused_before_its_body(double: SigNozDouble) -> None:
    """A Content-Length past the limit ends the request at once: the body, dripping here, is not
    waited for (that would end in the deadline's error instead of naming the size)."""
    double.inject(KEYS, Fault(drip_s=0.05, declared_bytes=40 * 2**20))
    with pytest.raises(QueryError, match=r"larger than 1 MiB"):
        read(double, max_response_bytes=2**20, timeout_s=1.0, deadline_s=2.0)


def test_a_page_too_large_is_asked_again_in_smaller_pages(double: SigNozDouble) -> None:
    double.inject(QUERY, Fault(huge_bytes=3 * 2**20), Fault(huge_bytes=3 * 2**20, chunked=True))
    report = SigNozReport()
    spans = read(double, max_response_bytes=2**20, page_size=4, report=report)
    assert sorted(s.attributes["n"] for s in spans) == [0, 1, 2, 3, 4, 5]
    assert report.page_size == 1


def test_an_answer_too_large_even_for_one_span_is_a_clear_error(double: SigNozDouble) -> None:
    double.inject(QUERY, *[Fault(huge_bytes=3 * 2**20)] * 10)
    with pytest.raises(QueryError, match=r"larger than 1 MiB.*even for one span"):
        read(double, max_response_bytes=2**20, page_size=8)


def _unfilterable(tracer) -> None:
    tracer.start_span("has", attributes={"http.2xx": 5, "a b": "x", "ok": 0}).end()
    tracer.start_span("zero", attributes={"http.2xx": 0, "a b": "", "ok": 0}).end()
    tracer.start_span("lacks").end()


@pytest.mark.parametrize("version", ["v0.129.0", "v0.134.0"])
def test_keys_the_filter_grammar_cannot_express_do_not_abort_the_read(version: str) -> None:
    """`http.2xx` lexes as FREETEXT and `a b` as two keys (grammar/FilterQuery.g4), so before v0.134 the
    EXISTS check that tells a default from absence cannot be asked for them: their non-default values are
    kept, their defaults are left out as absent and counted; from v0.134 null says absence itself."""
    with SigNozDouble(version=version) as d:
        export_spans(d, {"service.name": "agent", "service.version": "v2"}, _unfilterable)
        report = SigNozReport()
        spans = {s.name: dict(s.attributes) for s in read(d, report=report)}
    assert spans["has"] == {"http.2xx": 5, "a b": "x", "ok": 0}
    assert spans["lacks"] == {}
    if version == "v0.129.0":
        assert spans["zero"] == {"ok": 0}  # the filterable default was checked with EXISTS and kept
        assert report.unfilterable_keys == {"http.2xx", "a b"} and report.defaults_dropped == 4
    else:
        assert spans["zero"] == {"http.2xx": 0, "a b": "", "ok": 0}
        assert report.defaults_dropped == 0


def test_the_dropped_defaults_warning_names_five_keys_and_says_there_are_more(
    caplog: pytest.LogCaptureFixture,
) -> None:
    names = [f"k{i} x" for i in range(6)]  # a space: the filter grammar reads two keys

    def spans(tracer) -> None:
        tracer.start_span("zero", attributes=dict.fromkeys(names, "")).end()
        tracer.start_span("lacks").end()

    with SigNozDouble(version="v0.129.0") as d:
        export_spans(d, {"service.name": "agent", "service.version": "v2"}, spans)
        with caplog.at_level(logging.WARNING):
            read(d)
    warnings = [r.getMessage() for r in caplog.records if "filter grammar cannot name" in r.getMessage()]
    assert len(warnings) == 1
    assert "12 value(s) of 6 key(s) SigNoz's filter grammar cannot name " in warnings[0]
    assert "('k0 x', 'k1 x', 'k2 x', 'k3 x', 'k4 x', …)" in warnings[0]


def test_the_dropped_defaults_are_reported_on_stderr(tmp_path: Path) -> None:
    with SigNozDouble(version="v0.129.0") as d:
        export_spans(d, {"service.name": "agent", "service.version": "v2"}, _unfilterable)
        done = _cli(
            d, tmp_path, "fetch", "--signoz", d.url, "--release", "v2", "--since", "1h", "-o", "out.jsonl"
        )
    assert done.returncode == 0, done.stderr
    assert "4 value(s) of 2 key(s)" in done.stderr and "'http.2xx'" in done.stderr
