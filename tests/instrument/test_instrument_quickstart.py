"""examples/quickstart.py runs as written and its OTLP JSON Lines output proves what happened."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "quickstart.py"


def attributes(span: dict) -> dict:
    out = {}
    for item in span.get("attributes", []):
        value = item["value"]
        out[item["key"]] = next(iter(value.values())) if value else None
    return out


def test_quickstart_runs_and_blocks_the_guess(tmp_path):
    (tmp_path / "app.py").write_text("print('hi')\n")
    (tmp_path / "notes.md").write_text("notes\n")
    output = tmp_path / "spans.jsonl"
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), str(output)], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "blocked:" in done.stdout and "the blocked body ran: False" in done.stdout
    assert str(output) in done.stdout

    spans = [
        span
        for line in output.read_text().splitlines()
        for resource in json.loads(line)["resourceSpans"]
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
    ]
    by_name: dict[str, list[dict]] = {}
    for span in spans:
        by_name.setdefault(span["name"], []).append(span)
    (listing,) = by_name["execute_tool list_files"]
    good, bad = by_name["execute_tool patch_file"]
    good_attrs, bad_attrs = attributes(good), attributes(bad)
    assert good_attrs["agent.arg.path.kind"] == "observed"
    assert good_attrs["agent.arg.path.source_tool"] == "list_files"
    assert good_attrs["agent.arg.path.source_field"] == "files.0"
    assert good_attrs["agent.arg.path.source_span_id"] == listing["spanId"]
    assert bad_attrs["agent.tool.status"] == "blocked"
    assert bad_attrs["agent.arg.path.kind"] == "assumed"
    assert bad["status"]["code"] == 2  # STATUS_CODE_ERROR
    assert "prod.env" not in output.read_text() and "looks important" not in output.read_text()
    (root,) = by_name["invoke_agent quickstart"]
    assert {span["traceId"] for span in spans} == {root["traceId"]}  # one run, one trace
    assert all(span.get("parentSpanId") == root["spanId"] for span in spans if span is not root)
