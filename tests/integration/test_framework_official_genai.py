"""The official GenAI instrumentation's tool spans (``opentelemetry-instrumentation-genai-langchain``,
built on ``opentelemetry-util-genai``), classified and stripped by ``op.ProvenanceSpanProcessor``.

The instrumentation opens ``execute_tool {name}`` with ``gen_ai.operation.name`` and
``gen_ai.tool.name`` when the tool starts and keeps it current while the tool runs: ``@op.tool`` adopts
it (one span per call, the model's call id on it), and a tool without ``@op.tool`` is classified from
the span's own ``gen_ai.tool.call.arguments`` after the call. Content capture is on; no argument or
result value reaches the exported bytes.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.instrumentation.genai.langchain")
pytest.importorskip("opentelemetry.exporter.otlp.json.file")

PRODUCER = Path(__file__).resolve().parents[1] / "agent_traces" / "official_genai_langchain.py"


def spans(path: Path) -> list[dict]:
    def value(v: dict):
        return next(iter(v.values()), None)

    return [
        {
            "name": s["name"],
            "scope": scope["scope"]["name"],
            **{a["key"]: value(a["value"]) for a in s["attributes"]},
        }
        for line in path.read_text().splitlines()
        for rs in json.loads(line)["resourceSpans"]
        for scope in rs["scopeSpans"]
        for s in scope["spans"]
    ]


def test_official_tool_spans_are_adopted_classified_and_stripped(tmp_path):
    out, canary = tmp_path / "spans.jsonl", f"canary-{secrets.token_hex(6)}"
    done = subprocess.run(
        [sys.executable, str(PRODUCER), str(out), canary], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    ran_out, refused_out, _ = done.stdout.splitlines()
    assert ran_out == "deleted"
    assert "max_assumed:path=assumed" in refused_out  # the refusal, as LangChain's tool error
    tools = [s for s in spans(out) if s["name"].startswith("execute_tool")]
    assert {s["scope"] for s in tools} == {"opentelemetry.instrumentation.genai.langchain"}  # adopted
    ran, refused, plain = tools
    assert (ran["gen_ai.tool.call.id"], refused["gen_ai.tool.call.id"], plain["gen_ai.tool.call.id"]) == (
        "lc-1",
        "lc-2",
        "lc-3",
    )
    assert (ran["agent.arg.path.kind"], ran["agent.tool.status"]) == ("observed", "ok")
    assert (refused["agent.arg.path.kind"], refused["agent.tool.status"]) == ("assumed", "blocked")
    # classified from the official span's arguments; the span carries no schema, so the model-chosen
    # name is exported by position (ProvenanceSpanProcessor(foreign_argument_names=...) names it)
    assert plain["agent.arg.arguments.0.kind"] == "assumed"
    text = out.read_text()
    assert canary not in text and "report.txt" not in text and "prod.env" not in text
    assert "gen_ai.tool.call.arguments" not in text and "gen_ai.tool.call.result" not in text
