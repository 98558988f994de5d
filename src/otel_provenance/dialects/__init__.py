"""Who writes GenAI spans, and how: one row per producer, read by both halves (#45).

Each producer's knowledge — what marks its tool and agent spans, where it names the tool, where it
records a call's arguments and result and how to unwrap them, which keys and events hold content, what
tells a span it made — lives in one module of this package as a :class:`~.dialect.Dialect`, and in one
row of :data:`DIALECTS`. Everything else is derived here: the offline half finds tool calls and agent
runs with :func:`is_tool_span`, :func:`is_agent_span` and :func:`tool_name`; the online half finds the
same spans, reads other libraries' tool calls (:func:`call_records`), judges the spans an AI library
made by the allow-list (:data:`SCOPE_WORDS`, :data:`SCOPE_NAMES`, :data:`KEY_PREFIXES`,
:data:`BARE_KEYS`) and removes :data:`CONTENT_KEYS` and :data:`CONTENT_EVENTS` from the others. A new
producer is a module and a row (docs/dialects.md).

The order of the rows is the order in which they are asked: this package's first (``op.run`` marks an
agent run, whatever else the span says), the GenAI conventions next (decisive: a span that names another
operation is that operation), then the instrumentation families and the frameworks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from . import (
    crewai,
    genai,
    google_adk,
    haystack,
    langchain,
    langfuse,
    logfire,
    mcp,
    mlflow,
    openinference,
    openllmetry,
    own,
    pydantic_ai,
    sdks,
    smolagents,
    vercel_ai,
)
from .dialect import Dialect, Mark, ToolCallRecord

#: Every producer this package knows, one row each, in the order they are asked.
DIALECTS: Final[tuple[Dialect, ...]] = (
    own.DIALECT,
    genai.DIALECT,
    openinference.DIALECT,
    openllmetry.DIALECT,
    logfire.DIALECT,
    pydantic_ai.DIALECT,
    smolagents.DIALECT,
    crewai.DIALECT,
    langchain.DIALECT,
    langfuse.DIALECT,
    haystack.DIALECT,
    google_adk.DIALECT,
    mlflow.DIALECT,
    mcp.DIALECT,
    vercel_ai.DIALECT,
    sdks.DIALECT,
)


def _unique(items: Any) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


#: Keys that hold content in what current agent stacks write (the default deny-list).
CONTENT_KEYS: Final = frozenset().union(*(d.content_keys for d in DIALECTS))
#: Events whose whole payload is content: dropped entirely (span events and log records).
CONTENT_EVENTS: Final = frozenset().union(*(d.content_events for d in DIALECTS))
#: Lower-case fragments of instrumentation scope names AI libraries use.
SCOPE_WORDS: Final = _unique(w for d in DIALECTS for w in d.scope_words)
#: Whole (lower-case) instrumentation scope names of AI libraries, too short to look for in another name.
SCOPE_NAMES: Final = frozenset().union(*(d.scope_names for d in DIALECTS))
#: Attribute-key prefixes only AI instrumentations write.
KEY_PREFIXES: Final = _unique(p for d in DIALECTS for p in d.key_prefixes)
#: Keys some AI libraries write without a namespace.
BARE_KEYS: Final = frozenset().union(*(d.bare_keys for d in DIALECTS))
#: Keys by which a producer says it wrote a GenAI span.
KIND_KEYS: Final = _unique(d.kind_key for d in DIALECTS if d.kind_key is not None)
#: Where a tool span names its tool, on any tool span, in the order they are read.
TOOL_NAME_KEYS: Final = _unique(k for d in DIALECTS for k in d.tool_name_keys)
_MARKED_NAMES: Final = tuple(d for d in DIALECTS if d.marked_tool_name_keys)
_IDENTITIES: Final = tuple(d for d in DIALECTS if d.identity_keys)
_RECORDERS: Final = tuple(d for d in DIALECTS if d.calls is not None)
# The rows that can say anything about a span's being a tool call or an agent run, in table order: a
# row without marks of that sort, and not decisive, is silent on every span (``Dialect._says``). Both
# halves ask of every span, so the silent rows are left out of the asking once, here.
_DECISIVE: Final = tuple(d for d in DIALECTS if d.decisive and d.kind_key is not None)
_TOOL_SPEAKERS: Final = tuple(d for d in DIALECTS if d.tool_marks or d in _DECISIVE)
_AGENT_SPEAKERS: Final = tuple(d for d in DIALECTS if d.agent_marks or d in _DECISIVE)
#: Every key :func:`is_tool_span` reads (the decisive rows' kind keys, the tool marks' keys): its answer
#: is a function of these keys' values, so a reader of many spans may keep it by them.
TOOL_SPAN_KEYS: Final = _unique(
    (*(d.kind_key for d in _DECISIVE), *(key for d in _TOOL_SPEAKERS for key, _ in d.tool_marks))
)

_TOOL_SPAN_KEY_SET: Final = frozenset(TOOL_SPAN_KEYS)


def _deciding_tool_key() -> str | None:
    first = _TOOL_SPEAKERS[0] if _TOOL_SPEAKERS else None
    if first is None or not first.decisive or first.kind_key is None:
        return None
    return first.kind_key if all(key == first.kind_key for key, _ in first.tool_marks) else None


#: The key that alone decides :func:`is_tool_span` on a span carrying it (the GenAI operation name: the
#: first row that speaks of tool calls is decisive and reads only it), or None: for such a span,
#: ``is_tool_span(attributes) == is_tool_span({DECIDING_TOOL_KEY: attributes[DECIDING_TOOL_KEY]})``.
DECIDING_TOOL_KEY: Final = _deciding_tool_key()


def is_tool_span(attributes: Mapping[str, Any]) -> bool:
    """A tool call's span, as both halves read it: the first row with something to say decides
    (``gen_ai.operation.name = execute_tool``; without an operation name, a span OpenInference,
    OpenLLMetry or logfire marks as a tool call)."""
    if type(attributes) is dict and _TOOL_SPAN_KEY_SET.isdisjoint(attributes):
        return False  # none of the keys a row reads: every row is silent (an HTTP span; asked in C)
    for dialect in _TOOL_SPEAKERS:
        said = dialect.says_tool(attributes)
        if said is not None:
            return said
    return False


def is_agent_span(attributes: Mapping[str, Any]) -> bool:
    """An agent invocation's span: ``op.run``'s marks (``agent.run.id``), ``gen_ai.operation.name =
    invoke_agent``, or — without an operation name — a producer's agent mark. Building an agent
    (``create_agent``) is not invoking it."""
    for dialect in _AGENT_SPEAKERS:
        said = dialect.says_agent(attributes)
        if said is not None:
            return said
    return False


def tool_name(attributes: Mapping[str, Any]) -> str | None:
    """The tool a tool span calls: the first of :data:`TOOL_NAME_KEYS` it holds as a string, else a
    name key that only the producer marking the span as a tool call reads (logfire's ``name``)."""
    for key in TOOL_NAME_KEYS:
        value = attributes.get(key)
        if isinstance(value, str):
            return value
    for dialect in _MARKED_NAMES:
        if dialect.says_tool(attributes):
            for key in dialect.marked_tool_name_keys:
                value = attributes.get(key)
                if isinstance(value, str):
                    return value
    return None


def identity_keys(attributes: Mapping[str, Any]) -> tuple[str, ...]:
    """The keys the allow-list keeps on this span because a producer's own marks make it a tool call
    or an agent run and those keys name it there (logfire's template and ``name``)."""
    found: tuple[str, ...] = ()
    for dialect in _IDENTITIES:
        if dialect.marks(attributes):
            found += dialect.identity_keys
    return found


def call_records(attributes: Mapping[str, Any]) -> tuple[tuple[str, ToolCallRecord], ...]:
    """``(producer, record)`` for every producer that records tool calls, in the order to read them: the
    producers whose own (non-decisive) kind key the span holds first — the GenAI keys are written by
    many producers (OpenInference's conversion puts the tool's schema in ``gen_ai.tool.call.arguments``)
    — then the rest in table order."""
    own_first = [
        d for d in _RECORDERS if not d.decisive and d.kind_key is not None and d.kind_key in attributes
    ]
    rest = [d for d in _RECORDERS if d not in own_first]
    return tuple((d.name, d.calls) for d in (*own_first, *rest))  # type: ignore[misc]


def is_genai_span(attributes: Mapping[str, Any] | None) -> bool:
    """A span a GenAI producer says it wrote (one of :data:`KIND_KEYS`)."""
    return bool(attributes) and any(key in attributes for key in KIND_KEYS)  # type: ignore[operator]


__all__ = [
    "BARE_KEYS",
    "CONTENT_EVENTS",
    "CONTENT_KEYS",
    "DECIDING_TOOL_KEY",
    "DIALECTS",
    "KEY_PREFIXES",
    "KIND_KEYS",
    "SCOPE_NAMES",
    "SCOPE_WORDS",
    "TOOL_NAME_KEYS",
    "TOOL_SPAN_KEYS",
    "Dialect",
    "Mark",
    "ToolCallRecord",
    "call_records",
    "identity_keys",
    "is_agent_span",
    "is_genai_span",
    "is_tool_span",
    "tool_name",
]
