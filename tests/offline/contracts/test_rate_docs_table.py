"""docs/contracts.md quotes the error-rate table that ``scripts/rate_error_table.py`` computes (#38)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
START, END = "<!-- rate-table:start -->\n", "<!-- rate-table:end -->"


def test_the_docs_table_is_the_scripts_output() -> None:
    script = ROOT / "scripts" / "rate_error_table.py"
    output = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True).stdout
    docs = (ROOT / "docs" / "contracts.md").read_text(encoding="utf-8")
    quoted = docs[docs.index(START) + len(START) : docs.index(END)]
    assert quoted == output
    assert "| 0 % | 0.0 % / 0.0 % / 100.0 % |" in output  # a release that never fails is never failed
