"""Logfire's real instrumentation (#36): no canary in the JSON Lines file in the default mode.

Logfire sets process-wide providers, so it runs in a subprocess (``logfire_producer.py``): the
standard library's logging through ``LogfireLoggingHandler`` (``logfire.msg``,
``logfire.logging_args``), a ``logfire.span`` whose error quotes a value (the exception event and
status), ``logfire.instrument_openai`` against a loopback OpenAI stub (``gen_ai.input.messages``,
``gen_ai.output.messages``, ``request_data``), and ``logfire.instrument_pydantic_ai`` with a
``FunctionModel`` (``model_request_parameters``, ``final_result``, ``pydantic_ai.all_messages``).
A control run without stripping proves every canary would be in the file.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from interop import require

require("logfire")
require("openai")
require("pydantic_ai")

PRODUCER = Path(__file__).with_name("logfire_producer.py")
NAMES = (
    "logging_arg",
    "exception",
    "completion",
    "system",
    "prompt",
    "agent_output",
    "instructions",
    "agent_prompt",
)


def _run(tmp_path: Path, mode: str | None) -> tuple[bytes, dict[str, str]]:
    canaries = {name: "cnry" + secrets.token_hex(10) for name in NAMES}
    values = tmp_path / f"canaries-{mode}.json"
    values.write_text(json.dumps(canaries))
    out = tmp_path / f"spans-{mode}.jsonl"
    argv = [sys.executable, str(PRODUCER), str(out), str(values), *([mode] if mode else [])]
    done = subprocess.run(argv, cwd=PRODUCER.parents[1], capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    return out.read_bytes(), canaries


def test_control_run_writes_every_canary(tmp_path):
    data, canaries = _run(tmp_path, "--raw")
    assert [name for name, value in canaries.items() if value.encode() not in data] == []


@pytest.mark.parametrize("mode", [None, "denylist"], ids=["default", "denylist"])
def test_logfire_instrumentation_leaks_nothing(tmp_path, mode):
    data, canaries = _run(tmp_path, mode)
    assert [name for name, value in canaries.items() if value.encode() in data] == []
    spans = [
        span
        for line in data.splitlines()
        for rs in json.loads(line)["resourceSpans"]
        for ss in rs["scopeSpans"]
        for span in ss["spans"]
    ]
    assert len(spans) == 5  # nothing dropped: the spans leave without their content
    keys = {attribute["key"] for span in spans for attribute in span.get("attributes", [])}
    assert {"gen_ai.request.model", "gen_ai.usage.input_tokens", "logfire.span_type"} <= keys
    assert not keys & {"logfire.msg", "logfire.logging_args", "model_request_parameters", "final_result"}
