"""Google ADK: a blocked call becomes the tool's response, ADK's ``execute_tool`` span is the call's span.

ADK turns an exception from a tool into the end of the agent's run unless an ``on_tool_error``
callback answers it. :func:`adk_plugin` returns a plugin (``App(..., plugins=[op.adk_plugin()])``,
or ``Runner(..., plugins=[...])``) whose callbacks, for every tool of every agent of the app:

* before the tool runs, announce ADK's ``function_call_id`` (the model's id for the call) so the
  call's ``gen_ai.tool.call.id`` is that id. ADK's own ``execute_tool {name}`` span, current while the
  tool runs, is adopted by ``@op.tool`` by its name (:mod:`..adopt`: ADK sets its attributes only when
  it ends): one span per call;
* when the tool raised :class:`~otel_provenance.ProvenanceError` (a blocked call: the body never ran),
  answer with ``{"error": <the refusal>}`` — tool, rule, argument names and kinds, never values — which
  ADK gives the model as the tool's response; the run goes on. Any other exception is left to ADK
  (and to the callbacks after this one), as without the plugin.

ADK calls plugin callbacks before the agent's own; a plugin that answers first stops the chain, so
this one answers only the refusal.
"""

from __future__ import annotations

from typing import Any

from ...errors import ConfigurationError, ProvenanceError
from ..call.adopt import announce_framework_call, end_framework_call

_PLUGIN_CLASS: Any = None


def adk_plugin(name: str = "otel_provenance") -> Any:
    """A Google ADK plugin that turns a blocked ``@op.tool`` call into the tool's response and gives
    the call ADK's call id and span. Install it once: ``App(..., plugins=[op.adk_plugin()])``."""
    global _PLUGIN_CLASS
    if _PLUGIN_CLASS is None:
        _PLUGIN_CLASS = _plugin_class()
    return _PLUGIN_CLASS(name)


def _plugin_class() -> type:
    try:
        from google.adk.plugins.base_plugin import BasePlugin
    except ImportError as error:
        raise ConfigurationError(
            "op.adk_plugin(): Google ADK is not installed (pip install google-adk)"
        ) from error

    class ProvenancePlugin(BasePlugin):
        """otel-provenance's callbacks for every tool of an ADK app (module docstring)."""

        async def before_tool_callback(self, *, tool: Any, tool_args: Any, tool_context: Any) -> None:
            name = getattr(tool, "name", None)
            if isinstance(name, str):
                announce_framework_call(name, getattr(tool_context, "function_call_id", None))
            return None

        async def after_tool_callback(
            self, *, tool: Any, tool_args: Any, tool_context: Any, result: Any
        ) -> None:
            end_framework_call()
            return None

        async def on_tool_error_callback(
            self, *, tool: Any, tool_args: Any, tool_context: Any, error: BaseException
        ) -> dict[str, str] | None:
            refusal = _refusal(error)
            if refusal is None:  # not ours to answer: ADK (and the agent's callbacks) decide
                end_framework_call()
                return None
            return {"error": str(error)}  # blocked before the body ran: the model reads why

    return ProvenancePlugin


def _refusal(error: BaseException) -> ProvenanceError | None:
    """The refusal ``error`` is or carries (``@op.tool(blocked_error=...)`` chains it), else None."""
    if isinstance(error, ProvenanceError):
        return error
    cause = error.__cause__
    return cause if isinstance(cause, ProvenanceError) else None


__all__ = ["adk_plugin"]
