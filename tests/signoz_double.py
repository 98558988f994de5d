"""A faithful SigNoz test double: real HTTP on loopback, SigNoz's storage and query API, v0.129.0 to v0.138.0.

As strict as the server where the reader depends on it, so a reader bug shows up here as it would there.
Each behaviour follows a file of SigNoz's source (listed in docs/signoz.md, "Where these behaviours come
from"); ingest follows the collector (see ``signoz_collector``).

- ``POST /v1/traces`` takes OTLP/HTTP (protobuf or JSON, optionally gzip) and stores each span as the
  collector does: string / bool / one Float64 map for attributes, NaN/±Inf doubles dropped, top-level
  arrays as JSON text, maps flattened to dotted keys and arrays inside them to ``key.N``, every resource
  attribute as a string. Keys are catalogued for ``/api/v1/fields/keys`` (which ignores the window).
- ``POST /api/v5/query_range`` answers raw traces builder queries: strict unknown-field rejection at every
  level (400; ``materialized`` is no field), auth by ``SIGNOZ-API-KEY`` only (``Authorization`` goes to
  the session-token resolver: 401), the filter grammar's key tokens and a subset of its operators
  (``= != IN NOT IN EXISTS NOT EXISTS AND OR NOT ( )``, quoted strings, ``context.key:type`` keys), the
  ``[start, end)`` window, order (direction required) + offset paging, ``limit`` ≤ 10000 (400 above;
  10000 by default when ordered by timestamp, else 100), millisecond ``nextCursor`` on timestamp-ordered
  full pages, ``rows: null`` when nothing matches, Go's float rounding (3 decimals, 3 significant digits
  below 1, half away from zero; ``"NaN"``/``"Inf"``/``"-Inf"``), and absence as the map default
  (``""``/``0``/``false``, versions before v0.134) or ``null`` (v0.134+), chosen by ``version``.
- Errors as SigNoz renders them (``pkg/errors/http.go`` ``AsJSON``, ``pkg/http/render/render.go``):
  before v0.131 ``{status: "error", error: {type, code, message, url, errors: [{message}]}}`` with empty
  members left out; from v0.131 ``errors`` (each ``{message, suggestions}``) and ``suggestions`` are
  always there (``[]`` when empty), and a refused field name or signal carries SigNoz's suggestions
  (``pkg/errors/suggestions.go``: "did you mean: `x`" when a valid name is at least 75 % alike, then
  "valid fields are `a`, `b`"). A filter on a key that is not catalogued is a 400 "Found 1 errors while
  parsing the search expression." (the key in ``errors``) before v0.134; from v0.134 it is a warning on
  the 200, ``{"message": "Encountered warnings", "url", "warnings": [{"message": "key `k` not found in
  metadata; querying the underlying data directly. …"}]}`` (``pkg/querybuilder/key_resolution.go``),
  and the data is still filtered by the key, so spans without it do not match.
- Fine-grained authorization (v0.134+, ``CheckResources`` in ``pkg/http/middleware/authz.go``): a signal
  left out of :attr:`SigNozDouble.readable` is a 403 ``authz_forbidden`` "service_account/<id> is not
  authorized to perform traces:read".
- ``GET /api/v1/health``, ``GET /api/v1/version``, ``GET /api/v1/fields/keys``.
- Faults: :meth:`SigNozDouble.inject` queues per-path :class:`Fault` s (statuses with optional
  Retry-After and SigNoz's messages, delays, dripping answers, huge answers) consumed one per request.
  Delays and drips take their time on the double's clock: the real one, or the one a test gives both
  the double and the reader (``signoz_clock.FakeClock``), on which they take none of the suite's.

Only raw traces queries are implemented; anything else is a 400 naming the double's limit.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from otel_provenance.offline.readers.signoz_http import REAL_CLOCK, Clock
from signoz_collector import go_v, resource_attribute, round_like_signoz, span_attribute

__all__ = ["Fault", "SigNozDouble", "export_spans", "round_like_signoz", "window_around_now"]

NULL_SINCE = (0, 134, 0)
ENVELOPE_SINCE = (0, 131, 0)  # errors and suggestions always in the error body
WARN_UNKNOWN_KEY_SINCE = (0, 134, 0)  # an unknown filter key: a warning on a 200, not a 400
AUTHZ_SINCE = (0, 134, 0)  # query_range behind CheckResources: per-signal grants, 403 authz_forbidden
MAX_LIMIT = 10_000
INTRINSIC_TYPES = {
    "trace_id": "string",
    "span_id": "string",
    "parent_span_id": "string",
    "name": "string",
    "timestamp": "number",
    "duration_nano": "number",
    "kind": "number",
    "kind_string": "string",
    "status_code": "number",
    "status_code_string": "string",
    "status_message": "string",
    "has_error": "bool",
}
# TelemetryFieldKey (pkg/types/telemetrytypes/field.go): ``materialized`` is ``json:"-"``, so sending it is an
# unknown field under the spec's DisallowUnknownFields.
_KEY_FIELDS = {"name", "description", "unit", "signal", "fieldContext", "fieldDataType"}
_TOP_FIELDS = {
    "schemaVersion",
    "start",
    "end",
    "requestType",
    "compositeQuery",
    "variables",
    "noCache",
    "formatOptions",
}
_SPEC_FIELDS = {
    "name",
    "stepInterval",
    "signal",
    "source",
    "aggregations",
    "disabled",
    "filter",
    "groupBy",
    "order",
    "selectFields",
    "limit",
    "limitBy",
    "offset",
    "cursor",
    "having",
    "secondaryAggregations",
    "functions",
    "legend",
}
_CONTEXTS = {
    "resource": "resource",
    "attribute": "attribute",
    "tag": "attribute",
    "point": "attribute",
    "span": "span",
    "spanfield": "span",
}
_KIND_STRINGS = ["Unspecified", "Internal", "Server", "Client", "Producer", "Consumer"]
_STATUS_STRINGS = ["Unset", "Ok", "Error"]


_TYPES = {
    400: "invalid-input",
    401: "unauthenticated",
    403: "forbidden",
    404: "not-found",
    429: "too-many-requests",
    499: "canceled",
    501: "unsupported",
    504: "timeout",
}
_CODES = {
    400: "invalid_input",
    401: "unauthenticated",
    403: "authz_forbidden",  # pkg/types/authtypes ErrCodeAuthZForbidden: both 403s of the authz middleware
    404: "not_found",
    429: "too_many_requests",
    499: "canceled",
    501: "unsupported",
    504: "timeout",
}
SEARCH_GUIDE = "https://signoz.io/docs/userguide/search-troubleshooting/"
KEY_NOT_FOUND_URL = SEARCH_GUIDE + "#key-fieldname-not-found"
# pkg/querybuilder/key_resolution.go (v0.134+): KeyNotFoundDocURL and NewKeyNotFoundWarning
KEY_NOT_FOUND_URL_V134 = SEARCH_GUIDE + "#q-im-getting-key-fieldname-not-found--why-cant-it-find-my-field"
KEY_NOT_FOUND_WARNING = (
    "key `{}` not found in metadata; querying the underlying data directly. If this is unexpected, check "
    "the key name for typos."
)
SERVICE_ACCOUNT = "service_account/019a0c1e-5b7d-7c3e-9f2a-6d4b8e1f0a2c"
# How often the server looks for stop(): the time stop() takes (socketserver's default is half a second).
POLL_S = 0.01
# On a clock other than the real one a dripping answer lasts this long, passed in one sleep.
DRIP_DAY_S = 86_400.0
# pkg/querier/builder_query.go: any ClickHouse failure other than a timeout or a cancel.
CLICKHOUSE_FAILED = (
    "Something went wrong on our end. It's not you, it's us. Our team is notified about it. "
    "Reach out to support if issue persists."
)


def error_body(
    status: int,
    message: str,
    *,
    url: str = "",
    errors: list[str] | None = None,
    code: str | None = None,
    suggestions: list[str] | None = None,
    version: tuple[int, ...] = (0, 129, 0),
) -> dict[str, Any]:
    """``render.Error``'s body (pkg/http/render/render.go, pkg/errors/http.go ``AsJSON``): type from the
    status, ``url`` omitted when empty. Before v0.131 ``errors`` and ``suggestions`` are omitted when
    empty and so is an ``errors`` entry's empty message; from v0.131 both are always there, and each
    ``errors`` entry is ``{message, suggestions}``."""
    error: dict[str, Any] = {
        "type": _TYPES.get(status, "internal"),
        "code": code or _CODES.get(status, "internal"),
        "message": message,
    }
    if url:
        error["url"] = url
    if version >= ENVELOPE_SINCE:
        error["errors"] = [{"message": m, "suggestions": []} for m in errors or ()]
        error["suggestions"] = list(suggestions or ())
    else:
        if errors:
            error["errors"] = [{"message": m} if m else {} for m in errors]
        if suggestions:
            error["suggestions"] = list(suggestions)
    return {"status": "error", "error": error}


def _similarity(a: str, b: str) -> float:
    """pkg/errors/suggestions.go ``similarity``: 1 - Levenshtein distance (case-blind) / longer length."""
    a, b = a.lower(), b.lower()
    if not a or not b:
        return 1.0 if a == b else 0.0
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return 1.0 - row[len(b)] / max(len(a), len(b))


def suggestions_for(invalid: str, noun: str, valid: list[str]) -> list[str]:
    """``NewSuggestionsOnLevenshteinDistance``: "did you mean: `x`" for the most alike valid name at
    least 75 % alike, then ``NewValidReferences`` ("valid <noun> are `a`, `b`", at most 20 listed)."""
    out: list[str] = []
    best, score = "", 0.0
    for candidate in valid:
        sim = _similarity(invalid, candidate)
        if sim > score and sim >= 0.75:
            best, score = candidate, sim
    if best:
        out.append(f"did you mean: `{best}`")
    if valid:
        listed = ", ".join(f"`{v}`" for v in valid[:20])
        out.append(f"valid {noun} are {listed}" + (f" (+{len(valid) - 20} more)" if len(valid) > 20 else ""))
    return out


class BadRequest(Exception):
    """A refusal rendered as SigNoz renders it: ``message``, the details in ``errors``, and (v0.131+)
    ``suggestions``; ``code`` when it is not the status's own."""

    def __init__(
        self,
        message: str,
        status: int = 400,
        *,
        url: str = "",
        errors: list[str] | None = None,
        suggestions: list[str] | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status, self.url, self.errors = status, url, list(errors or [])
        self.suggestions, self.code = list(suggestions or []), code

    def body(self, version: tuple[int, ...] = (0, 129, 0)) -> dict[str, Any]:
        return error_body(
            self.status,
            str(self),
            url=self.url,
            errors=self.errors,
            code=self.code,
            suggestions=self.suggestions,
            version=version,
        )


@dataclass
class Fault:
    """One injected answer, consumed by one request to its path.

    - ``delay_s`` first, then ``status`` (with ``retry_after`` seconds), rendered as the double's version
      of SigNoz renders it: ``message`` (default: what SigNoz says for that status; a 500 is its
      ClickHouse-failure text), ``errors`` as the details and ``suggestions``;
    - ``drip_s``: answer 200 but send one byte every ``drip_s`` seconds, forever (``drip_headers``: the
      status line and headers too; otherwise headers at once, the body running to the connection's end,
      or declaring ``declared_bytes`` in ``Content-Length``). On a clock other than the real one the
      first byte is sent, then a day passes in one sleep, and the connection stays open, unanswered,
      until the double stops (a reader that can finish on what comes first, as on a declared length
      over its cap, would race that sleep: such a test keeps the real clock, where it waits for nothing);
    - ``huge_bytes``: answer 200 with a JSON body of that many bytes (``chunked``: without a length).
    """

    status: int | None = None
    delay_s: float = 0.0
    retry_after: float | None = None
    message: str | None = None
    errors: list[str] | None = None
    suggestions: list[str] | None = None
    drip_s: float = 0.0
    drip_headers: bool = False
    declared_bytes: int = 0
    huge_bytes: int = 0
    chunked: bool = False


_STATUS_MESSAGES = {
    401: "unauthenticated",
    403: "only viewers/editors/admins can access this resource",
    500: CLICKHOUSE_FAILED,
    504: "Query timed out",
}


@dataclass
class StoredSpan:
    trace_id: str
    span_id: str
    parent_span_id: str
    name: str
    kind: int
    timestamp_ns: int
    duration_nano: int
    status_code: int
    status_message: str
    strings: dict[str, str] = field(default_factory=dict)
    numbers: dict[str, float] = field(default_factory=dict)
    bools: dict[str, bool] = field(default_factory=dict)
    resource: dict[str, str] = field(default_factory=dict)


def rfc3339_nano(ns: int) -> str:
    """Go's RFC3339Nano in UTC: trailing zeros of the fraction trimmed."""
    seconds, frac = divmod(ns, 1_000_000_000)
    head = datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    fraction = f"{frac:09d}".rstrip("0")
    return f"{head}.{fraction}Z" if fraction else f"{head}Z"


# --- filter expressions -------------------------------------------------------------------------------


class FilterError(BadRequest):
    pass


@dataclass(frozen=True)
class Key:
    """A key as SigNoz resolves it: ``context`` / ``data_type`` None when the text did not say."""

    name: str
    context: str | None
    data_type: str | None
    text: str = ""


_TEXT_TYPES = {
    "string": "string",
    "str": "string",
    "bool": "bool",
    "number": "number",
    "float64": "number",
    "int64": "number",
    "int": "number",
    "float": "number",
    "double": "number",
}


def parse_key(text: str) -> Key:
    """``GetFieldKeyFromKeyText`` (pkg/types/telemetrytypes/field.go): the type after the last ``:`` if it
    is a known type name (case-sensitive), then the context before the first ``.`` if it is one."""
    name, colon, suffix = text.rpartition(":")
    data_type = _TEXT_TYPES.get(suffix) if colon else None
    if data_type is None:
        name = text
    head, dot, rest = name.partition(".")
    context = _CONTEXTS.get(head) if dot else None
    return Key(rest if context else name, context, data_type, text)


# The lexer of grammar/FilterQuery.g4 (v0.129.0): a KEY is SEGMENT ('.' SEGMENT | '[]' | '[*]' | '.' DIGIT+)*,
# and anything longer that FREETEXT matches wins (longest match), which the parser then refuses.
_SEGMENT = r"[a-zA-Z$_@{#][a-zA-Z0-9$_@#{}:\-/]*"
KEY_TOKEN = re.compile(rf"{_SEGMENT}(?:\.{_SEGMENT}|\[\]|\[\*\]|\.[0-9]+)*")
_FREETEXT = re.compile(r"""[^ \t\r\n=()'"<>!,\[\]]+""")
_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'" + r'|"(?:[^"\\]|\\.)*"')
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)")
_OPS = ("==", "!=", "<>", "<=", ">=", "=", "<", ">", "(", ")", "[", "]", ",")
_KEYWORDS = re.compile(
    r"(?i:(and|or|not|in|exists?|like|ilike|between|regexp|contains?|hastoken|has|hasany|hasall)"
    r"|(true|false))"
)


def _syntax_error(pos: int, got: str) -> FilterError:
    return FilterError(
        "Found 1 syntax errors while parsing the search expression.",
        url=SEARCH_GUIDE,
        # where_clause_visitor.go builds the details with make([]string, n) and then appends: n empty
        # entries come first, rendered as {}.
        errors=["", f"line 1:{pos} mismatched input {got}"],
    )


def _tokens(text: str) -> list[tuple[str, Any, int]]:
    out: list[tuple[str, Any, int]] = []
    pos = 0
    while True:
        while pos < len(text) and text[pos] in " \t\r\n":
            pos += 1
        if pos >= len(text):
            return out
        quoted = _QUOTED.match(text, pos)
        if quoted:
            out.append(("value", re.sub(r"\\(.)", r"\1", quoted[0][1:-1]), pos))
            pos = quoted.end()
            continue
        op = next((o for o in _OPS if text.startswith(o, pos)), None)
        key = KEY_TOKEN.match(text, pos)
        free = _FREETEXT.match(text, pos)
        number = _NUMBER.match(text, pos)
        longest = max(len(m[0]) if m else 0 for m in (key, free, number))
        if op and len(op) >= longest:
            out.append(("op", "=" if op == "==" else op, pos))
            pos += len(op)
        elif number and len(number[0]) == longest:
            out.append(("value", float(number[0]), pos))
            pos = number.end()
        elif key and len(key[0]) == longest:
            word = key[0]
            keyword = _KEYWORDS.fullmatch(word)
            if keyword and keyword[1]:
                upper = word.upper()
                out.append(("kw", "EXISTS" if upper.startswith("EXIST") else upper, pos))
            elif keyword:
                out.append(("value", word.upper() == "TRUE", pos))
            else:
                out.append(("key", word, pos))
            pos = key.end()
        else:  # FREETEXT: a full-text search term, never a key
            out.append(("freetext", free[0] if free else text[pos], pos))
            pos += len(free[0]) if free else 1


class Variable(str):
    """A value that names a dashboard variable (``$service_version``): compared as its own text until
    :func:`resolve_variables` gives it the request's value, as SigNoz does with an unknown one."""


@dataclass(frozen=True)
class Node:
    op: str  # and / or / not / cmp / in / exists
    children: tuple[Node, ...] = ()
    key: Key | None = None
    values: tuple[Any, ...] = ()
    negate: bool = False

    def all_keys(self) -> list[Key]:
        own = [self.key] if self.key is not None else []
        return own + [k for c in self.children for k in c.all_keys()]


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.items = _tokens(text)
        self.pos = 0

    def peek(self) -> tuple[str, Any] | None:
        return self.items[self.pos][:2] if self.pos < len(self.items) else None

    def fail(self) -> FilterError:
        if self.pos >= len(self.items):
            return _syntax_error(len(self.text), "<EOF>")
        _kind, value, at = self.items[self.pos]
        return _syntax_error(at, f"'{value}'")

    def take(self, kind: str, value: Any = None) -> Any:
        item = self.peek()
        if item is None or item[0] != kind or (value is not None and item[1] != value):
            raise self.fail()
        self.pos += 1
        return item[1]

    def expr(self) -> Node:
        node = self.conj()
        while self.peek() == ("kw", "OR"):
            self.pos += 1
            node = Node("or", (node, self.conj()))
        return node

    def conj(self) -> Node:
        node = self.unary()
        while self.peek() == ("kw", "AND"):
            self.pos += 1
            node = Node("and", (node, self.unary()))
        return node

    def unary(self) -> Node:
        if self.peek() == ("kw", "NOT"):
            self.pos += 1
            return Node("not", (self.unary(),))
        if self.peek() == ("op", "("):
            self.pos += 1
            node = self.expr()
            self.take("op", ")")
            return node
        key = parse_key(self.take("key"))
        negate = self.peek() == ("kw", "NOT")
        if negate:
            self.pos += 1
        item = self.peek()
        if item == ("kw", "EXISTS"):
            self.pos += 1
            return Node("exists", key=key, negate=negate)
        if item == ("kw", "IN"):
            self.pos += 1
            variable = self.peek()
            if variable is not None and variable[0] == "key" and str(variable[1]).startswith("$"):
                self.pos += 1  # grammar/FilterQuery.g4 inClause: IN value — here a variable's name
                return Node("in", key=key, values=(Variable(variable[1]),), negate=negate)
            self.take("op", "(")
            values = [self.take("value")]
            while self.peek() == ("op", ","):
                self.pos += 1
                values.append(self.take("value"))
            self.take("op", ")")
            return Node("in", key=key, values=tuple(values), negate=negate)
        if negate or self.peek() not in (("op", "="), ("op", "!=")):
            raise self.fail()
        op = self.take("op")
        return Node("in", key=key, values=(self.take("value"),), negate=op == "!=")


def parse_filter(text: str) -> Node | None:
    if not text.strip():
        return None
    parser = _Parser(text)
    node = parser.expr()
    if parser.peek() is not None:
        raise parser.fail()
    return node


def resolve_variables(node: Node | None, variables: dict[str, Any]) -> Node | None:
    """``node`` with each ``IN $name`` given the request's ``variables[name]`` (its list of values, or
    one value) — ``where_clause_visitor.go`` ``VisitComparison``, which also looks the name up without
    its ``$`` — and the condition dropped when a dynamic variable is ``"__all__"`` (every value); an
    unknown name stays its own text. None: no condition is left."""
    if node is None:
        return None
    if node.op in ("and", "or", "not"):
        children = tuple(c for c in (resolve_variables(c, variables) for c in node.children) if c is not None)
        if not children:
            return None
        return children[0] if node.op != "not" and len(children) == 1 else Node(node.op, children)
    if len(node.values) != 1 or not isinstance(node.values[0], Variable):
        return node
    name = node.values[0]
    item = variables.get(name, variables.get(name[1:]))
    if item is None:
        return node
    value = item["value"]
    if item["type"] == "dynamic" and value in ("__all__", ["__all__"]):
        return None
    values = tuple(value) if isinstance(value, list) else (value,)
    return Node(node.op, key=node.key, values=values, negate=node.negate)


def _equal(stored: Any, wanted: Any) -> bool:
    if isinstance(stored, bool) or isinstance(wanted, bool):
        return stored is wanted if isinstance(stored, bool) else str(stored).lower() == str(wanted).lower()
    if isinstance(stored, int | float) and isinstance(wanted, int | float):
        return float(stored) == float(wanted)
    return str(stored) == (wanted if isinstance(wanted, str) else go_v(wanted))


def evaluate(node: Node, lookup: Callable[[Key], Any]) -> bool:
    if node.op == "and":
        return all(evaluate(c, lookup) for c in node.children)
    if node.op == "or":
        return any(evaluate(c, lookup) for c in node.children)
    if node.op == "not":
        return not evaluate(node.children[0], lookup)
    assert node.key is not None
    value = lookup(node.key)
    if node.op == "exists":
        return (value is not None) != node.negate
    hit = value is not None and any(_equal(value, v) for v in node.values)
    return hit != node.negate


class SigNozDouble:
    """Start with :meth:`start` (or as a context manager); ``url`` is the base URL, ``otlp_url`` the
    OTLP/HTTP traces endpoint."""

    def __init__(
        self, *, version: str = "v0.129.0", api_key: str = "test-key-f00dfeed", clock: Clock = REAL_CLOCK
    ) -> None:
        self.version = version
        self.clock = clock  # where delays and drips take their time
        self.version_tuple = tuple(int(p) for p in version.lstrip("v").split("."))
        self.api_key = api_key
        self.spans: list[StoredSpan] = []
        self.catalogue: set[tuple[str, str, str]] = set()  # (name, context, type)
        self.requests: list[tuple[str, str, dict[str, Any] | None]] = []  # method, path, query_range body
        # v0.134+: the signals the key's service account may read (fine-grained authorization)
        self.readable: set[str] = {"traces", "logs", "metrics"}
        self._faults: dict[str, deque[Fault]] = {}
        self.ignore_offset = False  # fault: a server that pages wrongly
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None

    # --- lifecycle ---------------------------------------------------------------------------------

    def start(self) -> SigNozDouble:
        double = self

        class Handler(_Handler):
            owner = double

        self._server = _QuietServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, args=(POLL_S,), daemon=True).start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def __enter__(self) -> SigNozDouble:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def otlp_url(self) -> str:
        return self.url + "/v1/traces"

    @property
    def null_for_absent(self) -> bool:
        return self.version_tuple >= NULL_SINCE

    def inject(self, path: str, *faults: Fault) -> None:
        with self._lock:
            self._faults.setdefault(path, deque()).extend(faults)

    def query_count(self) -> int:
        return sum(1 for method, path, _ in self.requests if path == "/api/v5/query_range")

    # --- ingest ------------------------------------------------------------------------------------

    def ingest(self, request: ExportTraceServiceRequest) -> None:
        """Store spans as the collector's ClickHouse exporter does (see signoz_collector)."""
        with self._lock:
            for rs in request.resource_spans:
                resource = {}
                for kv in rs.resource.attributes:
                    for key, text in resource_attribute(kv.key, kv.value):
                        resource[key] = text
                        self.catalogue.add((key, "resource", "string"))
                for ss in rs.scope_spans:
                    for span in ss.spans:
                        self.spans.append(self._store(span, resource))

    def _store(self, span: Any, resource: dict[str, str]) -> StoredSpan:
        stored = StoredSpan(
            trace_id=span.trace_id.hex(),
            span_id=span.span_id.hex(),
            parent_span_id=span.parent_span_id.hex(),
            name=span.name,
            kind=int(span.kind),
            timestamp_ns=span.start_time_unix_nano,
            duration_nano=span.end_time_unix_nano - span.start_time_unix_nano,
            status_code=int(span.status.code),
            status_message=span.status.message,
            resource=dict(resource),
        )
        maps = {"string": stored.strings, "number": stored.numbers, "bool": stored.bools}
        for kv in span.attributes:
            for key, kind, value in span_attribute(kv.key, kv.value):
                maps[kind][key] = value
                self.catalogue.add((key, "attribute", kind))
        return stored

    # --- query_range -------------------------------------------------------------------------------

    def query_range(self, body: Any) -> dict[str, Any]:
        spec, start, end = _decode(body)
        if self.version_tuple >= AUTHZ_SINCE and spec["signal"] not in self.readable:
            # pkg/http/middleware/authz.go checkResource: the resource's scope is "<signal>:read"
            raise BadRequest(
                f"{SERVICE_ACCOUNT} is not authorized to perform {spec['signal']}:read",
                status=403,
                code="authz_forbidden",
            )
        order = [(_field(o.get("key", {}), "order key"), o["direction"]) for o in spec.get("order") or []]
        # pkg/querier/builder_query.go: a raw query ordered by timestamp first takes the window-list path,
        # whose default limit is 10000; any other raw query gets the statement builder's LIMIT 100.
        window_list = bool(order) and order[0][0].name == "timestamp"
        limit = spec.get("limit") or (MAX_LIMIT if window_list else 100)
        offset = 0 if self.ignore_offset else spec.get("offset") or 0
        warnings: list[str] = []
        tree = parse_filter((spec.get("filter") or {}).get("expression", ""))
        unknown = [key.name for key in (tree.all_keys() if tree else ()) if not self._catalogued(key)]
        warn_url = KEY_NOT_FOUND_URL
        if unknown and self.version_tuple < WARN_UNKNOWN_KEY_SINCE:
            # where_clause_visitor.go (VisitKey, PrepareWhereClause): one summary, the keys in ``errors``.
            raise BadRequest(
                f"Found {len(unknown)} errors while parsing the search expression.",
                url=KEY_NOT_FOUND_URL,
                errors=[f"key `{name}` not found" for name in unknown],
            )
        if unknown:  # v0.134+: a warning; the key is still looked for in the data
            warnings.extend(KEY_NOT_FOUND_WARNING.format(name) for name in unknown)
            warn_url = KEY_NOT_FOUND_URL_V134
        select = [_field(s, "selectFields entry") for s in spec.get("selectFields") or []]
        if not select:
            select = [Key("name", "span", "string"), Key("duration_nano", "span", "number")]
        with self._lock:
            matched = [
                s
                for s in self.spans
                if start * 1_000_000 <= s.timestamp_ns < end * 1_000_000
                and (tree is None or evaluate(tree, lambda k, s=s: self._lookup(s, k)))
            ]
        for key, direction in reversed(order):
            matched.sort(key=lambda s, k=key: _sortable(self._lookup(s, k)), reverse=direction == "desc")
        cursor = spec.get("cursor")
        if cursor:
            after = int(base64.b64decode(cursor).decode())
            matched = [s for s in matched if s.timestamp_ns // 1_000_000 > after]
        page = matched[offset : offset + limit] if limit else matched[offset:]
        rows = [{"timestamp": rfc3339_nano(s.timestamp_ns), "data": self._row(s, select)} for s in page]
        next_cursor = ""
        if page and len(page) == limit and order and order[0][0].name == "timestamp":
            next_cursor = base64.b64encode(str(page[-1].timestamp_ns // 1_000_000).encode()).decode()
        data: dict[str, Any] = {
            "type": "raw",
            "meta": {"rowsScanned": len(self.spans), "bytesScanned": 0, "durationMs": 1},
            "data": {
                "results": [
                    {"queryName": spec.get("name", "A"), "nextCursor": next_cursor, "rows": rows or None}
                ]
            },
        }
        if warnings:  # pkg/querier/querier.go: QueryWarnData
            data["warning"] = {
                "message": "Encountered warnings",
                "url": warn_url,
                "warnings": [{"message": w} for w in dict.fromkeys(warnings)],
            }
        return {"status": "success", "data": data}

    def field_keys(self, query: dict[str, list[str]]) -> dict[str, Any]:
        """``getTracesKeys`` (pkg/telemetrymetadata/metadata.go): the time window is ignored for traces
        (the ``unix_milli`` conditions are commented out), ``searchText`` is an ILIKE, ``limit`` (default
        1000) counts catalogue rows only, and the intrinsic span fields are added on top."""
        if query.get("signal", ["traces"])[0] != "traces":
            raise BadRequest("the double only catalogues traces")
        limit = int(query.get("limit", ["1000"])[0] or 1000)
        search = query.get("searchText", [""])[0].lower()
        with self._lock:
            rows = [entry for entry in sorted(self.catalogue) if search in entry[0].lower()]
        entries = rows[:limit] + [(n, "span", t) for n, t in INTRINSIC_TYPES.items() if search in n.lower()]
        keys: dict[str, list[dict[str, str]]] = {}
        for name, context, data_type in entries:
            keys.setdefault(name, []).append(
                {"name": name, "signal": "traces", "fieldContext": context, "fieldDataType": data_type}
            )
        return {"status": "success", "data": {"keys": keys, "complete": len(rows) <= limit}}

    def _catalogued(self, key: Key) -> bool:
        if key.context in ("span", None) and key.name in INTRINSIC_TYPES:
            return True
        return any(
            n == key.name and (key.context in (None, c)) and (key.data_type in (None, t))
            for n, c, t in self.catalogue
        )

    def _lookup(self, span: StoredSpan, key: Key) -> Any:
        """The stored value, or ``None`` when the span does not have the key."""
        if key.context in ("span", None) and key.name in INTRINSIC_TYPES:
            return _intrinsic(span, key.name)
        maps: list[tuple[str, str, dict[str, Any]]] = [
            ("attribute", "string", span.strings),
            ("attribute", "number", span.numbers),
            ("attribute", "bool", span.bools),
            ("resource", "string", span.resource),
        ]
        for context, data_type, values in maps:
            if key.context in (None, context) and key.data_type in (None, data_type) and key.name in values:
                return values[key.name]
        return None

    def _row(self, span: StoredSpan, select: list[Key]) -> dict[str, Any]:
        data: dict[str, Any] = {}
        for key in select:
            value = self._lookup(span, key)
            if value is None and not (key.context in ("span", None) and key.name in INTRINSIC_TYPES):
                value = (
                    None
                    if self.null_for_absent
                    else {"string": "", "number": 0, "bool": False}[
                        "string" if key.context == "resource" else key.data_type or "string"
                    ]
                )
            elif isinstance(value, float) and key.data_type == "number":
                value = round_like_signoz(value)
            data[key.name] = value
        data["trace_id"], data["span_id"] = span.trace_id, span.span_id
        data["timestamp"] = rfc3339_nano(span.timestamp_ns)
        return data


def _intrinsic(span: StoredSpan, name: str) -> Any:
    if name == "timestamp":
        return span.timestamp_ns
    if name == "kind_string":
        return _KIND_STRINGS[span.kind]
    if name == "status_code_string":
        return _STATUS_STRINGS[span.status_code]
    if name == "has_error":
        return span.status_code == 2
    return getattr(span, name)


def _sortable(value: Any) -> tuple[int, Any]:
    return (0, value) if value is not None else (1, 0)


def _strict(obj: Any, allowed: set[str], where: str) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise BadRequest(f"{where} must be an object")
    for name in obj:
        if name not in allowed:  # pkg/http/binding/json.go, req.go UnmarshalJSON
            raise BadRequest(
                f"unknown field {json.dumps(name)} in {where}",
                errors=["Valid fields are: " + ", ".join(sorted(allowed))],
                suggestions=suggestions_for(name, "fields", sorted(allowed)),
            )
    return obj


def _field(obj: Any, where: str) -> Key:
    entry = _strict(obj, _KEY_FIELDS, where)
    if not isinstance(entry.get("name"), str) or not entry["name"]:
        raise BadRequest(f"{where}: name is required")
    # Not a SigNoz rule but this project's contract with it: context and type always set, so SigNoz never
    # re-parses a key name that starts with a context word or contains ':'.
    if "fieldContext" not in entry or "fieldDataType" not in entry:
        raise BadRequest(f"{where} {entry['name']!r}: fieldContext and fieldDataType must both be set")
    context = _CONTEXTS.get(str(entry["fieldContext"]).lower())
    data_type = str(entry["fieldDataType"]).lower()
    data_type = "number" if data_type in ("number", "float64", "int64") else data_type
    if data_type not in ("string", "bool", "number"):
        raise BadRequest(f"{where} {entry['name']!r}: unknown fieldDataType {entry['fieldDataType']!r}")
    return Key(entry["name"], context, data_type)


def _decode(body: Any) -> tuple[dict[str, Any], int, int]:
    top = _strict(body, _TOP_FIELDS, "query range request")
    for name in ("start", "end"):
        if not isinstance(top.get(name), int) or isinstance(top.get(name), bool):
            raise BadRequest(f"{name} must be epoch milliseconds")
    if top["start"] >= top["end"]:
        raise BadRequest("start must be before end")
    if top.get("requestType") != "raw":
        raise BadRequest(f"the double answers requestType 'raw' only, got {top.get('requestType')!r}")
    if "formatOptions" in top:
        _strict(top["formatOptions"], {"formatTableResultForUI", "fillGaps"}, "format options")
    composite = _strict(top.get("compositeQuery"), {"queries"}, "composite query")
    queries = composite.get("queries")
    if not isinstance(queries, list) or len(queries) != 1:
        raise BadRequest("the double answers exactly one query per request")
    envelope = _strict(queries[0], {"type", "spec"}, "query envelope")
    if envelope.get("type") != "builder_query":
        raise BadRequest(f"unknown query type {envelope.get('type')!r}")
    spec = _strict(envelope.get("spec"), _SPEC_FIELDS, "query spec")
    if spec.get("signal") not in ("traces", "logs", "metrics"):  # req.go UnmarshalBuilderQueryBySignal
        raise BadRequest(
            f"invalid signal {json.dumps(str(spec.get('signal', '')))}",
            suggestions=["valid signals are `traces`, `logs`, `metrics`"],
        )
    if spec["signal"] != "traces":
        raise BadRequest(f"the double answers traces queries only, got {spec['signal']!r}")
    if "filter" in spec:
        _strict(spec["filter"], {"expression"}, "filter")
    for name in ("limit", "offset"):
        if name in spec and (
            not isinstance(spec[name], int) or isinstance(spec[name], bool) or spec[name] < 0
        ):
            raise BadRequest(f"{name} must be non-negative, got {spec[name]}")
    if spec.get("limit", 0) > MAX_LIMIT:  # validation.go: validateLimitAndPagination
        raise BadRequest(
            f"limit exceeds maximum allowed value of {MAX_LIMIT}", errors=[f"Provided limit: {spec['limit']}"]
        )
    for number, item in enumerate(spec.get("order") or [], 1):
        _strict(item, {"key", "direction"}, "order")
        direction = item.get("direction")
        # validation.go validateOrderBy: a missing direction is the empty OrderDirection, which is refused.
        if not isinstance(direction, str) or direction.lower() not in ("asc", "desc"):
            raise BadRequest(
                f"invalid direction for order by clause #{number} in query '{spec.get('name', '')}': "
                f"{direction if isinstance(direction, str) else ''}",
                errors=["Valid directions are: asc, desc"],
            )
        item["direction"] = direction.lower()
    return spec, top["start"], top["end"]


def _hex_ids_to_base64(obj: Any) -> Any:
    """OTLP JSON carries ids as hex; protobuf's JSON mapping wants base64 for bytes fields."""
    if isinstance(obj, dict):
        return {
            k: (
                base64.b64encode(bytes.fromhex(v)).decode()
                if k in ("traceId", "spanId", "parentSpanId") and isinstance(v, str)
                else _hex_ids_to_base64(v)
            )
            for k, v in obj.items()
        }
    if isinstance(obj, list):
        return [_hex_ids_to_base64(v) for v in obj]
    return obj


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:  # a client that hung up mid-answer
        pass


class _Handler(BaseHTTPRequestHandler):
    owner: SigNozDouble
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms delayed-ACK stall

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _send(
        self,
        status: int,
        body: bytes,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeouts under test)
            self.close_connection = True

    def _json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(obj).encode(), headers=headers)

    def _error(
        self,
        status: int,
        message: str,
        headers: dict[str, str] | None = None,
        *,
        url: str = "",
        errors: list[str] | None = None,
        suggestions: list[str] | None = None,
        code: str | None = None,
    ) -> None:
        body = error_body(
            status,
            message,
            url=url,
            errors=errors,
            suggestions=suggestions,
            code=code,
            version=self.owner.version_tuple,
        )
        self._json(status, body, headers)

    def _refuse(self, exc: BadRequest) -> None:
        self._json(exc.status, exc.body(self.owner.version_tuple))

    def _raw(self, data: bytes) -> bool:
        try:
            self.wfile.write(data)
            self.wfile.flush()
            return True
        except OSError:  # the client gave up
            self.close_connection = True
            return False

    def _drip(self, fault: Fault) -> None:
        length = b"Content-Length: %d\r\n" % fault.declared_bytes if fault.declared_bytes else b""
        head = (
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
            + length  # without it, the body runs to EOF
            + b"\r\n"
        )
        if not fault.drip_headers and not self._raw(head):
            return
        start = (head if fault.drip_headers else b"") + b'{"status":"success","data":'
        self.close_connection = True
        if self.owner.clock is not REAL_CLOCK:  # the day of dripping passes in one sleep
            if self._raw(start[:1]):
                self.owner.clock.sleep(DRIP_DAY_S)
                self.owner._stopping.wait()
            return
        sent = 0
        while not self.owner._stopping.wait(fault.drip_s):
            if not self._raw(start[sent : sent + 1] if sent < len(start) else b" "):
                return
            sent += 1

    def _huge(self, fault: Fault) -> None:
        head, tail = b'{"status":"success","data":{"pad":"', b'"}}'
        size = max(fault.huge_bytes, len(head) + len(tail))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header(
            "Transfer-Encoding" if fault.chunked else "Content-Length",
            "chunked" if fault.chunked else str(size),
        )
        self.end_headers()
        self.close_connection = True
        parts = [head, *[b"x" * 65536] * ((size - len(head) - len(tail)) // 65536)]
        parts += [b"x" * ((size - len(head) - len(tail)) % 65536), tail]
        for part in parts:
            data = b"%x\r\n%s\r\n" % (len(part), part) if fault.chunked else part
            if part and not self._raw(data):
                return
        if fault.chunked:
            self._raw(b"0\r\n\r\n")

    def _body(self) -> bytes:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        return gzip.decompress(raw) if self.headers.get("Content-Encoding") == "gzip" else raw

    def _fault(self, path: str) -> bool:
        with self.owner._lock:
            queue = self.owner._faults.get(path)
            fault = queue.popleft() if queue else None
        if fault is None:
            return False
        if fault.delay_s:
            self.owner.clock.sleep(fault.delay_s)
        if fault.drip_s:
            self._drip(fault)
            return True
        if fault.huge_bytes:
            self._huge(fault)
            return True
        if fault.status is None:
            return False
        headers = {"Retry-After": f"{fault.retry_after:g}"} if fault.retry_after is not None else None
        message = fault.message or _STATUS_MESSAGES.get(fault.status, f"injected fault {fault.status}")
        self._error(fault.status, message, headers, errors=fault.errors, suggestions=fault.suggestions)
        return True

    def _authorised(self) -> bool:
        """pkg/identn: the tokenizer resolver is tried first and takes any request with an
        ``Authorization`` header (an API key is not a session token there); only without one does the
        API-key resolver read ``SIGNOZ-API-KEY``. Anything unresolved is 401 "unauthenticated"."""
        if not self.headers.get("Authorization") and self.headers.get("SIGNOZ-API-KEY") == self.owner.api_key:
            return True
        self._error(401, "unauthenticated")
        return False

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        self.owner.requests.append(("GET", parts.path, None))
        if self._fault(parts.path):
            return
        if parts.path == "/api/v1/health":
            self._json(200, {"status": "ok"})
        elif parts.path == "/api/v1/version":
            self._json(200, {"version": self.owner.version, "ee": "Y", "setupCompleted": True})
        elif parts.path == "/api/v1/fields/keys":
            if self._authorised():
                try:
                    self._json(200, self.owner.field_keys(parse_qs(parts.query)))
                except BadRequest as exc:
                    self._refuse(exc)
        else:
            self._error(404, f"no route {parts.path}")

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        body = self._body()
        if path == "/v1/traces":
            self.owner.requests.append(("POST", path, None))
            self._ingest(body)
            return
        if path != "/api/v5/query_range":
            self._error(404, f"no route {path}")
            return
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = None
        self.owner.requests.append(("POST", path, parsed))
        if self._fault(path) or not self._authorised():
            return
        if parsed is None:
            self._error(400, "request body is not JSON")
            return
        try:
            self._json(200, self.owner.query_range(parsed))
        except BadRequest as exc:
            self._refuse(exc)

    def _ingest(self, body: bytes) -> None:
        content_type = self.headers.get("Content-Type", "")
        request = ExportTraceServiceRequest()
        try:
            if content_type.startswith("application/json"):
                json_format.Parse(json.dumps(_hex_ids_to_base64(json.loads(body))), request)
            else:
                request.ParseFromString(body)
        except Exception as exc:  # malformed OTLP is a 400, as in the collector
            self._error(400, f"bad OTLP payload: {type(exc).__name__}")
            return
        self.owner.ingest(request)
        if content_type.startswith("application/json"):
            self._send(200, b"{}")
        else:
            self._send(200, ExportTraceServiceResponse().SerializeToString(), "application/x-protobuf")


# --- helpers for tests that feed the double ---------------------------------------------------------


def _secret_ids() -> Any:
    from opentelemetry.sdk.trace.id_generator import RandomIdGenerator

    class SecretIds(RandomIdGenerator):
        """Span and trace ids from the OS's randomness: Hypothesis seeds ``random``, so the SDK's
        default generator would repeat ids across examples."""

        def generate_span_id(self) -> int:
            return secrets.randbits(64) or 1

        def generate_trace_id(self) -> int:
            return secrets.randbits(128) or 1

    return SecretIds()


def export_spans(double: SigNozDouble, resource: dict[str, Any], build: Callable[[Any], None]) -> None:
    """Run ``build(tracer)`` under a real SDK provider whose only exporter is the real OTLP/HTTP exporter
    pointed at the double, then flush (shutdown) so every span is stored before this returns."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider(resource=Resource.create(resource), id_generator=_secret_ids())
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=double.otlp_url, timeout=10)))
    try:
        build(provider.get_tracer("tests.signoz"))
    finally:
        provider.shutdown()


def window_around_now() -> tuple[int, int]:
    """A ``[start, end)`` window in epoch ms that holds spans made just now."""
    now = int(time.time() * 1000)
    return now - 3_600_000, now + 60_000
