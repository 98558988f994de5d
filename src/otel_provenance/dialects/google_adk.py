"""Google ADK (``gcp.vertex.agent.*`` beside the GenAI conventions' keys)."""

from __future__ import annotations

from .dialect import Dialect

DIALECT = Dialect(
    name="google_adk",
    content_keys=frozenset(
        {
            "gcp.vertex.agent.tool_call_args",
            "gcp.vertex.agent.tool_response",
            "gcp.vertex.agent.llm_request",
            "gcp.vertex.agent.llm_response",
            "gcp.vertex.agent.data",
        }
    ),
    scope_words=("gcp.vertex.agent", "google.adk"),
    key_prefixes=("gcp.vertex.agent.",),
)
