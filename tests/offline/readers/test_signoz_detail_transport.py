"""The SigNoz client on the wire: what each request carries, how answers are bounded, decoded, retried and
refused, and what every refusal says. A scripted loopback server answers what SigNoz (or a proxy in front
of it) could answer, and records what it was asked."""

from __future__ import annotations

import gzip
import json
import logging
import os
import re
import socket
import threading
import tracemalloc
import zlib
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from otel_provenance.errors import QueryError
from otel_provenance.offline.readers.signoz_http import ResponseTooLargeError, exchange
from otel_provenance.offline.readers.signoz_query import FieldKey, SigNozClient
from signoz_clock import FakeClock

KEY = "sk-live-0123456789abcdef"
FORBIDDEN = (
    "not authorized (403 forbidden): the key is valid but may not read this; not retried. Give its service "
    "account the Viewer role, or, with fine-grained authorization (SigNoz v0.134+), a grant to read traces"
)


class Answer:
    def __init__(
        self, status: int = 200, body: Any = b"", headers: dict[str, str] | None = None, chunked: bool = False
    ) -> None:
        self.status = status
        self.body = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.headers = headers or {}
        self.chunked = chunked


class Scripted:
    """Answers requests in order from its script (the last answer repeats) and records each request."""

    def __init__(self, *answers: Answer) -> None:
        self.answers = deque(answers)
        self.requests: list[dict[str, Any]] = []
        self.threads: list[tuple[str, bool]] = []  # the client threads alive while a request was served
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _answer(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                parts = urlsplit(self.path)
                owner.requests.append(
                    {
                        "method": self.command,
                        "path": parts.path,
                        "query": parse_qs(parts.query),
                        "headers": dict(self.headers.items()),
                        "body": body,
                    }
                )
                owner.threads.extend(
                    (t.name, t.daemon) for t in threading.enumerate() if t.name.startswith("otel-provenance")
                )
                answer = owner.answers.popleft() if len(owner.answers) > 1 else owner.answers[0]
                self.send_response(answer.status)
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                if answer.chunked:
                    self.send_header("Transfer-Encoding", "chunked")
                else:
                    self.send_header("Content-Length", str(len(answer.body)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                try:
                    if not answer.chunked:
                        self.wfile.write(answer.body)
                        return
                    for i in range(0, len(answer.body), 65536):
                        part = answer.body[i : i + 65536]
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                    self.wfile.write(b"0\r\n\r\n")
                except OSError:  # the client stopped reading (a refused answer)
                    pass

            do_GET = do_POST = _answer

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True

    def __enter__(self) -> Scripted:
        # polls for shutdown() every 10 ms: socketserver's default half second was most of each test's time
        threading.Thread(target=self.server.serve_forever, args=(0.01,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"


def _signoz_error(status: int, message: str, errors: list[str] | None = None) -> Answer:
    error: dict[str, Any] = {"type": "x", "code": "x", "message": message}
    if errors:
        error["errors"] = [{"message": m} for m in errors]
    return Answer(status, {"status": "error", "error": error})


def _message(call: Any) -> str:
    with pytest.raises(QueryError) as info:
        call()
    return str(info.value)


def _query(client: SigNozClient, **overrides: Any) -> list[dict[str, Any]]:
    args: dict[str, Any] = {
        "start_ms": 1,
        "end_ms": 2,
        "expression": "resource.service.version:string = 'v2'",
        "select": [FieldKey("name", "span", "string")],
        "order": [FieldKey("timestamp", "span", "number")],
        "limit": 10,
        "offset": 0,
    }
    return client.query_raw(**{**args, **overrides})


def _results(*rows: Any) -> Answer:
    return Answer(200, {"status": "success", "data": {"data": {"results": [{"rows": list(rows)}]}}})


# --- what a request carries ------------------------------------------------------------------------------


def test_a_request_carries_the_key_asks_for_json_uncompressed_and_runs_in_a_named_daemon_thread() -> None:
    with (
        Scripted(Answer(200, {"version": "v0.134.2"})) as server,
        SigNozClient(server.url, api_key=KEY) as client,
    ):
        assert client.version() == (0, 134, 2)
    (request,) = server.requests
    assert (request["method"], request["path"]) == ("GET", "/api/v1/version")
    headers = {k.lower(): v for k, v in request["headers"].items()}
    assert headers["signoz-api-key"] == KEY and "authorization" not in headers
    assert headers["accept"] == "application/json"
    assert headers["accept-encoding"] == "identity"
    assert server.threads  # the request ran in its own thread, a daemon: an abandoned one never holds up exit
    assert all(thread == ("otel-provenance-signoz", True) for thread in server.threads)


def test_proxy_settings_in_the_environment_are_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    """The key goes to the URL given, never through a proxy picked up from the environment."""
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    with (
        Scripted(Answer(200, {"version": "v0.129.0"})) as server,
        SigNozClient(server.url, api_key=KEY, deadline_s=5) as client,
    ):
        assert client.version() == (0, 129, 0)


def test_a_redirect_is_refused_not_followed() -> None:
    """Following it would send the key wherever the Location points."""
    with (
        Scripted(Answer(302, headers={"Location": "/elsewhere"}), _results()) as server,
        SigNozClient(server.url, api_key=KEY) as client,
    ):
        message = _message(lambda: _query(client))
    assert message == f"{server.url}/api/v5/query_range: HTTP 302"
    assert [r["path"] for r in server.requests] == ["/api/v5/query_range"]


def test_a_raw_query_asks_for_exactly_what_signoz_v5_decodes() -> None:
    with (
        Scripted(_results({"data": {"name": "x"}})) as server,
        SigNozClient(server.url, api_key=KEY) as client,
    ):
        rows = _query(
            client,
            start_ms=1000,
            end_ms=2000,
            select=[FieldKey("name", "span", "string"), FieldKey("k", "attribute", "number")],
            order=[FieldKey("timestamp", "span", "number"), FieldKey("span_id", "span", "string")],
            limit=10_000,
            offset=20,
        )
    assert rows == [{"name": "x"}]
    (request,) = server.requests
    assert (request["method"], request["path"]) == ("POST", "/api/v5/query_range")

    def key(name: str, context: str, data_type: str) -> dict[str, str]:
        return {"name": name, "fieldContext": context, "fieldDataType": data_type, "signal": "traces"}

    assert json.loads(request["body"]) == {
        "schemaVersion": "v1",
        "start": 1000,
        "end": 2000,
        "requestType": "raw",
        "noCache": True,
        "variables": {},
        "formatOptions": {"formatTableResultForUI": False, "fillGaps": False},
        "compositeQuery": {
            "queries": [
                {
                    "type": "builder_query",
                    "spec": {
                        "name": "A",
                        "signal": "traces",
                        "disabled": False,
                        "filter": {"expression": "resource.service.version:string = 'v2'"},
                        "selectFields": [key("name", "span", "string"), key("k", "attribute", "number")],
                        "order": [
                            {"key": key("timestamp", "span", "number"), "direction": "asc"},
                            {"key": key("span_id", "span", "string"), "direction": "asc"},
                        ],
                        "limit": 10_000,
                        "offset": 20,
                    },
                }
            ]
        },
    }


@pytest.mark.parametrize("limit", [0, -1, 10_001])
def test_a_page_size_outside_signoz_cap_is_refused_before_asking(limit: int) -> None:
    with Scripted(_results()) as server, SigNozClient(server.url, api_key=KEY) as client:
        message = _message(lambda: _query(client, limit=limit))
        assert _query(client, limit=1) == []
    assert message == f"page size must be 1..10000 (SigNoz's cap), got {limit}"
    assert len(server.requests) == 1


def test_rows_null_and_several_results_are_read_as_rows() -> None:
    body = {
        "data": {"data": {"results": [{"rows": None}, {"rows": [{"data": {"a": 1}}, {"data": {"a": 2}}]}]}}
    }
    with Scripted(Answer(200, body)) as server, SigNozClient(server.url, api_key=KEY) as client:
        assert _query(client) == [{"a": 1}, {"a": 2}]
    with (
        Scripted(Answer(200, {"data": {"data": {"results": None}}})) as server,
        SigNozClient(server.url, api_key=KEY) as client,
    ):
        assert _query(client) == []


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ({"status": "success"}, "answered without data.data.results"),
        ({"data": {"results": []}}, "answered without data.data.results"),
        ({"data": None}, "answered without data.data.results"),
        ([], "answered without data.data.results"),
        ({"data": {"data": {"results": [{"rows": [{"timestamp": "t"}]}]}}}, "returned a row without data"),
        ({"data": {"data": {"results": [{"rows": ["text"]}]}}}, "returned a row without data"),
        ({"data": {"data": {"results": [{"rows": [{"data": []}]}]}}}, "returned a row without data"),
    ],
)
def test_a_query_answer_that_is_not_signoz_shaped_is_an_error(body: Any, problem: str) -> None:
    with Scripted(Answer(200, body)) as server, SigNozClient(server.url, api_key=KEY) as client:
        message = _message(lambda: _query(client))
    assert message == f"{server.url}/api/v5/query_range {problem}"


def test_an_answer_that_is_not_json_is_an_error() -> None:
    with (
        Scripted(Answer(200, b"<html>welcome to nginx</html>")) as server,
        SigNozClient(server.url, api_key=KEY) as client,
    ):
        message = _message(lambda: _query(client))
    assert message == f"{server.url}/api/v5/query_range: answered HTTP 200 with a body that is not JSON"


# --- the key catalogue ---------------------------------------------------------------------------------


def _keys(complete: bool | None, *names: str) -> Answer:
    data: dict[str, Any] = {
        "keys": {n: [{"name": n, "fieldContext": "attribute", "fieldDataType": "string"}] for n in names}
    }
    if complete is not None:
        data["complete"] = complete
    return Answer(200, {"status": "success", "data": data})


def test_the_key_catalogue_is_asked_for_traces_in_the_window() -> None:
    with Scripted(_keys(True, "k")) as server, SigNozClient(server.url, api_key=KEY) as client:
        assert client.field_keys(1000, 2000) == [FieldKey("k", "attribute", "string")]
    (request,) = server.requests
    assert (request["method"], request["path"]) == ("GET", "/api/v1/fields/keys")
    assert request["query"] == {
        "signal": ["traces"],
        "startUnixMilli": ["1000"],
        "endUnixMilli": ["2000"],
        "limit": ["10000"],
    }


def test_a_read_asks_the_key_catalogue_for_its_own_window(caplog: pytest.LogCaptureFixture) -> None:
    """``read_signoz`` passes its window on to the key catalogue (which SigNoz ignores for traces today,
    but a server that honours it must get the read's window, not none)."""
    from otel_provenance.offline.readers.signoz import read_signoz

    answers = (Answer(200, {"version": "v0.134.2"}), _keys(True, "k"))
    with Scripted(*answers) as server, caplog.at_level(logging.WARNING):
        assert list(read_signoz(server.url, release="v1", start_ms=1000, end_ms=2000, api_key=KEY)) == []
    _version, catalogue = server.requests
    assert catalogue["path"] == "/api/v1/fields/keys"
    assert (catalogue["query"]["startUnixMilli"], catalogue["query"]["endUnixMilli"]) == (["1000"], ["2000"])


def test_an_answer_without_complete_is_complete() -> None:
    with Scripted(_keys(None, "k")) as server, SigNozClient(server.url, api_key=KEY) as client:
        assert client.field_keys(1, 2) == [FieldKey("k", "attribute", "string")]
    assert len(server.requests) == 1


def test_an_incomplete_catalogue_is_asked_again_with_ten_times_the_limit() -> None:
    with (
        Scripted(_keys(False, "a"), _keys(True, "a", "b")) as server,
        SigNozClient(server.url, api_key=KEY) as client,
    ):
        assert [k.name for k in client.field_keys(1, 2)] == ["a", "b"]
    assert [r["query"]["limit"] for r in server.requests] == [["10000"], ["100000"]]


def test_a_catalogue_incomplete_at_a_million_keys_is_an_error() -> None:
    # a short deadline: a client that never reaches a million asks again and again until it ends
    with (
        Scripted(_keys(False, "a")) as server,
        SigNozClient(server.url, api_key=KEY, deadline_s=10) as client,
    ):
        message = _message(lambda: client.field_keys(1, 2))
    assert message == f"{server.url}: more than 1000000 attribute keys; narrow the time window"
    assert [r["query"]["limit"] for r in server.requests] == [["10000"], ["100000"], ["1000000"]]


@pytest.mark.parametrize(
    "body", [{"status": "success"}, {"data": {"keys": []}}, {"data": []}, [], {"data": {"complete": True}}]
)
def test_a_catalogue_answer_without_data_keys_is_not_signoz(body: Any) -> None:
    with Scripted(Answer(200, body)) as server, SigNozClient(server.url, api_key=KEY) as client:
        message = _message(lambda: client.field_keys(1, 2))
    assert message == f"{server.url}/api/v1/fields/keys answered without data.keys; is this SigNoz?"


# --- the version ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("body", [[], {"version": 129}, {"ee": "Y"}, "v0.129.0"])
def test_a_version_answer_without_a_version_text_is_unknown(body: Any) -> None:
    with Scripted(Answer(200, body)) as server, SigNozClient(server.url, api_key=KEY) as client:
        assert client.version() is None


def test_a_refused_version_is_unknown_and_says_why(caplog: pytest.LogCaptureFixture) -> None:
    with (
        Scripted(_signoz_error(403, "forbidden")) as server,
        SigNozClient(server.url, api_key=KEY) as client,
        caplog.at_level(logging.WARNING),
    ):
        assert client.version() is None
    assert [r.getMessage() for r in caplog.records] == [
        f"could not read the SigNoz version ({server.url}/api/v1/version: {FORBIDDEN}); treating absent-key "
        "defaults as suspect"
    ]


# --- refusals ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        (
            _signoz_error(401, "unauthenticated"),
            "SigNoz refused the API key (401 unauthenticated); set SIGNOZ_API_KEY to a valid key "
            "(Settings → Service Accounts → Keys, or POST /api/v1/pats before v0.118)",
        ),
        (
            _signoz_error(403, "forbidden"),
            FORBIDDEN,
        ),
        (
            _signoz_error(404, "no route"),
            "not found (404); check the base URL (e.g. http://localhost:8080) and that SigNoz is v0.91 or "
            "newer",
        ),
        (
            _signoz_error(400, "Found 1 errors while parsing the search expression.", ["key `x` not found"]),
            "SigNoz rejected the query (400 Found 1 errors while parsing the search expression.: key `x` not "
            "found); check the release name and time window",
        ),
        (_signoz_error(300, "multiple choices"), "HTTP 300 multiple choices"),
        (_signoz_error(418, "teapot"), "HTTP 418 teapot"),
        (Answer(405, b""), "HTTP 405"),
    ],
    ids=["401", "403", "404", "400", "300", "418", "405-no-body"],
)
def test_each_refusal_says_what_to_fix_and_is_not_retried(answer: Answer, says: str) -> None:
    with Scripted(answer, _results()) as server, SigNozClient(server.url, api_key=KEY) as client:
        message = _message(lambda: _query(client))
    assert message == f"{server.url}/api/v5/query_range: {says}"
    assert len(server.requests) == 1


# --- retries, the deadline -----------------------------------------------------------------------------


def _waits(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "retrying in" in r.getMessage()]


def test_backoff_doubles_from_a_quarter_second(caplog: pytest.LogCaptureFixture) -> None:
    clock = FakeClock()
    with (
        Scripted(Answer(503), Answer(502), Answer(504), _results()) as server,
        SigNozClient(server.url, api_key=KEY, clock=clock) as client,
        caplog.at_level(logging.INFO),
    ):
        assert _query(client) == []
    url = f"{server.url}/api/v5/query_range"
    assert _waits(caplog) == [
        f"SigNoz {url}: HTTP 503; retrying in 0.25 s",
        f"SigNoz {url}: HTTP 502; retrying in 0.50 s",
        f"SigNoz {url}: HTTP 504; retrying in 1.00 s",
    ]
    assert clock.sleeps == [0.25, 0.5, 1.0]  # waited as said, on the client's clock


def test_a_retry_after_wait_counts_as_an_attempt_for_the_backoff(caplog: pytest.LogCaptureFixture) -> None:
    throttled = _signoz_error(429, "too many requests")
    throttled.headers = {"Retry-After": "0"}
    clock = FakeClock()
    with (
        Scripted(throttled, throttled, Answer(503), _results()) as server,
        SigNozClient(server.url, api_key=KEY, clock=clock) as client,
        caplog.at_level(logging.INFO),
    ):
        assert _query(client) == []
    url = f"{server.url}/api/v5/query_range"
    assert _waits(caplog) == [  # Retry-After: 0 never waits less than the back-off (#36)
        f"SigNoz {url}: HTTP 429 too many requests; retrying in 0.25 s",
        f"SigNoz {url}: HTTP 429 too many requests; retrying in 0.50 s",
        f"SigNoz {url}: HTTP 503; retrying in 1.00 s",
    ]
    assert clock.sleeps == [0.25, 0.5, 1.0]


def test_a_repeated_500_stops_after_three_tries_and_says_why() -> None:
    with (
        Scripted(_signoz_error(500, "Something went wrong on our end.")) as server,
        SigNozClient(server.url, api_key=KEY, deadline_s=600, clock=FakeClock()) as client,
    ):
        message = _message(lambda: _query(client))
    assert message == (
        f"{server.url}/api/v5/query_range: SigNoz failed the query 3 times (HTTP 500 Something went wrong "
        "on our end.); a ClickHouse error repeats on retry: check SigNoz's logs, or narrow the time window"
    )
    assert len(server.requests) == 3


def test_the_deadline_error_names_the_last_failure_and_what_to_do() -> None:
    """A Retry-After past the deadline: the read waits out the deadline, then names the 503 it got."""
    clock = FakeClock()
    with (
        Scripted(Answer(503, headers={"Retry-After": "60"})) as server,
        SigNozClient(server.url, api_key=KEY, deadline_s=2.0, clock=clock) as client,
    ):
        message = _message(lambda: _query(client))
    assert message == (
        f"{server.url}/api/v5/query_range: no answer within the 2 s deadline (HTTP 503); "
        "check that SigNoz is up, or raise --deadline"
    )
    assert len(server.requests) == 1
    assert clock.sleeps == [2.0]  # the rest of the deadline, not the minute asked


def test_the_last_second_before_the_deadline_still_waits_between_tries() -> None:
    clock = FakeClock()
    with (
        Scripted(Answer(503)) as server,
        SigNozClient(server.url, api_key=KEY, deadline_s=0.8, clock=clock) as client,
    ):
        _message(lambda: _query(client))
    assert len(server.requests) == 3  # at 0, 0.25 and 0.75 s
    assert clock.sleeps == [0.25, 0.5, pytest.approx(0.05)]  # the last one: what was left of the deadline


def test_a_deadline_spent_before_the_first_request_says_timed_out() -> None:
    with Scripted(_results()) as server, SigNozClient(server.url, api_key=KEY, deadline_s=1e-9) as client:
        message = _message(lambda: _query(client))
    assert message == (
        f"{server.url}/api/v5/query_range: no answer within the 1e-09 s deadline (timed out); "
        "check that SigNoz is up, or raise --deadline"
    )
    assert server.requests == []


def test_an_unreachable_server_is_named_as_such_at_the_deadline() -> None:
    with Scripted(_results()) as server:
        url = server.url
    with SigNozClient(url, api_key=KEY, deadline_s=2.0, clock=FakeClock()) as client:
        message = _message(lambda: _query(client))
    # the connect is timed by httpx on the real clock: on a loaded machine it may run out instead
    assert re.fullmatch(
        rf"{re.escape(url)}/api/v5/query_range: no answer within the 2 s deadline \((cannot connect "
        r"\(ConnectError\)|timed out: no complete answer within [0-9.e-]+ s)\); check that SigNoz is up, or "
        r"raise --deadline",
        message,
    ), message


def test_a_server_that_never_finishes_its_answer_ends_at_the_deadline() -> None:
    from signoz_double import Fault, SigNozDouble

    clock = FakeClock()
    with SigNozDouble(clock=clock) as double:
        double.inject("/api/v5/query_range", *[Fault(drip_s=0.05)] * 20)
        with SigNozClient(
            double.url, api_key=double.api_key, timeout_s=0.2, deadline_s=2.0, clock=clock
        ) as client:
            message = _message(lambda: _query(client))
    assert re.fullmatch(
        rf"{re.escape(double.url)}/api/v5/query_range: no answer within the 2 s deadline \(timed out: no "
        r"complete answer within 0\.\d+ s\); check that SigNoz is up, or raise --deadline",
        message,
    ), message


@pytest.mark.parametrize(
    ("path", "fault"),
    [("/api/v1/version", {"drip_headers": True}), ("/api/v5/query_range", {})],
    ids=["headers", "body"],
)
def test_at_its_deadline_a_request_is_cut_its_thread_ended_and_its_socket_closed(
    monkeypatch: pytest.MonkeyPatch, path: str, fault: dict[str, Any]
) -> None:
    """Cancelled, not abandoned: by the time the deadline's error is raised, the thread that read the
    unfinished answer has ended and its socket is closed, whether the answer stopped in its headers or
    in its body."""
    import httpcore

    from signoz_double import Fault, SigNozDouble

    streams: list[Any] = []
    connect = httpcore.SyncBackend.connect_tcp

    def connect_and_record(self: Any, *args: Any, **kwargs: Any) -> Any:
        streams.append(connect(self, *args, **kwargs))
        return streams[-1]

    monkeypatch.setattr(httpcore.SyncBackend, "connect_tcp", connect_and_record)
    clock = FakeClock()
    with SigNozDouble(clock=clock) as double:
        double.inject(path, Fault(drip_s=0.05, **fault))
        before = set(threading.enumerate())
        with SigNozClient(
            double.url, api_key=double.api_key, timeout_s=5, deadline_s=5, clock=clock
        ) as client:
            message = _message(client.version if path == "/api/v1/version" else lambda: _query(client))
            left = [t.name for t in set(threading.enumerate()) - before if t.is_alive()]
            (stream,) = streams
            closed = stream.get_extra_info("socket").fileno() == -1
    assert message == (
        f"{double.url}{path}: no answer within the 5 s deadline (timed out: no complete answer within 5 s); "
        "check that SigNoz is up, or raise --deadline"
    )
    # only the double's own thread, still holding its end of the connection open, is new
    assert [name for name in left if "process_request_thread" not in name] == []
    assert closed


def test_a_connection_made_after_its_deadline_is_shut_at_once_and_sends_nothing() -> None:
    """A connect cannot be cut from outside; when it completes after the budget, the request's line shuts
    the new connection down before anything is sent on it."""
    from otel_provenance.offline.readers.signoz_http import _Line

    line = _Line()
    assert line.cut() is False  # nothing to cut yet: the waiting thread does not wait for a connect
    ours, peer = socket.socketpair()
    with ours, peer:

        class Stream:  # what httpcore reports: a network stream that hands out its socket
            @staticmethod
            def get_extra_info(name: str) -> Any:
                return ours if name == "socket" else None

        line.trace("connection.connect_tcp.complete", {"return_value": Stream()})
        peer.setblocking(False)
        assert peer.recv(1) == b""  # the end of the stream, already there: nothing was sent
        with pytest.raises(OSError):
            ours.sendall(b"GET / HTTP/1.1\r\n")


def test_a_client_accepts_a_timeout_and_deadline_under_a_second_and_trims_the_url() -> None:
    with SigNozClient("https://signoz.example/BOX/", api_key=KEY, timeout_s=0.5, deadline_s=0.5) as client:
        assert repr(client) == "SigNozClient('https://signoz.example/BOX')"


# --- one bounded exchange ------------------------------------------------------------------------------

PAD = os.urandom(150_000).hex().encode()  # 300 kB that gzip cannot shrink much: several network reads


def _exchange(url: str, max_bytes: int) -> bytes:
    with httpx.Client() as http:
        return exchange(http, "GET", url, headers={}, budget=30.0, max_bytes=max_bytes).body


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_an_answer_of_exactly_the_cap_is_read_whole_one_byte_more_is_refused(chunked: bool) -> None:
    with Scripted(Answer(200, PAD, chunked=chunked)) as server:
        assert _exchange(server.url, len(PAD)) == PAD
        with pytest.raises(ResponseTooLargeError) as info:
            _exchange(server.url + "/x", len(PAD) - 1)
    mib = (len(PAD) - 1) / 2**20
    assert (
        str(info.value) == f"{server.url}/x: SigNoz's answer is larger than {mib:g} MiB; not read into memory"
    )


@pytest.mark.parametrize("encoding", ["gzip", "GZIP"])
def test_a_gzip_answer_is_inflated_within_the_cap(encoding: str) -> None:
    packed = gzip.compress(PAD)
    with Scripted(Answer(200, packed, headers={"Content-Encoding": encoding}, chunked=True)) as server:
        assert _exchange(server.url, len(PAD)) == PAD
        with pytest.raises(ResponseTooLargeError) as info:
            _exchange(server.url, len(PAD) - 1)
    assert str(info.value).startswith(f"{server.url}: SigNoz's answer is larger than")


def test_a_small_gzip_answer_that_inflates_past_the_cap_is_refused() -> None:
    """One compressed chunk inflating to more than the cap: the inflater stops at the cap."""
    packed = gzip.compress(b"0" * 3_000_000)
    assert len(packed) < 65536
    with Scripted(Answer(200, packed, headers={"Content-Encoding": "gzip"})) as server:
        assert _exchange(server.url, 3_000_000) == b"0" * 3_000_000
        with pytest.raises(ResponseTooLargeError):
            _exchange(server.url, 2_999_999)


def test_a_gzip_bomb_is_refused_without_inflating_it_into_memory() -> None:
    """200 MB of zeros packed into about 200 kB: no inflated chunk may be larger than what is left of
    the cap, so refusing it holds about the cap in memory, not a chunk's worth of the bomb."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: a gzip header and trailer
    packed = b"".join(packer.compress(bytes(2**20)) for _ in range(200)) + packer.flush()
    assert len(packed) < 300_000
    with Scripted(Answer(200, packed, headers={"Content-Encoding": "gzip"})) as server:
        tracemalloc.start()
        try:
            with pytest.raises(ResponseTooLargeError):
                _exchange(server.url, 2**20)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert peak < 16 * 2**20


def test_an_answer_labelled_gzip_that_is_not_gzip_is_a_query_error() -> None:
    with Scripted(Answer(200, b'{"status": "success"}', headers={"Content-Encoding": "gzip"})) as server:
        message = _message(lambda: _exchange(server.url + "/api/v1/version", 1024))
    assert message.startswith(
        f"{server.url}/api/v1/version: the answer says Content-Encoding gzip but is not gzip data ("
    )


def test_a_gzip_answer_cut_short_is_a_query_error_not_a_shorter_answer() -> None:
    packed = gzip.compress(PAD)
    with Scripted(Answer(200, packed[: len(packed) // 2], headers={"Content-Encoding": "gzip"})) as server:
        message = _message(lambda: _exchange(server.url, 2 * len(PAD)))
    assert message == f"{server.url}: the gzip answer ends early; nothing of it was read"


def test_an_answer_in_another_encoding_is_refused() -> None:
    with Scripted(Answer(200, b"\x1b\x00", headers={"Content-Encoding": "br"})) as server:
        message = _message(lambda: _exchange(server.url + "/api/v1/version", 1024))
    assert message == f"{server.url}/api/v1/version: answered with Content-Encoding 'br'; expected identity"


def test_a_wait_past_the_deadline_is_logged_as_the_time_left(caplog: pytest.LogCaptureFixture) -> None:
    """A Retry-After of a minute with under a second of the deadline left: the read waits (and says it
    waits) only what is left, then ends at the deadline."""
    with (
        Scripted(Answer(503, headers={"Retry-After": "60"})) as server,
        SigNozClient(server.url, api_key=KEY, deadline_s=0.6, clock=FakeClock()) as client,
        caplog.at_level(logging.INFO),
    ):
        _message(lambda: _query(client))
    (wait,) = _waits(caplog)
    left = float(wait.rsplit("retrying in ", 1)[1].removesuffix(" s"))
    assert 0 < left <= 0.6
