"""Reading the tool calls producers record: the shapes more than one dialect shares.

A name the tool's schema declares is exported as it is; any other by position (``<prefix>.<i>``):
a key chosen by the model may itself be data.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

#: Positional arguments of a bound call: ``args.0``, ``args.1``, …
POSITIONAL_PREFIX: Final = "args."

#: LangChain's callback handlers record ``{"input_str", "tags", "metadata", "inputs", "kwargs"}`` as a
#: tool's arguments and ``{"output", "kwargs"}`` as its result: only ``inputs`` / ``output`` are the call.
LANGCHAIN_INPUT_KEYS: Final = frozenset({"input_str", "inputs"})
LANGCHAIN_OUTPUT_KEYS: Final = frozenset({"output", "kwargs"})


def parse(value: Any) -> Any:
    """JSON text parsed; anything else (or text that is not JSON) as it is."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def property_names(schema: Any) -> frozenset[str] | None:
    """The parameter names a JSON Schema object declares (its ``properties``); None when it has none."""
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(properties, Mapping):
        return None
    return frozenset(name for name in properties if isinstance(name, str))


def named_by_schema(values: Mapping[Any, Any], prefix: str, known: frozenset[str]) -> dict[str, Any]:
    """Argument names as they may be exported: a name the schema declares as it is, any other by
    position (``<prefix>.<i>``) — a name chosen by the model may itself be data."""
    return {
        key if isinstance(key, str) and key in known else f"{prefix}.{i}": value
        for i, (key, value) in enumerate(values.items())
    }


def args_and_kwargs(parsed: Mapping[str, Any], prefix: str, known: frozenset[str]) -> dict[str, Any]:
    """A bound ``(*args, **kwargs)``: positional ones as ``args.<i>``, keyword ones named by the schema."""
    out: dict[str, Any] = {}
    args = parsed.get("args") or ()
    if isinstance(args, (list, tuple)):
        out.update((f"{POSITIONAL_PREFIX}{i}", value) for i, value in enumerate(args))
    kwargs = parsed.get("kwargs") or {}
    if isinstance(kwargs, Mapping):
        out.update(named_by_schema(kwargs, prefix, known))
    return out


def langchain_inputs(parsed: Any) -> Any:
    """The call inside a LangChain callback's envelope (``inputs``, else ``input_str``); else ``parsed``."""
    if isinstance(parsed, Mapping) and set(parsed) >= LANGCHAIN_INPUT_KEYS:
        inputs = parsed["inputs"]
        return inputs if isinstance(inputs, Mapping) else parsed["input_str"]
    return parsed


def langchain_output(parsed: Any) -> Any:
    """The result inside a LangChain callback's ``{"output", "kwargs"}``; else ``parsed``."""
    if isinstance(parsed, Mapping) and set(parsed) == LANGCHAIN_OUTPUT_KEYS:
        return parsed["output"]
    return parsed


__all__ = [
    "LANGCHAIN_INPUT_KEYS",
    "LANGCHAIN_OUTPUT_KEYS",
    "POSITIONAL_PREFIX",
    "args_and_kwargs",
    "langchain_inputs",
    "langchain_output",
    "named_by_schema",
    "parse",
    "property_names",
]
