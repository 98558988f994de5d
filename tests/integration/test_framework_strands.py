"""Strands Agents: ``@tool`` over ``@op.tool``, an ``Agent`` driven by a scripted ``Model``.

Strands turns an exception a tool raises into a tool result with ``status="error"`` that the model
reads, so a blocked call needs no adapter: the refusal (tool, rule, argument names and kinds) is in
the model's next request and the run goes on. Strands' own ``execute_tool {name}`` span — marked with
``gen_ai.operation.name``, ``gen_ai.tool.name`` and the model's ``toolUseId`` as
``gen_ai.tool.call.id`` when it starts — is current while the tool runs, so ``@op.tool`` adopts it: one
span per call, carrying the provenance, with the model's call id.

Strands requires ``mcp<2.2``, so it is not in the newest test set (``mcp`` 2.3): this module runs in
the ``strands`` case of ``scripts/install_check.sh`` and skips where ``strands`` is not importable.
"""

from __future__ import annotations

import json
import secrets

import pytest

pytest.importorskip("strands")

from opentelemetry import trace
from strands import Agent, tool
from strands.models.model import Model

import otel_provenance as op
from framework_helpers import Exported, Workspace, assert_provenance

# Strands' tracer is the global provider's, looked up when its first agent is made: one provider here.
OUT = Exported()
trace.set_tracer_provider(OUT.provider)


class ScriptedModel(Model):
    """One scripted tool use per request, then the text "done"; it keeps every request's messages."""

    def __init__(self, script: list) -> None:
        self.script = list(script)
        self.seen: list = []

    def update_config(self, **model_config):
        pass

    def get_config(self):
        return {}

    async def structured_output(self, output_model, prompt, system_prompt=None, **kwargs):
        raise NotImplementedError
        yield  # pragma: no cover

    async def stream(self, messages, tool_specs=None, system_prompt=None, **kwargs):
        self.seen.append(json.loads(json.dumps(messages, default=str)))
        yield {"messageStart": {"role": "assistant"}}
        if self.script:
            name, arguments = self.script.pop(0)
            use = {"toolUseId": f"tooluse-{len(self.script)}", "name": name}
            yield {"contentBlockStart": {"start": {"toolUse": use}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(arguments)}}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
        else:
            yield {"contentBlockDelta": {"delta": {"text": "done"}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}


def tool_results(model: ScriptedModel) -> list[dict]:
    """Every tool result the model was sent, in order (the last request holds them all)."""
    return [
        block["toolResult"]
        for message in model.seen[-1]
        for block in message.get("content", ())
        if "toolResult" in block
    ]


def workspace_tools(ws: Workspace) -> list:
    @tool
    @op.tool(side_effect="read")
    def list_files(root: str) -> dict:
        """List the files under root.

        Args:
            root: The folder to list.
        """
        return ws.list_files(root)

    @tool
    @op.tool(side_effect="write")
    def delete_file(path: str) -> str:
        """Delete one file.

        Args:
            path: The file's path.
        """
        return ws.delete(path)

    return [list_files, delete_file]


def drive(tools: list, script: list, inputs: dict | None = None) -> tuple[ScriptedModel, str]:
    model = ScriptedModel(script)
    agent = Agent(model=model, tools=tools, name="files", callback_handler=None)
    with op.run(inputs=inputs or {"root": "."}, agent_name="files", tracer_provider=OUT.provider):
        answer = agent("Tidy up.")
    return model, str(answer).strip()


@pytest.fixture(autouse=True)
def fresh_spans():
    OUT.exporter.clear()


def test_schema_is_the_same_with_and_without_op_tool():
    def lookup(order_id: str, limit: int = 10) -> dict:
        """Look an order up.

        Args:
            order_id: The order.
            limit: How many lines.
        """
        return {}

    assert tool(op.tool(side_effect="read")(lookup)).tool_spec == tool(lookup).tool_spec


def test_a_blocked_write_is_an_error_result_the_model_reads_and_the_run_goes_on():
    ws = Workspace()
    script = [
        ("list_files", {"root": "."}),
        ("delete_file", {"path": ws.files[0]}),  # as the model read it from the listing
        ("delete_file", {"path": ws.invented}),  # a guess
    ]
    model, answer = drive(workspace_tools(ws), script)
    assert answer == "done"
    refusal = tool_results(model)[-1]
    assert refusal["status"] == "error"
    assert "max_assumed:path=assumed" in refusal["content"][0]["text"]
    assert ws.invented not in refusal["content"][0]["text"]
    assert_provenance(OUT, ws)


def test_one_span_per_call_strands_own_with_the_models_call_id():
    ws = Workspace()
    script = [
        ("list_files", {"root": "."}),
        ("delete_file", {"path": ws.files[0]}),
        ("delete_file", {"path": ws.invented}),
    ]
    drive(workspace_tools(ws), script)
    tool_spans = [s for s in OUT.spans if s.name.startswith("execute_tool")]
    assert len(tool_spans) == 3  # Strands' own, adopted
    assert all(s.instrumentation_scope.name != "otel_provenance" for s in tool_spans)
    assert [s.attributes["gen_ai.tool.call.id"] for s in tool_spans] == [
        "tooluse-2",
        "tooluse-1",
        "tooluse-0",
    ]
    assert all(s.attributes["agent.side_effect"] in ("read", "write") for s in tool_spans)


def test_the_call_is_known_by_the_models_id_before_it_runs():
    asked = []

    def approver(request: op.ApprovalRequest) -> bool:
        asked.append(request.call_id)
        return True

    @tool
    @op.tool(side_effect="read", needs_approval=True)
    def read_note(name: str) -> str:
        """Read a note.

        Args:
            name: The note's name.
        """
        return "text"

    model = ScriptedModel([("read_note", {"name": "a"})])
    agent = Agent(model=model, tools=[read_note], callback_handler=None)
    with op.run(inputs={"name": "a"}, approver=approver, tracer_provider=OUT.provider):
        agent("Read it.")
    assert asked == ["tooluse-0"]


def test_a_secret_canary_in_arguments_and_results_is_not_exported():
    ws = Workspace()
    secret = f"canary-{secrets.token_hex(6)}"

    @tool
    @op.tool(side_effect="read")
    def read_note(name: str) -> dict:
        """Read a note.

        Args:
            name: The note's name.
        """
        return {"text": secret}

    drive([read_note], [("read_note", {"name": ws.files[0]})], inputs={"name": ws.files[0]})
    OUT.assert_no_values([secret, ws.files[0]])


def test_the_docs_snippet_runs_as_written(tmp_path):
    """docs/frameworks.md's Strands block, with the stub model as its ``model``."""
    from framework_helpers_docs import run_doc_snippet

    model = ScriptedModel([("delete_file", {"path": "report.txt"}), ("delete_file", {"path": "guessed.txt"})])
    namespace = run_doc_snippet("Strands Agents", tmp_path, model=model)
    with op.run(inputs={"path": "report.txt"}, tracer_provider=OUT.provider):
        answer = namespace["agent"]("Tidy up.")
    assert str(answer).strip() == "done"
    ran, refused = tool_results(model)
    assert ran["status"] == "success" and refused["status"] == "error"
    assert "path=assumed" in refused["content"][0]["text"]
