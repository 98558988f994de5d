"""HTTP client for SigNoz's query API: requests, retries, a total deadline, and errors that say what to fix.

Only this module and :mod:`.signoz_http` (one bounded exchange) talk to the network for the SigNoz
reader. The API key is held in a private slot and sent only in the ``SIGNOZ-API-KEY`` header of each
request (the only header SigNoz reads an API key from: ``pkg/identn/config.go``); it is never put on the
shared ``httpx`` client, in a repr, a log record or an exception message (a server message that echoes
it, in any case or common encoding, is withheld). Messages show the URL without its ``user:password@``
and every server-chosen text (messages, field-key names) through :meth:`SigNozClient.show` (#36).

Time and size are bounded per answer, not per socket read: each request gets at most
``min(timeout, what is left of the deadline)`` for its *whole* answer, and is cut there; the body is
refused past ``max_response_bytes`` (see :mod:`.signoz_http`). The deadline, each request's time and
every back-off are read from the client's :class:`~.signoz_http.Clock` (the real one unless given).
A retry never comes sooner than the exponential back-off (0.25 s, doubling to 8 s), whatever a
``Retry-After`` says: ``Retry-After: 0`` cannot make the client hammer the server until the deadline.

Request shapes follow SigNoz's v5 ``query_range`` strictly: every field sent is one SigNoz decodes, and
every ``selectFields`` / ``order`` key carries ``fieldContext`` and ``fieldDataType`` so that names
starting with a context word (``resource.…``) or containing ``:`` are never re-parsed by the server.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import httpx

from ...errors import QueryError
from .signoz_http import (
    MAX_RESPONSE_BYTES,
    REAL_CLOCK,
    AnswerTimeoutError,
    Clock,
    echoes_secret,
    error_text,
    exchange,
    printable,
    warning_text,
    without_credentials,
)

_log = logging.getLogger(__name__)

MAX_LIMIT: Final = 10_000  # SigNoz rejects a raw query with limit > 10000 (400)
_RETRY_STATUSES: Final = frozenset({429, 500, 502, 503, 504})
# A 500 from SigNoz is a ClickHouse error (pkg/querier/builder_query.go), which repeats on retry: a few
# tries cover a restart, then the read stops instead of retrying until the deadline.
MAX_500_ATTEMPTS: Final = 3
_BACKOFF_FIRST_S: Final = 0.25
_BACKOFF_MAX_S: Final = 8.0
_VERSION_RE: Final = re.compile(r"v?(\d+)\.(\d+)\.(\d+)")

# grammar/FilterQuery.g4 (v0.129.0): KEY : SEGMENT ('.' SEGMENT | '[]' | '[*]' | '.' DIGIT+)*, with
# SEGMENT : [a-zA-Z$_@{#] [a-zA-Z0-9$_@#{}:\-/]*.
_SEGMENT: Final = r"[a-zA-Z$_@{#][a-zA-Z0-9$_@#{}:\-/]*"
_FILTER_KEY: Final = re.compile(rf"{_SEGMENT}(?:\.{_SEGMENT}|\[\]|\[\*\]|\.[0-9]+)*")

# The first server version that returns ``null`` (not the map default) for an absent typed attribute.
NULL_FOR_ABSENT_SINCE: Final = (0, 134, 0)

# fieldContext values SigNoz maps to span attributes; "resource" is the resource map.
ATTRIBUTE_CONTEXTS: Final = frozenset({"attribute", "tag", "point"})
RESOURCE_CONTEXT: Final = "resource"
SPAN_CONTEXT: Final = "span"
# fieldDataType values that all read the one numeric map.
NUMBER_TYPES: Final = frozenset({"number", "float64", "int64"})


@dataclass(frozen=True, slots=True)
class FieldKey:
    """One column of a raw query: a name, where it lives (``span``/``attribute``/``resource``) and its type.

    ``data_type`` is one of ``string``, ``bool``, ``number``.
    """

    name: str
    context: str
    data_type: str

    def select(self) -> dict[str, str]:
        return {
            "name": self.name,
            "fieldContext": self.context,
            "fieldDataType": self.data_type,
            "signal": "traces",
        }

    def filter_key(self) -> str:
        """The key as written in a filter expression, context and type explicit (``attribute.k:number``)."""
        return f"{self.context}.{self.name}:{self.data_type}"

    def filterable(self) -> bool:
        """Whether :meth:`filter_key` is one KEY token of SigNoz's filter grammar. Keys cannot be quoted
        there, so a name like ``http.2xx`` (a segment starting with a digit) or ``a b`` cannot be used in
        a filter at all: SigNoz answers a syntax error."""
        return _FILTER_KEY.fullmatch(self.filter_key()) is not None


def _quote(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def eq(key: str, value: str) -> str:
    """Filter clause ``key = 'value'``."""
    return f"{key} = {_quote(value)}"


def in_(key: str, values: Sequence[str]) -> str:
    """Filter clause ``key IN ('a', 'b')``."""
    return f"{key} IN ({', '.join(_quote(v) for v in values)})"


def parse_version(text: str) -> tuple[int, int, int] | None:
    match = _VERSION_RE.search(text or "")
    return (int(match[1]), int(match[2]), int(match[3])) if match else None


def raw_query(spec: dict[str, Any], start_ms: int, end_ms: int) -> dict[str, Any]:
    """The query-range v5 request for one raw builder query (``spec``: its signal, filter, order, page),
    uncached, as the traces reader and the findings (logs) reader both send it."""
    return {
        "schemaVersion": "v1",
        "start": start_ms,
        "end": end_ms,
        "requestType": "raw",
        "noCache": True,
        "variables": {},
        "formatOptions": {"formatTableResultForUI": False, "fillGaps": False},
        "compositeQuery": {"queries": [{"type": "builder_query", "spec": spec}]},
    }


def raw_rows(
    client: SigNozClient, spec: dict[str, Any], start_ms: int, end_ms: int, *, shown: str, row: str
) -> tuple[list[dict[str, Any]], Any]:
    """Send :func:`raw_query`; the ``data`` of each row (``rows: null`` is ``[]``) and SigNoz's warning.
    ``shown`` begins each error message, ``row`` names what a row is."""
    body = client._request("POST", "/api/v5/query_range", json=raw_query(spec, start_ms, end_ms))
    try:
        results = body["data"]["data"]["results"]
    except (KeyError, TypeError):
        raise QueryError(f"{shown}/api/v5/query_range answered without data.data.results") from None
    warning = body["data"].get("warning")
    rows: list[dict[str, Any]] = []
    for result in results or ():
        for found in result.get("rows") or ():  # rows is null, not [], when nothing matches
            data = found.get("data") if isinstance(found, dict) else None
            if not isinstance(data, dict):
                raise QueryError(f"{shown}/api/v5/query_range returned a {row} without data")
            rows.append(data)
    return rows, warning


class SigNozClient:
    """A SigNoz endpoint with credentials, a per-request timeout and one total deadline for all calls,
    all timed on ``clock``."""

    __slots__ = (
        "_base",
        "_clock",
        "_deadline_at",
        "_deadline_s",
        "_http",
        "_key",
        "_max_bytes",
        "_shown",
        "_timeout_s",
    )

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str,
        timeout_s: float = 30.0,
        deadline_s: float = 300.0,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        clock: Clock = REAL_CLOCK,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            shown = printable(without_credentials(base_url), api_key)
            raise QueryError(f"SigNoz URL must start with http:// or https://, got {shown!r}")
        if not (timeout_s > 0 and deadline_s > 0):
            raise QueryError(
                f"timeout and deadline must be positive, got {timeout_s:g} s and {deadline_s:g} s"
            )
        # Credentials in the URL go as Basic auth, never in a URL a log record or a message could show.
        try:
            given = httpx.URL(base_url)
            auth = (
                httpx.BasicAuth(given.username, given.password) if given.username or given.password else None
            )
        except (httpx.InvalidURL, TypeError, ValueError):
            auth = None
        self._base = without_credentials(base_url).rstrip("/")
        self._shown = printable(without_credentials(self._base), api_key, limit=500)  # what messages say
        self._key = api_key
        self._timeout_s = timeout_s
        self._max_bytes = max_response_bytes
        self._deadline_s = deadline_s
        self._clock = clock
        self._deadline_at = clock.monotonic() + deadline_s
        # No idle connection is kept: each request connects anew, and learns its socket as it connects,
        # so that its deadline can cut it (signoz_http).
        self._http = httpx.Client(
            follow_redirects=False,
            trust_env=False,
            limits=httpx.Limits(max_keepalive_connections=0),
            auth=auth,
        )

    def __repr__(self) -> str:
        return f"SigNozClient({self._shown!r})"

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> SigNozClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- endpoints ---------------------------------------------------------------------------------

    def version(self) -> tuple[int, int, int] | None:
        """The server's version from ``GET /api/v1/version``, or None when it cannot be told."""
        try:
            body = self._request("GET", "/api/v1/version")
        except _RefusedError as exc:  # unreachable or too slow is not "version unknown": it propagates
            _log.warning(
                "could not read the SigNoz version (%s); treating absent-key defaults as suspect", exc
            )
            return None
        return parse_version(str(body.get("version", ""))) if isinstance(body, dict) else None

    def field_keys(self, start_ms: int, end_ms: int, *, limit: int = 10_000) -> list[FieldKey]:
        """Every traces attribute and resource key SigNoz has catalogued.

        ``GET /api/v1/fields/keys`` answers ``{"keys": {name: [key, …]}, "complete": bool}``; when the
        answer is incomplete the limit is raised until it is, so no custom key is silently missed. The
        window is sent, but SigNoz ignores it for traces (``getTracesKeys`` in
        pkg/telemetrymetadata/metadata.go, v0.129): keys from any time come back.
        """
        while True:
            params = {
                "signal": "traces",
                "startUnixMilli": str(start_ms),
                "endUnixMilli": str(end_ms),
                "limit": str(limit),
            }
            body = self._request("GET", "/api/v1/fields/keys", params=params)
            data = body.get("data") if isinstance(body, dict) else None
            if not isinstance(data, dict) or not isinstance(data.get("keys"), dict):
                raise QueryError(
                    f"{self._shown}/api/v1/fields/keys answered without data.keys; is this SigNoz?"
                )
            if data.get("complete", True) is False and limit < 1_000_000:
                limit *= 10
                continue
            if data.get("complete", True) is False:
                raise QueryError(f"{self._shown}: more than {limit} attribute keys; narrow the time window")
            return _parse_keys(data["keys"], self.show)

    def query_raw(
        self,
        *,
        start_ms: int,
        end_ms: int,
        expression: str,
        select: Sequence[FieldKey],
        order: Sequence[FieldKey],
        limit: int,
        offset: int,
    ) -> list[dict[str, Any]]:
        """One page of a raw traces query; returns the ``data`` of each row (``rows: null`` is ``[]``)."""
        if not 0 < limit <= MAX_LIMIT:
            raise QueryError(f"page size must be 1..{MAX_LIMIT} (SigNoz's cap), got {limit}")
        spec = {
            "name": "A",
            "signal": "traces",
            "disabled": False,
            "filter": {"expression": expression},
            "selectFields": [k.select() for k in select],
            "order": [{"key": k.select(), "direction": "asc"} for k in order],
            "limit": limit,
            "offset": offset,
        }
        rows, warning = raw_rows(self, spec, start_ms, end_ms, shown=self._shown, row="row")
        if warning:
            said = self.withhold_echo(warning_text(warning))
            if not rows and offset == 0:
                # Since v0.134 a filter key SigNoz has not catalogued is a warning, and the data is searched
                # for it anyway: "nothing matched" then cannot be told from "SigNoz does not know this key",
                # and an empty read must not pass as "no such spans" (nor as "no failing runs").
                raise QueryError(
                    f"{self._shown}/api/v5/query_range: SigNoz matched nothing and warned ({said}); an "
                    "empty answer that comes with a warning is not read as 'no spans': check the key "
                    "names and the time window"
                )
            _log.warning("SigNoz warned: %s", said)
        return rows

    # --- transport ---------------------------------------------------------------------------------

    def _request(self, method: str, path: str, **kwargs: Any) -> Any:
        url, shown = self._base + path, self._shown + path  # shown: without credentials, for messages
        attempt = failures_500 = 0
        last = ""
        while True:
            remaining = self._deadline_at - self._clock.monotonic()
            if remaining <= 0:
                raise QueryError(
                    f"{shown}: no answer within the {self._deadline_s:g} s deadline ({last or 'timed out'}); "
                    "check that SigNoz is up, or raise --deadline"
                )
            budget = min(self._timeout_s, remaining)
            try:
                answer = exchange(
                    self._http,
                    method,
                    url,
                    headers=self._headers(),
                    budget=budget,
                    max_bytes=self._max_bytes,
                    clock=self._clock,
                    shown=shown,
                    **kwargs,
                )
            except (AnswerTimeoutError, httpx.TimeoutException):  # httpx's own: the connect timeout
                last = f"timed out: no complete answer within {budget:.3g} s"
            except httpx.TransportError as exc:
                last = f"cannot connect ({type(exc).__name__})"
            else:
                status = answer.status
                if status < 300:
                    return self._json(shown, status, answer.body)
                message = self.withhold_echo(error_text(answer.body))
                if status not in _RETRY_STATUSES:
                    raise _RefusedError(self._explain(shown, status, message))
                last = f"HTTP {status} {message}".rstrip()
                if status == 500:
                    failures_500 += 1
                    if failures_500 >= MAX_500_ATTEMPTS:
                        raise QueryError(
                            f"{shown}: SigNoz failed the query {failures_500} times ({last}); a ClickHouse "
                            "error repeats on retry: check SigNoz's logs, or narrow the time window"
                        )
                retry_after = _retry_after(answer.headers)
                if retry_after is not None:  # honoured when longer than the back-off, never sooner
                    self._wait(max(retry_after, _backoff(attempt)), shown, last)
                    attempt += 1
                    continue
            self._wait(_backoff(attempt), shown, last)
            attempt += 1

    def _wait(self, seconds: float, url: str, last: str) -> None:
        remaining = self._deadline_at - self._clock.monotonic()
        _log.info("SigNoz %s: %s; retrying in %.2f s", url, last, min(seconds, max(remaining, 0)))
        if remaining > 0:
            self._clock.sleep(min(seconds, remaining))

    def _headers(self) -> dict[str, str]:
        return {"SIGNOZ-API-KEY": self._key, "Accept": "application/json"}

    def _json(self, url: str, status: int, body: bytes) -> Any:
        try:
            return json.loads(body)
        except ValueError:
            raise QueryError(f"{url}: answered HTTP {status} with a body that is not JSON") from None

    def _explain(self, url: str, status: int, message: str) -> str:
        if status == 401:
            return (
                f"{url}: SigNoz refused the API key (401 {message}); set SIGNOZ_API_KEY to a valid key "
                "(Settings → Service Accounts → Keys, or POST /api/v1/pats before v0.118)"
            )
        if status == 403:
            return (
                f"{url}: not authorized (403 {message}): the key is valid but may not read this; not "
                "retried. Give its service account the Viewer role, or, with fine-grained authorization "
                "(SigNoz v0.134+), a grant to read traces"
            )
        if status == 404:
            return (
                f"{url}: not found (404); check the base URL (e.g. http://localhost:8080) and that SigNoz "
                "is v0.91 or newer"
            )
        if status == 400:
            return f"{url}: SigNoz rejected the query (400 {message}); check the release name and time window"
        return f"{url}: HTTP {status} {message}".rstrip()

    def withhold_echo(self, text: str) -> str:
        """``text``, or a notice in its place when it echoes the API key in any case or usual encoding;
        control characters escaped."""
        if echoes_secret(text, self._key):
            return "(server message withheld: it echoed the credential)"
        return printable(
            text, self._key, limit=800, withheld="(server message withheld: it echoed the credential)"
        )

    def show(self, text: object) -> str:
        """A server-chosen name (a field key, a type, an id) as it may be printed: see ``printable``."""
        return printable(str(text), self._key, limit=120)


class _RefusedError(QueryError):
    """The server answered with a status that retrying cannot fix (4xx other than 429)."""


def _backoff(attempt: int) -> float:
    """The wait before try ``attempt + 1``: 0.25 s doubling to 8 s; also the least a Retry-After gets."""
    return min(_BACKOFF_MAX_S, _BACKOFF_FIRST_S * 2**attempt)


def _retry_after(headers: httpx.Headers) -> float | None:
    value = headers.get("Retry-After")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _parse_keys(raw: dict[str, Any], show: Callable[[str], str] | None = None) -> list[FieldKey]:
    """Attribute and resource keys of the traces signal, typed ``string``/``bool``/``number``.
    ``show`` renders a server-chosen name for a message (``SigNozClient.show``)."""
    show = show or (lambda text: printable(text, "", limit=120))
    keys: set[FieldKey] = set()
    for entries in raw.values():
        for entry in entries or ():
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                continue
            context = str(entry.get("fieldContext", "")).lower()
            data_type = str(entry.get("fieldDataType", "")).lower()
            if context in ATTRIBUTE_CONTEXTS:
                context = "attribute"
            elif context != RESOURCE_CONTEXT:
                continue  # intrinsic span columns are selected explicitly; other contexts are not span data
            if data_type in NUMBER_TYPES:
                data_type = "number"
            elif data_type not in ("string", "bool"):
                _log.warning(
                    "skipping SigNoz key '%s' of unsupported type '%s'", show(entry["name"]), show(data_type)
                )
                continue
            keys.add(FieldKey(entry["name"], context, data_type))
    return sorted(keys, key=lambda k: (k.context, k.name, k.data_type))
