"""One HTTP exchange with SigNoz, bounded in time (on an injectable clock) and in size; its error texts.

Time: a read timeout bounds only the gap between two reads, so a server (or a proxy) that sends one
byte at a time could keep a request alive for ever. :func:`exchange` bounds the *whole* answer instead,
headers and body: it runs the request in a daemon thread and waits at most ``budget`` seconds for it.
At the budget the request is cancelled, not abandoned: its socket is shut down, which ends a read or a
write blocked in that thread at once (closing a socket would not wake a thread blocked on it), and the
thread is joined, so none reads past the budget and the connection is closed by the time
:class:`AnswerTimeoutError` is raised. Reads and writes therefore have no timeout of their own. The
socket comes from httpcore's ``trace`` request extension, which reports each connection as it is made,
so every request must make its own: the client given must keep no idle connection
(:class:`~.signoz_query.SigNozClient`'s keeps none). The connect itself cannot be cut from outside:
httpx's connect timeout, set to the budget, bounds the TCP and TLS handshakes (the name lookup before
them has only the system resolver's own); a request still connecting when its budget ends is left to
that, and shuts what it connects unused.

The clock: every deadline, timeout, back-off and wait of the SigNoz client reads a :class:`Clock`, never
:mod:`time` directly: ``monotonic()`` for the time, ``sleep(s)`` for a back-off, ``wait(event, s)`` for
an answer. It defaults to :data:`REAL_CLOCK`, the machine's; tests give the client (and the SigNoz test
double) a clock whose time moves only when something sleeps, so a deadline of minutes passes in no real
time and a read ends the same way on every run. Only the connect timeout is httpx's, on the real clock.

Size: the body is streamed and refused past ``max_bytes`` instead of being read whole into memory.

Error texts: SigNoz renders ``{"status": "error", "error": {"type", "code", "message", "url",
"errors": [{"message", "suggestions"}], "suggestions"}}`` (``pkg/http/render/render.go``,
``pkg/errors/http.go``; ``errors`` and ``suggestions`` always there since v0.131, left out when empty
before) and puts the cause of a refused filter in ``errors`` and what to do instead ("did you mean:
`limit`", "valid fields are …") in ``suggestions``: :func:`error_text` shows all three. Warnings ride
on a 200 as ``{"message": "Encountered warnings", "url", "warnings": [{"message"}]}``
(``pkg/querier/querier.go``); since v0.134 an unknown filter key is one of them, not a 400.

What is printed (#36): a URL without its ``user:password@`` (:func:`without_credentials`; the request
still sends them), and any text the server chose — a message, a field-key name, an id — through
:func:`printable`: control and invisible format characters escaped, cut to a length, and withheld
when it shows the API key (:func:`echoes_secret`).
"""

from __future__ import annotations

import base64
import json
import re
import socket
import threading
import time
import zlib
from dataclasses import dataclass
from typing import Any, Final, Protocol
from urllib.parse import unquote

import httpx

from ...errors import QueryError

MAX_RESPONSE_BYTES: Final = 64 * 1024 * 1024


class Clock(Protocol):
    """Where the SigNoz client reads the time and waits (see the module docstring)."""

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back."""

    def sleep(self, seconds: float) -> None:
        """Let ``seconds`` pass: a back-off before the next try."""

    def wait(self, event: threading.Event, seconds: float) -> bool:
        """Wait until ``event`` is set or ``seconds`` have passed; whether it was set in time."""


class _RealClock:
    """The machine's monotonic clock: the one place the SigNoz client reads :mod:`time`."""

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    def wait(self, event: threading.Event, seconds: float) -> bool:
        return event.wait(seconds)


REAL_CLOCK: Final[Clock] = _RealClock()


class ResponseTooLargeError(QueryError):
    """An answer over the size cap: the reader asks for smaller pages, or gives up with this message."""


class AnswerTimeoutError(Exception):
    """No complete answer within the budget of one request."""


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    headers: httpx.Headers
    body: bytes


def exchange(
    http: httpx.Client,
    method: str,
    url: str,
    *,
    headers: dict[str, str],
    budget: float,
    max_bytes: int,
    clock: Clock = REAL_CLOCK,
    shown: str | None = None,
    **kwargs: Any,
) -> Answer:
    """Status, headers and whole body of one request; or :class:`AnswerTimeoutError` once ``budget``
    seconds have passed on ``clock``, the request cut and its thread ended; or
    :class:`ResponseTooLargeError` past ``max_bytes``. httpx's own exceptions (connection errors, a
    connect timeout) are raised as they are. ``http`` must keep no idle connection (module docstring).
    Messages name ``shown`` (the URL without credentials), never ``url``."""
    shown = without_credentials(url) if shown is None else shown
    box: dict[str, Any] = {}
    done = threading.Event()
    line = _Line()

    def work() -> None:
        try:
            box["answer"] = _receive(http, method, url, shown, headers, budget, max_bytes, line, kwargs)
        except BaseException as exc:  # handed to the waiting thread
            box["error"] = exc
        finally:
            done.set()

    worker = threading.Thread(target=work, name="otel-provenance-signoz", daemon=True)
    ends_at = clock.monotonic() + budget  # read before the request goes out: all of its time counts
    worker.start()
    if not clock.wait(done, ends_at - clock.monotonic()):
        if line.cut():
            worker.join()  # its socket is shut down: whatever it was doing ends at once
        raise AnswerTimeoutError
    if "error" in box:
        raise box["error"]
    return box["answer"]


class _Line:
    """The connection of one request, for the waiting thread to cut. httpcore reports each connection it
    makes, TCP and then TLS, to the request's ``trace`` extension, in the request's own thread."""

    _MADE: Final = frozenset({"connection.connect_tcp.complete", "connection.start_tls.complete"})

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stream: Any = None
        self.cut_off = False

    def trace(self, event: str, info: dict[str, Any]) -> None:
        if event in self._MADE:
            with self._lock:
                self._stream = info["return_value"]
                if self.cut_off:  # connected after the budget: shut at once, nothing is sent
                    _shut(self._stream)

    def cut(self) -> bool:
        """Shut the connection down; whether it was open (the thread using it then ends at once)."""
        with self._lock:
            self.cut_off = True
            return self._stream is not None and _shut(self._stream)


def _shut(stream: Any) -> bool:
    sock = stream.get_extra_info("socket")
    if not isinstance(sock, socket.socket):
        return False
    try:
        # The plain socket's shutdown, also for TLS: SSLSocket.shutdown would drop its SSL state under the
        # reading thread.
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:  # already closed (the answer ended), or handed over to TLS
        return False
    return True


def _receive(
    http: httpx.Client,
    method: str,
    url: str,
    shown: str,
    headers: dict[str, str],
    budget: float,
    max_bytes: int,
    line: _Line,
    kwargs: dict[str, Any],
) -> Answer:
    headers = {**headers, "Accept-Encoding": "identity"}
    # Reads and writes end when the line is cut, on the client's clock; only the connect is httpx's to time.
    timeout = httpx.Timeout(None, connect=budget)
    extensions = {"trace": line.trace}
    with http.stream(
        method, url, headers=headers, timeout=timeout, extensions=extensions, **kwargs
    ) as response:
        declared = response.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > max_bytes:
            raise _too_large(shown, max_bytes)
        encoding = response.headers.get("Content-Encoding", "identity").lower()
        if encoding not in ("identity", "gzip"):
            named = printable(encoding, "", limit=40)
            raise QueryError(f"{shown}: answered with Content-Encoding {named!r}; expected identity")
        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS) if encoding == "gzip" else None
        parts: list[bytes] = []
        size = 0
        for raw in response.iter_raw():
            if line.cut_off:
                break  # nobody waits for this answer any more
            chunk = _inflate(shown, inflate, raw, max_bytes + 1 - size) if inflate else raw
            size += len(chunk)
            if size > max_bytes or (inflate is not None and inflate.unconsumed_tail):
                raise _too_large(shown, max_bytes)
            parts.append(chunk)
        if inflate is not None and not inflate.eof and not line.cut_off:
            raise QueryError(f"{shown}: the gzip answer ends early; nothing of it was read")
        return Answer(response.status_code, response.headers, b"".join(parts))


def _inflate(url: str, inflate: Any, raw: bytes, limit: int) -> bytes:
    try:
        return inflate.decompress(raw, limit)
    except zlib.error as exc:
        problem = f"the answer says Content-Encoding gzip but is not gzip data ({exc})"
        raise QueryError(f"{url}: {problem}") from None


def _too_large(url: str, max_bytes: int) -> ResponseTooLargeError:
    return ResponseTooLargeError(
        f"{url}: SigNoz's answer is larger than {max_bytes / 2**20:g} MiB; not read into memory"
    )


_CREDENTIALS: Final = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#]*@")


def without_credentials(url: str) -> str:
    """``url`` without the ``user:password@`` of its authority: what messages show of a URL."""
    return _CREDENTIALS.sub(r"\1", url)


def printable(
    text: str, secret: str, *, limit: int = 200, withheld: str = "(withheld: it echoed the credential)"
) -> str:
    """``text`` as it may be printed: ``withheld`` when it shows ``secret`` (:func:`echoes_secret`),
    else each control or invisible format character as an escape (``\\x1b``, ``\\u202e``) and at most
    ``limit`` characters (``…`` marks a cut)."""
    if echoes_secret(text, secret):
        return withheld
    shown = "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)
    if len(shown) > limit:
        shown = shown[: limit - 1] + "…"
    return withheld if echoes_secret(shown, secret) else shown


def error_text(body: bytes) -> str:
    """``error.message``, then the details in ``error.errors[].message`` (each with its own
    suggestions), then the error's ``suggestions`` in parentheses; ``""`` if there is none."""
    try:
        error = json.loads(body).get("error")
    except (ValueError, AttributeError):
        return ""
    if not isinstance(error, dict):
        return ""
    text = _with_details(error.get("message", ""), error.get("errors"), limit=None)
    hints = _texts(error.get("suggestions"))
    return (text + (f" ({'; '.join(hints)})" if hints else ""))[:_TEXT_LIMIT]


def warning_text(warning: Any) -> str:
    """The summary and each warning of ``data.warning``."""
    if not isinstance(warning, dict):
        return str(warning)[:500]
    return _with_details(warning.get("message", ""), warning.get("warnings"))


_TEXT_LIMIT: Final = 800


def _texts(items: Any) -> list[str]:
    return [
        str(item) for item in (items if isinstance(items, list) else ()) if isinstance(item, str) and item
    ]


def _with_details(message: Any, items: Any, *, limit: int | None = _TEXT_LIMIT) -> str:
    details = []
    for item in items if isinstance(items, list) else ():
        if isinstance(item, dict) and item.get("message"):
            hints = _texts(item.get("suggestions"))
            details.append(str(item["message"]) + (f" ({'; '.join(hints)})" if hints else ""))
    text = str(message) + (f": {'; '.join(details)}" if details else "")
    return text[:limit] if limit else text


def echoes_secret(text: str, secret: str) -> bool:
    """Whether ``text`` shows ``secret``: as is, in another case, with separators changed or dropped,
    percent-encoded, base64 or hex, or a long enough part of it (a truncated echo)."""
    if not secret or not text:
        return False

    def squash(value: str) -> str:
        return re.sub(r"[^0-9a-z]", "", value.lower())

    raw = secret.encode()
    encoded = {
        base64.b64encode(raw).decode().rstrip("="),
        base64.urlsafe_b64encode(raw).decode().rstrip("="),
        raw.hex(),
    }
    key = squash(secret)
    window = 12 if len(key) >= 16 else len(key)
    fragments = {key[i : i + window] for i in range(len(key) - window + 1)} if key else set()
    for candidate in (text, unquote(text), unquote(unquote(text))):
        lowered, squashed = candidate.lower(), squash(candidate)
        if secret.lower() in lowered or any(e.lower() in lowered for e in encoded):
            return True
        if any(f in squashed for f in fragments):
            return True
    return False
