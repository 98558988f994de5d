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

For such a span the processor, in ``on_end``: parses the arguments, classifies them against the
run's ledger (the ``op.run`` scope when the span ends inside one, else a bounded ledger per trace),
writes the ``agent.arg.*`` attributes (plus the assumed/invented counts and ``agent.retry.number``),
then remembers the result under this span's id so later calls can be observed from it. The tool has
already run, so nothing can be blocked. Spans made by ``@op.tool`` already carry provenance and are
left alone. The matching itself is :func:`classify.classify_arguments` — the same code the decorator
uses.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import StatusCode, format_span_id

from .. import semconv
from .ledger import safe_names
from .redaction import OPENINFERENCE_SPAN_KIND, TRACELOOP_SPAN_KIND

GENAI = "genai"
OPENINFERENCE = "openinference"
OPENLLMETRY = "openllmetry"

#: (library, arguments key, result key), in the order they are tried.
_SOURCES: Final = (
    (GENAI, semconv.GEN_AI_TOOL_CALL_ARGUMENTS, semconv.GEN_AI_TOOL_CALL_RESULT),
    (OPENINFERENCE, "input.value", "output.value"),
    (OPENLLMETRY, "traceloop.entity.input", "traceloop.entity.output"),
)
_TOOL_NAME_KEYS: Final = (semconv.GEN_AI_TOOL_NAME, "tool.name", "traceloop.entity.name")
_ABSENT: Final = object()
MAX_TRACE_LEDGERS: Final = 256
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
    result: Any  # _ABSENT when not recorded


def is_tool_span(attributes: Mapping[str, Any]) -> bool:
    return (
        attributes.get(semconv.GEN_AI_OPERATION_NAME) == semconv.EXECUTE_TOOL
        or attributes.get(OPENINFERENCE_SPAN_KIND) == "TOOL"
        or attributes.get(TRACELOOP_SPAN_KIND) == "tool"
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


def _arguments(library: str, raw: Any) -> Mapping[str, Any] | None:
    parsed = _parse(raw)
    if library == OPENLLMETRY and isinstance(parsed, Mapping) and set(parsed) <= {"args", "kwargs"}:
        out: dict[str, Any] = {}
        args = parsed.get("args") or ()
        if isinstance(args, (list, tuple)):
            out.update((f"{POSITIONAL_PREFIX}{i}", value) for i, value in enumerate(args))
        kwargs = parsed.get("kwargs") or {}
        if isinstance(kwargs, Mapping):
            out.update(safe_names(kwargs, "kwargs"))
        return out
    if isinstance(parsed, Mapping):  # the keys are part of the recorded arguments: maybe data
        return safe_names(parsed, "arguments")
    if parsed is None:
        return None
    return {WHOLE_INPUT: parsed}


def foreign_tool_call(name: str, attributes: Mapping[str, Any] | None) -> ForeignToolCall | None:
    """The tool call recorded on a finished span by another library, or ``None`` if there is none."""
    if not attributes or not is_tool_span(attributes) or has_own_provenance(attributes):
        return None
    sources = _SOURCES
    if OPENINFERENCE_SPAN_KIND in attributes:
        # OpenInference's own keys first: with enable_genai_semconv its 0.1.72 conversion writes the
        # tool's *parameter schema* into gen_ai.tool.call.arguments, not the call's arguments.
        sources = (_SOURCES[1], _SOURCES[0], _SOURCES[2])
    for library, arguments_key, result_key in sources:
        if arguments_key in attributes or result_key in attributes:
            tool = next((attributes[k] for k in _TOOL_NAME_KEYS if isinstance(attributes.get(k), str)), None)
            if tool is None:
                tool = name.removeprefix(semconv.TOOL_SPAN_PREFIX)
            arguments = (
                _arguments(library, attributes[arguments_key]) if arguments_key in attributes else None
            )
            result = _parse(attributes[result_key]) if result_key in attributes else _ABSENT
            return ForeignToolCall(library, tool, arguments, result)
    return None


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
        max_traces: int = MAX_TRACE_LEDGERS,
    ) -> None:
        from ..errors import ConfigurationError
        from .budget import Budget

        for tool, effect in (side_effects or {}).items():
            if effect not in semconv.SIDE_EFFECTS:
                raise ConfigurationError(
                    f"foreign_side_effects[{tool!r}]: expected one of {', '.join(semconv.SIDE_EFFECTS)}"
                )
        for tool, budget in (budgets or {}).items():
            if not isinstance(budget, Budget):
                raise ConfigurationError(f"foreign_budgets[{tool!r}]: expected an op.Budget")
        self._side_effects = dict(side_effects or {})
        self._budgets = dict(budgets or {})
        self._default_budget = Budget()
        self._ledgers: OrderedDict[int, Any] = OrderedDict()
        self._max_traces = max_traces
        self._lock = threading.Lock()

    def _trace_ledger(self, trace_id: int) -> Any:
        from .ledger import Ledger

        with self._lock:
            ledger = self._ledgers.get(trace_id)
            if ledger is None:
                ledger = self._ledgers[trace_id] = Ledger()
                while len(self._ledgers) > self._max_traces:
                    self._ledgers.popitem(last=False)
            else:
                self._ledgers.move_to_end(trace_id)
            return ledger

    def provenance(self, span: ReadableSpan) -> dict[str, Any] | None:
        """Attributes to add to the rebuilt span, or ``None`` when ``span`` is not a foreign tool span."""
        call = foreign_tool_call(span.name, span.attributes)
        if call is None:
            return None
        from .classify import classify_arguments
        from .runscope import current_run

        scope = current_run()
        attributes: dict[str, Any] = {}
        if scope is not None:
            ledger = scope.ledger
            attributes[semconv.RUN_ID] = scope.run_id
        elif span.context is not None:
            ledger = self._trace_ledger(span.context.trace_id)
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
        classification = verdict = None
        if call.arguments is not None:
            classification = classify_arguments(call.tool, call.arguments, ledger)
            budget = self._budgets.get(call.tool, self._default_budget)
            verdict = budget.check(classification, side_effect or "none", enforce_globally=False)
            attributes.update(classification.attributes())
            attributes.update(verdict.attributes())
            attributes[semconv.RETRY_NUMBER] = ledger.next_attempt(call.tool, classification.signature())
        if call.result is not _ABSENT:
            span_id = format_span_id(span.context.span_id) if span.context is not None else ""
            ledger.remember(call.tool, call.result, span_id, call_arguments=call.arguments)
        _record_metrics(span, call, attributes, classification, verdict)
        return attributes


def _record_metrics(span: ReadableSpan, call: ForeignToolCall, attributes, classification, verdict) -> None:
    """The same counters as ``@op.tool`` (:mod:`.metrics`); the duration only where the library
    does not record ``gen_ai.execute_tool.duration`` itself (``opentelemetry-util-genai`` does)."""
    from .metrics import record_tool_call

    duration = None
    if call.library != GENAI and span.start_time is not None and span.end_time is not None:
        duration = (span.end_time - span.start_time) / 1e9
    error_type = (span.attributes or {}).get(semconv.ERROR_TYPE)
    record_tool_call(
        call.tool,
        status=attributes[semconv.TOOL_STATUS],
        side_effect=attributes.get(semconv.SIDE_EFFECT),
        kinds=(a.kind for a in classification.arguments) if classification is not None else (),
        violations=verdict.violations if verdict is not None else (),
        retry=attributes.get(semconv.RETRY_NUMBER, 0),
        ledger_full=classification is not None and classification.ledger_full,
        duration=duration,
        error_type=error_type if isinstance(error_type, str) else None,
    )
