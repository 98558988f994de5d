"""One tool call, from its arguments to its ended span: the lifecycle every gate drives.

``@op.tool`` (functions, methods, ``async def``, generators, async generators), the MCP session
wrapper and any other client gate make a :class:`ToolCall` per call and drive the same steps:

1. **bind** — name the passed arguments (the driver knows how: a signature, a JSON object); an agent
   framework's context object is never an argument (:mod:`.frameworks`);
2. **classify** — each argument against the current run's ledger: observed, assumed, invented or
   untrusted;
3. **decide** — one decision, :func:`.decision.decide`: may the call run?
   Steps 1–3 run when the ``ToolCall`` is made, inside one guard: if any of them fails, the failure
   is decided as a provenance fault (:func:`.decision.decide_fault`) — fail closed;
4. **start** — open the ``execute_tool`` span with every attribute known before the call (or adopt
   the one a framework opened for it, :mod:`.adopt`). A blocked call is :meth:`ToolCall.refuse`\\ d
   instead: its span ends with ``agent.tool.status=blocked`` and the body never runs;
5. **attach** — make the span current while the body runs, so the body's own spans nest under it;
6. **run** — the driver's body: :meth:`ToolCall.run` / :meth:`ToolCall.run_async`, or step by step
   for a generator (:meth:`ToolCall.attach` / :meth:`ToolCall.detach` around each step);
7. **remember** — the result (or each item) into the run's ledger under the span's id, so later calls
   can be observed from it (as untrusted evidence when the tool is declared ``trust="untrusted"``);
8. **finish** — status, the essential attributes back if the body evicted some, end, metrics.

A client gate for a new kind of client imports :class:`ToolSpec` (what a tool is, made once per
tool; re-exported here) and :class:`ToolCall` from this module::

    call = ToolCall(spec, lambda: dict(arguments))       # bind → classify → decide
    if call.blocked:
        raise call.refuse()                              # or turn it into the client's error shape
    call.start()
    result = await call.run_async(client.call, name, arguments)
    call.remember(result)
    call.finish()

What never reaches the span: argument and result values, exception messages and stack traces (a
stack trace can quote a literal value). An exception from the body is recorded by its type only.
Per-argument attributes go first and are capped to fit the tracer's attribute limit; essential
attributes (``gen_ai.operation.name``, ``gen_ai.tool.name``, budgets, status) go last, so the SDK's
oldest-first eviction can only drop per-argument detail, and they are put back at the end if
anything was evicted meanwhile.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from .. import semconv as sc
from ..errors import ProvenanceError
from . import metrics as _metrics
from .adopt import adopt_outer_tool_span
from .classify import Classification, classify_arguments
from .decision import Decision, decide, decide_fault
from .frameworks import without_framework_context
from .internal_errors import reraise_own_bug_under_pytest
from .ledger import Ledger
from .runscope import current_run, explicit_retry_number
from .settings import get_settings
from .toolspec import ToolSpec

_log = logging.getLogger("otel_provenance")
_T = TypeVar("_T")


class ToolCall:
    """One call of the tool ``spec`` describes. Making it binds, classifies and decides; the driver
    then refuses it (when :attr:`blocked`) or starts, runs, remembers and finishes it."""

    __slots__ = (
        "arguments",
        "attributes",
        "classification",
        "decision",
        "essential",
        "ledger",
        "span",
        "spec",
        "started",
        "unsourced",
    )

    def __init__(self, spec: ToolSpec, name_arguments: Callable[[], Mapping[str, Any]]) -> None:
        """``name_arguments`` names the passed arguments (step 1); it is called inside the guard, so
        a failure to name them is a provenance fault like any other."""
        self.spec = spec
        scope = current_run()
        self.ledger: Ledger | None = scope.ledger if scope is not None else None
        self.arguments: dict[str, Any] = {}
        self.classification: Classification | None = None  # None if classifying failed (metrics)
        self.span: Any = None
        self.started = 0.0
        essential = spec.first_attributes(scope.run_id if scope is not None else None)
        try:
            settings = get_settings()
            self.arguments = _bind(name_arguments)  # 1. bind
            self.classification = classify_arguments(  # 2. classify
                spec.name, self.arguments, self.ledger, invented=spec.invented, settings=settings
            )
            self.decision: Decision = decide(  # 3. decide
                self.classification,
                budget=spec.budget,
                side_effect=spec.side_effect,
                enforce=settings.enforce,
            )
            essential[sc.RETRY_NUMBER] = self._attempt(self.classification)
            key = spec.idempotency_key
            essential[sc.IDEMPOTENCY_PRESENT] = key is not None and _present(self.arguments.get(key))
            essential.update(self.decision.attributes())
            per_argument = self.classification.attributes(spec.per_argument_room(len(essential)))
            # assumed/invented arguments: their echoes in the result are not evidence
            self.unsourced: Mapping[str, Any] = self.classification.unsourced(self.arguments)
        except Exception as error:  # the provenance machinery failed: decided as a fault
            self.decision = decide_fault(error, side_effect=spec.side_effect)
            essential.update(self.decision.attributes())
            essential.setdefault(sc.RETRY_NUMBER, 0)
            per_argument = {}
            self.unsourced = self.arguments
        if self.decision.violations and not self.decision.blocked:
            _log.warning(
                "%s: provenance budget exceeded, advisory only (%s)",
                spec.name,
                ", ".join(self.decision.violations),
            )
        essential.update(spec.span_attributes)
        essential[sc.GEN_AI_TOOL_NAME] = spec.name
        essential[sc.GEN_AI_OPERATION_NAME] = sc.EXECUTE_TOOL
        per_argument.update(essential)  # essentials last: the SDK evicts the oldest keys first
        self.essential: Mapping[str, Any] = essential
        self.attributes: Mapping[str, Any] = per_argument

    def _attempt(self, classification: Classification) -> int:
        """``agent.retry.number``: as set by ``retry_attempt``, else counted by the run's ledger."""
        retry = explicit_retry_number()
        if retry is None:
            retry = (
                self.ledger.next_attempt(self.spec.name, classification.signature())
                if self.ledger is not None
                else 0
            )
        return retry

    @property
    def blocked(self) -> bool:
        """The decision: this call must not run (:meth:`refuse` it)."""
        return self.decision.blocked

    @property
    def violations(self) -> tuple[str, ...]:
        return self.decision.violations

    # -- 4. start ---------------------------------------------------------------------------------
    def _open_span(self) -> Span:
        """Adopt the framework's span for this call, or open our own, with every attribute known now."""
        spec = self.spec
        span: Any = adopt_outer_tool_span(spec.name, self.attributes) or spec.tracer.start_span(
            spec.span_name, kind=SpanKind.INTERNAL, attributes=self.attributes
        )
        self.span = span
        self.started = _metrics.now()
        return span

    def start(self) -> Span:
        """Open the call's span. A blocked call is refused here instead: :class:`ProvenanceError`."""
        if self.decision.blocked:
            raise self.refuse()
        return self._open_span()

    def refuse(self) -> ProvenanceError:
        """End a blocked call's span as ``blocked`` and return the error for the driver to raise, or to
        turn into its client's own error shape (MCP: an ``isError`` result). The body never runs."""
        error = ProvenanceError(self.spec.name, self.decision.violations, self._no_run_message())
        self._open_span()
        self._end_as_error(error, sc.TOOL_STATUS_BLOCKED, None)
        return error

    def _no_run_message(self) -> str | None:
        """A blocked call outside any run: say so, and how to open one (no ledger: nothing observed)."""
        if self.ledger is not None:
            return None
        return (
            f"{self.spec.name}: blocked by provenance budget ({', '.join(self.decision.violations)}): "
            "no op.run is active, so no argument can have been observed; call tools inside "
            "`with op.run(inputs={...}):` (or `async with`), declaring the task's inputs there"
        )

    # -- 5. attach, 6. run ------------------------------------------------------------------------
    def attach(self) -> object:
        """Make the span current; returns the token for :meth:`detach`."""
        return otel_context.attach(trace.set_span_in_context(self.span))

    def detach(self, token: object) -> None:
        otel_context.detach(token)  # type: ignore[arg-type]

    def run(self, body: Callable[..., _T], /, *args: Any, **kwargs: Any) -> _T:
        """``body(*args, **kwargs)`` with the span current. If it raises, the call is finished as an
        error (by the exception's type) and the exception propagates unchanged."""
        token = otel_context.attach(trace.set_span_in_context(self.span))
        try:
            return body(*args, **kwargs)
        except BaseException as exc:
            self.finish_error(exc)
            raise
        finally:
            otel_context.detach(token)

    async def run_async(self, body: Callable[..., Awaitable[_T]], /, *args: Any, **kwargs: Any) -> _T:
        """:meth:`run` for a coroutine function: the span stays current across its awaits."""
        token = otel_context.attach(trace.set_span_in_context(self.span))
        try:
            return await body(*args, **kwargs)
        except BaseException as exc:
            self.finish_error(exc)
            raise
        finally:
            otel_context.detach(token)

    # -- 7. remember ------------------------------------------------------------------------------
    def remember(self, result: Any, prefix: tuple = ()) -> None:
        """Index ``result`` in the run's ledger under this span's id; ``prefix`` goes before each field
        path (a generator's item index, an MCP text block's ``content.<i>``). Best effort: the tool
        has already succeeded, so a result that cannot be remembered is logged, never raised."""
        if self.ledger is None:
            return
        try:
            self.ledger.remember(
                self.spec.name,
                result,
                _span_id(self.span),
                field_prefix=prefix,
                call_arguments=self.arguments,
                unsourced=self.unsourced,
                trust=self.spec.trust,
            )
        except Exception as exc:
            reraise_own_bug_under_pytest(exc)
            _log.warning("%s: could not remember the result (%s)", self.spec.name, type(exc).__name__)

    # -- 8. finish --------------------------------------------------------------------------------
    def finish(self) -> None:
        """The call succeeded: ``agent.tool.status=ok``, end the span, record the metrics."""
        span = self.span
        span.set_attribute(sc.TOOL_STATUS, sc.TOOL_STATUS_OK)
        self._restore_essentials()
        span.end()
        self._record_metrics(sc.TOOL_STATUS_OK, None)

    def finish_error(self, exc: BaseException | None = None, *, error_type: str | None = None) -> None:
        """The call failed: by ``exc``'s type (no message, no stack trace, no locals), or — a tool that
        reported its own failure without raising — by ``error_type``."""
        self._end_as_error(exc, sc.TOOL_STATUS_ERROR, error_type)

    def _end_as_error(self, exc: BaseException | None, status: str, error_type: str | None) -> None:
        span = self.span
        if exc is not None:
            error_type = error_type or _error_type(exc)
            span.add_event("exception", {"exception.type": error_type})
        error_type = error_type or "error"
        span.set_attributes({sc.TOOL_STATUS: status, sc.ERROR_TYPE: error_type})
        span.set_status(Status(StatusCode.ERROR, type(exc).__qualname__ if exc is not None else error_type))
        self._restore_essentials()
        span.end()
        self._record_metrics(status, error_type)

    def _restore_essentials(self) -> None:
        """If the body added enough attributes to evict some, put the essential ones back (newest)."""
        if getattr(self.span, "dropped_attributes", 0):
            self.span.set_attributes(self.essential)

    def _record_metrics(self, status: str, error_type: str | None) -> None:
        """The call's counters and duration (:mod:`.metrics`); a no-op without a MeterProvider."""
        classification = self.classification
        _metrics.record_tool_call(
            self.spec.name,
            status=status,
            side_effect=self.spec.side_effect,
            kinds=(a.kind for a in classification.arguments) if classification is not None else (),
            violations=self.decision.violations,
            retry=self.essential.get(sc.RETRY_NUMBER, 0),
            ledger_full=classification is not None and classification.ledger_full,
            duration=_metrics.now() - self.started,
            error_type=error_type,
            context=trace.set_span_in_context(self.span),
        )


def _bind(name_arguments: Callable[[], Mapping[str, Any]]) -> dict[str, Any]:
    """The passed arguments by name, minus any agent framework's context object (never the model's)."""
    named = name_arguments()
    return without_framework_context(named if type(named) is dict else dict(named))


def _span_id(span: Span) -> str:
    span_id = span.get_span_context().span_id
    return format(span_id, "016x") if span_id else ""


def _error_type(exc: BaseException) -> str:
    cls = type(exc)
    module = cls.__module__
    return f"{module}.{cls.__qualname__}" if module and module != "builtins" else cls.__qualname__


def _present(value: Any) -> bool:
    if value is None:
        return False
    try:
        return not (isinstance(value, str | bytes | Mapping | list | tuple) and len(value) == 0)
    except Exception:
        return True


__all__ = ["ToolCall", "ToolSpec"]
