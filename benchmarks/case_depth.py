"""Case 9 — memory of ``fingerprint`` on one run whose spans form a single chain, against file size.

A chain is the worst shape for the canonical form: its text indents each level by two more spaces,
so it grows with the square of the depth (2.5 GB at 50,000 levels). The fingerprint hashes that text
row by row and never holds it, so its peak memory (``tracemalloc``, the run already read) should
grow like the trace file: the target is that peak ÷ file size at the deep chain is at most 1.5× the
same ratio at a chain a tenth as deep. Issue #36 measured 1.24 GB for a 4.9 MB file before.
"""

from __future__ import annotations

import gc
import json
import tracemalloc
from pathlib import Path

from otel_provenance.offline.fingerprint import fingerprint
from otel_provenance.offline.readers import iter_runs

from .harness import Result

CASE = "9 depth"


def chain_file(path: Path, depth: int) -> Path:
    """One OTLP JSON request: an agent span, then ``depth - 1`` spans each the child of the last."""
    spans = []
    for i in range(depth):
        span = {
            "traceId": "ab" * 16,
            "spanId": f"{i + 1:016x}",
            "name": "invoke_agent deep" if i == 0 else f"chat step-{i % 3}",
            "kind": 1,
            "startTimeUnixNano": str(1_000 + i),
            "endTimeUnixNano": str(10**12 - i),
            "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}],
        }
        if i:
            span["parentSpanId"] = f"{i:016x}"
        spans.append(span)
    resource = {"attributes": [{"key": "service.version", "value": {"stringValue": "v1"}}]}
    request = {
        "resourceSpans": [{"resource": resource, "scopeSpans": [{"scope": {"name": "d"}, "spans": spans}]}]
    }
    path.write_text(json.dumps(request) + "\n")
    return path


def _peak_per_byte(path: Path) -> tuple[float, int, int]:
    [run] = iter_runs([path])
    gc.collect()
    tracemalloc.start()
    try:
        fingerprint(run)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    size = path.stat().st_size
    return peak / size, peak, size


def run(quick: bool, workdir: Path) -> list[Result]:
    shallow, deep = (500, 5_000) if quick else (5_000, 50_000)
    small = _peak_per_byte(chain_file(workdir / "chain-shallow.jsonl", shallow))
    large = _peak_per_byte(chain_file(workdir / "chain-deep.jsonl", deep))
    ratio = large[0] / small[0]
    return [
        Result(
            case=f"{CASE} fingerprint peak/file {shallow}->{deep} levels",
            unit="B/B",
            median=large[0],
            baseline=small[0],
            ratio=ratio,
            target="<= 1.5x (memory linear in the file)",
            passed=ratio <= 1.5,
            note=f"peak {large[1] / 2**20:.1f} MiB for a {large[2] / 2**20:.1f} MiB file",
            extra={
                "peak_deep": large[1],
                "file_deep": large[2],
                "peak_shallow": small[1],
                "file_shallow": small[2],
            },
        )
    ]
