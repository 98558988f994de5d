"""The docs and examples import only the two public faces: ``otel_provenance`` (the application) and
``otel_provenance.offline`` (CI and scripts), and every name they import from them exists."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PUBLIC = {"otel_provenance", "otel_provenance.offline"}
# the pages about the house itself name its inside on purpose
INSIDE = {"DESIGN.md", "testing.md", "benchmarks.md"}
IMPORT = re.compile(
    r"^\s*>?\s*from (otel_provenance[\w.]*) import ([\w, ()]+)|^\s*>?\s*import (otel_provenance[\w.]*)", re.M
)
INSIDE_BLOCK = re.compile(r"<!-- inside the package -->\s*```python\n.*?```", re.S)
TEXTS = [
    p
    for p in [
        ROOT / "README.md",
        *sorted((ROOT / "docs").glob("*.md")),
        *sorted((ROOT / "examples").rglob("*.py")),
    ]
    if p.name not in INSIDE
]


@pytest.mark.parametrize("path", TEXTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_only_public_names_are_imported(path: Path) -> None:
    text = INSIDE_BLOCK.sub("", path.read_text())  # "how to add" code that lives inside the package
    for match in IMPORT.finditer(text):
        module = match.group(1) or match.group(3)
        if module == "otel_provenance.cli":  # the command line's own entry point, for the demo
            continue
        assert module in PUBLIC, f"{path.name}: {match.group(0).strip()}"
        if match.group(2):
            face = importlib.import_module(module)
            for item in match.group(2).strip("()").split(","):
                name = item.split(" as ")[0].strip()
                assert not name or name in face.__all__, (path.name, name)
