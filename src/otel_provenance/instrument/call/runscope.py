"""``op.run``: the scope of one agent run — its id and its ledger — bound in a ``contextvars`` variable.

One run is one trace: when no span is active, ``op.run`` opens an ``invoke_agent {agent_name}`` span
(GenAI conventions: ``gen_ai.operation.name=invoke_agent``, ``gen_ai.agent.name`` when given, kind
INTERNAL) and makes it current, so every tool call of the run is its child. When the caller already
has a span open, the run's tool spans nest under that span instead and no span is added.
``root_span=False`` turns this off. Like tool spans, the run span records an exception by its type only.

Concurrent runs in threads or asyncio tasks each see only their own ledger, because each context holds
its own binding. Code started inside a run (tasks, ``contextvars.copy_context().run``) inherits it;
a thread started with plain ``threading.Thread`` does not (Python does not copy contexts into threads),
so tool calls there run outside the run unless the thread's target is wrapped in the run's context.

The run's declared inputs are trusted evidence, and so is the user's request text
(``op.run(request="Send the report to bob@example.com by Friday")``): remembered as the input field
``request``, its values count as observed wherever they sit in the sentence, on token boundaries
(projection ``in_text``), as in any text of the inputs or of a trusted tool's results.

A run entered inside another inherits the enclosing run's observations: a value the outer run observed
(its declared inputs, its tools' results) counts as observed in the nested run. The nested run's own
observations stay in its ledger and are not seen by the enclosing run after it ends. It also asks the
enclosing run's approver, unless it names its own (``op.run(approver=...)``). And it is part of the
enclosing run for every limit the run has (#50): the offline gate reads one trace as one run, so the
enclosing run's contract judges the nested run's calls as its own (a second refund made by a
sub-agent is the run's second), on top of a contract the nested run names itself, and an
argument-value policy's run totals are the outermost run's.
"""

from __future__ import annotations

import contextvars
import logging
import secrets
from collections.abc import Mapping
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from ... import __version__
from ... import semconv as sc
from ...errors import ConfigurationError
from ..base.internal_errors import reraise_own_bug_under_pytest
from ..base.settings import approver_option, get_settings, timeout_option
from ..evidence.ledger import Ledger
from ..evidence.trust import TRUSTED
from ..spans.metrics import now, record_agent_run, record_run_verdict
from .current import CURRENT_RUN as _CURRENT_RUN

_log = logging.getLogger("otel_provenance")

_SCOPE = "otel_provenance"


class RunScope:
    """One agent run. Use as ``with op.run(...) as run:`` or ``async with op.run(...) as run:``."""

    __slots__ = (
        "_judges",
        "_own_guard",
        "_spans",
        "_tokens",
        "agent_name",
        "approval_timeout",
        "approver",
        "conversation_id",
        "enclosing",
        "guard",
        "inputs",
        "inputs_declared",
        "ledger",
        "policy_totals",
        "provider_name",
        "root_span",
        "run_id",
        "tracer_provider",
    )

    def __init__(
        self,
        inputs: Mapping[str, Any] | None = None,
        run_id: str | None = None,
        *,
        ledger_max_entries: int | None = None,
        agent_name: str | None = None,
        root_span: bool = True,
        tracer_provider: trace.TracerProvider | None = None,
        contract: Any = None,
        approver: Any = None,
        approval_timeout: float | None = None,
        request: str | None = None,
        provider_name: str | None = None,
        conversation_id: str | None = None,
    ) -> None:
        if inputs is not None and not isinstance(inputs, Mapping):
            raise ConfigurationError(f"op.run(inputs=...): expected a mapping, got {type(inputs).__name__}")
        if request is not None:
            if not isinstance(request, str):
                raise ConfigurationError("op.run(request=...): expected the request's text")
            if inputs is not None and sc.SOURCE_REQUEST in inputs:
                raise ConfigurationError(
                    f"op.run(...): give the request either as request= or as inputs[{sc.SOURCE_REQUEST!r}]"
                )
        if run_id is not None and (not isinstance(run_id, str) or not run_id):
            raise ConfigurationError("op.run(run_id=...): expected a non-empty string")
        if agent_name is not None and (not isinstance(agent_name, str) or not agent_name):
            raise ConfigurationError("op.run(agent_name=...): expected a non-empty string")
        if not isinstance(root_span, bool):
            raise ConfigurationError("op.run(root_span=...): expected True or False")
        for option, value in (("provider_name", provider_name), ("conversation_id", conversation_id)):
            if value is not None and (not isinstance(value, str) or not value):
                raise ConfigurationError(f"op.run({option}=...): expected a non-empty string")
        self.provider_name, self.conversation_id = provider_name, conversation_id
        self.run_id = run_id or secrets.token_hex(16)
        self.agent_name = agent_name
        self.root_span = root_span
        self.tracer_provider = tracer_provider
        self.ledger = Ledger(ledger_max_entries)
        self.approver = approver_option(approver, "op.run(approver=...)")  # None: the enclosing run's
        self.approval_timeout = timeout_option(approval_timeout, "op.run(approval_timeout=...)")
        self.guard: Any = None  # the run's contract at call time (.guard.RunGuard), when one is loaded
        if contract is not None:
            from .guard import ContractGuard  # the offline rules load only when a contract is given

            self.guard = ContractGuard.load(contract, "op.run").for_run(self.run_id)
        else:
            configured = get_settings().contract
            if configured is not None:
                self.guard = configured.for_run(self.run_id)
        # the guard this run would have alone, and whether it is named here (op.run(contract=...))
        self._own_guard = (self.guard, contract is not None)
        self._judges = self.guard is not None  # this run judges the whole contract when it ends
        self.enclosing: RunScope | None = None  # the run this one was entered in (first entry)
        self.inputs_declared = tuple(str(k) for k in inputs) if inputs else ()
        self.inputs: Mapping[str, Any] = dict(inputs) if inputs else {}  # op.Input limits read them
        self.policy_totals: Any = None  # what argument-value policies counted (.policy), on first use
        declared = dict(inputs) if inputs else {}
        if request:
            declared[sc.SOURCE_REQUEST] = request
        if declared:
            self.ledger.remember(sc.SOURCE_INPUT, declared, "", trust=TRUSTED)  # the user's own words
        self._tokens: list[contextvars.Token] = []
        self._spans: list[tuple[trace.Span, object, float] | None] = []  # (span, token, started)

    def __enter__(self) -> RunScope:
        enclosing = _CURRENT_RUN.get()
        if (
            enclosing is not None
            and self.ledger.parent is None
            and not _reaches(enclosing.ledger, self.ledger)
        ):
            self.ledger.parent = enclosing.ledger  # nested run: sees what the enclosing run observed
        if enclosing is not None and enclosing is not self:  # and asks its approver, unless it has one
            if self.approver is None:
                self.approver = enclosing.approver
            if self.approval_timeout is None:
                self.approval_timeout = enclosing.approval_timeout
        if not self._tokens and enclosing is not self:  # a first entry: which contract judges its calls
            self._enter_contract(enclosing)
        self._spans.append(self._open_span())
        self._tokens.append(_CURRENT_RUN.set(self))
        return self

    def _enter_contract(self, enclosing: RunScope | None) -> None:
        """A nested run is part of the enclosing run (one trace, one run offline): the enclosing run's
        contract judges its calls, counted with the enclosing run's; a contract this run names judges
        them too (and the sub-run alone when it ends). The enclosing run judges the whole run."""
        guard, named = self._own_guard
        self.enclosing = enclosing
        self.guard, self._judges = guard, guard is not None
        if guard is not None:
            guard.outer = None
        outer = enclosing.guard if enclosing is not None else None
        if outer is None:
            return
        if named:
            guard.outer = outer  # its own contract and the enclosing run's
        else:
            self.guard, self._judges = outer, False  # the enclosing run's, judged when it ends

    def __exit__(self, exc_type: type[BaseException] | None, *exc_info: object) -> None:
        token = self._tokens.pop()
        try:
            _CURRENT_RUN.reset(token)
        except ValueError:  # exited in another context (e.g. a different task): unbind there
            _CURRENT_RUN.set(None)
        opened = self._spans.pop()
        if self._judges and not self._spans:
            # the run's span: the one it opened, or the caller's it nests under
            self._judge(opened[0] if opened is not None else trace.get_current_span())
        if opened is not None:
            self._close_span(*opened, exc_type)

    def _judge(self, span: trace.Span | None) -> None:
        """The whole contract on the run's calls, on the run's span and as a metric; never raises."""
        try:
            # the run's span as the gate will read it: a rule may name it (required_edges' parent)
            name, attributes = getattr(span, "name", None), getattr(span, "attributes", None)
            if isinstance(name, str) and isinstance(attributes, Mapping):
                verdict = self.guard.judge_run((name, attributes))
            else:  # no span, or one that keeps neither (a non-recording span)
                verdict = self.guard.judge_run()
            if span is not None and span.is_recording():
                span.set_attributes({**verdict.attributes(), sc.GUARD_CONTRACT: self.guard.guard.name})
            record_run_verdict(verdict.status, self.guard.guard.name)
        except Exception as error:
            reraise_own_bug_under_pytest(error)
            _log.warning("op.run: the contract could not be judged (%s)", type(error).__name__)

    # -- the run's root span ---------------------------------------------------------------------------
    def _open_span(self) -> tuple[trace.Span, object, float] | None:
        """Start and attach ``invoke_agent`` when no span is current (and root spans are on); the
        monotonic time it started, for ``gen_ai.invoke_agent.duration``."""
        if not self.root_span or trace.get_current_span().get_span_context().is_valid:
            return None
        provider = self.tracer_provider
        tracer = (provider.get_tracer if provider is not None else trace.get_tracer)(_SCOPE, __version__)
        attributes: dict[str, Any] = {sc.GEN_AI_OPERATION_NAME: sc.INVOKE_AGENT, sc.RUN_ID: self.run_id}
        if self.agent_name is not None:
            attributes[sc.GEN_AI_AGENT_NAME] = self.agent_name
        if self.provider_name is not None:
            attributes[sc.GEN_AI_PROVIDER_NAME] = self.provider_name
        if self.conversation_id is not None:
            attributes[sc.GEN_AI_CONVERSATION_ID] = self.conversation_id
        name = f"{sc.INVOKE_AGENT} {self.agent_name}" if self.agent_name else sc.INVOKE_AGENT
        span = tracer.start_span(name, kind=SpanKind.INTERNAL, attributes=attributes)
        return span, otel_context.attach(trace.set_span_in_context(span)), now()

    def _close_span(
        self, span: trace.Span, token: Any, started: float, exc_type: type[BaseException] | None
    ) -> None:
        error_type = None
        try:
            otel_context.detach(token)
        finally:
            if exc_type is not None:
                error_type = (
                    exc_type.__qualname__
                    if exc_type.__module__ == "builtins"
                    else f"{exc_type.__module__}.{exc_type.__qualname__}"
                )
                span.set_attribute(sc.ERROR_TYPE, error_type)
                span.set_status(Status(StatusCode.ERROR, exc_type.__qualname__))
            span.end()
            record_agent_run(
                now() - started,
                agent_name=self.agent_name,
                error_type=error_type,
                context=trace.set_span_in_context(span),
            )

    async def __aenter__(self) -> RunScope:
        return self.__enter__()

    async def __aexit__(self, *exc_info: object) -> None:
        self.__exit__(*exc_info)

    def __repr__(self) -> str:
        return f"RunScope(run_id={self.run_id!r}, observed={len(self.ledger)})"


def _reaches(ledger: Ledger | None, target: Ledger) -> bool:
    """Whether ``target`` is ``ledger`` or one of its parents (a parent link must never form a cycle)."""
    while ledger is not None:
        if ledger is target:
            return True
        ledger = ledger.parent
    return False


def run(
    inputs: Mapping[str, Any] | None = None,
    run_id: str | None = None,
    *,
    ledger_max_entries: int | None = None,
    agent_name: str | None = None,
    root_span: bool = True,
    tracer_provider: trace.TracerProvider | None = None,
    contract: Any = None,
    approver: Any = None,
    approval_timeout: float | None = None,
    request: str | None = None,
    provider_name: str | None = None,
    conversation_id: str | None = None,
) -> RunScope:
    """Scope an agent run: declared ``inputs`` count as observed (source tool ``input``).

    ``request`` is the user's request text: a value written in it counts as observed (source field
    ``request``, projection ``in_text`` when it sits inside the sentence).

    ``run_id`` becomes ``agent.run.id`` on every tool span of the run (a random id if omitted).
    ``ledger_max_entries`` overrides the configured ledger bound for this run. With no span active,
    the run opens an ``invoke_agent {agent_name}`` span on ``tracer_provider`` (the global provider
    if omitted, as in ``@op.tool``) so the run is one trace; ``root_span=False`` turns that off.
    ``contract`` (a contract file, the one the gate reads) is judged before each tool call of this
    run, in place of the one given to ``op.configure`` (:mod:`.guard`).
    ``approver`` and ``approval_timeout`` override ``op.configure``'s for this run's calls that need a
    person's approval (docs/guard.md).
    ``provider_name`` (the model's provider: ``openai``, ``gcp.gemini``, …) and ``conversation_id``
    (the framework's session or thread id) go on the ``invoke_agent`` span as ``gen_ai.provider.name``
    and ``gen_ai.conversation.id``, as the GenAI conventions ask of an agent span.
    """
    return RunScope(
        inputs,
        run_id,
        ledger_max_entries=ledger_max_entries,
        agent_name=agent_name,
        root_span=root_span,
        tracer_provider=tracer_provider,
        contract=contract,
        approver=approver,
        approval_timeout=approval_timeout,
        request=request,
        provider_name=provider_name,
        conversation_id=conversation_id,
    )


__all__ = ["RunScope", "run"]
