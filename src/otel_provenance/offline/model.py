"""The span model every reader yields and every offline stage consumes.

Frozen, slotted, hashable; no OTel SDK types. Attribute *absence* is a key that is not in the
``Attributes`` mapping — it is never stood in for by ``""``, ``0`` or ``False``. Use
``attrs.get(key, ABSENT)`` / ``key in attrs`` and test ``is ABSENT``.

Value types (``Value``):

- ``str``, ``bool``, ``int`` (OTLP intValue, exact), ``float`` (OTLP doubleValue),
  ``Decimal`` (an exact decimal, e.g. a number a backend returned as text), ``bytes``;
- ``tuple[Value, ...]`` for arrays;
- ``Attributes`` for nested maps (OTLP kvlistValue).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, ItemsView, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any, Final, Union

from .. import dialects, semconv
from .release import DEFAULT_RELEASE_ATTRIBUTE, Attribution, attribute_release


class _Absent:
    """Sentinel for a missing attribute: distinct from every value, falsy, and printed as ``<absent>``."""

    __slots__ = ()
    _instance: _Absent | None = None

    def __new__(cls) -> _Absent:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "<absent>"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "ABSENT"


ABSENT: Final = _Absent()

Value = Union[str, bool, int, float, Decimal, bytes, tuple["Value", ...], "Attributes"]


class Attributes(Mapping[str, Value]):
    """An immutable, hashable mapping of attribute key to typed value.

    Equality and hashing ignore insertion order, so two spans whose attributes arrived in a
    different key order compare equal. Iteration is in sorted key order (deterministic output); the
    sort happens on first use, because readers build many mappings that are only looked up.
    """

    __slots__ = ("_hash", "_items", "_map", "_tool")

    def __init__(self, items: Mapping[str, Value] | Iterable[tuple[str, Value]] = ()) -> None:
        self._map: dict[str, Value] = dict(items.items() if isinstance(items, Mapping) else items)
        self._items: tuple[tuple[str, Value], ...] | None = None  # sorted lazily: readers build many
        self._hash: int | None = None
        self._tool: bool | None = None  # says_tool, decided on first use

    @classmethod
    def adopt(cls, data: dict[str, Value]) -> Attributes:
        """Wrap ``data`` without copying it (readers' fast path). The caller must not mutate it later."""
        self = cls.__new__(cls)
        self._map = data
        self._items = None
        self._hash = None
        self._tool = None
        return self

    def __getitem__(self, key: str) -> Value:
        return self._map[key]

    def __iter__(self) -> Iterator[str]:
        return (k for k, _ in self.items_sorted())

    def __len__(self) -> int:
        return len(self._map)

    def __contains__(self, key: object) -> bool:
        return key in self._map

    def get(self, key: str, default: Any = None) -> Any:  # Mapping.get without its per-call overhead
        return self._map.get(key, default)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Attributes):
            return self._map == other._map
        return NotImplemented

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(self.items_sorted())
        return self._hash

    def __repr__(self) -> str:
        return f"Attributes({dict(self.items_sorted())!r})"

    def items_unordered(self) -> ItemsView[str, Value]:
        """Items in arrival order — for scans whose result does not depend on order (no sorting cost)."""
        return self._map.items()

    def items_sorted(self) -> tuple[tuple[str, Value], ...]:
        if self._items is None:
            self._items = tuple(sorted(self._map.items()))  # keys are unique: values are never compared
        return self._items


EMPTY_ATTRIBUTES: Final = Attributes()


def says_tool(attributes: Mapping[str, Value]) -> bool:
    """``dialects.is_tool_span`` of a span's attributes, decided once per ``Attributes`` (they never
    change): the reader, the run's echoes, the tallies, the selectors and the fingerprint each ask
    of every span, and the dialect rows are read in turn until one speaks. The answer depends only on
    the values of ``dialects.TOOL_SPAN_KEYS`` — on a span holding a string under
    ``dialects.DECIDING_TOOL_KEY``, on that value alone —, which the spans of a trace file repeat: it
    is kept by them (bounded), so most spans are decided by one look-up."""
    if attributes.__class__ is not Attributes:
        return dialects.is_tool_span(attributes)
    tool = attributes._tool  # type: ignore[attr-defined]
    if tool is None:
        values = attributes._map  # type: ignore[attr-defined]
        case: tuple | str | None = values.get(_DECIDING_KEY) if _DECIDING_KEY is not None else None
        if case.__class__ is not str:
            case = tuple(map(values.get, _TOOL_SPAN_KEYS, _ABSENTS))  # values.get(key, ABSENT) each
        try:
            tool = _TOOL_CASES.get(case)
        except TypeError:  # an unhashable value: decided afresh
            case = None
        if tool is None:  # a deciding value is all the dialect rows then read
            tool = dialects.is_tool_span({_DECIDING_KEY: case} if case.__class__ is str else values)
            if case is not None:
                if len(_TOOL_CASES) >= _TOOL_CASES_KEPT:
                    _TOOL_CASES.clear()
                _TOOL_CASES[case] = tool
        attributes._tool = tool  # type: ignore[attr-defined]
    return tool


_TOOL_SPAN_KEYS: Final = dialects.TOOL_SPAN_KEYS
_ABSENTS: Final = (ABSENT,) * len(_TOOL_SPAN_KEYS)
_DECIDING_KEY: Final = dialects.DECIDING_TOOL_KEY
_TOOL_CASES: Final[dict[tuple | str, bool]] = {}  # the deciding value, or TOOL_SPAN_KEYS' -> is_tool_span
_TOOL_CASES_KEPT: Final = 4096


def attribute_map(attributes: Mapping[str, Value]) -> Mapping[str, Value]:
    """The plain dict under an ``Attributes`` (its ``get`` is C's: span properties run per span and
    rule), else the mapping itself."""
    return attributes._map if attributes.__class__ is Attributes else attributes  # type: ignore[attr-defined]


class SpanKind(enum.IntEnum):
    """OTLP ``Span.SpanKind`` numbering."""

    UNSPECIFIED = 0
    INTERNAL = 1
    SERVER = 2
    CLIENT = 3
    PRODUCER = 4
    CONSUMER = 5


class StatusCode(enum.IntEnum):
    """OTLP ``Status.StatusCode`` numbering."""

    UNSET = 0
    OK = 1
    ERROR = 2


@dataclass(frozen=True, slots=True)
class Status:
    code: StatusCode = StatusCode.UNSET
    message: str = ""


@dataclass(frozen=True, slots=True)
class Event:
    name: str
    time_ns: int
    attributes: Attributes = EMPTY_ATTRIBUTES


@dataclass(frozen=True, slots=True)
class Link:
    trace_id: str
    span_id: str
    attributes: Attributes = EMPTY_ATTRIBUTES


@dataclass(frozen=True, slots=True)
class Span:
    """One finished span. Ids are lowercase hex (32 chars trace, 16 chars span); a root has
    ``parent_span_id is None``. Times are integer nanoseconds since the epoch."""

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    kind: SpanKind = SpanKind.INTERNAL
    start_ns: int = 0
    end_ns: int = 0
    status: Status = field(default_factory=Status)
    attributes: Attributes = EMPTY_ATTRIBUTES
    events: tuple[Event, ...] = ()
    links: tuple[Link, ...] = ()
    resource: Attributes = EMPTY_ATTRIBUTES
    scope_name: str = ""
    scope_version: str = ""
    echo: bool = False
    """Another instrumentation's span of a tool call the run already holds: an MCP 2.x server's own
    ``tools/call`` span below the agent's ``execute_tool``, or a framework's tool span around the one
    ``@op.tool`` opened inside it. Set by ``Run``, see :func:`mark_echoes`. It stays in the run as a
    span, but is not a second tool call."""

    @property
    def is_tool(self) -> bool:
        """A tool call (``dialects.is_tool_span``: the spans the processor classifies online), unless it
        is an echo."""
        if self.echo:
            return False
        attributes = self.attributes
        tool = attributes._tool if attributes.__class__ is Attributes else None  # type: ignore[attr-defined]
        return says_tool(attributes) if tool is None else tool  # decided: no call (this runs per span)

    @property
    def tool_name(self) -> str | None:
        """The tool this span names (``dialects.tool_name``: ``gen_ai.tool.name``, or OpenInference's or
        OpenLLMetry's own key)."""
        return dialects.tool_name(attribute_map(self.attributes))

    @property
    def blocked(self) -> bool:
        """``agent.tool.status = blocked``: the tool's budget refused the call; its body never ran."""
        return attribute_map(self.attributes).get(semconv.TOOL_STATUS) == semconv.TOOL_STATUS_BLOCKED

    @property
    def is_retry(self) -> bool:
        """``agent.retry.number`` above 0: another attempt at a call made before, not a call of its own."""
        retry = attribute_map(self.attributes).get(semconv.RETRY_NUMBER)
        return isinstance(retry, int) and not isinstance(retry, bool) and retry > 0

    @property
    def release(self) -> str | None:
        """This span's own resource ``service.version``, or None. A *run's* release is read from the
        agent's spans only (``Run.release``, ``offline.release``), never from any one span."""
        value = self.resource.get(semconv.SERVICE_VERSION)
        return value if isinstance(value, str) else None

    @property
    def run_id(self) -> str:
        """This span's own ``agent.run.id`` when present, else its trace id. The run a span ends up
        in is decided per trace (``offline.runs.RunKeys``): spans without a run id join their trace's."""
        value = self.attributes.get(semconv.RUN_ID)
        return value if isinstance(value, str) and value else self.trace_id


class _SpanSlots:
    """A :class:`Span`'s slots, in its order — filled by plain stores, then made the ``Span`` it lays
    out (``make_span``). ``__class__`` may be set between two classes of one layout: the same slots in
    the same order, on the same base, neither with a ``__dict__``."""

    __slots__ = Span.__slots__


_new = object.__new__


def make_span(
    trace_id: str,
    span_id: str,
    parent_span_id: str | None,
    name: str,
    kind: SpanKind,
    start_ns: int,
    end_ns: int,
    status: Status,
    attributes: Attributes,
    events: tuple[Event, ...],
    links: tuple[Link, ...],
    resource: Attributes,
    scope_name: str,
    scope_version: str,
) -> Span:
    """``Span(...)`` with every field given, for readers: the same object, its slots filled by plain
    attribute stores (on ``_SpanSlots``) and its class then set to ``Span``, instead of the frozen
    dataclass's ``object.__setattr__`` per field (about a microsecond per span, a sizeable share of
    reading a span) or a call of each slot's setter (~0.6 µs)."""
    span = _new(_SpanSlots)
    span.trace_id = trace_id
    span.span_id = span_id
    span.parent_span_id = parent_span_id
    span.name = name
    span.kind = kind
    span.start_ns = start_ns
    span.end_ns = end_ns
    span.status = status
    span.attributes = attributes
    span.events = events
    span.links = links
    span.resource = resource
    span.scope_name = scope_name
    span.scope_version = scope_version
    span.echo = False
    span.__class__ = Span  # type: ignore[assignment]
    return span  # type: ignore[return-value]


_SIDE_EFFECT: Final = semconv.SIDE_EFFECT
_SERVER: Final = SpanKind.SERVER


def mark_echoes(spans: tuple[Span, ...]) -> tuple[Span, ...]:
    """``spans`` with each echo marked (``Span.echo``); the same tuple when there is none.

    One tool call can leave two tool spans naming the same tool; only one of them is the call:

    * An MCP 2.x server exports its own ``tools/call`` span (kind ``SERVER``) below the caller's,
      whose trace context it receives. Collected together — one backend for every service, as SigNoz
      is — the call would count twice, the server's half without provenance: the ``SERVER`` span is
      the echo.
    * A framework's own tool span and the span ``@op.tool`` opened for the same call (``@op.tool``
      always writes ``agent.side_effect``; the framework's span does not): the framework's span is the
      echo — a *twin* — wherever the framework draws it. Each ``@op.tool`` span has at most one twin,
      and each framework span is the twin of at most one ``@op.tool`` span, found in this order:

      1. the framework span of the same tool carrying the same ``gen_ai.tool.call.id``;
      2. its nearest tool-span ancestor, when that names the same tool (OpenInference's OpenAI Agents
         instrumentation names its span only when it ends, so ``@op.tool`` opens its own inside);
      3. when no tool span is above it at all: the framework span of the same tool in the same trace
         whose time contains it (the tightest; OpenInference's LangChain instrumentation draws its
         tool span in a branch of its own, beside the one ``@op.tool``'s span is in).

    A call of the same tool from inside another tool, or a ``SERVER`` span with no caller collected,
    stays a call. Two ``@op.tool`` spans (a tool that calls itself) are two calls, and so are two
    framework spans: nothing says which one is the call. Runs are validated after they are built, so
    the walk up is bounded and shared (each span's nearest tool ancestor is found once) rather than
    trusting the parents to be acyclic.
    """
    spans_of_tools: list[Span] = []  # the echo flag aside
    own = 0  # of them, @op.tool's
    server = False
    for s in spans:
        attributes = s.attributes
        if says_tool(attributes):
            spans_of_tools.append(s)
            if _SIDE_EFFECT in attributes:
                own += 1
            if s.kind == _SERVER:
                server = True
    # runs are validated later: a span may repeat, so @op.tool's are compared with the distinct spans
    if not server and (not own or own == len({id(s) for s in spans_of_tools})):
        return spans  # no server span, and not both @op.tool's and others' tool spans: no echo
    tools = {id(s): dialects.tool_name(attribute_map(s.attributes)) for s in spans_of_tools}  # named once
    names = [name for name in tools.values() if name is not None]
    if len(set(names)) == len(names):
        return spans  # an echo and its call name the same tool
    by_id = {(s.trace_id, s.span_id): s for s in spans}
    nearest: dict[int, Span | None] = {}  # id(span) -> its nearest tool-span ancestor

    def nearest_tool(span: Span) -> Span | None:
        path: list[Span] = []
        parent = by_id.get((span.trace_id, span.parent_span_id)) if span.parent_span_id else None
        found: Span | None = None
        for _ in range(len(spans)):
            if parent is None or id(parent) in tools:
                found = parent
                break
            if id(parent) in nearest:
                found = nearest[id(parent)]
                break
            path.append(parent)
            parent = by_id.get((parent.trace_id, parent.parent_span_id)) if parent.parent_span_id else None
        for step in path:  # every span walked through shares the answer
            nearest[id(step)] = found
        return found

    echoes: set[int] = set()
    for span in spans_of_tools:
        name = tools[id(span)]
        if span.kind != SpanKind.SERVER or name is None or not span.parent_span_id:
            continue
        outer = nearest_tool(span)
        if outer is not None and outer is not span and tools[id(outer)] == name:
            echoes.add(id(span))
    echoes |= _twins(spans_of_tools, tools, echoes, nearest_tool)
    if not echoes:
        return spans
    return tuple(replace(s, echo=True) if id(s) in echoes else s for s in spans)


def _twins(
    spans_of_tools: list[Span],
    tools: dict[int, str | None],
    servers: set[int],
    nearest_tool: Callable[[Span], Span | None],
) -> set[int]:
    """The framework spans that are twins of ``@op.tool`` spans (rules 1-3 of :func:`mark_echoes`)."""
    frameworks: dict[tuple[str, str], list[Span]] = {}  # (trace, tool) -> framework spans, by start
    owned: list[Span] = []
    for span in spans_of_tools:
        name = tools[id(span)]
        if name is None or id(span) in servers:
            continue
        if semconv.SIDE_EFFECT in span.attributes:
            owned.append(span)
        else:
            frameworks.setdefault((span.trace_id, name), []).append(span)
    if not owned or not frameworks:
        return set()
    twins: set[int] = set()
    for span in sorted(owned, key=lambda s: (s.start_ns, s.span_id)):
        found = frameworks.get((span.trace_id, tools[id(span)] or ""), ())
        candidates = [f for f in found if id(f) not in twins]
        if not candidates:
            continue
        call_id = span.attributes.get(semconv.GEN_AI_TOOL_CALL_ID)
        twin = next(
            (f for f in candidates if call_id and f.attributes.get(semconv.GEN_AI_TOOL_CALL_ID) == call_id),
            None,
        )
        if twin is None:
            outer = nearest_tool(span)
            if outer is not None:
                twin = outer if outer is not span and any(f is outer for f in candidates) else None
            else:
                around = [f for f in candidates if f.start_ns <= span.start_ns and span.end_ns <= f.end_ns]
                twin = min(around, key=lambda f: (f.end_ns - f.start_ns, f.span_id), default=None)
        if twin is not None:
            twins.add(id(twin))
    return twins


@dataclass(frozen=True, slots=True)
class Run:
    """The spans of one agent run, sorted by (start_ns, span_id) so that equal input gives equal runs."""

    run_id: str
    spans: tuple[Span, ...]
    _attribution: Attribution | None = field(default=None, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "spans", mark_echoes(self.spans))

    @property
    def attribution(self) -> Attribution:
        """Its ``service.version`` as read from the agent's spans (``offline.release``), worked out on
        first use: the guard judges many short runs whose release nobody reads."""
        attribution = self._attribution
        if attribution is None:
            attribution = attribute_release(self.spans)
            object.__setattr__(self, "_attribution", attribution)
        return attribution

    @property
    def release(self) -> str | None:
        """The run's one release (``service.version`` of the agent's spans), None when none or several."""
        return self.attribution.release

    def attribution_for(self, key: str = DEFAULT_RELEASE_ATTRIBUTE) -> Attribution:
        """The run's release read from attribute ``key`` (``--release-attribute``)."""
        return self.attribution if key == DEFAULT_RELEASE_ATTRIBUTE else attribute_release(self.spans, key)

    @property
    def trace_ids(self) -> tuple[str, ...]:
        return tuple(sorted({s.trace_id for s in self.spans}))

    @property
    def is_agent_run(self) -> bool:
        """An agent run holds a tool call (one that ran or was blocked) or an agent invocation span
        (``dialects.is_agent_span``). A trace with neither — an agent being built, an MCP handshake, a
        plain HTTP request — is not a run: every command leaves it out and says how many it left out."""
        return any(
            says_tool(s.attributes) or dialects.is_agent_span(attribute_map(s.attributes)) for s in self.spans
        )
