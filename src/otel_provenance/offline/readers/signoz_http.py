"""One HTTP exchange with SigNoz, bounded in wall-clock time and in size, and how to show its errors.

httpx's read timeout bounds only the gap between two reads, so a server (or a proxy) that sends one
byte at a time can keep a request alive for ever. :func:`exchange` therefore runs each request in a
daemon thread and waits at most ``budget`` seconds for the *whole* answer, headers and body; the body
is streamed and refused past ``max_bytes`` instead of being read whole into memory. An abandoned
request stops at its next chunk, or at its own read timeout (never longer than the budget), or when
the client is closed.

Error texts: SigNoz renders ``{"status": "error", "error": {"type", "code", "message", "url",
"errors": [{"message"}]}}`` (``pkg/http/render/render.go``, ``pkg/errors/http.go`` in v0.129.0) and
puts the cause of a refused filter in ``errors``; warnings ride on a 200 as ``{"message":
"Encountered warnings", "url", "warnings": [{"message"}]}`` (``pkg/querier/querier.go``).
"""

from __future__ import annotations

import base64
import json
import re
import threading
import zlib
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import unquote

import httpx

from ...errors import QueryError

MAX_RESPONSE_BYTES: Final = 64 * 1024 * 1024


class ResponseTooLargeError(QueryError):
    """An answer over the size cap: the reader asks for smaller pages, or gives up with this message."""


class AnswerTimeoutError(Exception):
    """No complete answer within the wall-clock budget of one request."""


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
    **kwargs: Any,
) -> Answer:
    """Status, headers and whole body of one request, or :class:`AnswerTimeoutError` after ``budget``
    seconds of wall-clock time, or :class:`ResponseTooLargeError` past ``max_bytes``. httpx's own
    exceptions (timeouts, connection errors) are raised as they are."""
    box: dict[str, Any] = {}
    done, abandoned = threading.Event(), threading.Event()

    def work() -> None:
        try:
            box["answer"] = _receive(http, method, url, headers, budget, max_bytes, abandoned, kwargs)
        except BaseException as exc:  # handed to the waiting thread
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=work, name="otel-provenance-signoz", daemon=True).start()
    if not done.wait(budget):
        abandoned.set()
        raise AnswerTimeoutError
    if "error" in box:
        raise box["error"]
    return box["answer"]


def _receive(
    http: httpx.Client,
    method: str,
    url: str,
    headers: dict[str, str],
    budget: float,
    max_bytes: int,
    abandoned: threading.Event,
    kwargs: dict[str, Any],
) -> Answer:
    headers = {**headers, "Accept-Encoding": "identity"}
    with http.stream(method, url, headers=headers, timeout=budget, **kwargs) as response:
        declared = response.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > max_bytes:
            raise _too_large(url, max_bytes)
        encoding = response.headers.get("Content-Encoding", "identity").lower()
        if encoding not in ("identity", "gzip"):
            raise QueryError(f"{url}: answered with Content-Encoding {encoding!r}; expected identity")
        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS) if encoding == "gzip" else None
        parts: list[bytes] = []
        size = 0
        for raw in response.iter_raw():
            if abandoned.is_set():
                break  # nobody waits for this answer any more
            chunk = _inflate(url, inflate, raw, max_bytes + 1 - size) if inflate else raw
            size += len(chunk)
            if size > max_bytes or (inflate is not None and inflate.unconsumed_tail):
                raise _too_large(url, max_bytes)
            parts.append(chunk)
        if inflate is not None and not inflate.eof and not abandoned.is_set():
            raise QueryError(f"{url}: the gzip answer ends early; nothing of it was read")
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


def error_text(body: bytes) -> str:
    """``error.message``, then the details in ``error.errors[].message``; ``""`` if there is none."""
    try:
        error = json.loads(body).get("error")
    except (ValueError, AttributeError):
        return ""
    if not isinstance(error, dict):
        return ""
    return _with_details(error.get("message", ""), error.get("errors"))


def warning_text(warning: Any) -> str:
    """The summary and each warning of ``data.warning``."""
    if not isinstance(warning, dict):
        return str(warning)[:500]
    return _with_details(warning.get("message", ""), warning.get("warnings"))


def _with_details(message: Any, items: Any) -> str:
    details = [
        str(item["message"])
        for item in (items if isinstance(items, list) else ())
        if isinstance(item, dict) and item.get("message")
    ]
    return (str(message) + (f": {'; '.join(details)}" if details else ""))[:500]


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
