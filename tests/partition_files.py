"""Small hand-written OTLP JSON Lines files for the partition tests (``offline.readers.partitions``).

A span is ``span(trace, n, run_id)``: trace ``T<trace>`` (``f"{trace:032x}"``), span id ``n``, and an
``agent.run.id`` when given (``hidden=True`` writes its key escaped, invisible to the index's byte
scan; ``value`` gives another OTLP value instead of a string).
"""

from __future__ import annotations

import json
from pathlib import Path

from otel_provenance.offline.readers import ReadReport, partitions, read_spans
from otel_provenance.offline.readers.partitions import Failed, Indexed, Partition, Split
from otel_provenance.offline.runs import RunKeys


def tid(trace: int) -> str:
    return f"{trace:032x}"


def sid(n: int) -> str:
    return f"{n:016x}"


def span(
    trace: int, n: int, run_id: str | None = None, *, hidden: bool = False, value: dict | None = None
) -> str:
    body: dict = {
        "traceId": tid(trace),
        "spanId": sid(n),
        "name": f"execute_tool step{n}",
        "kind": 1,
        "startTimeUnixNano": str(1000 + n),
        "endTimeUnixNano": str(1001 + n),
    }
    if run_id is not None or value is not None:
        body["attributes"] = [{"key": "agent.run.id", "value": value or {"stringValue": run_id}}]
    text = json.dumps(body)
    return text.replace('"agent.run.id"', '"agent.run\\u002eid"') if hidden else text


def line(*spans: str) -> str:
    request = '{"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {}, "spans": [%s]}]}]}'
    return request % ", ".join(spans) + "\n"


def write(path: Path, *lines: str) -> Path:
    path.write_text("".join(lines))
    return path


def whole_spans(path: Path) -> list[str]:
    """The span ids the single-process reader reads from ``path``, in file order."""
    return [s.span_id for s in read_spans([path], report=ReadReport())]


def split_args(ix: Indexed, keys: RunKeys) -> tuple[dict[str, str], frozenset[tuple[str, str]]]:
    """``run_of`` and ``known`` for one partition's split, from its own links (as ``DaskSource`` does)."""
    run_of = {trace_id: keys.run_of(trace_id) for trace_id, _ in ix.links}
    known = frozenset((t, r) for t, r in ix.links if r is not None)
    return run_of, known


def members(split: Split | Failed) -> dict[str, list[str]]:
    """Run key -> span ids of a split, whichever bucket they are in."""
    assert not isinstance(split, Failed), split
    out: dict[str, list[str]] = {}
    for by_run in split.buckets.values():
        for key, spans in by_run.items():
            out.setdefault(key, []).extend(s.span_id for s in spans)
    return out


def whole(path: Path) -> Partition:
    return Partition(str(path))


class VanishingAfterSniff(partitions.TraceFile):
    """The real sniff, then the file is removed: the read that follows meets a real ``OSError``
    (a file rotated away between the two, as a collector's file exporter does)."""

    def __init__(self, path: str, limits) -> None:
        super().__init__(path, limits)
        if "://" in path:
            import fsspec

            fs, inner = fsspec.core.url_to_fs(path)
            fs.rm(inner)
        else:
            Path(path).unlink()
