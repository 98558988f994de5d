"""The README's "Instrument an agent" snippet, run as written, as a new user would: no collector, no
environment, a folder with one file.

It must run quietly and at once — no OTLP exporter retrying a connection that is refused (#37) — and
give one trace per run: the tool spans are children of the ``invoke_agent`` span that ``op.run``
opens, and the blocked call raises ``ProvenanceError`` without running its body.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

from otel_provenance.offline.readers import iter_runs

README = Path(__file__).resolve().parents[2] / "README.md"


def _snippet() -> str:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Instrument an agent") :]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "README: no python block under 'Instrument an agent'"
    return match.group(1)


def test_readme_snippet_runs_quietly_without_a_collector_and_gives_one_trace_per_run(tmp_path):
    (tmp_path / "app.py").write_text("print('hi')\n")
    script = tmp_path / "snippet.py"
    script.write_text(_snippet())
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # quiet: no exporter warnings, no traceback
    assert done.stdout.startswith("blocked: patch_file: blocked by provenance budget")
    assert took < 10, f"the snippet took {took:.1f} s"  # about a second; no connection retries
    (run,) = list(iter_runs([str(tmp_path / "spans.jsonl")]))
    spans = run.spans
    assert sorted(s.name for s in spans) == [
        "execute_tool list_files",
        "execute_tool patch_file",
        "execute_tool patch_file",
        "invoke_agent fixer",
    ]
    assert len({s.trace_id for s in spans}) == 1  # one run, one trace
    (root,) = [s for s in spans if s.name == "invoke_agent fixer"]
    assert root.parent_span_id is None
    assert all(s.parent_span_id == root.span_id for s in spans if s is not root)
    assert root.attributes.get("gen_ai.agent.name") == "fixer"
    data = (tmp_path / "spans.jsonl").read_bytes()
    assert b"prod.env" not in data and b"looks important" not in data  # values are stripped
