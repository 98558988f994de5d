"""smolagents: ``@tool`` over ``@op.tool``, a ``ToolCallingAgent`` driven by a scripted ``Model``.

smolagents turns any exception a tool raises into an error observation the model reads on its next
step (``AgentToolExecutionError``), so a blocked call needs no adapter: the refusal (tool, rule,
argument names and kinds) is in the model's context and the run goes on to ``final_answer``. With
OpenInference's ``SmolagentsInstrumentor``, the tool spans it draws are read with the argument names of
the tool's ``inputs`` — ``final_answer``'s one argument is ``answer``, not the three keys of
smolagents' ``Tool.__call__`` — and no argument or result value is exported.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("smolagents")

import smolagents
from smolagents import ChatMessage, Model, ToolCallingAgent, tool
from smolagents.models import ChatMessageToolCall, ChatMessageToolCallFunction, MessageRole
from smolagents.monitoring import TokenUsage

import otel_provenance as op
from framework_helpers import Exported, Workspace, assert_provenance

pytestmark = pytest.mark.filterwarnings("ignore:Function '.*' has decorators other than @tool")


class ScriptedModel(Model):
    """One scripted tool call per step, then ``final_answer``; it keeps the messages of each step."""

    def __init__(self, calls: list) -> None:
        super().__init__(model_id="scripted")
        self.pending = [*calls, ("final_answer", {"answer": "done"})]
        self.seen: list[str] = []

    def generate(
        self, messages, stop_sequences=None, response_format=None, tools_to_call_from=None, **kwargs
    ):
        self.seen.append(
            json.dumps([m.dict() if hasattr(m, "dict") else str(m) for m in messages], default=str)
        )
        name, arguments = self.pending.pop(0)
        function = ChatMessageToolCallFunction(name=name, arguments=json.dumps(arguments))
        call = ChatMessageToolCall(function, id=f"call_{len(self.seen)}", type="function")
        usage = TokenUsage(input_tokens=10, output_tokens=5)  # the instrumentation reads it
        return ChatMessage(role=MessageRole.ASSISTANT, content=None, tool_calls=[call], token_usage=usage)


def workspace_tools(ws: Workspace, provider) -> list:
    @tool
    @op.tool(side_effect="read", tracer_provider=provider)
    def list_files(root: str) -> dict:
        """List the files under root.

        Args:
            root: The folder to list.
        """
        return ws.list_files(root)

    @tool
    @op.tool(side_effect="write", tracer_provider=provider)
    def delete_file(path: str) -> str:
        """Delete one file.

        Args:
            path: The file's path.
        """
        return ws.delete(path)

    return [list_files, delete_file]


def run_agent(ws: Workspace, out: Exported) -> tuple[ScriptedModel, object]:
    model = ScriptedModel(
        [
            ("list_files", {"root": "."}),
            ("delete_file", {"path": ws.files[0]}),  # as the model read it from the listing
            ("delete_file", {"path": ws.invented}),  # a guess
        ]
    )
    agent = ToolCallingAgent(tools=workspace_tools(ws, out.provider), model=model, verbosity_level=0)
    with op.run(inputs={"root": "."}, agent_name="files", tracer_provider=out.provider):
        answer = agent.run("Tidy up.")
    return model, answer


def test_schema_is_the_same_with_and_without_op_tool():
    def lookup(order_id: str, limit: int = 10) -> dict:
        """Look an order up.

        Args:
            order_id: The order.
            limit: How many lines.
        """
        return {}

    bare, wrapped = tool(lookup), tool(op.tool(side_effect="read")(lookup))
    assert (wrapped.name, wrapped.inputs, wrapped.output_type) == (bare.name, bare.inputs, bare.output_type)


def test_a_blocked_call_is_an_error_observation_and_the_run_goes_on():
    out, ws = Exported(), Workspace()
    model, answer = run_agent(ws, out)
    assert answer == "done"
    assert "max_assumed:path=assumed" in model.seen[-1]  # the refusal, in the model's last context
    assert_provenance(out, ws)


@pytest.fixture
def instrumented():
    """OpenInference's instrumentation of smolagents, undone after the test."""
    instrumentation = pytest.importorskip("openinference.instrumentation.smolagents")
    out = Exported()
    smolagents.ScriptedModel = ScriptedModel  # the instrumentor wraps the model classes smolagents exports
    instrumentor = instrumentation.SmolagentsInstrumentor()
    instrumentor.instrument(tracer_provider=out.provider)
    yield out
    instrumentor.uninstrument()
    del smolagents.ScriptedModel


def test_final_answer_is_read_by_its_one_argument_name(instrumented):
    out, ws = instrumented, Workspace()
    run_agent(ws, out)
    (final,) = [s for s in out.spans if s.attributes.get("tool.name") == "final_answer"]
    names = {k.split(".")[2] for k in final.attributes if k.startswith("agent.arg.") and k.endswith(".kind")}
    assert names == {"answer"}
    # the framework's tool span of an @op.tool call is not a second classified call
    deletes = out.tool_spans("delete_file")
    assert [s.attributes["agent.tool.status"] for s in deletes] == ["ok", "blocked"]
    out.assert_no_values([*ws.files, ws.invented])


def test_the_docs_snippet_runs_as_written(tmp_path):
    """docs/frameworks.md's smolagents block, with the stub model as its ``model``."""
    from framework_helpers_docs import run_doc_snippet

    model = ScriptedModel([("delete_file", {"path": "report.txt"}), ("delete_file", {"path": "guessed.txt"})])
    namespace = run_doc_snippet("smolagents", tmp_path, model=model)
    with op.run(inputs={"path": "report.txt"}):
        assert namespace["agent"].run("Tidy up.") == "done"
    assert "max_assumed:path=assumed" in model.seen[-1]
