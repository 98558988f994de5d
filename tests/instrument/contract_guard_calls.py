"""Helpers of the ``test_contract_guard_*`` modules: a contract file of rules written as a person writes
them, and the agent's calls made in turn with the guard's refusals collected."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import otel_provenance as op


def contract_file(tmp_path: Path, *rules: str, name: str = "refunds") -> Path:
    """A contract named ``name`` with ``rules`` (each a YAML flow mapping), as a file."""
    path = tmp_path / f"{name}.yaml"
    path.write_text(f"name: {name}\nversion: 1\nrules:\n" + "".join(f"  - {rule}\n" for rule in rules))
    return path


def refused(calls: list[Callable[[], object]]) -> list[tuple[str, ...]]:
    """Make each call in turn; the objections of each call the guard refused (the rest ran)."""
    found = []
    for call in calls:
        try:
            call()
        except op.ProvenanceError as error:
            found.append(error.violations)
    return found
