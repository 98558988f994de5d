"""OpenInference (Arize / Phoenix): ``openinference.span.kind`` TOOL / AGENT, the tool in ``tool.name``,
the call in ``input.value`` / ``output.value`` (with ``enable_genai_semconv`` its 0.1.72 conversion
writes the tool's *parameter schema* into ``gen_ai.tool.call.arguments``: its own keys are read first).
Its smolagents instrumentation binds ``Tool.__call__(*args, sanitize_inputs_outputs=False, **kwargs)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from .calls import args_and_kwargs
from .dialect import Dialect, ToolCallRecord

KIND_KEY: Final = "openinference.span.kind"

#: smolagents' ``Tool.__call__`` as OpenInference binds it.
SMOLAGENTS_CALL_KEYS: Final = frozenset({"args", "sanitize_inputs_outputs", "kwargs"})


def _arguments(parsed: Any, known: frozenset[str]) -> Mapping[str, Any] | None:
    if (
        isinstance(parsed, Mapping)
        and set(parsed) == SMOLAGENTS_CALL_KEYS
        and not known & SMOLAGENTS_CALL_KEYS  # a tool whose own parameters are these keeps them
    ):
        return args_and_kwargs(parsed, "arguments", known)
    return None


DIALECT = Dialect(
    name="openinference",
    kind_key=KIND_KEY,
    tool_marks=((KIND_KEY, "TOOL"),),
    agent_marks=((KIND_KEY, "AGENT"),),
    tool_name_keys=("tool.name",),
    calls=ToolCallRecord(
        "input.value",
        "output.value",
        schema_keys=("tool.parameters", "tool.json_schema"),
        arguments=_arguments,
    ),
    content_keys=frozenset(
        {
            "input.value",
            "output.value",
            "llm.input_messages",
            "llm.output_messages",
            "llm.prompts",
            "llm.prompt_template.template",
            "llm.prompt_template.variables",
            "llm.tools",
            "message.content",
            "message.contents",
            "tool_call.function.arguments",
            "llm.function_call",  # the function-call arguments JSON
            "tool.description",
            "tool.parameters",
            "tool.json_schema",
            "retrieval.documents",
            "embedding.embeddings",
            "document.content",
            "reranker.query",
            "reranker.input_documents",
            "reranker.output_documents",
        }
    ),
    scope_words=("openinference",),
    # ``input.value`` is no marker: generic enough for an application's own span (where the deny-list
    # removes it); OpenInference's spans carry their kind and their scope name
    key_prefixes=("openinference.", "llm."),
)
