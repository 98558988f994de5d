"""Google ADK 2.13: ``FunctionTool`` over ``@op.tool``, ``op.adk_plugin()`` installed once, a stub model.

ADK ends an agent's run when a tool raises, unless an ``on_tool_error`` callback answers. With the
plugin, a blocked write ends the run normally: the model's next request carries the refusal as the
tool's response, and the body never ran. ADK's own ``execute_tool`` span is the call's only span
(adopted, with the provenance attributes) and its ``gen_ai.tool.call.id`` is the model's call id.

ADK requires ``opentelemetry-api/sdk <= 1.44``, so it is not in the newest test set: this module runs
in the ``adk`` case of ``scripts/install_check.sh`` and skips where ``google.adk`` is not importable.
"""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

import pytest

pytest.importorskip("google.adk")

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner
from google.adk.tools import FunctionTool
from google.genai import types
from opentelemetry import trace
from pydantic import Field

import otel_provenance as op
from framework_helpers import Exported, Workspace, assert_provenance

# ADK's tracer is the global provider's: one provider for this module, set once.
OUT = Exported()
trace.set_tracer_provider(OUT.provider)


class ScriptedModel(BaseLlm):
    """A stub model: one scripted function call per request, then the text "done". It keeps every
    request's contents, so a test can read what the model was told."""

    model: str = "scripted"
    script: list = Field(default_factory=list)
    seen: list = Field(default_factory=list)

    async def generate_content_async(self, llm_request, stream: bool = False):
        self.seen.append(llm_request.contents)
        if self.script:
            name, arguments = self.script.pop(0)
            call = types.FunctionCall(name=name, args=arguments, id=f"adk-call-{len(self.script)}")
            content = types.Content(role="model", parts=[types.Part(function_call=call)])
        else:
            content = types.Content(role="model", parts=[types.Part(text="done")])
        yield LlmResponse(content=content)


def responses(model: ScriptedModel) -> list[dict[str, Any]]:
    """Every function response the model was sent, in order (the last request holds them all)."""
    return [
        part.function_response.response
        for content in model.seen[-1]
        for part in content.parts or ()
        if part.function_response is not None
    ]


def drive(
    tools: list, script: list, *, plugins: list, inputs: dict | None = None, approver: Any = None
) -> tuple[ScriptedModel, str]:
    model = ScriptedModel(script=list(script), seen=[])
    agent = LlmAgent(name="files", model=model, instruction="Manage files.", tools=tools)
    runner = InMemoryRunner(app=App(name="files_app", root_agent=agent, plugins=plugins))

    async def main() -> str:
        session = await runner.session_service.create_session(app_name="files_app", user_id="u")
        message = types.Content(role="user", parts=[types.Part(text="tidy up")])
        final = ""
        run = op.run(
            inputs=inputs or {"root": "."},
            agent_name="files",
            conversation_id=session.id,  # ADK's session: the conversation
            approver=approver,
            tracer_provider=OUT.provider,
        )
        with run:
            async for event in runner.run_async(user_id="u", session_id=session.id, new_message=message):
                if event.content and event.content.parts and event.content.parts[0].text:
                    final = event.content.parts[0].text
        return final

    return model, asyncio.run(main())


def workspace_tools(ws: Workspace) -> list:
    @op.tool(side_effect="read")
    def list_files(root: str) -> dict:
        """List the files under root."""
        return ws.list_files(root)

    @op.tool(side_effect="write")
    async def delete_file(path: str) -> str:
        """Delete one file."""
        return ws.delete(path)

    return [FunctionTool(list_files), FunctionTool(delete_file)]


@pytest.fixture(autouse=True)
def fresh_spans():
    OUT.exporter.clear()
    yield


def test_schema_is_the_same_with_and_without_op_tool():
    def lookup(order_id: str, limit: int = 10) -> dict:
        """Look an order up."""
        return {}

    bare = FunctionTool(lookup)._get_declaration()
    wrapped = FunctionTool(op.tool(side_effect="read")(lookup))._get_declaration()
    assert wrapped.model_dump() == bare.model_dump()


def test_a_blocked_write_ends_the_run_normally_with_the_refusal_in_the_models_context():
    ws = Workspace()
    script = [
        ("list_files", {"root": "."}),
        ("delete_file", {"path": ws.files[0]}),  # as the model read it from the listing
        ("delete_file", {"path": ws.invented}),  # a guess
    ]
    model, final = drive(workspace_tools(ws), script, plugins=[op.adk_plugin()])
    assert final == "done"
    refusal = responses(model)[-1]
    assert set(refusal) == {"error"}
    assert "delete_file" in refusal["error"] and "path=assumed" in refusal["error"]
    assert ws.invented not in refusal["error"]
    assert_provenance(OUT, ws)
    (root,) = [
        s
        for s in OUT.spans
        if s.name == "invoke_agent files" and s.instrumentation_scope.name == "otel_provenance"
    ]
    assert root.attributes["gen_ai.conversation.id"]


def test_one_span_per_call_adks_own_with_the_models_call_id():
    ws = Workspace()
    script = [
        ("list_files", {"root": "."}),
        ("delete_file", {"path": ws.files[0]}),
        ("delete_file", {"path": ws.invented}),
    ]
    drive(workspace_tools(ws), script, plugins=[op.adk_plugin()])
    tool_spans = [s for s in OUT.spans if s.name.startswith("execute_tool")]
    assert len(tool_spans) == 3  # ADK's, adopted: no second span of ours inside
    assert {s.instrumentation_scope.name for s in tool_spans} == {"gcp.vertex.agent"}
    ids = [s.attributes["gen_ai.tool.call.id"] for s in tool_spans]
    assert ids == ["adk-call-2", "adk-call-1", "adk-call-0"]  # the model's ids, in call order
    for span in tool_spans:
        assert span.attributes["agent.side_effect"] in ("read", "write")
        assert span.attributes["gen_ai.agent.name"] == "files"


def test_without_the_plugin_the_spans_are_still_adopted_but_adk_ends_the_run():
    """What the plugin is for: ADK re-raises the refusal out of the run without an error callback."""
    ws = Workspace()
    with pytest.raises(op.ProvenanceError):
        drive(workspace_tools(ws), [("delete_file", {"path": ws.invented})], plugins=[])
    assert ws.deleted == []
    (span,) = [s for s in OUT.spans if s.name == "execute_tool delete_file"]
    assert span.attributes["agent.tool.status"] == "blocked"


class ToolRefused(RuntimeError):
    """The application's own error type for a refused call (``@op.tool(blocked_error=...)``)."""


def test_a_refusal_raised_as_the_tools_blocked_error_is_answered_too():
    """#50: with ``blocked_error=`` the refusal reaches ADK wrapped in the application's error type
    (chained to the ProvenanceError): still a refusal, answered, and the run goes on."""
    ws = Workspace()

    @op.tool(side_effect="write", blocked_error=ToolRefused)
    def delete_file(path: str) -> str:
        """Delete one file."""
        return ws.delete(path)

    model, final = drive(
        [FunctionTool(delete_file)], [("delete_file", {"path": ws.invented})], plugins=[op.adk_plugin()]
    )
    assert final == "done" and ws.deleted == []
    (refusal,) = responses(model)
    assert "delete_file" in refusal["error"] and "path=assumed" in refusal["error"]
    assert ws.invented not in refusal["error"]


def test_an_error_of_the_blocked_error_type_that_is_no_refusal_is_left_to_adk():
    """The application's error type raised by the body itself (no refusal behind it) is ADK's."""

    @op.tool(side_effect="read", blocked_error=ToolRefused)
    def lookup(order_id: str) -> str:
        """Look an order up."""
        raise ToolRefused("the order service said no")

    with pytest.raises(ToolRefused, match="order service"):
        drive(
            [FunctionTool(lookup)],
            [("lookup", {"order_id": "ord-1"})],
            plugins=[op.adk_plugin()],
            inputs={"order_id": "ord-1"},
        )


def test_an_error_raised_from_another_error_is_no_refusal_and_is_left_to_adk():
    """Only a ProvenanceError behind the error makes it a refusal: a body's error chained to some
    other error (``raise … from``) is ADK's, as any error is."""

    @op.tool(side_effect="read", blocked_error=ToolRefused)
    def lookup(order_id: str) -> str:
        """Look an order up."""
        try:
            {}["missing"]
        except KeyError as missing:
            raise ToolRefused("the order service said no") from missing

    with pytest.raises(ToolRefused, match="order service"):
        drive(
            [FunctionTool(lookup)],
            [("lookup", {"order_id": "ord-2"})],
            plugins=[op.adk_plugin()],
            inputs={"order_id": "ord-2"},
        )


def test_the_plugin_is_named_for_the_package_or_as_told():
    """ADK refuses two plugins of one name: the default is the package's, another can be given."""
    assert op.adk_plugin().name == "otel_provenance"
    assert op.adk_plugin("provenance-2").name == "provenance-2"


def test_other_errors_are_left_to_adk():
    def explode(reason: str) -> str:
        """Fail."""
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        drive(
            [FunctionTool(op.tool(side_effect="read")(explode))],
            [("explode", {"reason": "x"})],
            plugins=[op.adk_plugin()],
        )


def test_tool_context_is_not_an_argument():
    ws = Workspace()
    seen = []

    @op.tool(side_effect="write")
    def delete_file(path: str, tool_context) -> str:
        """Delete one file."""
        seen.append(tool_context.function_call_id)
        return ws.delete(path)

    script = [("list_files", {"root": "."}), ("delete_file", {"path": ws.files[0]})]
    drive([workspace_tools(ws)[0], FunctionTool(delete_file)], script, plugins=[op.adk_plugin()])
    assert seen == ["adk-call-0"]
    (span,) = OUT.tool_spans("delete_file")
    assert span.attributes["agent.tool.status"] == "ok"
    assert not any(k.startswith("agent.arg.tool_context") for k in span.attributes)


def test_a_secret_canary_in_arguments_and_results_is_not_exported():
    ws = Workspace()
    secret = f"canary-{secrets.token_hex(6)}"

    @op.tool(side_effect="read")
    def read_note(name: str) -> dict:
        """Read a note."""
        return {"text": secret}

    drive(
        [FunctionTool(read_note)],
        [("read_note", {"name": ws.files[0]})],
        plugins=[op.adk_plugin()],
        inputs={"name": ws.files[0]},
    )
    OUT.assert_no_values([secret, ws.files[0]])


def test_the_call_is_known_by_the_models_id_before_it_runs():
    """The approver is asked before the body runs, about the call the model made: ADK's call id."""
    asked = []

    def approver(request: op.ApprovalRequest) -> bool:
        asked.append(request.call_id)
        return True

    @op.tool(side_effect="read", needs_approval=True)
    def read_note(name: str) -> str:
        """Read a note."""
        return "text"

    drive(
        [FunctionTool(read_note)],
        [("read_note", {"name": "a"})],
        plugins=[op.adk_plugin()],
        approver=approver,
    )
    assert asked == ["adk-call-0"]


def test_op_tool_over_an_adk_tool_object_is_refused_naming_where_it_goes():
    def lookup(order_id: str) -> dict:
        """Look an order up."""
        return {}

    with pytest.raises(
        op.ConfigurationError, match=r"Google ADK tool object.*FunctionTool\(\.\.\.\) over @op.tool"
    ):
        op.tool(side_effect="read")(FunctionTool(lookup))


def test_the_docs_snippet_runs_as_written(tmp_path):
    """docs/frameworks.md's ADK block, with the stub model as its ``model``: the one line installs it."""
    from framework_helpers_docs import run_doc_snippet

    namespace = run_doc_snippet(
        "Google ADK", tmp_path, model=ScriptedModel(script=[("delete_file", {"path": "guessed.txt"})])
    )
    runner = InMemoryRunner(app=namespace["app"])

    async def main() -> str:
        session = await runner.session_service.create_session(app_name="files_app", user_id="u")
        message = types.Content(role="user", parts=[types.Part(text="tidy up")])
        final = ""
        with op.run(inputs={"path": "report.txt"}, tracer_provider=OUT.provider):
            async for event in runner.run_async(user_id="u", session_id=session.id, new_message=message):
                if event.content and event.content.parts and event.content.parts[0].text:
                    final = event.content.parts[0].text
        return final

    assert asyncio.run(main()) == "done"
    assert "path=assumed" in responses(namespace["model"])[-1]["error"]
