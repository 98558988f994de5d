"""A tiny agent run by the real package in a subprocess: each run lists files, then patches one.

``good`` runs patch a listed file (the path observed); ``bad`` runs patch a guessed one, which the
write budget blocks before the body runs. The spans go where ``op.configure(file=...)`` writes them,
so the offline tests read exactly what a user's agent exports. ``service.version`` is the release,
or absent when ``release`` is None."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterable
from pathlib import Path

AGENT = textwrap.dedent(
    """
    import sys
    import otel_provenance as op

    path, release, runs, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    provider = op.configure(service_name="fixer", service_version=release or None, file=path, batch=False,
                            metrics=False)

    @op.tool(side_effect="read")
    def list_files(root: str) -> dict:
        return {"files": ["a.py"]}

    @op.tool(side_effect="write")
    def patch_file(path: str) -> dict:
        return {}

    for _ in range(runs):
        with op.run(inputs={"root": "."}, agent_name="fixer"):
            listing = list_files(root=".")
            try:
                patch_file(path=listing["files"][0] if mode == "good" else "prod.env")
            except op.ProvenanceError:
                pass
    provider.shutdown()
    """
)


def write_runs(path: Path, release: str | None, runs: int, mode: str = "good") -> Path:
    done = subprocess.run(
        [sys.executable, "-c", AGENT, str(path), release or "", str(runs), mode],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return path


def drop_attributes(path: Path, keys: Iterable[str]) -> Path:
    """Rewrite the OTLP JSON Lines file without these span attributes (lost on the way)."""
    drop = set(keys)
    lines = []
    for line in path.read_text().splitlines():
        doc = json.loads(line)
        for rs in doc["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                for span in ss["spans"]:
                    span["attributes"] = [kv for kv in span.get("attributes", []) if kv["key"] not in drop]
        lines.append(json.dumps(doc))
    path.write_text("".join(line + "\n" for line in lines))
    return path
