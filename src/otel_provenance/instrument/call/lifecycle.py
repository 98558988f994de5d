"""One tool call, from its arguments to its ended span: the lifecycle every gate drives.

``@op.tool`` (functions, methods, ``async def``, generators, async generators), the MCP session
wrapper and any other client gate make a :class:`ToolCall` per call and drive the same steps:

1. **bind** — name the passed arguments (the driver knows how: a signature, a JSON object); an agent
   framework's context object is never an argument (:mod:`.frameworks`);
2. **classify** — each argument against the current run's ledger: observed, assumed, invented or
   untrusted;
3. **decide** — one decision, :func:`.decision.decide`: may the call run? The tool's own checks
   (``ToolSpec.checks``) and the run's contract (:mod:`.guard`) add their objections to it
   (:func:`.decision.join`). Steps 1–3 run when the ``ToolCall`` is made, inside one guard: if any
   of them fails, the failure is decided as a provenance fault (:func:`.decision.decide_fault`) —
   fail closed;
4. **ask** — when the decision *asks* (objections a person may overrule, ``Decision.asks``), the
   approver is asked and its answer awaited until one deadline (:meth:`ToolCall.ask` /
   :meth:`ToolCall.ask_async`, :mod:`.approval`). Only an explicit ``True`` approves; any other answer,
   an exception or the deadline is a denial, which turns the decision into a block
   (``approval:denied|timeout|error``). The outcome is ``agent.guard.approval`` on the span;
5. **start** — open the ``execute_tool`` span with every attribute known before the call (or adopt
   the one a framework opened for it, :mod:`.adopt`). A blocked call is :meth:`ToolCall.refuse`\\ d
   instead: its span ends with ``agent.tool.status=blocked``, the body never runs, and what the
   checks counted for it (a policy's run total, :mod:`.policy`) is given back (``on_refuse``);
6. **attach** — make the span current while the body runs, so the body's own spans nest under it;
7. **run** — the driver's body: :meth:`ToolCall.run` / :meth:`ToolCall.run_async`, or step by step
   for a generator (:meth:`ToolCall.attach` / :meth:`ToolCall.detach` around each step);
8. **remember** — the result (or each item) into the run's ledger under the span's id, so later calls
   can be observed from it (as untrusted evidence when the tool is declared ``trust="untrusted"``);
9. **finish** — status, the essential attributes back if the body evicted some, end, metrics.

A client gate for a new kind of client imports :class:`ToolSpec` (what a tool is, made once per
tool; re-exported here) and :class:`ToolCall` from this module::

    call = ToolCall(spec, lambda: dict(arguments))       # bind → classify → decide
    await call.ask_async()                               # a person, if the decision asks (else nothing)
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

from ... import semconv as sc
from ...errors import ProvenanceError
from ..base.internal_errors import reraise_own_bug_under_pytest
from ..base.settings import get_settings
from ..evidence.classify import Classification, classify_arguments
from ..evidence.delegation import destinations_returned
from ..evidence.ledger import LOCAL_CALL, Ledger
from ..spans import metrics as _metrics
from . import approval as _approval
from .adopt import adopt_outer_tool_span
from .current import current_run, explicit_retry_number
from .decision import answered, decide_fault, join
from .frameworks import without_framework_context
from .outside_run import note_outside_run
from .security_form import finding_event, security_decision
from .toolspec import ToolSpec, call_id_of

_log = logging.getLogger("otel_provenance")
_T = TypeVar("_T")


class ToolCall:
    """One call of the tool ``spec`` describes. Making it binds, classifies and decides; the driver
    then asks (when the decision asks a person), and refuses it (when :attr:`blocked`) or starts,
    runs, remembers and finishes it."""

    __slots__ = (
        "_name_arguments",
        "approval",
        "arguments",
        "attributes",
        "classification",
        "decision",
        "essential",
        "guard",
        "ledger",
        "on_refuse",
        "span",
        "spec",
        "started",
        "unsourced",
    )

    def __init__(self, spec: ToolSpec, name_arguments: Callable[[], Mapping[str, Any]]) -> None:
        """``name_arguments`` names the passed arguments (step 1); it is called inside the guard, so
        a failure to name them is a provenance fault like any other."""
        self.spec = spec
        self._name_arguments = name_arguments  # named again after a person approved: unchanged?
        scope = current_run()
        if scope is None:  # nothing can be observed: say so, once per tool (a framework's thread?)
            note_outside_run(spec.name)
        self.ledger: Ledger | None = scope.ledger if scope is not None else None
        self.guard: Any = scope.guard if scope is not None else None  # .guard.RunGuard
        self.arguments: dict[str, Any] = {}
        self.classification: Classification | None = None  # None if classifying failed (metrics)
        self.span: Any = None
        self.started = 0.0
        self.approval: _approval.Answer | None = None  # the approver's answer, once asked
        # run by refuse(): what a check counted for this call (a policy's run total) is given back
        self.on_refuse: list[Callable[[], None]] = []
        essential = spec.first_attributes(scope.run_id if scope is not None else None)
        try:
            settings = get_settings()
            self.arguments = _bind(name_arguments)  # 1. bind
            self.classification = classify_arguments(  # 2. classify
                spec.name,
                self.arguments,
                self.ledger,
                invented=spec.invented,
                settings=settings,
                judged=spec.judged,
            )
            decided: Mapping[str, Any]
            self.decision, decided = spec.plan.decide(self.classification, settings.enforce)  # 3. decide
            essential[sc.RETRY_NUMBER] = self._attempt(self.classification)
            key = spec.idempotency_key
            essential[sc.IDEMPOTENCY_PRESENT] = key is not None and _present(self.arguments.get(key))
            essential.update(decided)
            per_argument = self.classification.attributes(spec.per_argument_room(len(essential)))
            self.essential, self.attributes = essential, per_argument  # what the checks judge
            objections = [o for check in spec.checks for o in check(self)]  # 3. decide, the rest
            if self.guard is not None:
                objections.extend(self.guard.objections(self))
            if objections:
                self.decision = join(self.decision, objections, enforce=settings.enforce)
                essential.update(self.decision.attributes())
            if spec.checks or self.guard is not None or self.decision.violations:
                essential.update(security_decision(self.decision, essential))
            # assumed/invented arguments: their echoes in the result are not evidence
            self.unsourced: Mapping[str, Any] = self.classification.unsourced(self.arguments)
        except Exception as error:  # the provenance machinery failed: decided as a fault
            self.decision = decide_fault(error, side_effect=spec.side_effect)
            essential.update(self.decision.attributes())
            essential.setdefault(sc.RETRY_NUMBER, 0)
            per_argument = {}
            self.unsourced = self.arguments
        advisory = [v for v in self.decision.violations if v not in self.decision.asks]
        if advisory and not self.decision.blocked:
            # names each objection's source (a budget, the contract, a policy), never "the budget" for all
            _log.warning("%s: objections not enforced, advisory only (%s)", spec.name, ", ".join(advisory))
        essential.update(spec.plan.tail)  # the integration's keys, the tool's name, the operation
        if scope is not None and scope.agent_name is not None:  # the conventions put it on tool spans
            essential.setdefault(sc.GEN_AI_AGENT_NAME, scope.agent_name)
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

    # -- 4. ask -----------------------------------------------------------------------------------
    def ask(self) -> None:
        """Ask the approver when the decision asks a person, waiting for its answer in a worker thread
        until the deadline; a denial blocks the call. A no-op when nothing is asked (or once asked)."""
        if self.decision.asks and self.approval is None:
            try:
                approver, timeout, request = self._approval_request()
                answer = _approval.ask(approver, request, timeout)
            except Exception as error:  # the asking failed (not the approver): a denial
                answer = _approval.fault(error)
            self._answered(self._holds(answer))

    async def ask_async(self) -> None:
        """:meth:`ask` from a coroutine: the loop goes on while the approver is asked."""
        if self.decision.asks and self.approval is None:
            try:
                approver, timeout, request = self._approval_request()
                answer = await _approval.ask_async(approver, request, timeout)
            except Exception as error:
                answer = _approval.fault(error)
            self._answered(self._holds(answer))

    def _approval_request(self) -> tuple[Any, float, _approval.ApprovalRequest]:
        approver, timeout = _approval.approver_for(current_run(), get_settings())
        request = _approval.ApprovalRequest(
            tool=self.spec.name,
            arguments=self.arguments,
            reasons=self.decision.asks,
            sources=_asked_sources(self.classification, self.decision.asks),
            run_id=self.essential.get(sc.RUN_ID),
            call_id=call_id_of(self.essential),
            side_effect=self.spec.side_effect,
        )
        return approver, timeout, request

    def _holds(self, answer: _approval.Answer) -> _approval.Answer:
        """An approval holds for the arguments the person was shown: named and digested again, they
        must be what was decided — not changed meanwhile by another thread or the approver (#50)."""
        if answer.outcome != _approval.APPROVED or self.classification is None:
            return answer
        try:
            named = _bind(self._name_arguments)
            now = classify_arguments(self.spec.name, named, None, invented=self.spec.invented)
            unchanged = now.signature() == self.classification.signature()
        except Exception:  # what cannot be compared is not known to be unchanged: fail closed
            unchanged = False
        return answer if unchanged else _approval.changed()

    def _answered(self, answer: _approval.Answer) -> None:
        """The decision after the answer, on the span to be: ``agent.guard.approval`` and the violations."""
        self.approval = answer
        self.decision = answered(self.decision, answer.outcome)
        changes = {**self.decision.attributes(), sc.GUARD_APPROVAL: answer.outcome}
        if sc.SECURITY_DECISION_TYPE in self.essential:  # the decision in the conventions' form, again
            changes.update(security_decision(self.decision, self.essential))
        self.essential = _updated(self.essential, changes)
        self.attributes = _updated(self.attributes, changes)
        _metrics.record_approval(self.spec.name, answer.outcome)

    # -- 5. start ---------------------------------------------------------------------------------
    def _open_span(self) -> Span:
        """Adopt the framework's span for this call, or open our own, with every attribute known now."""
        spec = self.spec
        span: Any = adopt_outer_tool_span(spec.name, self.attributes) or spec.tracer.start_span(
            spec.span_name, kind=SpanKind.INTERNAL, attributes=self.attributes
        )
        for reason in self.decision.violations:
            span.add_event(sc.SECURITY_FINDING_EVENT, finding_event(reason, self.decision.blocked))
        self.span = span
        self.started = _metrics.now()
        return span

    def start(self) -> Span:
        """Open the call's span. A blocked call is refused here instead: :class:`ProvenanceError`. A
        call whose approval was never asked is asked here first (synchronously): nothing runs unasked."""
        self.ask()
        if self.decision.blocked:
            raise self.refuse()
        return self._open_span()

    def refuse(self) -> ProvenanceError:
        """End a blocked call's span as ``blocked`` and return the error for the driver to raise, or to
        turn into its client's own error shape (MCP: an ``isError`` result). The body never runs."""
        error = ProvenanceError(self.spec.name, self.decision.violations, self._no_run_message())
        self._undo_counts()
        self._open_span()
        self._end_as_error(error, sc.TOOL_STATUS_BLOCKED, None)
        return error

    def _undo_counts(self) -> None:
        """The call will not run: give back what the checks counted for it (``on_refuse``), once."""
        undo, self.on_refuse = self.on_refuse, []
        for give_back in undo:
            try:
                give_back()
            except Exception as exc:
                reraise_own_bug_under_pytest(exc)
                _log.warning("%s: could not undo a check's count (%s)", self.spec.name, type(exc).__name__)

    def _no_run_message(self) -> str | None:
        """A call a person did not approve: the asks and the approver's outcome. A blocked call outside
        any run: say so, and how to open one (no ledger: nothing observed)."""
        if self.approval is not None:
            return _approval.denial_message(self.spec.name, self.decision.asks, self.approval)
        if self.ledger is not None:
            return None
        return (
            f"{self.spec.name}: blocked by provenance budget ({', '.join(self.decision.violations)}): "
            "no op.run is active, so no argument can have been observed; call tools inside "
            "`with op.run(inputs={...}):` (or `async with`), declaring the task's inputs there"
        )

    # -- 6. attach, 7. run ------------------------------------------------------------------------
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

    # -- 8. remember ------------------------------------------------------------------------------
    def remember(self, result: Any, prefix: tuple = ()) -> None:
        """Index ``result`` in the run's ledger under this span's id; ``prefix`` goes before each field
        path (a generator's item index, an MCP text block's ``content.<i>``). Best effort: the tool
        has already succeeded, so a result that cannot be remembered is logged, never raised."""
        if self.ledger is None:
            return
        try:
            # a span that records nothing (the API's no-op tracer) has no id: the ledger still needs
            # one per call (echoes, directed calls); never exported (:func:`.classify._provenance`)
            span_id = _span_id(self.span) or LOCAL_CALL + call_id_of(self.essential)
            if self.classification is not None and _directed(self.classification, self.ledger):
                self.ledger.direct(span_id, destinations_returned(result, self.ledger.max_entries))
            self.ledger.remember(
                self.spec.name,
                result,
                span_id,
                field_prefix=prefix,
                call_arguments=self.arguments,
                unsourced=self.unsourced,
                trust=self.spec.trust,
            )
        except Exception as exc:
            reraise_own_bug_under_pytest(exc)
            _log.warning("%s: could not remember the result (%s)", self.spec.name, type(exc).__name__)

    # -- 9. finish --------------------------------------------------------------------------------
    def finish(self) -> None:
        """The call succeeded: ``agent.tool.status=ok``, end the span, record the metrics."""
        span = self.span
        span.set_attribute(sc.TOOL_STATUS, sc.TOOL_STATUS_OK)
        self._restore_essentials()
        span.end()
        self._ended(sc.TOOL_STATUS_OK, None)

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
        self._ended(status, error_type)

    def _ended(self, status: str, error_type: str | None) -> None:
        """The run's contract learns how the call ended; the call's metrics are recorded."""
        if self.guard is not None:
            try:
                self.guard.ended(self, status, error_type)
            except Exception as exc:  # the call has ended: a guard that cannot record it is logged
                reraise_own_bug_under_pytest(exc)
                _log.warning(
                    "%s: the contract could not record the call (%s)", self.spec.name, type(exc).__name__
                )
        self._record_metrics(status, error_type)

    def _restore_essentials(self) -> None:
        """If the body added enough attributes to evict some, put the essential ones back (newest)."""
        if getattr(self.span, "dropped_attributes", 0):
            self.span.set_attributes(self.essential)

    def _record_metrics(self, status: str, error_type: str | None) -> None:
        """The call's counters and duration (:mod:`.metrics`); a no-op without a MeterProvider."""
        if not _metrics.recording():
            return
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
            tool_type=self.essential.get(sc.GEN_AI_TOOL_TYPE),
            agent_name=self.essential.get(sc.GEN_AI_AGENT_NAME),
        )


def _asked_sources(classification: Classification | None, asks: tuple[str, ...]) -> dict[str, str]:
    """For each argument a person is asked about (``delegated:<name>``): where its value came from,
    as ``<tool> <field>`` — shown beside the value, never exported."""
    if classification is None:
        return {}
    named = {reason.partition(":")[2] for reason in asks if reason.startswith("delegated:")}
    return {
        a.name: f"{a.source_tool} {a.source_field}"
        for a in classification.arguments
        if a.name in named and a.source_tool is not None
    }


def _directed(classification: Classification, ledger: Ledger | None) -> bool:
    """Whether the user directed this call — an argument of it came from the run's request or inputs
    (``read_file("bill.txt")``), or from what a call the user directed returned (the link in the
    message the request points to): what it returns is a source the user named (#44)."""
    return bool(classification.delegated or classification.asked) or any(
        a.kind == sc.KIND_OBSERVED
        and (
            a.source_tool == sc.SOURCE_INPUT
            or (ledger is not None and a.source_call and ledger.directed(a.source_call))
        )
        for a in classification.arguments
    )


def _bind(name_arguments: Callable[[], Mapping[str, Any]]) -> dict[str, Any]:
    """The passed arguments by name, minus any agent framework's context object (never the model's)."""
    named = name_arguments()
    return without_framework_context(named if type(named) is dict else dict(named))


_DECISION_REASONS = frozenset({sc.VIOLATIONS, sc.SECURITY_DECISION_REASON, sc.SECURITY_POLICY_ID})


def _updated(attributes: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """``attributes`` with ``changes``, where an approved call's ``agent.violations`` (and the reasons
    that name them) may have gone."""
    out = {k: v for k, v in attributes.items() if k not in _DECISION_REASONS}
    out.update(changes)
    return out


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
