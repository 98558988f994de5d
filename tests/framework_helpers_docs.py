"""The Python block of a docs/frameworks.md section, for the framework tests that run it as written."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "frameworks.md"


def doc_snippet(heading: str) -> str:
    """The first ```python block under ``## {heading}``."""
    text = DOC.read_text()
    section = text.split(f"\n## {heading}\n", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match is not None, f"docs/frameworks.md: no python block under '## {heading}'"
    return match.group(1)


def run_doc_snippet(heading: str, directory: Path, **names: object) -> dict:
    """Run the block as a file of its own (frameworks that read a tool's source need one), with
    ``names`` (the stub ``model``) defined; its globals after the run."""
    import runpy

    path = directory / f"snippet_{re.sub(r'[^a-z]+', '_', heading.lower())}.py"
    path.write_text(doc_snippet(heading))
    return runpy.run_path(str(path), init_globals=names)
