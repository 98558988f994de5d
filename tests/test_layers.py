"""The house's layers hold (pyproject.toml ``[tool.importlinter]``), and a back-import breaks them.

``scripts/test.sh`` runs ``lint-imports`` before the suite; these tests run it too, on the tree as it
is and on a copy with one back-import planted, so a contract that could never fail would show here.
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT = Path(sys.executable).with_name("lint-imports")


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    if not LINT.exists():
        pytest.skip("import-linter is not installed (the test extra)")
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    return subprocess.run(
        [str(LINT), "--no-cache"], cwd=tree, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def test_the_layers_hold() -> None:
    done = _lint(ROOT)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "0 broken" in done.stdout


@pytest.mark.parametrize(
    ("module", "back_import"),
    [
        ("offline/readers/locations.py", "from ..report import text"),  # a reader that loads reports
        ("offline/contracts/rules/budgets.py", "from ... import audit"),  # a rule reaching into audit
        ("offline/runs.py", "from .engines import fold"),
        ("offline/model.py", "from ..instrument import budget"),
        ("instrument/call/guard.py", "from ...offline import gate"),  # the guard may judge, never gate
        ("instrument/evidence/ledger.py", "from ..call import budget"),  # evidence below the call
        ("instrument/evidence/trust.py", "from ..spans import redaction"),  # the evidence, below what leaves
        ("instrument/call/policy.py", "from . import runscope"),  # the circle #45 broke
    ],
)
def test_a_back_import_breaks_them(tmp_path: Path, module: str, back_import: str) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(ROOT / "src", tree / "src", ignore=shutil.ignore_patterns("*.egg-info", "__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tree / "pyproject.toml")
    path = tree / "src" / "otel_provenance" / module
    path.write_text(path.read_text() + f"\n{back_import}  # noqa\n")
    done = _lint(tree)
    assert done.returncode != 0, done.stdout[-3000:]
    assert "BROKEN" in done.stdout


def test_importing_the_readers_loads_no_evaluation_contract_or_report_module() -> None:
    code = (
        "import sys, otel_provenance.offline.readers;"
        "bad=[m for m in sys.modules if m.startswith(('otel_provenance.offline.contracts',"
        "'otel_provenance.offline.evaluate','otel_provenance.offline.report','otel_provenance.offline.gate',"
        "'otel_provenance.offline.engines','otel_provenance.offline.aggregate','otel_provenance.offline.audit'))];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert importlib.import_module("otel_provenance.offline.readers")
