"""``@op.tool`` over a framework's tool object is refused at decoration, saying where it goes.

The framework calls the function its tool object holds through its own path (``StructuredTool.invoke``
→ ``func``, ``FunctionTool.on_invoke_tool``, PydanticAI's ``Tool.function``, smolagents'
``Tool.forward``), so a wrapper around the object would never see a call: a write would run ungated.
Each framework's object is refused; the order the message names gates the framework's own call path.
"""

from __future__ import annotations

import pytest

import otel_provenance as op

pytestmark = pytest.mark.filterwarnings("ignore:Function '.*' has decorators other than @tool")


def delete_file(path: str) -> str:
    """Delete one file.

    Args:
        path: The file's path.
    """
    return "deleted"


def langchain_tool():
    from langchain_core.tools import StructuredTool

    return StructuredTool.from_function(delete_file), "@tool, or StructuredTool.from_function"


def agents_tool():
    from agents import function_tool

    return function_tool(delete_file), "@function_tool"


def pydantic_ai_tool():
    from pydantic_ai import Tool

    return Tool(delete_file), "Tool(...), @agent.tool_plain"


def smolagents_tool():
    from smolagents import tool

    return tool(delete_file), "@tool"


CASES = {
    "langchain_core": langchain_tool,
    "agents": agents_tool,
    "pydantic_ai": pydantic_ai_tool,
    "smolagents": smolagents_tool,
}


@pytest.mark.parametrize("module", sorted(CASES))
@pytest.mark.parametrize("shape", ["bare", "with-options"])
def test_a_framework_tool_object_is_refused_naming_where_op_tool_goes(module, shape):
    pytest.importorskip(module)
    obj, decorator = CASES[module]()
    decorate = op.tool if shape == "bare" else op.tool(side_effect="write", name="delete_file")
    with pytest.raises(op.ConfigurationError) as refused:
        decorate(obj)
    message = str(refused.value)
    assert type(obj).__name__ in message
    assert decorator in message and "under the framework's decorator" in message


@pytest.mark.parametrize("module", ["langchain_core", "smolagents"])
def test_op_tool_under_the_decorator_gates_the_frameworks_own_call_path(module):
    """The order the message names: the framework's call path reaches @op.tool, which gates it."""
    pytest.importorskip(module)
    ran = []

    @op.tool(side_effect="write")
    def remove(path: str) -> str:
        """Delete one file.

        Args:
            path: The file's path.
        """
        ran.append(path)
        return "deleted"

    if module == "langchain_core":
        from langchain_core.tools import StructuredTool

        framework_tool = StructuredTool.from_function(remove)
        call = framework_tool.invoke
    else:
        from smolagents import tool

        framework_tool = tool(remove)
        call = lambda arguments: framework_tool(**arguments, sanitize_inputs_outputs=True)  # noqa: E731
    with op.run(inputs={"path": "a.txt"}):
        assert call({"path": "a.txt"}) == "deleted"
        with pytest.raises(op.ProvenanceError):
            call({"path": "b.txt"})
    assert ran == ["a.txt"]
