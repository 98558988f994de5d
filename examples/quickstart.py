"""Quickstart: the example from DESIGN.md, exporting to an OTLP JSON Lines file.

    python examples/quickstart.py [OUTPUT.jsonl]

A read-only ``list_files`` observes the working tree; ``patch_file`` (a write tool, zero assumed
arguments allowed) first patches a path the listing returned — observed — and then tries a path no
tool returned, ``prod.env``, which is blocked before the function body runs. No file is modified:
the "patch" only records what it would have done.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider

import otel_provenance as op

output = (
    Path(sys.argv[1])
    if len(sys.argv) > 1
    else Path(tempfile.gettempdir()) / "otel-provenance-quickstart.jsonl"
)
output.unlink(missing_ok=True)
provider = TracerProvider(
    resource=Resource.create({"service.name": "quickstart", "service.version": "0.1.0"})
)
# The safe set-up on an existing provider: configure() adds the OTLP JSON Lines file exporter *inside*
# the stripping processor (batch=False: each span is written as it ends).
op.configure(tracer_provider=provider, exporter="file", file=output, batch=False, set_global=False)
trace.set_tracer_provider(provider)

patched: list[str] = []  # what patch_file's body did; the blocked call must never appear here


@op.tool(side_effect="read")
def list_files(root: str) -> dict:
    files = sorted(entry.name for entry in os.scandir(root) if entry.is_file())
    return {"root": root, "files": files}


@op.tool(side_effect="write", data_domain="repo", budget=op.Budget(max_assumed=0, allow={"comment"}))
def patch_file(path: str, comment: str) -> dict:
    patched.append(path)
    return {"path": path, "patched": True}


def main() -> int:
    # One run, one trace under an "invoke_agent quickstart" span; declared inputs count as observed.
    with op.run(inputs={"root": "."}, agent_name="quickstart"):
        listing = list_files(root=".")
        if not listing["files"]:
            print("the current directory has no files to list; run this from a project folder")
            return 1
        patch_file(path=listing["files"][0], comment="keep tests green")  # path: observed
        print(f"observed: patch_file(path=<files.0 of list_files>) ran, body saw {len(patched)} call(s)")
        try:
            patch_file(path="prod.env", comment="looks important")  # nothing returned this path
        except op.ProvenanceError as blocked:
            print(f"blocked:  {blocked}")
    provider.shutdown()
    ran_bad = "prod.env" in patched
    print(f"the blocked body ran: {ran_bad}")
    print(f"spans written to {output} (OTLP JSON Lines)")
    return 1 if ran_bad else 0


if __name__ == "__main__":
    sys.exit(main())
