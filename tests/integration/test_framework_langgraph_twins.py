"""``@op.tool`` under LangGraph with OpenInference's LangChain instrumentation: one call, one count.

Set up as docs/frameworks.md says (``@tool`` over ``@op.tool``), OpenInference's tool span is not the
parent of ``@op.tool``'s span: it sits in a branch of its own (agent → tools → its tool span) while
``@op.tool``'s span is opened under the agent's run. Before, the processor classified that *twin* as a
second call — its arguments observed from the inner span's own result, a blocked call's twin recorded
``status ok`` — and every offline check counted each call twice. Now the twin (same tool, its time
containing the call) gets no provenance online and is an echo offline.

Driven with the real SDK, the real instrumentation, LangGraph's own agent loop and a scripted model.
"""

from __future__ import annotations

import io
import secrets
from pathlib import Path

import pytest

from interop import FileSpanExporter, require
from otel_provenance.cli import run as cli_run
from otel_provenance.offline.readers import iter_runs

require("openinference.instrumentation.langchain")
require("langchain.agents")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import AIMessage, ToolMessage  # noqa: E402
from langchain_core.tools import ToolException, tool  # noqa: E402
from openinference.instrumentation.langchain import LangChainInstrumentor  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402

import otel_provenance as op  # noqa: E402


class ScriptedChatModel(GenericFakeChatModel):
    def bind_tools(self, tools, **kwargs):
        return self


def _run(path: Path, files: list[str], last_path: str) -> list:
    """One LangGraph agent run (list, delete a listed file, delete ``last_path``) into ``path``."""
    provider = TracerProvider(resource=Resource.create({"service.name": "cleaner", "service.version": "1"}))
    provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(FileSpanExporter(str(path)))))
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:

        @tool
        @op.tool(side_effect="read", tracer_provider=provider)
        def list_files(root: str) -> dict:
            """List the files under root."""
            return {"root": root, "files": list(files)}

        @tool
        @op.tool(side_effect="write", blocked_error=ToolException, tracer_provider=provider)
        def delete_file(path: str) -> str:
            """Delete one file."""
            return "deleted"

        delete_file.handle_tool_error = True
        script = [("list_files", {"root": "."}), ("delete_file", {"path": files[0]})]
        script.append(("delete_file", {"path": last_path}))
        messages = [
            AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call_{i}"}])
            for i, (name, args) in enumerate(script)
        ]
        model = ScriptedChatModel(messages=iter([*messages, AIMessage("done")]))
        agent = create_agent(model, tools=[list_files, delete_file])
        with op.run(inputs={"root": "."}, tracer_provider=provider):
            result = agent.invoke({"messages": [("user", "clean up")]})
    finally:
        instrumentor.uninstrument()
        provider.shutdown()
    return [m for m in result["messages"] if isinstance(m, ToolMessage)]


def _audit(path: Path) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli_run(["audit", str(path)], out, err)
    return code, out.getvalue() + err.getvalue()


@pytest.fixture
def files() -> list[str]:
    return [f"report-{secrets.token_hex(5)}.txt", f"notes-{secrets.token_hex(5)}.md"]  # canaries


def test_a_correct_run_is_three_calls_and_audits_clean(tmp_path: Path, files: list[str]) -> None:
    path = tmp_path / "traces.jsonl"
    results = _run(path, files, files[1])
    assert [m.status for m in results] == ["success", "success", "success"]
    data = path.read_bytes()
    assert not any(name.encode() in data for name in files)
    (run,) = iter_runs([path])
    calls = [s for s in run.spans if s.is_tool]
    assert [s.tool_name for s in calls] == ["list_files", "delete_file", "delete_file"]
    assert all(s.scope_name == "otel_provenance" for s in calls)
    twins = [s for s in run.spans if s.attributes.get("openinference.span.kind") == "TOOL"]
    assert len(twins) == 3 and all(s.echo for s in twins)
    # the processor gave the twins no provenance of their own: no second call, no result remembered
    assert all(not any(k.startswith("agent.") for k in s.attributes) for s in twins)
    assert not any(s.parent_span_id == c.span_id for s in twins for c in calls)  # a branch of its own
    for delete in calls[1:]:
        (source,) = [v for k, v in delete.attributes.items() if k.endswith(".source_span_id")]
        assert source == calls[0].span_id
    code, text = _audit(path)
    assert code == 0, text
    assert "1 run(s), 3 tool call(s); arguments: 3 observed, 0 assumed, 0 invented" in text


def test_a_blocked_call_twin_is_never_a_successful_call(tmp_path: Path, files: list[str]) -> None:
    path = tmp_path / "traces.jsonl"
    invented = f"prod-{secrets.token_hex(5)}.env"
    results = _run(path, files, invented)
    assert [m.status for m in results] == ["success", "success", "error"]
    assert invented.encode() not in path.read_bytes()
    (run,) = iter_runs([path])
    statuses = [(s.tool_name, s.attributes.get("agent.tool.status")) for s in run.spans if s.is_tool]
    assert statuses == [("list_files", "ok"), ("delete_file", "ok"), ("delete_file", "blocked")]
    twins = [s for s in run.spans if s.attributes.get("openinference.span.kind") == "TOOL"]
    assert all(s.echo and "agent.tool.status" not in s.attributes for s in twins)
    code, text = _audit(path)
    assert code == 2, text
    assert "1 run(s), 3 tool call(s)" in text
    assert "delete_file was blocked before it ran (path=assumed)" in text
