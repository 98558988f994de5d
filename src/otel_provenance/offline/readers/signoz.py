"""Read a release's spans back out of SigNoz (v5 ``query_range``) as :class:`~..model.Span`.

How it reads (each step a raw builder query with explicit, typed ``selectFields``):

1. ``GET /api/v1/fields/keys`` lists every attribute and resource key SigNoz has catalogued (for
   traces SigNoz ignores the time window here, so keys of any time come back), so custom keys
   (``agent.arg.<name>.*``) come back without a fixed column list.
2. The release's traces: spans whose resource ``service.version`` equals the release (optionally also
   ``service.name``), paged by offset in a stable order (timestamp, span id).
3. Every span of those traces, by ``trace_id IN (…)`` in batches, paged the same way. A key that SigNoz
   catalogued with two types, or whose name collides with an intrinsic column, is read in a second
   query "layer" so that each name appears once per query.
4. Absence. Servers before v0.134 answer the map default (``""``, ``0``, ``false``) for a key a span
   does not have. When the server is older, or its version is unknown, every default value is checked
   with an ``EXISTS`` query and dropped unless the key is really there; ``null`` is always absence.
   A key whose name the filter grammar cannot write (``http.2xx``, ``a b``) cannot be checked that
   way: its default values are dropped as absent, and the read says how many (``SigNozReport``).
5. Size: an answer over ``max_response_bytes`` is never read whole; the page size is halved and the
   page asked again, down to one row, before the read gives up with a clear error.

Value types, given what SigNoz keeps (see docs/signoz.md): numbers come back rounded (3 decimals, or 3
significant digits below 1) and whole numbers as integers, so a whole number becomes ``int``; resource
attributes come back as strings and arrays as JSON text, and are converted back only for the keys in
:data:`RESOURCE_INT_KEYS` and :data:`ARRAY_KEYS`.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from dataclasses import field as _field
from datetime import UTC, datetime
from typing import Any, Final

from ... import environment, semconv
from ...errors import ConfigurationError, QueryError, TraceReadError
from ..model import Attributes, Span, SpanKind, Status, StatusCode, Value
from .signoz_http import MAX_RESPONSE_BYTES, REAL_CLOCK, Clock, ResponseTooLargeError, without_credentials
from .signoz_query import (
    MAX_LIMIT,
    NULL_FOR_ABSENT_SINCE,
    RESOURCE_CONTEXT,
    SPAN_CONTEXT,
    FieldKey,
    SigNozClient,
    eq,
    in_,
)

_log = logging.getLogger(__name__)

API_KEY_ENV: Final = environment.SIGNOZ_API_KEY

# Resource attributes SigNoz stores as strings that the OTel semantic conventions define as integers.
RESOURCE_INT_KEYS: Final = frozenset({"process.pid", "process.parent_pid"})
# Span/resource attributes known to be arrays; SigNoz returns them as JSON text.
ARRAY_KEYS: Final = frozenset(
    {
        semconv.VIOLATIONS,
        semconv.BUDGET_ALLOWED,
        semconv.BUDGET_EGRESS,
        semconv.GUARD_RUN_FAILED,
        "gen_ai.response.finish_reasons",
        "gen_ai.request.stop_sequences",
        "process.command_args",
    }
)

# Columns SigNoz always adds to a row's data; an attribute with one of these names cannot be read back.
_ALWAYS_IN_ROW: Final = frozenset({"trace_id", "span_id", "timestamp"})
_INTRINSICS: Final = (
    FieldKey("parent_span_id", SPAN_CONTEXT, "string"),
    FieldKey("name", SPAN_CONTEXT, "string"),
    FieldKey("kind", SPAN_CONTEXT, "number"),
    FieldKey("duration_nano", SPAN_CONTEXT, "number"),
    FieldKey("status_code", SPAN_CONTEXT, "number"),
    FieldKey("status_message", SPAN_CONTEXT, "string"),
)
_SPAN_ID_ONLY: Final = (FieldKey("span_id", SPAN_CONTEXT, "string"),)
_ORDER: Final = (FieldKey("timestamp", SPAN_CONTEXT, "number"), FieldKey("span_id", SPAN_CONTEXT, "string"))
_RELEASE_KEY: Final = f"{RESOURCE_CONTEXT}.{semconv.SERVICE_VERSION}"
_SERVICE_KEY: Final = f"{RESOURCE_CONTEXT}.{semconv.SERVICE_NAME}"
_DEFAULTS: Final = {"string": "", "number": 0, "bool": False}


@dataclass
class SigNozReport:
    """What one read could not take at face value, for the caller to show (also logged as a warning).

    ``unfilterable_keys``: catalogued keys the filter grammar cannot express, on a server that answers a
    default for an absent key; ``defaults_dropped``: default values of those keys left out as absent;
    ``page_size``: the page size the read ended with (smaller than asked when answers were too large).
    """

    unfilterable_keys: set[str] = _field(default_factory=set)
    defaults_dropped: int = 0
    page_size: int = 0


def read_signoz(
    url: str,
    *,
    release: str,
    start_ms: int,
    end_ms: int,
    api_key: str | None = None,
    service: str | None = None,
    timeout_s: float = 30.0,
    deadline_s: float = 300.0,
    page_size: int = MAX_LIMIT,
    trace_batch: int = 100,
    max_response_bytes: int = MAX_RESPONSE_BYTES,
    report: SigNozReport | None = None,
    clock: Clock = REAL_CLOCK,
) -> Iterator[Span]:
    """Yield every span of every trace of ``release`` that started in ``[start_ms, end_ms)``.

    ``api_key`` defaults to ``$SIGNOZ_API_KEY``. ``timeout_s`` bounds each request from sending it to
    the last byte of its answer, ``deadline_s`` the whole read, retries of 429/5xx included (a 500 is
    tried three times at most), both on ``clock`` (the real one unless given: tests pass one they move).
    ``report`` collects what the read could not take at face value.
    Raises :class:`~...errors.QueryError` when SigNoz refuses or fails (the message says what to fix),
    :class:`~...errors.ConfigurationError` for bad arguments, and :class:`~...errors.TraceReadError`
    for a row that is not a span.
    """
    key = api_key if api_key is not None else (environment.text(API_KEY_ENV) or "")
    if not key:
        raise ConfigurationError(f"no SigNoz API key: set {API_KEY_ENV} (Settings → Service Accounts → Keys)")
    if not release:
        raise ConfigurationError("release must be a non-empty service.version")
    if start_ms >= end_ms:
        raise ConfigurationError(f"empty time window: start {start_ms} ms is not before end {end_ms} ms")
    if not 0 < page_size <= MAX_LIMIT:
        raise ConfigurationError(f"page_size must be 1..{MAX_LIMIT}, got {page_size}")
    if trace_batch < 1:
        raise ConfigurationError(f"trace_batch must be at least 1, got {trace_batch}")
    if max_response_bytes < 1024:
        raise ConfigurationError(f"max_response_bytes must be at least 1024, got {max_response_bytes}")
    client = SigNozClient(
        url,
        api_key=key,
        timeout_s=timeout_s,
        deadline_s=deadline_s,
        max_response_bytes=max_response_bytes,
        clock=clock,
    )
    reader = _Reader(client, without_credentials(url), start_ms, end_ms, page_size, report or SigNozReport())
    with client:
        yield from reader.read(release, service, trace_batch)
    reader.warn()


class _Reader:
    def __init__(
        self, client: SigNozClient, url: str, start_ms: int, end_ms: int, page_size: int, report: SigNozReport
    ) -> None:
        self.client, self.url = client, url
        self.start_ms, self.end_ms, self.page_size = start_ms, end_ms, page_size
        self.report = report
        report.page_size = page_size

    def warn(self) -> None:
        if self.report.defaults_dropped:
            names = ", ".join(f"'{self.client.show(n)}'" for n in sorted(self.report.unfilterable_keys)[:5])
            _log.warning(
                "%s: %d value(s) of %d key(s) SigNoz's filter grammar cannot name (%s%s) were left out as "
                'absent: before v0.134 SigNoz answers ""/0/false for a key a span lacks, and these keys '
                "cannot be checked with EXISTS; rules that need them report insufficient evidence",
                self.url,
                self.report.defaults_dropped,
                len(self.report.unfilterable_keys),
                names,
                ", …" if len(self.report.unfilterable_keys) > 5 else "",
            )

    def read(self, release: str, service: str | None, trace_batch: int) -> Iterator[Span]:
        version = self.client.version()
        defaults_suspect = version is None or version < NULL_FOR_ABSENT_SINCE
        keys = self.client.field_keys(self.start_ms, self.end_ms)
        if FieldKey(semconv.SERVICE_VERSION, RESOURCE_CONTEXT, "string") not in keys:
            # Filtering on a key SigNoz has not catalogued is a 400 before v0.134: no span has it.
            _log.warning("SigNoz has no resource service.version in this window: no spans for any release")
            return
        expression = eq(_RELEASE_KEY, release) + (f" AND {eq(_SERVICE_KEY, service)}" if service else "")
        rows = self._all(expression, _SPAN_ID_ONLY)
        trace_ids = list(dict.fromkeys(str(row.get("trace_id", "")) for row in rows))
        layers = _layers(keys, self.client.show)
        for i in range(0, len(trace_ids), trace_batch):
            batch = trace_ids[i : i + trace_batch]
            yield from self._read_batch(batch, layers, defaults_suspect)

    def _all(self, expression: str, select: Sequence[FieldKey]) -> Iterator[dict[str, Any]]:
        """Every row of a query, by offset paging in (timestamp, span_id) order; nothing is skipped."""
        offset, previous_first = 0, None
        while True:
            try:
                rows = self.client.query_raw(
                    start_ms=self.start_ms,
                    end_ms=self.end_ms,
                    expression=expression,
                    select=select,
                    order=_ORDER,
                    limit=self.page_size,
                    offset=offset,
                )
            except ResponseTooLargeError as exc:
                if self.page_size == 1:
                    raise QueryError(f"{exc}, even for one span: raise max_response_bytes") from None
                self.page_size = self.report.page_size = self.page_size // 2
                _log.info("%s; asking for pages of %d spans", exc, self.page_size)
                continue
            if rows and offset and rows[0] == previous_first:
                raise QueryError(
                    f"{self.url}: SigNoz ignored the query offset; cannot page without losing spans"
                )
            yield from rows
            if len(rows) < self.page_size:
                return
            offset, previous_first = offset + len(rows), rows[0]

    def _read_batch(
        self, trace_ids: list[str], layers: list[list[FieldKey]], suspect: bool
    ) -> Iterator[Span]:
        expression = in_("trace_id", trace_ids)
        rows: dict[tuple[str, str], dict[FieldKey | str, Any]] = {}
        for layer_no, layer in enumerate(layers):
            select = [*_INTRINSICS, *layer] if layer_no == 0 else layer
            for data in self._all(expression, select):
                ident = (str(data.get("trace_id", "")), str(data.get("span_id", "")))
                if layer_no and ident not in rows:
                    continue  # ingested after the first layer was read: not part of this read
                merged = rows.setdefault(ident, {"timestamp": data.get("timestamp")})
                for field in select:
                    if field.name in data:
                        merged[field] = data[field.name]
        if suspect:
            self._drop_defaults(expression, rows)
        for (trace_id, span_id), data in rows.items():
            yield _span(self.url, trace_id, span_id, data, self.client.show)

    def _drop_defaults(self, expression: str, rows: dict[tuple[str, str], dict[FieldKey | str, Any]]) -> None:
        """Old servers answer ``""``/``0``/``false`` for an absent key: keep a default only if it EXISTS."""
        suspects: dict[FieldKey, set[tuple[str, str]]] = {}
        for ident, data in rows.items():
            for field, value in data.items():
                if (
                    isinstance(field, FieldKey)
                    and field.context != SPAN_CONTEXT
                    and _is_default(field, value)
                ):
                    suspects.setdefault(field, set()).add(ident)
        for field, idents in suspects.items():
            if not field.filterable():  # cannot ask: a default stays unproven, so it is absence
                self.report.unfilterable_keys.add(field.name)
                self.report.defaults_dropped += len(idents)
                for ident in idents:
                    del rows[ident][field]
                continue
            clause = f"{expression} AND {field.filter_key()} EXISTS"
            present = {
                (str(r.get("trace_id", "")), str(r.get("span_id", "")))
                for r in self._all(clause, _SPAN_ID_ONLY)
            }
            for ident in idents - present:
                del rows[ident][field]


def _is_default(field: FieldKey, value: Any) -> bool:
    default = _DEFAULTS[field.data_type]
    return value is not None and type(value) is type(default) and value == default


def _layers(keys: Sequence[FieldKey], show: Callable[[str], str] = str) -> list[list[FieldKey]]:
    """Split keys into query layers in which every name occurs once and no name shadows an intrinsic."""
    layers: list[list[FieldKey]] = [[]]
    taken: list[set[str]] = [{k.name for k in _INTRINSICS} | _ALWAYS_IN_ROW]
    for key in keys:
        if key.name in _ALWAYS_IN_ROW:
            _log.warning(
                "attribute '%s' shares its name with a column SigNoz always returns; not read", show(key.name)
            )
            continue
        for layer, names in zip(layers, taken, strict=True):
            if key.name not in names:
                layer.append(key)
                names.add(key.name)
                break
        else:
            layers.append([key])
            taken.append({key.name} | _ALWAYS_IN_ROW)
    return layers


def _span(
    url: str, trace_id: str, span_id: str, data: dict[FieldKey | str, Any], show: Callable[[str], str] = str
) -> Span:
    def bad(problem: str) -> TraceReadError:  # the ids are the server's: shown filtered
        return TraceReadError(url, f"span {show(trace_id) or '?'}/{show(span_id) or '?'}: {problem}")

    if not _is_hex(trace_id, 32) or not _is_hex(span_id, 16):
        raise bad("trace_id must be 32 and span_id 16 lowercase hex digits")
    intrinsic = {f.name: v for f, v in data.items() if isinstance(f, FieldKey) and f.context == SPAN_CONTEXT}
    parent = intrinsic.get("parent_span_id") or None
    if parent is not None and not _is_hex(str(parent), 16):
        raise bad("parent_span_id is not 16 lowercase hex digits")
    start_ns = _timestamp_ns(data.get("timestamp"))
    duration = intrinsic.get("duration_nano")
    if start_ns is None or not isinstance(duration, int) or isinstance(duration, bool) or duration < 0:
        raise bad("timestamp or duration_nano missing or malformed")
    try:
        kind = SpanKind(int(intrinsic.get("kind") or 0))
        code = StatusCode(int(intrinsic.get("status_code") or 0))
    except (TypeError, ValueError):
        raise bad("kind or status_code out of range") from None
    attributes: dict[str, Value] = {}
    resource: dict[str, Value] = {}
    for field, value in data.items():
        if not isinstance(field, FieldKey) or field.context == SPAN_CONTEXT:
            continue
        converted = _value(field, value)
        if converted is not None:
            (resource if field.context == RESOURCE_CONTEXT else attributes)[field.name] = converted
    return Span(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=str(parent) if parent else None,
        name=str(intrinsic.get("name") or ""),
        kind=kind,
        start_ns=start_ns,
        end_ns=start_ns + duration,
        status=Status(code, str(intrinsic.get("status_message") or "")),
        attributes=Attributes(attributes),
        resource=Attributes(resource),
    )


def _value(field: FieldKey, value: Any) -> Value | None:
    """Typed value of one column, or None for absence. Only the conversions documented above."""
    if value is None:
        return None
    if field.data_type == "bool":
        return value if isinstance(value, bool) else None
    if field.data_type == "number":
        return _number(value)
    text = value if isinstance(value, str) else json.dumps(value)
    if field.name in ARRAY_KEYS:
        return _array(text)
    if field.context == RESOURCE_CONTEXT and field.name in RESOURCE_INT_KEYS and text.lstrip("-").isdigit():
        return int(text)
    return text


def _number(value: Any) -> int | float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if isinstance(value, str):  # SigNoz turns NaN and ±Inf into strings
        try:
            number = float(value)
        except ValueError:
            return None
        return number if not math.isfinite(number) or not number.is_integer() else int(number)
    return None


def _array(text: str) -> Value:
    try:
        items = json.loads(text)
    except ValueError:
        return text
    if not isinstance(items, list) or not all(isinstance(i, str | bool | int | float) for i in items):
        return text
    return tuple(items)


def _is_hex(text: str, length: int) -> bool:
    return len(text) == length and all(c in "0123456789abcdef" for c in text)


def _timestamp_ns(value: Any) -> int | None:
    """Nanoseconds from SigNoz's RFC 3339 timestamp (``2025-07-31T00:56:48.40583808Z``), exactly."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if not isinstance(value, str) or not value.endswith("Z"):
        return None
    head, _, fraction = value[:-1].partition(".")
    if not fraction.isdigit() and fraction != "":
        return None
    try:
        seconds = datetime.fromisoformat(head).replace(tzinfo=UTC)
    except ValueError:
        return None
    whole = int(seconds.timestamp())
    return whole * 1_000_000_000 + int((fraction + "000000000")[:9] or "0")
