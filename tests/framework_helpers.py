"""Shared by the framework integration tests: a real SDK provider behind op.ProvenanceSpanProcessor,
the two tools every framework test runs, and the canary check on the exported bytes."""

from __future__ import annotations

import secrets

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_provenance as op
from canary import assert_absent, exported_bytes


class Exported:
    """Spans as an exporter behind the stripping processor receives them."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider()
        self.provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(self.exporter)))

    @property
    def spans(self):
        return self.exporter.get_finished_spans()

    def tool_spans(self, name: str):
        return [s for s in self.spans if s.attributes.get("gen_ai.tool.name") == name]

    def assert_no_values(self, values) -> None:
        assert_absent(list(values), exported_bytes(self.spans))


class Workspace:
    """A listing with random (canary) file names, and a delete that records what its body saw."""

    def __init__(self) -> None:
        self.files = [f"report-{secrets.token_hex(5)}.txt", f"notes-{secrets.token_hex(5)}.md"]
        self.deleted: list[str] = []
        self.invented = f"prod-{secrets.token_hex(5)}.env"

    def list_files(self, root: str) -> dict:
        return {"root": root, "files": list(self.files)}

    def delete(self, path: str) -> str:
        self.deleted.append(path)
        return "deleted"


def assert_provenance(out: Exported, ws: Workspace) -> None:
    """One list, one delete that ran on an observed path, one blocked delete on an invented path."""
    (listing,) = out.tool_spans("list_files")
    ran, refused = out.tool_spans("delete_file")
    assert listing.attributes["agent.arg.root.kind"] == "observed"
    assert ran.attributes["agent.arg.path.kind"] == "observed"
    assert ran.attributes["agent.arg.path.source_tool"] == "list_files"
    assert ran.attributes["agent.tool.status"] == "ok"
    assert refused.attributes["agent.arg.path.kind"] == "assumed"
    assert refused.attributes["agent.tool.status"] == "blocked"
    assert ws.deleted == [ws.files[0]]
    out.assert_no_values([*ws.files, ws.invented])
