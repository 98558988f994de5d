"""Agent-framework context objects that a tool function receives but the model never chose.

PydanticAI passes ``ctx: RunContext`` to ``@agent.tool`` functions, the OpenAI Agents SDK passes
``RunContextWrapper`` / ``ToolContext``, LangGraph passes ``ToolRuntime``, Google ADK passes
``tool_context: ToolContext``. They are not in the schema the model sees, so they are not arguments
with a provenance: classifying one would tag it ``assumed`` and block every write tool that takes a
context. ``@op.tool`` drops them before classification.

A framework's **tool object** (LangChain's ``StructuredTool``, the Agents SDK's ``FunctionTool``,
PydanticAI's ``Tool``, smolagents' ``Tool``, ADK's tools) is refused by ``@op.tool`` at decoration
(:func:`refuse_framework_tool`): the framework calls the function it holds through its own call path,
so a wrapper around the object would never see a call, and a write would run ungated. The message says
where ``@op.tool`` goes: on the function, under the framework's decorator.

The registries name types by module and class and look them up only in modules already imported, so
this package never imports a framework.
"""

from __future__ import annotations

import sys
from typing import Any, Final

from ...errors import ConfigurationError

#: (module, class): one registry of context types, extended here when a framework adds one.
CONTEXT_TYPES: Final = (
    ("pydantic_ai", "RunContext"),
    ("agents", "RunContextWrapper"),  # ToolContext is a subclass
    ("langgraph.prebuilt", "ToolRuntime"),
    ("google.adk.tools.tool_context", "ToolContext"),  # ADK's `tool_context` (an alias of its Context)
)
_SCALARS: Final = (str, int, float, bool, type(None))


def _loaded_types() -> tuple[type, ...]:
    found = []
    for module_name, class_name in CONTEXT_TYPES:
        module = sys.modules.get(module_name)
        cls = getattr(module, class_name, None) if module is not None else None
        if isinstance(cls, type):
            found.append(cls)
    return tuple(found)


#: (module, class, framework, its decorator over an ``@op.tool`` function): tool objects refused.
TOOL_OBJECT_TYPES: Final = (
    ("langchain_core.tools", "BaseTool", "LangChain", "@tool, or StructuredTool.from_function(func=...)"),
    ("agents", "FunctionTool", "OpenAI Agents SDK", "@function_tool"),
    ("pydantic_ai", "Tool", "PydanticAI", "Tool(...), @agent.tool_plain or @agent.tool"),
    ("smolagents", "Tool", "smolagents", "@tool"),
    ("google.adk.tools.base_tool", "BaseTool", "Google ADK", "FunctionTool(...)"),
)


def refuse_framework_tool(obj: Any) -> None:
    """Raise :class:`ConfigurationError` if ``obj`` is an agent framework's tool object."""
    for module_name, class_name, framework, decorator in TOOL_OBJECT_TYPES:
        module = sys.modules.get(module_name)
        cls = getattr(module, class_name, None) if module is not None else None
        if isinstance(cls, type) and isinstance(obj, cls):
            raise ConfigurationError(
                f"op.tool: {type(obj).__name__} is a {framework} tool object; the framework calls its "
                "function through its own path, so @op.tool around the object would never gate a call. "
                f"Put @op.tool on the function, under the framework's decorator: {decorator} over "
                "@op.tool(...) over def ..."
            )


def without_framework_context(arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` minus the values that are a loaded framework's context object."""
    if all(type(v) in _SCALARS for v in arguments.values()):
        return arguments
    types = _loaded_types()
    if not types:
        return arguments
    return {name: value for name, value in arguments.items() if not isinstance(value, types)}


__all__ = ["CONTEXT_TYPES", "TOOL_OBJECT_TYPES", "refuse_framework_tool", "without_framework_context"]
