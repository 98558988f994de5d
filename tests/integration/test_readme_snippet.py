"""The README's "Instrument an agent" snippet, run as written against a loopback OTLP/HTTP receiver.

It must give one trace per run: the tool spans are children of the ``invoke_agent`` span that
``op.run`` opens, and the blocked call raises ``ProvenanceError`` without running its body.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from otlp_receiver import OtlpReceiver

README = Path(__file__).resolve().parents[2] / "README.md"


def _snippet() -> str:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Instrument an agent") :]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "README: no python block under 'Instrument an agent'"
    return match.group(1)


def test_readme_snippet_gives_one_trace_per_run(tmp_path):
    (tmp_path / "app.py").write_text("print('hi')\n")
    script = tmp_path / "snippet.py"
    script.write_text(_snippet())
    with OtlpReceiver("/v1/traces") as receiver:
        env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.url
        done = subprocess.run(
            [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
        )
    bodies = receiver.bodies["/v1/traces"]
    assert done.returncode == 1  # the last call is blocked: ProvenanceError, as the comment says
    assert "otel_provenance.errors.ProvenanceError" in done.stderr
    spans = []
    for body in bodies:
        request = trace_service_pb2.ExportTraceServiceRequest.FromString(body)
        spans += [s for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans]
    names = sorted(s.name for s in spans)
    assert names == [
        "execute_tool list_files",
        "execute_tool patch_file",
        "execute_tool patch_file",
        "invoke_agent fixer",
    ]
    assert len({s.trace_id for s in spans}) == 1  # one run, one trace
    (root,) = [s for s in spans if s.name == "invoke_agent fixer"]
    assert not root.parent_span_id
    assert all(s.parent_span_id == root.span_id for s in spans if s is not root)
    attributes = {kv.key: kv.value for kv in root.attributes}
    assert attributes["gen_ai.operation.name"].string_value == "invoke_agent"
    assert attributes["gen_ai.agent.name"].string_value == "fixer"
    assert root.status.code == 2  # the run ended with the ProvenanceError
    assert b"prod.env" not in b"".join(bodies) and b"looks important" not in b"".join(bodies)
