"""Read back the evaluation records ``--export-findings`` sent to SigNoz: the findings beside the traces.

``gate check --export-findings`` sends one ``gen_ai.evaluation.result`` log record per finding and
per run's verdict, under the resource ``service.name = otel-provenance-gate``. This reader asks
SigNoz's v5 ``query_range`` for those log records (signal ``logs``, raw rows, every default column)
in a window, optionally of one trace, and returns them as plain frozen data — what a dashboard panel
shows, and what the tests compare with what was sent.

How SigNoz keeps a log record (``signoz-otel-collector``, ``exporter/clickhouselogsexporter``,
``attributesToMap``): string, array and map attributes in ``attributes_string`` (an array as its JSON
text), numbers in ``attributes_number``, booleans in ``attributes_bool``, every resource attribute as
a string in ``resources_string``; ``trace_id`` / ``span_id`` as hex (``""`` when unset). The record's
``event_name`` is not stored (SigNoz v0.129's logs table has no such column), so records are found by
their service and told apart by ``gen_ai.evaluation.name``.

**The newest judgement only** (#48). Re-running the gate sends the same records again (SigNoz keeps
every copy; nothing there updates a log record in place), and a re-run on changed evidence may have
fewer findings than the run before. The reader returns, for each run of each release and contract,
the records of its newest export only — every record of one export carries one timestamp, and the
rows come oldest first — so each finding is there once, as last judged, and a finding the last
judgement no longer has is gone. Each record's ``agent.finding.id`` is the same on every re-run.

Only the network goes through :class:`~.signoz_query.SigNozClient` (its retries, deadline, size cap
and credential handling); this module builds the request and reads the rows.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from ... import semconv
from ...errors import QueryError
from .signoz_query import MAX_LIMIT, SigNozClient, eq, raw_rows

PAGE: Final = 1000
_ORDER: Final = (
    {"name": "timestamp", "fieldContext": "log", "fieldDataType": "number", "signal": "logs"},
    {"name": "id", "fieldContext": "log", "fieldDataType": "string", "signal": "logs"},
)


@dataclass(frozen=True, slots=True)
class EvaluationRecord:
    """One evaluation record as SigNoz returns it."""

    log_id: str
    timestamp: str  # as SigNoz gave it: equal for the records of one export
    trace_id: str  # "" when the record is on no trace
    span_id: str
    severity_text: str
    name: str  # gen_ai.evaluation.name
    label: str  # gen_ai.evaluation.score.label
    explanation: str
    code: str  # agent.finding.code
    rule_id: str
    run_id: str
    witness_span_ids: tuple[str, ...]
    record_id: str  # agent.finding.id
    release: str  # agent.finding.release: the release judged; "" for an audit of every release
    contract_name: str  # "" for an audit
    contract_digest: str
    score: float | None  # gen_ai.evaluation.score.value (as SigNoz rounds it)

    @property
    def judgement(self) -> tuple[str, str, str]:
        """(release, contract, run): the records one export makes about one run."""
        return self.release, self.contract_name, self.run_id


def evaluations_filter(trace_id: str | None = None) -> str:
    """The filter expression: this package's records, optionally of one trace."""
    expression = eq(f"resource.{semconv.SERVICE_NAME}", semconv.GATE_SERVICE_NAME)
    return expression + (f" AND {eq('trace_id', trace_id)}" if trace_id else "")


def read_evaluations(
    client: SigNozClient, *, start_ms: int, end_ms: int, trace_id: str | None = None, page: int = PAGE
) -> list[EvaluationRecord]:
    """The evaluation records in ``[start_ms, end_ms)`` (of ``trace_id`` when given) of each run's
    newest export (module doc), oldest first, paged by offset over a stable order (timestamp, then
    SigNoz's record id)."""
    if not 0 < page <= MAX_LIMIT:
        raise QueryError(f"page size must be 1..{MAX_LIMIT} (SigNoz's cap), got {page}")
    records: list[EvaluationRecord] = []
    offset = 0
    while True:
        rows = _query(client, start_ms, end_ms, evaluations_filter(trace_id), page, offset)
        records.extend(_record(client, row) for row in rows)
        if len(rows) < page:
            return newest(records)
        offset += page


def newest(records: list[EvaluationRecord]) -> list[EvaluationRecord]:
    """``records`` (oldest first) without those a later export about the same run replaced."""
    latest = {record.judgement: record.timestamp for record in records}  # the last one read wins
    return [record for record in records if record.timestamp == latest[record.judgement]]


def _query(
    client: SigNozClient, start_ms: int, end_ms: int, expression: str, limit: int, offset: int
) -> list:
    spec = {
        "name": "A",
        "signal": "logs",
        "disabled": False,
        "filter": {"expression": expression},
        "order": [{"key": dict(key), "direction": "asc"} for key in _ORDER],
        "limit": limit,
        "offset": offset,
    }
    rows, _warning = raw_rows(client, spec, start_ms, end_ms, shown=f"{client!r}: ", row="log row")
    return rows


def _record(client: SigNozClient, row: Mapping[str, Any]) -> EvaluationRecord:
    log_id = client.show(row.get("id", "?"))
    strings = _map(row, "attributes_string", log_id)

    def text(key: str, required: bool = True) -> str:
        value = strings.get(key, None if required else "")
        if not isinstance(value, str):
            raise QueryError(
                f"SigNoz log record {log_id} has no string {key}: not an otel-provenance evaluation"
            )
        return value

    timestamp = row.get("timestamp")
    if timestamp is None or timestamp == "":
        raise QueryError(f"SigNoz log record {log_id} has no timestamp: its export cannot be told apart")
    score = _map(row, "attributes_number", log_id).get(semconv.GEN_AI_EVALUATION_SCORE_VALUE)

    try:
        spans = json.loads(text(semconv.FINDING_WITNESS_SPAN_IDS))
    except ValueError:
        spans = None
    if not isinstance(spans, list) or not all(isinstance(s, str) for s in spans):
        raise QueryError(
            f"SigNoz log record {log_id}: {semconv.FINDING_WITNESS_SPAN_IDS} is not a JSON array of span ids"
        )
    return EvaluationRecord(
        log_id=str(row.get("id", "")),
        timestamp=str(timestamp),
        trace_id=str(row.get("trace_id") or ""),
        span_id=str(row.get("span_id") or ""),
        severity_text=str(row.get("severity_text") or ""),
        name=text(semconv.GEN_AI_EVALUATION_NAME),
        label=text(semconv.GEN_AI_EVALUATION_SCORE_LABEL),
        explanation=text(semconv.GEN_AI_EVALUATION_EXPLANATION),
        code=text(semconv.FINDING_CODE),
        rule_id=text(semconv.RULE_ID),
        run_id=text(semconv.RUN_ID),
        witness_span_ids=tuple(spans),
        record_id=text(semconv.FINDING_ID),
        release=text(semconv.EVALUATED_RELEASE, required=False),
        contract_name=text(semconv.CONTRACT_NAME, required=False),
        contract_digest=text(semconv.CONTRACT_DIGEST, required=False),
        score=float(score) if isinstance(score, int | float) and not isinstance(score, bool) else None,
    )


def _map(row: Mapping[str, Any], column: str, log_id: str) -> Mapping[str, Any]:
    value = row.get(column)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise QueryError(f"SigNoz log record {log_id}: {column} is not an object")
    return value
