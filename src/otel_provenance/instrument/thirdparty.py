"""Provenance for tool spans made by other GenAI instrumentations, computed before their content goes.

Three libraries put a tool call's arguments and result on the span when content capture is on:

* the official ``opentelemetry-util-genai`` (``TelemetryHandler.tool(...)``):
  ``gen_ai.tool.call.arguments`` / ``gen_ai.tool.call.result``, JSON text or a map;
* OpenInference (``@tracer.tool``): ``input.value`` = JSON of the bound arguments (defaults applied —
  the span cannot tell a default from a passed value, so defaults are classified too) and
  ``output.value``;
* OpenLLMetry (``@tool``): ``traceloop.entity.input`` = ``{"args": [...], "kwargs": {...}}`` and
  ``traceloop.entity.output``. Positional arguments have no names there; they are named ``args.0``,
  ``args.1``, ….

OpenInference's smolagents instrumentation records the bound arguments of smolagents' ``Tool.__call__``
(``{"args": [...], "sanitize_inputs_outputs": true, "kwargs": {...}}``) and the tool's ``inputs`` (name →
``{"type", "description"}``) as ``tool.parameters``: the call's arguments are ``kwargs`` (and ``args``
by position), named by those inputs — ``final_answer``'s one argument is ``answer``.

Argument names in those JSON payloads are chosen by whoever built the call — often the model — so a
name can itself be data (``john_smith_ssn_078051120``). A name is exported only when the tool's
schema names it: the JSON schema the span carries (OpenInference ``tool.parameters`` /
``tool.json_schema``) or ``foreign_argument_names`` given to the processor. Any other argument is
exported by position: ``arguments.0``, ``arguments.1`` … (``kwargs.<i>`` for OpenLLMetry).

Outside ``op.run`` the per-trace ledgers are bounded by entries *and* bytes (the size of each
remembered result's text, plus an overhead per entry): a result larger than one trace's byte budget
is not remembered (the ledger reports ``agent.ledger.full``), the oldest traces go first when the total
budget is exceeded, and a trace's ledger is released as soon as its local root span ends.

For such a span the processor, in ``on_end``: parses the arguments, classifies them against the
run's ledger (the ``op.run`` scope when the span ends inside one, else a bounded ledger per trace),
writes the ``agent.arg.*`` attributes (plus the assumed/invented counts and ``agent.retry.number``),
then remembers the result under this span's id so later calls can be observed from it. The tool has
already run, so nothing can be blocked. Spans made by ``@op.tool`` already carry provenance and are
left alone. The matching itself is :func:`classify.classify_arguments` and the budget verdict
:func:`decision.decide` — the same code every ``@op.tool`` call and client gate goes through.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import StatusCode, format_span_id

from .. import semconv
from .spans.foreign_calls import ABSENT, GENAI, ForeignToolCall, foreign_tool_call
from .spans.span_transforms import OWN_SCOPE, plain_attributes

MAX_TRACE_LEDGERS: Final = 256
#: Byte budgets of the per-trace ledgers (outside ``op.run``): one trace, and all traces together.
MAX_TRACE_LEDGER_BYTES: Final = 8 << 20
MAX_LEDGER_BYTES: Final = 64 << 20
#: Estimated bytes per remembered entry beyond its text (dict slot, tuple, small objects).
ENTRY_OVERHEAD_BYTES: Final = 200
# ``@op.tool`` calls remembered until a framework's span of the same call ends (or their trace's root).
MAX_WRAPPED_CALLS: Final = 4096


@dataclass(frozen=True, slots=True)
class _OwnCall:
    """An ``@op.tool`` span that ended, kept to recognise a framework's span of the same call."""

    span_id: int
    parent_id: int | None
    tool: str
    start: int
    end: int
    call_id: Any


class ForeignToolClassifier:
    """Classifies foreign tool spans; holds the per-trace ledgers used outside any ``op.run``.

    Foreign tools declare no side effect, so by default they are only counted (``agent.budget.*``)
    and never get violations. ``side_effects`` (tool name -> ``none``/``read``/``write``) and
    ``budgets`` (tool name -> ``op.Budget``) apply the same rules as ``@op.tool`` — a ``write``
    tool with an assumed argument gets ``agent.violations`` — except that nothing can be blocked.
    """

    def __init__(
        self,
        *,
        side_effects: Mapping[str, str] | None = None,
        budgets: Mapping[str, Any] | None = None,
        argument_names: Mapping[str, Any] | None = None,
        max_traces: int = MAX_TRACE_LEDGERS,
        max_trace_bytes: int = MAX_TRACE_LEDGER_BYTES,
        max_bytes: int = MAX_LEDGER_BYTES,
    ) -> None:
        from ..errors import ConfigurationError
        from .call.budget import Budget

        for tool, effect in (side_effects or {}).items():
            if effect not in semconv.SIDE_EFFECTS:
                raise ConfigurationError(
                    f"foreign_side_effects[{tool!r}]: expected one of {', '.join(semconv.SIDE_EFFECTS)}"
                )
        for tool, budget in (budgets or {}).items():
            if not isinstance(budget, Budget):
                raise ConfigurationError(f"foreign_budgets[{tool!r}]: expected an op.Budget")
        names: dict[str, frozenset[str]] = {}
        for tool, declared in (argument_names or {}).items():
            if isinstance(declared, str) or not all(isinstance(n, str) for n in declared):
                raise ConfigurationError(
                    f"foreign_argument_names[{tool!r}]: expected a collection of argument names"
                )
            names[tool] = frozenset(declared)
        for what, value in (("max_trace_bytes", max_trace_bytes), ("max_bytes", max_bytes)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigurationError(f"ForeignToolClassifier.{what}: expected an integer >= 1")
        self._argument_names = names
        self._max_trace_bytes = max_trace_bytes
        self._max_bytes = max_bytes
        self._bytes: dict[int, int] = {}  # trace id -> estimated bytes held by its ledger
        self._side_effects = dict(side_effects or {})
        self._budgets = dict(budgets or {})
        self._default_budget = Budget()
        self._ledgers: OrderedDict[int, Any] = OrderedDict()
        self._max_traces = max_traces
        self._lock = threading.Lock()
        # trace id -> @op.tool calls that ended in it and no framework span has claimed yet, and the
        # span ids of every @op.tool span that ended in it (a call made inside another is no twin)
        self._own_calls: OrderedDict[int, list[_OwnCall]] = OrderedDict()
        self._own_ids: dict[int, set[int]] = {}
        self._own_count = 0
        # whether a span other than this package's own was seen (started or ended): until then no
        # framework span can claim an @op.tool call, so none is noted (#45: the twin bookkeeping
        # only while a framework's spans are seen)
        self.watching = False

    def saw_start(self, span: Any) -> None:
        """A span started on the processor: one not of this package's own scope starts the watch for
        twins — a framework's span of an ``@op.tool`` call starts before that call's span ends."""
        if not self.watching and _foreign(span):
            self.watching = True

    @property
    def retained_traces(self) -> int:
        """How many per-trace ledgers are held (traces outside ``op.run`` whose root has not ended)."""
        return len(self._ledgers)

    @property
    def retained_bytes(self) -> int:
        """Estimated bytes those ledgers hold (bounded by ``max_bytes``)."""
        return sum(self._bytes.values())

    def _trace_ledger(self, trace_id: int) -> Any:
        from .evidence.ledger import Ledger

        with self._lock:
            ledger = self._ledgers.get(trace_id)
            if ledger is None:
                ledger = self._ledgers[trace_id] = Ledger()
                self._bytes[trace_id] = 0
                while len(self._ledgers) > self._max_traces:
                    self._release_oldest()
            else:
                self._ledgers.move_to_end(trace_id)
            return ledger

    def _release_oldest(self) -> None:
        old, _ = self._ledgers.popitem(last=False)
        self._bytes.pop(old, None)

    def release(self, trace_id: int) -> None:
        """Forget a trace's ledger and own calls (its local root span ended: no later span of it can
        come here)."""
        with self._lock:
            self._ledgers.pop(trace_id, None)
            self._bytes.pop(trace_id, None)
            self._own_count -= len(self._own_calls.pop(trace_id, ()))
            self._own_ids.pop(trace_id, None)

    def _remember_bounded(
        self, trace_id: int, ledger: Any, call: ForeignToolCall, span_id: str, unsourced: Any
    ) -> None:
        """Remember a result into a per-trace ledger within the byte budgets."""
        raw = call.raw_result
        size = len(raw) if isinstance(raw, str | bytes) else _estimated_size(raw, self._max_trace_bytes)
        with self._lock:
            held = self._bytes.get(trace_id, 0)
        if held + size > self._max_trace_bytes:
            ledger.evicted += 1  # not remembered: later lookups report agent.ledger.full
            return
        ledger.remember(call.tool, call.result, span_id, call_arguments=call.arguments, unsourced=unsourced)
        with self._lock:
            if trace_id not in self._ledgers:
                return
            self._bytes[trace_id] = held + size + ENTRY_OVERHEAD_BYTES * len(ledger)
            while sum(self._bytes.values()) > self._max_bytes and len(self._ledgers) > 1:
                self._release_oldest()

    def _note_own_call(self, span: ReadableSpan, attributes: Mapping[str, Any]) -> bool:
        """Remember an ``@op.tool`` span (it always writes ``agent.side_effect``) that just ended.

        A framework's own span of the same call ends after it, and is the same call: it must get no
        provenance of its own — it would count the call twice, read as its retry, and be classified
        from the inner span's own result. Frameworks draw that span around ``@op.tool``'s (OpenInference's
        OpenAI Agents instrumentation names its span only when it ends, so ``@op.tool`` cannot adopt
        it) or in a branch of its own (OpenInference's LangChain instrumentation): see
        :meth:`_claims_own_call` and ``offline.model.mark_echoes``, which applies the same rule offline.
        """
        if not attributes or semconv.SIDE_EFFECT not in attributes:
            if not self.watching and _foreign(span):
                self.watching = True  # a span not of ours ended (its start was not seen here)
            return False
        if not self.watching:
            return True
        tool = attributes.get(semconv.GEN_AI_TOOL_NAME)
        context, parent = span.context, span.parent
        if isinstance(tool, str) and context is not None and span.start_time is not None:
            parent_id = parent.span_id if parent is not None and not parent.is_remote else None
            call = _OwnCall(
                context.span_id,
                parent_id,
                tool,
                span.start_time,
                span.end_time or span.start_time,
                attributes.get(semconv.GEN_AI_TOOL_CALL_ID),
            )
            with self._lock:
                trace = context.trace_id
                self._own_calls.setdefault(trace, []).append(call)
                self._own_calls.move_to_end(trace)
                self._own_ids.setdefault(trace, set()).add(context.span_id)
                self._own_count += 1
                while self._own_count > MAX_WRAPPED_CALLS:
                    oldest, calls = next(iter(self._own_calls.items()))
                    calls.pop(0)
                    self._own_count -= 1
                    if not calls:
                        del self._own_calls[oldest]
                        self._own_ids.pop(oldest, None)
        return True

    def _claims_own_call(self, span: ReadableSpan, tool: str) -> bool:
        """``span`` is a framework's span of an ``@op.tool`` call of ``tool`` that ended in its trace:
        the one below it; else the one with the same ``gen_ai.tool.call.id``; else one its time
        contains that was not made inside another ``@op.tool`` call. The call is claimed once."""
        context = span.context
        if context is None or span.start_time is None:
            return False
        start, end = span.start_time, span.end_time or span.start_time
        call_id = (plain_attributes(span) or {}).get(semconv.GEN_AI_TOOL_CALL_ID)
        with self._lock:
            calls = self._own_calls.get(context.trace_id)
            if not calls:
                return False
            own_ids = self._own_ids.get(context.trace_id, set())
            same = [c for c in calls if c.tool == tool]
            claimed = (
                next((c for c in same if c.parent_id == context.span_id), None)
                or next((c for c in same if call_id is not None and c.call_id == call_id), None)
                or next(
                    (
                        c
                        for c in same
                        if start <= c.start
                        and c.end <= end
                        and (c.parent_id is None or c.parent_id not in own_ids)
                    ),
                    None,
                )
            )
            if claimed is None:
                return False
            calls.remove(claimed)
            self._own_count -= 1
            return True

    def provenance(self, span: ReadableSpan) -> dict[str, Any] | None:
        """Attributes to add to the rebuilt span, or ``None`` when ``span`` is not a foreign tool span.

        Also releases a trace's ledger when its local root span ends.
        """
        try:
            return self._provenance(span)
        finally:
            parent = span.parent
            if span.context is not None and (parent is None or parent.is_remote):
                self.release(span.context.trace_id)

    def _provenance(self, span: ReadableSpan) -> dict[str, Any] | None:
        attributes = plain_attributes(span)  # read once, in C: every span the wrapper hands on asks
        if self._note_own_call(span, attributes):
            return None
        call = foreign_tool_call(span.name, attributes, self._argument_names)
        if call is None or self._claims_own_call(span, call.tool):
            return None
        from .call.current import current_run
        from .call.decision import decide
        from .evidence.classify import classify_arguments

        scope = current_run()
        attributes: dict[str, Any] = {}
        trace_id: int | None = None
        if scope is not None:
            ledger = scope.ledger
            attributes[semconv.RUN_ID] = scope.run_id
            if scope.agent_name is not None and semconv.GEN_AI_AGENT_NAME not in (span.attributes or {}):
                attributes[semconv.GEN_AI_AGENT_NAME] = scope.agent_name
        elif span.context is not None:
            trace_id = span.context.trace_id
            ledger = self._trace_ledger(trace_id)
        else:
            return None
        side_effect = self._side_effects.get(call.tool)
        if side_effect is not None:
            attributes[semconv.SIDE_EFFECT] = side_effect
        attributes[semconv.TOOL_STATUS] = (
            semconv.TOOL_STATUS_ERROR
            if span.status.status_code is StatusCode.ERROR
            else semconv.TOOL_STATUS_OK
        )
        unsourced = None
        classification = decision = None
        if call.arguments is not None:
            classification = classify_arguments(call.tool, call.arguments, ledger)
            unsourced = classification.unsourced(call.arguments)
            budget = self._budgets.get(call.tool, self._default_budget)
            # the tool has already run: the decision tags, it cannot block
            decision = decide(classification, budget=budget, side_effect=side_effect or "none", enforce=False)
            attributes.update(classification.attributes())
            attributes.update(decision.attributes())
            attributes[semconv.RETRY_NUMBER] = ledger.next_attempt(call.tool, classification.signature())
        if call.raw_result is not ABSENT:
            span_id = format_span_id(span.context.span_id) if span.context is not None else ""
            if trace_id is None:  # inside op.run: the run's own ledger bounds apply
                ledger.remember(
                    call.tool, call.result, span_id, call_arguments=call.arguments, unsourced=unsourced
                )
            else:
                self._remember_bounded(trace_id, ledger, call, span_id, unsourced)
        _record_metrics(span, call, attributes, classification, decision)
        return attributes


def _estimated_size(value: Any, limit: int) -> int:
    """Text bytes in a (non-string) result, counted until ``limit`` is passed."""
    total = 0
    stack = [value]
    while stack and total <= limit:
        item = stack.pop()
        if isinstance(item, str | bytes):
            total += len(item)
        elif isinstance(item, Mapping):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple | set | frozenset):
            stack.extend(item)
        else:
            total += 16
    return total


def _record_metrics(span: ReadableSpan, call: ForeignToolCall, attributes, classification, decision) -> None:
    """The same counters as ``@op.tool`` (:mod:`.metrics`); the duration only where the library
    does not record ``gen_ai.execute_tool.duration`` itself (``opentelemetry-util-genai`` does)."""
    from .spans.metrics import record_tool_call

    duration = None
    if call.library != GENAI and span.start_time is not None and span.end_time is not None:
        duration = (span.end_time - span.start_time) / 1e9
    span_attributes = span.attributes or {}
    error_type = span_attributes.get(semconv.ERROR_TYPE)
    tool_type = span_attributes.get(semconv.GEN_AI_TOOL_TYPE)
    agent_name = span_attributes.get(semconv.GEN_AI_AGENT_NAME, attributes.get(semconv.GEN_AI_AGENT_NAME))
    record_tool_call(
        call.tool,
        status=attributes[semconv.TOOL_STATUS],
        side_effect=attributes.get(semconv.SIDE_EFFECT),
        kinds=(a.kind for a in classification.arguments) if classification is not None else (),
        violations=decision.violations if decision is not None else (),
        retry=attributes.get(semconv.RETRY_NUMBER, 0),
        ledger_full=classification is not None and classification.ledger_full,
        duration=duration,
        error_type=error_type if isinstance(error_type, str) else None,
        tool_type=tool_type if isinstance(tool_type, str) else None,
        agent_name=agent_name if isinstance(agent_name, str) else None,
    )


def _foreign(span: Any) -> bool:
    """Whether ``span`` was made by another instrumentation than this package."""
    scope = getattr(span, "instrumentation_scope", None)
    return scope is None or scope.name != OWN_SCOPE
