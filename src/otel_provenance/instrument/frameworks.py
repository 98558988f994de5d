"""Agent-framework context objects that a tool function receives but the model never chose.

PydanticAI passes ``ctx: RunContext`` to ``@agent.tool`` functions, the OpenAI Agents SDK passes
``RunContextWrapper`` / ``ToolContext``, LangGraph passes ``ToolRuntime``, Google ADK passes
``tool_context: ToolContext``. They are not in the schema the model sees, so they are not arguments
with a provenance: classifying one would tag it ``assumed`` and block every write tool that takes a
context. ``@op.tool`` drops them before classification.

The registry names types by module and class and looks them up only in modules already imported, so
this package never imports a framework.
"""

from __future__ import annotations

import sys
from typing import Any, Final

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


def without_framework_context(arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` minus the values that are a loaded framework's context object."""
    if all(type(v) in _SCALARS for v in arguments.values()):
        return arguments
    types = _loaded_types()
    if not types:
        return arguments
    return {name: value for name, value in arguments.items() if not isinstance(value, types)}


__all__ = ["CONTEXT_TYPES", "without_framework_context"]
