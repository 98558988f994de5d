"""Tool calls other GenAI instrumentations recorded on their spans: which library wrote the span,
the call's arguments (named only where the tool's schema names them) and its result — read before
their content is stripped (:mod:`..thirdparty` classifies them). Where each library puts them is in
:mod:`..thirdparty`'s docstring."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from ... import semconv
from .redaction import OPENINFERENCE_SPAN_KIND

GENAI = "genai"
OPENINFERENCE = "openinference"
OPENLLMETRY = "openllmetry"

#: (library, arguments key, result key), in the order they are tried.
_SOURCES: Final = (
    (GENAI, semconv.GEN_AI_TOOL_CALL_ARGUMENTS, semconv.GEN_AI_TOOL_CALL_RESULT),
    (OPENINFERENCE, "input.value", "output.value"),
    (OPENLLMETRY, "traceloop.entity.input", "traceloop.entity.output"),
)
ABSENT: Final = object()
#: Where a tool span may carry its parameter schema (a JSON schema with ``properties``).
_SCHEMA_KEYS: Final = ("tool.parameters", "tool.json_schema")
#: Positional arguments of an OpenLLMetry call: ``args.0``, ``args.1``, …
POSITIONAL_PREFIX: Final = "args."
#: Name of the single argument when a library recorded a non-object (a bare list or scalar).
WHOLE_INPUT: Final = "input"


@dataclass(frozen=True)
class ForeignToolCall:
    """What another library recorded about one tool call. Lives only inside ``on_end``."""

    library: str
    tool: str
    arguments: Mapping[str, Any] | None  # None: not recorded, or not parseable
    raw_result: Any  # ABSENT when not recorded; parsed only once its size is known to fit

    @property
    def result(self) -> Any:
        return (
            self.raw_result
            if self.raw_result is ABSENT
            else _unwrap_langchain_result(_parse(self.raw_result))
        )


def has_own_provenance(attributes: Mapping[str, Any]) -> bool:
    """Made (or already classified) by ``@op.tool``: it sets ``agent.tool.status`` and ``agent.arg.*``."""
    return semconv.TOOL_STATUS in attributes or any(
        semconv.split_arg_attr(key) is not None for key in attributes
    )


def _parse(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def schema_names(attributes: Mapping[str, Any]) -> frozenset[str]:
    """Parameter names declared by the JSON schema a tool span carries (none when there is none)."""
    for key in _SCHEMA_KEYS:
        schema = _parse(attributes.get(key))
        if isinstance(schema, Mapping):
            properties = schema.get("properties")
            if not isinstance(properties, Mapping) and isinstance(schema.get("parameters"), Mapping):
                properties = schema["parameters"].get("properties")
            if isinstance(properties, Mapping):
                return frozenset(name for name in properties if isinstance(name, str))
            if schema and all(isinstance(v, Mapping) and "type" in v for v in schema.values()):
                return frozenset(name for name in schema if isinstance(name, str))  # smolagents' inputs
    return frozenset()


def named_by_schema(values: Mapping[Any, Any], prefix: str, known: frozenset[str]) -> dict[str, Any]:
    """Argument names as they may be exported: a name the schema declares as it is, any other by
    position (``<prefix>.<i>``) — a name chosen by the model may itself be data."""
    return {
        key if isinstance(key, str) and key in known else f"{prefix}.{i}": value
        for i, (key, value) in enumerate(values.items())
    }


#: smolagents' ``Tool.__call__(*args, sanitize_inputs_outputs=False, **kwargs)``, bound by OpenInference.
_SMOLAGENTS_CALL_KEYS: Final = frozenset({"args", "sanitize_inputs_outputs", "kwargs"})

#: OpenLLMetry's LangChain callback records ``{"input_str", "tags", "metadata", "inputs", "kwargs"}`` as
#: a tool's arguments and ``{"output", "kwargs"}`` as its result: only ``inputs`` / ``output`` are the call.
_LANGCHAIN_INPUT_KEYS: Final = frozenset({"input_str", "inputs"})
_LANGCHAIN_OUTPUT_KEYS: Final = frozenset({"output", "kwargs"})


def _unwrap_langchain_result(parsed: Any) -> Any:
    if isinstance(parsed, Mapping) and set(parsed) == _LANGCHAIN_OUTPUT_KEYS:
        return parsed["output"]
    return parsed


def _arguments(library: str, raw: Any, known: frozenset[str]) -> Mapping[str, Any] | None:
    parsed = _parse(raw)
    if isinstance(parsed, Mapping) and set(parsed) >= _LANGCHAIN_INPUT_KEYS:
        inputs = parsed["inputs"]
        parsed = inputs if isinstance(inputs, Mapping) else parsed["input_str"]
    if library == OPENLLMETRY and isinstance(parsed, Mapping) and set(parsed) <= {"args", "kwargs"}:
        return _args_and_kwargs(parsed, "kwargs", known)
    if (
        library == OPENINFERENCE
        and isinstance(parsed, Mapping)
        and set(parsed) == _SMOLAGENTS_CALL_KEYS
        and not known & _SMOLAGENTS_CALL_KEYS  # a tool whose own parameters are these keeps them
    ):
        return _args_and_kwargs(parsed, "arguments", known)
    if isinstance(parsed, Mapping):  # the keys are part of the recorded arguments: maybe data
        return named_by_schema(parsed, "arguments", known)
    if parsed is None:
        return None
    return {WHOLE_INPUT: parsed}


def _args_and_kwargs(parsed: Mapping[str, Any], prefix: str, known: frozenset[str]) -> dict[str, Any]:
    """A bound ``(*args, **kwargs)``: positional ones as ``args.<i>``, keyword ones named by the schema."""
    out: dict[str, Any] = {}
    args = parsed.get("args") or ()
    if isinstance(args, (list, tuple)):
        out.update((f"{POSITIONAL_PREFIX}{i}", value) for i, value in enumerate(args))
    kwargs = parsed.get("kwargs") or {}
    if isinstance(kwargs, Mapping):
        out.update(named_by_schema(kwargs, prefix, known))
    return out


def foreign_tool_call(
    name: str,
    attributes: Mapping[str, Any] | None,
    argument_names: Mapping[str, frozenset[str]] | None = None,
) -> ForeignToolCall | None:
    """The tool call recorded on a finished span by another library, or ``None`` if there is none.

    ``argument_names`` (tool name -> parameter names) adds to the names the span's own schema declares.
    """
    if not attributes or not semconv.is_tool_span(attributes) or has_own_provenance(attributes):
        return None
    sources = _SOURCES
    if OPENINFERENCE_SPAN_KIND in attributes:
        # OpenInference's own keys first: with enable_genai_semconv its 0.1.72 conversion writes the
        # tool's *parameter schema* into gen_ai.tool.call.arguments, not the call's arguments.
        sources = (_SOURCES[1], _SOURCES[0], _SOURCES[2])
    for library, arguments_key, result_key in sources:
        if arguments_key in attributes or result_key in attributes:
            tool = semconv.tool_name(attributes)
            if tool is None:
                tool = name.removeprefix(semconv.TOOL_SPAN_PREFIX)
            known = schema_names(attributes) | (argument_names or {}).get(tool, frozenset())
            arguments = (
                _arguments(library, attributes[arguments_key], known) if arguments_key in attributes else None
            )
            result = attributes.get(result_key, ABSENT)
            return ForeignToolCall(library, tool, arguments, result)
    return None


__all__ = [
    "GENAI",
    "OPENINFERENCE",
    "OPENLLMETRY",
    "ForeignToolCall",
    "foreign_tool_call",
    "has_own_provenance",
    "named_by_schema",
    "schema_names",
]
