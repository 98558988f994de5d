"""A run whose spans form one long chain (issue #36: a 50,000-deep chain needed 1.24 GB to fingerprint).

The canonical form's text grows with the square of the depth (its indent), so the fingerprint
hashes it row by row instead of building it; these tests check that the deep chain is read,
fingerprinted and audited without recursion, and that the streamed hash is the hash of the form.
Memory is measured in the benchmarks (``case_depth``), not asserted here."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

from otel_provenance.cli import run as cli_run
from otel_provenance.offline import iter_runs
from otel_provenance.offline.fingerprint import canonical_form, fingerprint


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
            "attributes": [
                {
                    "key": "gen_ai.operation.name",
                    "value": {"stringValue": "invoke_agent" if i == 0 else "chat"},
                }
            ],
        }
        if i:
            span["parentSpanId"] = f"{i:016x}"
        spans.append(span)
    request = {
        "resourceSpans": [
            {
                "resource": {"attributes": [{"key": "service.version", "value": {"stringValue": "v1"}}]},
                "scopeSpans": [{"scope": {"name": "deep"}, "spans": spans}],
            }
        ]
    }
    path.write_text(json.dumps(request) + "\n")
    return path


def test_the_fingerprint_is_the_hash_of_the_canonical_form_at_depth(tmp_path: Path) -> None:
    [run] = iter_runs([chain_file(tmp_path / "t.jsonl", 3_000)])  # deeper than Python's recursion limit
    form = canonical_form(run)
    lines = form.splitlines()
    assert len(lines) == 3_000 and lines[-1] == "  " * 2_999 + '"chat step-2"'
    assert fingerprint(run) == "v1:" + hashlib.sha256(form.encode()).hexdigest()


def test_a_5000_deep_chain_fingerprints_and_audits_from_the_cli(tmp_path: Path) -> None:
    path = chain_file(tmp_path / "deep.jsonl", 5_000)
    out, err = io.StringIO(), io.StringIO()
    assert cli_run(["fingerprint", "--format", "json", str(path)], out, err) == 0, err.getvalue()
    [row] = json.loads(out.getvalue())["runs"]
    assert row["steps"] == 5_000 and row["fingerprint"].startswith("v1:")
    out, err = io.StringIO(), io.StringIO()
    assert cli_run(["audit", str(path)], out, err) == 3, err.getvalue()  # no tool call: insufficient
    assert "no_tool_calls" in out.getvalue() and "Error" not in err.getvalue()
