"""examples/frameworks/*.py run offline as written: the observed delete runs, the guessed one is
refused, and the OTLP JSON Lines output has one execute_tool span per call with the kinds."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "frameworks"
CASES = {
    "openai_agents_tools.py": "agents",
    "langchain_tools.py": "langchain.agents",
    "pydantic_ai_tools.py": "pydantic_ai",
}


def attributes(span: dict) -> dict:
    return {a["key"]: next(iter(a["value"].values()), None) for a in span.get("attributes", [])}


@pytest.mark.parametrize("example", sorted(CASES))
def test_example_runs_and_refuses_the_guess(example, tmp_path):
    pytest.importorskip(CASES[example])
    output = tmp_path / "spans.jsonl"
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / example), str(output)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "delete_file's body ran for: ['report.txt']" in done.stdout
    assert "path=assumed" in done.stdout
    spans = [
        attributes(span)
        for line in output.read_text().splitlines()
        for resource in json.loads(line)["resourceSpans"]
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
    ]
    deletes = [s for s in spans if s.get("gen_ai.tool.name") == "delete_file"]
    assert [s["agent.arg.path.kind"] for s in deletes] == ["observed", "assumed"]
    assert [s["agent.tool.status"] for s in deletes] == ["ok", "blocked"]
    assert "prod.env" not in output.read_text()
