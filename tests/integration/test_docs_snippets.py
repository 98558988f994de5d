"""Snippets of the docs that show a call running, asking or being refused, run as written in a fresh
process: a snippet that drifts from the code (a call its comment says runs is refused) fails here.

The README's own snippet has its test (``test_readme_snippet.py``); these are the other pages'. The
only change made to a snippet is the person: ``input`` answers "y" instead of waiting at a terminal.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from otel_provenance.offline.readers import iter_runs

DOCS = Path(__file__).resolve().parents[2] / "docs"
STATUS, APPROVAL = "agent.tool.status", "agent.guard.approval"
PERSON = "import builtins\nbuiltins.input = lambda prompt: print('ASKED', prompt) or 'y'\n"


def _snippet(page: str, heading: str) -> str:
    text = (DOCS / page).read_text(encoding="utf-8")
    match = re.search(r"```python\n(.*?)```", text[text.index(heading) :], re.S)
    assert match, f"{page}: no python block under {heading!r}"
    return match.group(1)


def _run(tmp_path: Path, code: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "notes.txt").write_text("a file for list_files to list\n")
    script = tmp_path / "snippet.py"
    script.write_text(code)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "PYTEST"))}
    return subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )


def _tool_spans(path: Path) -> list[tuple[str, object, object]]:
    """(tool name, status, approval) of each tool span in the file, in start order."""
    (run,) = list(iter_runs([str(path)]))
    calls = sorted((s for s in run.spans if s.name.startswith("execute_tool")), key=lambda s: s.start_ns)
    return [(s.name, s.attributes.get(STATUS), s.attributes.get(APPROVAL)) for s in calls]


def test_guard_md_ask_a_person_runs_the_small_refund_and_asks_for_the_large_one(tmp_path):
    done = _run(tmp_path, PERSON + _snippet("guard.md", "## Ask a person"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("ASKED") == 1  # only the refund over 100 asks
    assert "Run refund (needs_approval:refund)" in done.stdout
    assert _tool_spans(tmp_path / "otel-provenance-spans.jsonl") == [
        ("execute_tool refund", "ok", None),  # runs: no approval needed
        ("execute_tool refund", "ok", "approved"),  # asked, approved, ran
    ]


def test_provenance_md_first_snippet_runs_the_observed_patch_and_refuses_the_assumed_one(tmp_path):
    done = _run(tmp_path, _first_block("provenance.md"))
    # the snippet ends in the refused call: it raises where its comment says, after the first patch ran
    assert done.returncode == 1
    assert done.stderr.rstrip().endswith(
        "otel_provenance.errors.ProvenanceError: patch_file: blocked by provenance budget "
        "(max_assumed:path=assumed)"
    )
    assert 'patch_file(path="prod.env"' in done.stderr  # the last line is the one refused


def _first_block(page: str) -> str:
    match = re.search(r"```python\n(.*?)```", (DOCS / page).read_text(encoding="utf-8"), re.S)
    assert match, f"{page}: no python block"
    return match.group(1)
