"""SigNoz client hardening (#36): what it prints and how fast it retries.

- a password in the URL is never printed (messages, log records, the CLI's stderr), and is still sent;
- a field-key name (or type) the server chose is printed filtered: control characters escaped, and
  withheld when it shows the API key — the key never reaches stderr;
- ``Retry-After: 0`` gets the exponential back-off, not ~20 requests a second;
- whatever the server does, the client never plans a wait past its deadline (on the fake clock).

The SigNoz double on loopback, the fake clock; one real process for stderr.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from otel_provenance.errors import QueryError
from otel_provenance.offline.readers.signoz import read_signoz
from otel_provenance.offline.readers.signoz_http import printable, without_credentials
from signoz_clock import FakeClock
from signoz_double import Fault, SigNozDouble, export_spans, window_around_now

QUERY = "/api/v5/query_range"
KEY = "sk-live-SECRET-7f3a9c0d1e"
PASSWORD = "pw-Hunter2-ZZ"


def _with_password(url: str) -> str:
    return url.replace("http://", f"http://reader:{PASSWORD}@")


@pytest.fixture
def double():
    with SigNozDouble(version="v0.129.0", api_key=KEY, clock=FakeClock()) as d:
        export_spans(
            d,
            {"service.name": "agent", "service.version": "v2"},
            lambda t: t.start_span("execute_tool payment.refund", attributes={"agent.retry.number": 1}).end(),
        )
        yield d


def _read(double: SigNozDouble, url: str | None = None, **kwargs):
    start, end = window_around_now()
    kwargs.setdefault("api_key", KEY)
    kwargs.setdefault("clock", double.clock)
    return list(read_signoz(url or double.url, release="v2", start_ms=start, end_ms=end, **kwargs))


def test_without_credentials_and_printable() -> None:
    assert without_credentials("https://u:p@host:8080/x?y=1") == "https://host:8080/x?y=1"
    assert without_credentials("https://u:p@ss@host/") == "https://host/"
    assert without_credentials("http://host/a@b") == "http://host/a@b"  # an @ in the path is no credential
    assert printable("a\x1b[31mb\nc\u202ed", "") == "a\\x1b[31mb\\nc\\u202ed"
    assert printable(f"name-{KEY}", KEY) == "(withheld: it echoed the credential)"
    assert printable("k" + "\x00".join(KEY), KEY) == "(withheld: it echoed the credential)"
    assert printable("x" * 500, "", limit=10) == "x" * 9 + "…"


def test_a_password_in_the_url_is_never_printed(
    double: SigNozDouble, caplog: pytest.LogCaptureFixture
) -> None:
    """The credentials go as Basic auth (for a proxy in front of SigNoz; SigNoz itself, like the
    double, refuses a request with an Authorization header: 401), never in a message or a log record."""
    caplog.set_level(logging.DEBUG)
    url = _with_password(double.url)
    double.inject("/api/v1/fields/keys", *[Fault(status=503)] * 50)
    with pytest.raises(QueryError) as info:
        _read(double, url, deadline_s=1.0)
    message = str(info.value)
    assert message.startswith(f"{double.url}/api/v1/fields/keys: no answer within the 1 s deadline")
    with double._lock:
        double._faults.clear()
    with pytest.raises(QueryError) as refused:
        _read(double, url)
    assert "401" in str(refused.value) and double.url in str(refused.value)
    with pytest.raises(QueryError) as scheme:
        _read(double, url.replace("http://", "ftp://"))
    printed = [message, str(refused.value), str(scheme.value), *(r.getMessage() for r in caplog.records)]
    assert len(printed) > 5
    assert not [line for line in printed if PASSWORD in line or "reader:" in line]


def test_server_chosen_key_names_are_filtered_and_never_show_the_key(
    double: SigNozDouble, tmp_path: Path
) -> None:
    with double._lock:
        double.catalogue.update(
            {
                (f"leak.{KEY}", "attribute", "bytes"),  # an unsupported type: its name is printed
                (f"split.{KEY.upper().replace('-', '_')}", "attribute", "bytes"),
                ("evil\x1b]0;pwned\x07\x1b[2J.name", "attribute", "bytes"),
                ("plain.name", "attribute", f"type-{KEY}"),
                ("long." + "n" * 300, "attribute", "bytes"),  # a name is cut at 120 characters
            }
        )
    argv = [
        sys.executable, "-c", "from otel_provenance.cli import main; main()",
        "fetch", "--signoz", double.url, "--release", "v2", "--since", "2h",
        "-o", str(tmp_path / "out.jsonl"),
    ]  # fmt: skip
    env = {**os.environ, "SIGNOZ_API_KEY": KEY}
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    err = done.stderr
    assert "skipping SigNoz key" in err
    assert KEY not in err and KEY.upper() not in err and KEY[-12:] not in err
    assert "\x1b" not in err and "\x07" not in err
    assert "evil\\x1b]0;pwned\\x07\\x1b[2J.name" in err  # shown, escaped
    assert "long." + "n" * 114 + "…" in err and "n" * 115 not in err
    assert err.count("(withheld: it echoed the credential)") == 3


class _Watch(FakeClock):
    """The fake clock, plus the latest time the client (the test's thread) planned to wait until."""

    def __init__(self) -> None:
        super().__init__()
        self.start = self.monotonic()
        self.horizon = self.start
        self.main = threading.get_ident()

    def _plan(self, seconds: float) -> None:
        if threading.get_ident() == self.main:  # the client; the double sleeps in its own threads
            self.horizon = max(self.horizon, self.monotonic() + seconds)

    def sleep(self, seconds: float) -> None:
        self._plan(seconds)
        super().sleep(seconds)

    def wait(self, event: threading.Event, seconds: float) -> bool:
        self._plan(seconds)
        return super().wait(event, seconds)


SERVERS = {
    "503 for ever": [Fault(status=503)],
    "Retry-After: 0 for ever": [Fault(status=429, retry_after=0)],
    "Retry-After: an hour": [Fault(status=503, retry_after=3600)],
    "slow 503s": [Fault(status=503, delay_s=0.4)],
    "never answers": [Fault(delay_s=3600)],
    "drips": [Fault(drip_s=0.5)],
}


@pytest.mark.parametrize("server", list(SERVERS))
def test_the_client_never_waits_past_its_deadline(server: str) -> None:
    clock = _Watch()
    with SigNozDouble(version="v0.129.0", api_key=KEY, clock=clock) as double:
        export_spans(double, {"service.version": "v2"}, lambda t: t.start_span("s").end())
        double.inject(QUERY, *SERVERS[server] * 200)
        with pytest.raises(QueryError, match=r"deadline"):
            _read(double, deadline_s=1.0, timeout_s=30.0)
        asked = double.query_count()
    assert clock.horizon - clock.start <= 1.0 + 1e-9, server
    assert asked <= 4, (server, asked)  # 0, 0.25, 0.75 s: the back-off, whatever Retry-After says


def test_retry_after_zero_is_paced_by_the_backoff(double: SigNozDouble) -> None:
    double.inject(QUERY, *[Fault(status=429, retry_after=0)] * 200)
    clock = double.clock
    before = len(clock.sleeps)
    with pytest.raises(QueryError, match=r"60 s deadline \(HTTP 429"):
        _read(double, deadline_s=60.0)
    waits = clock.sleeps[before:]
    assert waits[:6] == [0.25, 0.5, 1.0, 2.0, 4.0, 8.0]
    assert double.query_count() <= 12  # ~0.2 a second over a minute, not ~20 a second
    assert min(waits[:-1]) >= 0.25
