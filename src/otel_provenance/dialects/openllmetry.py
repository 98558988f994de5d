"""OpenLLMetry (Traceloop): ``traceloop.span.kind`` tool / agent, the tool in ``traceloop.entity.name``,
the call in ``traceloop.entity.input`` / ``.output`` — a bound ``{"args", "kwargs"}`` for a decorated
function, a LangChain callback's envelope for a LangChain tool. Its framework instrumentations write
more content: LangChain/LangGraph tasks, vector databases' retrieved documents."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from .calls import args_and_kwargs
from .dialect import Dialect, ToolCallRecord

KIND_KEY: Final = "traceloop.span.kind"


def _arguments(parsed: Any, known: frozenset[str]) -> Mapping[str, Any] | None:
    if isinstance(parsed, Mapping) and set(parsed) <= {"args", "kwargs"}:
        return args_and_kwargs(parsed, "kwargs", known)
    return None


DIALECT = Dialect(
    name="openllmetry",
    kind_key=KIND_KEY,
    tool_marks=((KIND_KEY, "tool"),),
    agent_marks=((KIND_KEY, "agent"),),
    tool_name_keys=("traceloop.entity.name",),
    calls=ToolCallRecord("traceloop.entity.input", "traceloop.entity.output", arguments=_arguments),
    content_keys=frozenset(
        {
            "traceloop.entity.input",
            "traceloop.entity.output",
            "traceloop.prompt.template",
            "traceloop.prompt.template_variables",
            "llm.prompts",
            "llm.completions",
            "llm.request.functions",
            "db.query.result.document",  # vector-DB instrumentations: retrieved documents
            "gen_ai.task.input",  # LangChain/LangGraph tasks
            "gen_ai.task.output",
        }
    ),
    scope_words=("traceloop",),
    key_prefixes=("traceloop.", "llm."),
)
