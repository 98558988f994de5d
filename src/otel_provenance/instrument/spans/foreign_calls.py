"""Tool calls other GenAI instrumentations recorded on their spans: which library wrote the span,
the call's arguments (named only where the tool's schema names them) and its result — read before
their content is stripped (:mod:`..thirdparty` classifies them). Where each library puts them, and
how it wraps them, is its row's :class:`~otel_provenance.dialects.ToolCallRecord`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from ... import dialects, semconv
from ...dialects.calls import langchain_inputs, langchain_output, named_by_schema, parse, property_names
from ...dialects.dialect import ToolCallRecord

#: The GenAI conventions' producer name (``ForeignToolCall.library``): spans whose calls are timed by
#: their own start and end, not by an outer framework span's.
GENAI: Final = dialects.genai.DIALECT.name
ABSENT: Final = object()
#: Name of the single argument when a library recorded a non-object (a bare list or scalar).
WHOLE_INPUT: Final = "input"
#: Where a tool span may carry its parameter schema (a JSON schema with ``properties``): every row's.
_SCHEMA_KEYS: Final = tuple(
    dict.fromkeys(k for d in dialects.DIALECTS if d.calls is not None for k in d.calls.schema_keys)
)


@dataclass(frozen=True)
class ForeignToolCall:
    """What another library recorded about one tool call. Lives only inside ``on_end``."""

    library: str
    tool: str
    arguments: Mapping[str, Any] | None  # None: not recorded, or not parseable
    raw_result: Any  # ABSENT when not recorded; parsed only once its size is known to fit
    record: ToolCallRecord | None = None

    @property
    def result(self) -> Any:
        if self.raw_result is ABSENT:
            return ABSENT
        result = langchain_output(parse(self.raw_result))
        if self.record is not None and self.record.result is not None:
            result = self.record.result(result)
        return result


def has_own_provenance(attributes: Mapping[str, Any]) -> bool:
    """Made (or already classified) by ``@op.tool``: it sets ``agent.tool.status`` and ``agent.arg.*``."""
    return semconv.TOOL_STATUS in attributes or any(
        semconv.split_arg_attr(key) is not None for key in attributes
    )


def schema_names(attributes: Mapping[str, Any]) -> frozenset[str]:
    """Parameter names declared by the JSON schema a tool span carries (none when there is none)."""
    for key in _SCHEMA_KEYS:
        schema = parse(attributes.get(key))
        if isinstance(schema, Mapping):
            names = property_names(schema)
            if names is None:
                names = property_names(schema.get("parameters"))
            if names is not None:
                return names
            if schema and all(isinstance(v, Mapping) and "type" in v for v in schema.values()):
                return frozenset(name for name in schema if isinstance(name, str))  # smolagents' inputs
    return frozenset()


def _arguments(record: ToolCallRecord, raw: Any, known: frozenset[str]) -> Mapping[str, Any] | None:
    parsed = langchain_inputs(parse(raw))
    if record.arguments is not None:
        unwrapped = record.arguments(parsed, known)
        if unwrapped is not None:
            return unwrapped
    if isinstance(parsed, Mapping):  # the keys are part of the recorded arguments: maybe data
        return named_by_schema(parsed, "arguments", known)
    if parsed is None:
        return None
    return {WHOLE_INPUT: parsed}


def foreign_tool_call(
    name: str,
    attributes: Mapping[str, Any] | None,
    argument_names: Mapping[str, frozenset[str]] | None = None,
) -> ForeignToolCall | None:
    """The tool call recorded on a finished span by another library, or ``None`` if there is none.

    ``argument_names`` (tool name -> parameter names) adds to the names the span's own schema declares.
    """
    if not attributes or not dialects.is_tool_span(attributes) or has_own_provenance(attributes):
        return None
    for library, record in dialects.call_records(attributes):
        arguments_key, result_key = record.arguments_key, record.result_key
        if arguments_key in attributes or result_key in attributes:
            tool = dialects.tool_name(attributes)
            if tool is None:
                tool = name.removeprefix(semconv.TOOL_SPAN_PREFIX)
            known = schema_names(attributes) | (argument_names or {}).get(tool, frozenset())
            arguments = (
                _arguments(record, attributes[arguments_key], known) if arguments_key in attributes else None
            )
            result = attributes.get(result_key, ABSENT)
            return ForeignToolCall(library, tool, arguments, result, record)
    return None


__all__ = [
    "GENAI",
    "ForeignToolCall",
    "foreign_tool_call",
    "has_own_provenance",
    "named_by_schema",
    "schema_names",
]
