"""One producer's dialect: how the spans a library writes say what they are and where the content is.

A *dialect* is everything this package must know about one producer of GenAI spans — the GenAI
conventions themselves, an instrumentation family (OpenInference, OpenLLMetry, logfire), an agent
framework's own telemetry (Pydantic AI, Google ADK, Langfuse …) or this package. Both halves read
the same rows (:mod:`otel_provenance.dialects`): the offline half finds tool calls and agent runs
in traces with them; the online half finds the same spans before they leave, reads the tool calls
other libraries recorded, and strips the keys that hold content.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

#: ``(key, value)``: a span holding ``key`` with that value; ``value`` None: holding ``key`` at all.
Mark = tuple[str, "str | None"]

#: The parsed arguments a producer recorded and the parameter names the tool's schema declares ->
#: the call's arguments by name, or None when the record is not in this producer's own shape (then it
#: is read as a plain mapping, :func:`.calls.named_by_schema`).
ArgumentsReader = Callable[[Any, frozenset[str]], "Mapping[str, Any] | None"]


@dataclass(frozen=True, slots=True)
class ToolCallRecord:
    """Where a producer records a tool call on its span, and how to read it back.

    ``arguments_key`` / ``result_key`` hold the call's arguments and result (often JSON text);
    ``schema_keys`` may hold the tool's parameter schema (names it declares are exported as they are,
    others by position: a name the model chose may itself be data). ``arguments`` unwraps the
    producer's own wrapping of the arguments (a bound ``(*args, **kwargs)``, a callback's envelope);
    ``result`` its wrapping of the result.
    """

    arguments_key: str
    result_key: str
    schema_keys: tuple[str, ...] = ()
    arguments: ArgumentsReader | None = None
    result: Callable[[Any], Any] | None = None


@dataclass(frozen=True, slots=True)
class Dialect:
    """A producer's row in :data:`otel_provenance.dialects.DIALECTS`.

    - ``kind_key``: the key by which the producer says it wrote a GenAI span (``openinference.span.kind``).
      With ``decisive`` its marks decide when the key is there: a span whose ``gen_ai.operation.name``
      names another operation is that operation, whatever another producer's marks say.
    - ``tool_marks`` / ``agent_marks``: what marks a tool call's span and an agent run's span.
    - ``tool_name_keys``: where a tool span names its tool, read on any tool span;
      ``marked_tool_name_keys`` only on a span this producer's own ``tool_marks`` mark (logfire's bare
      ``name``: anywhere else it may be anything).
    - ``identity_keys``: keys kept by the allow-list on the spans this producer marks as a tool call or
      an agent run (identity, not content, there only).
    - ``calls``: where it records a tool call's arguments and result (:class:`ToolCallRecord`).
    - ``content_keys``: keys holding prompts, outputs, arguments or results — removed by the deny-list,
      as whole dot-separated parts anywhere in a key path (``*`` is any one part);
      ``content_events``: events whose whole payload is content (dropped).
    - ``scope_words``, ``scope_names``, ``key_prefixes``, ``bare_keys``: what tells a span this
      producer made (a word in the instrumentation scope's name, a whole scope name too short to look
      for inside another — the Vercel AI SDK's ``ai`` —, a key prefix, a key it writes without a
      namespace): the default stripping judges such spans by the allow-list.
    """

    name: str
    kind_key: str | None = None
    decisive: bool = False
    tool_marks: tuple[Mark, ...] = ()
    agent_marks: tuple[Mark, ...] = ()
    tool_name_keys: tuple[str, ...] = ()
    marked_tool_name_keys: tuple[str, ...] = ()
    identity_keys: tuple[str, ...] = ()
    calls: ToolCallRecord | None = None
    content_keys: frozenset[str] = frozenset()
    content_events: frozenset[str] = frozenset()
    scope_words: tuple[str, ...] = ()
    scope_names: frozenset[str] = frozenset()
    key_prefixes: tuple[str, ...] = ()
    bare_keys: frozenset[str] = frozenset()

    def says_tool(self, attributes: Mapping[str, Any]) -> bool | None:
        """True or False when this producer says whether the span is a tool call; None when silent."""
        return _says(self, self.tool_marks, attributes)

    def says_agent(self, attributes: Mapping[str, Any]) -> bool | None:
        return _says(self, self.agent_marks, attributes)

    def marks(self, attributes: Mapping[str, Any]) -> bool:
        """Whether its own marks make the span a tool call or an agent run."""
        return _holds(self.tool_marks, attributes) or _holds(self.agent_marks, attributes)


def _holds(marks: tuple[Mark, ...], attributes: Mapping[str, Any]) -> bool:
    for key, value in marks:
        if value is None:
            if key in attributes:
                return True
        elif attributes.get(key) == value:
            return True
    return False


def _says(dialect: Dialect, marks: tuple[Mark, ...], attributes: Mapping[str, Any]) -> bool | None:
    if dialect.decisive and dialect.kind_key is not None and attributes.get(dialect.kind_key) is not None:
        return _holds(marks, attributes)
    return True if _holds(marks, attributes) else None


__all__ = ["ArgumentsReader", "Dialect", "Mark", "ToolCallRecord"]
