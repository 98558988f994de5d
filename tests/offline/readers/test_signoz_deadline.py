"""The SigNoz read ends at its deadline on the real clock, whatever the server does (#36).

The fake-clock tests (test_signoz_hardening.py) check what the client *plans*; these run the machine's
clock, the real double on loopback and the real reader, and bound the elapsed time: a read with a 1 s
deadline must end within the deadline plus a slack, against a server that never answers, one that
answers 503 with ``Retry-After: 3600``, one that drips a byte at a time, and one that says 503 for ever.
The per-request timeout is a minute, so a read whose deadline stopped capping a request's time or a
back-off overruns by tens of seconds or more, not by the slack: the bound tells the two apart on a
loaded machine. The read runs in a daemon thread joined with that bound, so an overrun fails the test
at once instead of hanging the suite.
"""

from __future__ import annotations

import threading
import time

import pytest

from otel_provenance.errors import QueryError
from otel_provenance.offline.readers.signoz import read_signoz
from signoz_double import Fault, SigNozDouble, export_spans, window_around_now

QUERY = "/api/v5/query_range"
DEADLINE_S = 1.0
TIMEOUT_S = 60.0
SLACK_S = 5.0  # scheduling on a loaded 2-core machine; the overruns guarded against are 30 s and more

SERVERS = {
    "never answers": Fault(delay_s=3600),
    "Retry-After an hour": Fault(status=503, retry_after=3600),
    "drips": Fault(drip_s=0.2),
    "503 for ever": Fault(status=503),
}


@pytest.mark.parametrize("server", list(SERVERS))
def test_a_read_ends_within_its_deadline_on_the_real_clock(server: str) -> None:
    with SigNozDouble(version="v0.138.0") as double:
        export_spans(double, {"service.version": "v2"}, lambda t: t.start_span("s").end())
        double.inject(QUERY, *[SERVERS[server]] * 200)
        start, end = window_around_now()
        outcome: dict[str, BaseException | None] = {}

        def read() -> None:
            try:
                list(
                    read_signoz(
                        double.url,
                        release="v2",
                        start_ms=start,
                        end_ms=end,
                        api_key=double.api_key,
                        timeout_s=TIMEOUT_S,
                        deadline_s=DEADLINE_S,
                    )
                )
                outcome["error"] = None
            except BaseException as exc:  # handed to the test's thread
                outcome["error"] = exc

        began = time.monotonic()
        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(DEADLINE_S + SLACK_S)
        elapsed = time.monotonic() - began
        assert not reader.is_alive(), (
            f"{server}: still reading {elapsed:.1f} s into a {DEADLINE_S:g} s deadline"
        )
    error = outcome["error"]
    assert isinstance(error, QueryError) and "deadline" in str(error), (server, error)
    assert elapsed >= DEADLINE_S * 0.9  # it did wait for the deadline: the bound is not met by failing fast
