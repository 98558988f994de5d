"""Pydantic AI: its tool and agent spans (scope ``pydantic-ai``) hold the call and the conversation in
keys without a namespace; ``model_request_parameters`` (every model-request span, all instrumentation
versions) holds the instructions, tool descriptions and output-schema descriptions."""

from __future__ import annotations

from .dialect import Dialect

_BARE = frozenset(
    {"model_request_parameters", "tool_arguments", "tool_response", "final_result", "all_messages_events"}
)

DIALECT = Dialect(
    name="pydantic_ai",
    content_keys=_BARE | {"pydantic_ai.all_messages"},
    scope_words=("pydantic-ai", "pydantic_ai"),
    key_prefixes=("pydantic_ai.",),
    bare_keys=_BARE,
)
