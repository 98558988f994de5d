"""What a ``gate check`` loads before it reads a span: start-up is paid on every gate in CI (#46).

A gate that prints its text report over trace files in this process loads neither ``jsonschema`` (its
contract is valid), nor the process pool, nor the audit, diff or other report renderers; asking for
those (``--jobs``, ``--junit``…) still loads and uses them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

CONTRACT = "version: 1\nname: t\nrules:\n  - {id: r, type: forbidden_spans, select: {step: a}}\n"
NOT_LOADED = (
    "jsonschema",
    "otel_provenance.offline.audit",
    "otel_provenance.offline.diff",
    "otel_provenance.offline.engines.pool",
    "otel_provenance.offline.readers.partitions",
    "otel_provenance.offline.report.junit",
    "otel_provenance.offline.report.sarif",
    "otel_provenance.offline.report.markdown",
    "otel_provenance.offline.report.json_report",
    "otel_provenance.offline.report.html",
)
PROBE = (
    "import io, json, sys\n"
    "from otel_provenance.cli import run\n"
    "out, err = io.StringIO(), io.StringIO()\n"
    "code = run(sys.argv[1:], out, err)\n"
    "print(json.dumps({'code': code, 'err': err.getvalue(), 'modules': sorted(sys.modules)}))\n"
)


def _gate(tmp_path: Path, *options: str) -> dict[str, object]:
    contract = tmp_path / "c.yaml"
    contract.write_text(CONTRACT, encoding="utf-8")
    argv = [
        "gate",
        "check",
        "--contract",
        str(contract),
        "--release",
        "v1",
        *options,
        str(tmp_path / "t.jsonl"),
    ]
    (tmp_path / "t.jsonl").write_text("", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    result: dict[str, object] = json.loads(proc.stdout)
    return result


def test_a_text_gate_loads_only_what_it_uses(tmp_path: Path) -> None:
    result = _gate(tmp_path)
    assert result["code"] == 3, result["err"]  # no runs: insufficient data
    modules = result["modules"]
    assert isinstance(modules, list)
    assert [name for name in NOT_LOADED if name in modules] == []


@pytest.mark.parametrize(
    ("option", "module"),
    [
        ("--junit=OUT", "otel_provenance.offline.report.junit"),
        ("--sarif=OUT", "otel_provenance.offline.report.sarif"),
        ("--jobs=2", "otel_provenance.offline.engines.pool"),
    ],
)
def test_what_an_option_asks_for_is_loaded(tmp_path: Path, option: str, module: str) -> None:
    result = _gate(tmp_path, option.replace("OUT", str(tmp_path / "report")))
    assert result["code"] == 3, result["err"]
    modules = result["modules"]
    assert isinstance(modules, list)
    assert module in modules
