"""LangChain tools under the official ``opentelemetry-instrumentation-genai-langchain`` (util-genai's
``execute_tool`` spans), behind ``op.ProvenanceSpanProcessor`` and the official OTLP JSON file exporter.

    python tests/agent_traces/official_genai_langchain.py OUT CANARY

A program of its own (run by tests/integration/test_framework_official_genai.py in a subprocess): the
instrumentor hooks LangChain's callback manager for the rest of the process, as OpenLLMetry's does.
Three tool calls, as an agent's ``ToolNode`` makes them (tool-call dicts with the model's ids): an
``@op.tool`` write on an observed path, the same write on a guessed path (refused with
``ToolException``), and a tool without ``@op.tool`` whose argument and result are the CANARY.
"""

from __future__ import annotations

import os
import sys

os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"  # content on: it must go

from langchain_core.tools import ToolException, tool
from opentelemetry.exporter.otlp.json.file import FileSpanExporter
from opentelemetry.instrumentation.genai.langchain import LangChainInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import otel_provenance as op


def main(out: str, canary: str) -> None:
    provider = TracerProvider()
    provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(FileSpanExporter(out))))
    LangChainInstrumentor().instrument(tracer_provider=provider)

    @tool
    @op.tool(side_effect="write", blocked_error=ToolException, tracer_provider=provider)
    def delete_file(path: str) -> str:
        """Delete one file."""
        return "deleted"

    delete_file.handle_tool_error = True

    @tool
    def read_note(name: str) -> str:
        """Read a note."""
        return f"note {canary}"

    def call(t, args: dict, call_id: str):
        return t.invoke({"type": "tool_call", "name": t.name, "args": args, "id": call_id})

    with op.run(inputs={"path": "report.txt"}, agent_name="files", tracer_provider=provider):
        print(call(delete_file, {"path": "report.txt"}, "lc-1").content)
        print(call(delete_file, {"path": "prod.env"}, "lc-2").content)
        print(call(read_note, {"name": canary}, "lc-3").content.replace(canary, "<canary>"))
    provider.shutdown()


if __name__ == "__main__":
    main(*sys.argv[1:])
