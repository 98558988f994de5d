"""``@op.tool``: an ``execute_tool {name}`` span per call, argument provenance, and fail-closed budgets.

Each call of a decorated function is one :class:`.lifecycle.ToolCall` — bind → classify → decide →
start → attach → run → remember → finish, the lifecycle every gate drives (see that module). This
module holds what is particular to Python functions: checking the options against the function's
parameters at decoration (:mod:`.binding`), naming a call's arguments by them, and driving the
lifecycle for each call shape — functions and methods, ``async def``, generators and async
generators (whose span covers the whole iteration, each yielded item remembered under its index).
A blocked call raises before the body runs; for a generator, before the generator exists. A call that
needs a person's approval asks before that too: a sync shape waits for the answer in the calling
thread, ``async def`` awaits it; an async generator asks at its first step (a call cannot await), still
before the function's own generator exists.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import wrapt
from opentelemetry import trace

from ..errors import ConfigurationError
from .call.approval import needs_approval_check
from .call.binding import ArgumentBinder, check_option_names, refuse_if_changed
from .call.budget import Budget
from .call.frameworks import refuse_framework_tool
from .call.lifecycle import ToolCall
from .call.policy import Policy, as_policies, policy_checks
from .call.toolspec import ToolSpec

_log = logging.getLogger("otel_provenance")


def tool(
    func: Callable | None = None,
    *,
    name: str | None = None,
    side_effect: str = "none",
    data_domain: str | None = None,
    budget: Budget | None = None,
    invented: Iterable[str] = (),
    idempotency_key: str | None = None,
    tracer_provider: trace.TracerProvider | None = None,
    blocked_error: type[Exception] | None = None,
    needs_approval: bool | Callable[[Mapping[str, Any]], bool] = False,
    policy: Policy | Sequence[Policy] | None = None,
    trust: str = "values",
    trusted_fields: Iterable[str] = (),
    trusted_records: Callable[[Any], Any] | None = None,
    untrusted_fields: Iterable[str] = (),
    egress: Iterable[str] = (),
) -> Any:
    """Decorate a tool: ``@op.tool`` or ``@op.tool(side_effect="write", budget=op.Budget(...))``.

    ``invented`` names arguments through which the tool may receive a new, model-proposed value (a new
    file name); they are tagged ``invented``, counted against ``max_invented`` and never matched.
    ``idempotency_key`` names the argument whose non-empty presence sets ``agent.idempotency.present``.
    ``blocked_error`` is the exception class a blocked call raises instead of :class:`ProvenanceError`
    (built from the same message, chained to it): the tool-error type of an agent framework, such as
    LangChain's ``ToolException`` or PydanticAI's ``ToolFailed``, so the model sees the refusal.
    ``needs_approval`` (``True``, or a function of the call's arguments by name that returns whether
    this call needs it) makes a call ask the approver first (``op.configure(approver=...)``); only its
    explicit ``True`` lets the call run, and a denial is a block like any other (docs/guard.md).
    ``policy`` is an :class:`~.policy.Policy` (or a list of them) on the arguments' values, judged
    before each call; the arguments it names must be parameters.
    ``trust`` says who wrote the tool's results (docs/provenance.md, "Source trust"): ``"values"``
    (the default) — the system stores them, but anyone may have written their texts: whole values
    are evidence, the words inside texts are not; ``"trusted"`` — the user or the system wrote every
    word; ``"untrusted"`` — content someone outside wrote (e-mail bodies, web pages, shared documents,
    another agent's free text). A later argument found only where an outsider may have written it is
    ``untrusted``, which a write tool does not accept by default (``max_untrusted``).
    ``trusted_fields`` names the fields of an untrusted tool's results the system sets rather than
    the content's author (``{"id", "date"}``), and ``trusted_records`` is a predicate over each record
    (each item of a list result, or the result) that the user or the system wrote: those count as
    trusted. ``untrusted_fields`` names the fields an outsider writes in the records of a
    ``values`` or ``trusted`` tool (a payment's ``subject``). ``egress`` names the arguments through
    which a call sends data out of the process — the URL a read fetches, the address it queries:
    they are judged like a write's destination whatever the side effect (assumed or untrusted:
    blocked).
    """
    options = dict(
        name=name,
        side_effect=side_effect,
        data_domain=data_domain,
        budget=budget,
        invented=invented,
        idempotency_key=idempotency_key,
        tracer_provider=tracer_provider,
        blocked_error=blocked_error,
        needs_approval=needs_approval,
        policy=policy,
        trust=trust,
        trusted_fields=trusted_fields,
        trusted_records=trusted_records,
        untrusted_fields=untrusted_fields,
        egress=egress,
    )
    if func is None:
        if name is not None:  # the tool's name is known: check the options now
            _DecoratedTool(None, **options)
        # otherwise at ``def``, right below, where the function's name and parameters are known
        return lambda f: _DecoratedTool(f, **options).wrap(f)
    refuse_framework_tool(func)  # a framework's tool object: say where @op.tool goes
    if not callable(func) and not isinstance(func, classmethod | staticmethod):
        raise ConfigurationError("op.tool: expected a function; use op.tool(...) with keyword arguments")
    return _DecoratedTool(func, **options).wrap(func)


class _DecoratedTool:
    """One decorated function: its :class:`ToolSpec`, how its calls' arguments are named, and the
    driver of the lifecycle for its call shape."""

    def __init__(
        self,
        func: Any,
        *,
        name: str | None,
        side_effect: str,
        data_domain: str | None,
        budget: Budget | None,
        invented: Iterable[str],
        idempotency_key: str | None,
        tracer_provider: trace.TracerProvider | None,
        blocked_error: type[Exception] | None = None,
        needs_approval: bool | Callable[[Mapping[str, Any]], bool] = False,
        policy: Policy | Sequence[Policy] | None = None,
        trust: str = "values",
        trusted_fields: Iterable[str] = (),
        trusted_records: Callable[[Any], Any] | None = None,
        untrusted_fields: Iterable[str] = (),
        egress: Iterable[str] = (),
    ) -> None:
        refuse_framework_tool(func)
        inner = func.__func__ if isinstance(func, classmethod | staticmethod) else func
        tool_name = name if name is not None else getattr(inner, "__name__", None)
        approval = needs_approval_check(needs_approval, f"op.tool({tool_name})")
        policies = as_policies(policy, "op.tool(policy=...)")
        self.spec = ToolSpec(
            tool_name,
            side_effect=side_effect,
            data_domain=data_domain,
            budget=budget,
            invented=invented,
            idempotency_key=idempotency_key,
            tracer_provider=tracer_provider,
            checks=(*policy_checks(policies), *((approval,) if approval is not None else ())),
            trust=trust,
            trusted_fields=trusted_fields,
            trusted_records=trusted_records,
            untrusted_fields=untrusted_fields,
            egress=egress,
        )
        if blocked_error is not None and not (
            isinstance(blocked_error, type) and issubclass(blocked_error, Exception)
        ):
            raise ConfigurationError(f"op.tool({self.spec.name}): blocked_error must be an exception class")
        if inner is not None:
            check_option_names(
                inner,
                self.spec.name,
                invented,
                idempotency_key,
                budget,
                policy_arguments=frozenset().union(*(p.argument_names for p in policies)),
                egress=self.spec.egress,
            )
        self.blocked_error = blocked_error
        if side_effect == "none" and budget is None and not self.spec.checks and inner is not None:
            _log.info(  # a bare @op.tool: say once, where it is written, what it does not do
                "op.tool(%s): no side effect and no budget declared: its arguments are tagged, never "
                "blocked (side_effect='write', or budget=op.Budget(enforce=True), blocks)",
                self.spec.name,
            )
        self.binder = ArgumentBinder()
        self.flavour = (
            "asyncgen"
            if inspect.isasyncgenfunction(inner)
            else "async"
            if inspect.iscoroutinefunction(inner)
            else "gen"
            if inspect.isgeneratorfunction(inner)
            else "sync"
        )

    def wrap(self, func: Any) -> Any:
        tool = self

        if self.flavour == "async":

            async def call(wrapped, instance, args, kwargs):
                return await tool.call_async(wrapped, args, kwargs)
        elif self.flavour == "gen":

            def call(wrapped, instance, args, kwargs):
                return tool.call_generator(wrapped, args, kwargs)
        elif self.flavour == "asyncgen":

            def call(wrapped, instance, args, kwargs):
                return tool.call_async_generator(wrapped, args, kwargs)
        else:

            def call(wrapped, instance, args, kwargs):
                return tool.call_sync(wrapped, args, kwargs)

        return wrapt.FunctionWrapper(func, call)

    # -- bind → classify → decide → ask, and a refusal -----------------------------------------------
    def begin(self, wrapped: Callable, args: tuple, kwargs: dict, *, ask: bool = True) -> ToolCall:
        """The call, decided and (unless ``ask=False``) asked; a blocked one is refused here and raises
        (``blocked_error`` if given)."""
        call = ToolCall(self.spec, lambda: self.binder.bind(wrapped, args, kwargs))
        if ask:
            call.ask()
        self.refuse_if_blocked(call)
        return call

    async def begin_async(self, wrapped: Callable, args: tuple, kwargs: dict) -> ToolCall:
        call = ToolCall(self.spec, lambda: self.binder.bind(wrapped, args, kwargs))
        await call.ask_async()
        self.refuse_if_blocked(call)
        return call

    def refuse_if_blocked(self, call: ToolCall) -> None:
        if call.blocked:
            # never ``error = call.refuse(); raise error``: the traceback holds this frame, a local
            # naming the error it is raised in would make a cycle (error → traceback → frame →
            # error), and each refused call's span, events and ToolCall garbage that only the
            # cyclic collector frees — most of a blocked call's cost (#45)
            if self.blocked_error is None:
                raise call.refuse()
            error = call.refuse()  # not the error raised: its traceback never holds this frame
            raise self.blocked_error(str(error)) from error

    # -- the four call shapes ---------------------------------------------------------------------------
    def call_sync(self, wrapped: Callable, args: tuple, kwargs: dict) -> Any:
        call = self.begin(wrapped, args, kwargs)
        call.start()
        result = call.run(wrapped, *args, **kwargs)
        if result is not None:
            call.remember(result)
        call.finish()
        return result

    async def call_async(self, wrapped: Callable, args: tuple, kwargs: dict) -> Any:
        call = await self.begin_async(wrapped, args, kwargs)
        call.start()
        result = await call.run_async(wrapped, *args, **kwargs)
        if result is not None:
            call.remember(result)
        call.finish()
        return result

    # A generator's body runs at its first step, not at the call: the arguments are checked again
    # there (``refuse_if_changed``) and the generator is made only then, from what was checked.
    def call_generator(self, wrapped: Callable, args: tuple, kwargs: dict) -> Any:
        call = self.begin(wrapped, args, kwargs)  # a blocked call raises before the generator exists
        return _drive(lambda: self.body(call, wrapped, args, kwargs), call)

    def call_async_generator(self, wrapped: Callable, args: tuple, kwargs: dict) -> Any:
        call = self.begin(wrapped, args, kwargs, ask=False)  # the loop must not wait: asked at step one
        return _drive_async(lambda: self.body(call, wrapped, args, kwargs), call, self.refuse_if_blocked)

    def body(self, call: ToolCall, wrapped: Callable, args: tuple, kwargs: dict) -> Any:
        """The generator, made once the arguments are known unchanged since the decision (else the
        call is refused here, before its span opens and before the body runs)."""
        refuse_if_changed(call, self.binder, wrapped, args, kwargs)
        self.refuse_if_blocked(call)
        call.start()
        try:
            return wrapped(*args, **kwargs)
        except BaseException as exc:  # a call that cannot even make its generator (a wrong argument)
            call.finish_error(exc)
            raise


def _drive(make: Callable[[], Any], call: ToolCall) -> Any:
    """Run the generator ``make`` makes (and starts the call for) step by step with the span current;
    the span covers the whole iteration."""
    gen = make()
    span = call.span
    index = 0
    to_send: Any = None
    to_throw: BaseException | None = None
    try:
        while True:
            token = call.attach()
            try:
                item = gen.throw(to_throw) if to_throw is not None else gen.send(to_send)
            except StopIteration as stop:
                call.finish()
                return stop.value
            except BaseException as exc:
                call.finish_error(exc)
                raise
            finally:
                call.detach(token)
            call.remember(item, (index,))
            index += 1
            to_send, to_throw = None, None
            try:
                to_send = yield item
            except GeneratorExit:
                gen.close()
                call.finish()
                raise
            except BaseException as exc:
                to_throw = exc
    finally:
        if span.is_recording():  # abandoned mid-way by an unexpected path: still end the span
            span.end()


async def _drive_async(make: Callable[[], Any], call: ToolCall, refuse_if_blocked: Callable) -> Any:
    """:func:`_drive` over ``asend``/``athrow``; the generator is made once the approver (if the call
    asks one) has answered and a denial raised."""
    if call.decision.asks:
        await call.ask_async()
        refuse_if_blocked(call)
    agen = make()
    span = call.span
    index = 0
    to_send: Any = None
    to_throw: BaseException | None = None
    try:
        while True:
            token = call.attach()
            try:
                if to_throw is not None:
                    item = await agen.athrow(to_throw)
                else:
                    item = await agen.asend(to_send)
            except StopAsyncIteration:
                call.finish()
                return
            except BaseException as exc:
                call.finish_error(exc)
                raise
            finally:
                call.detach(token)
            call.remember(item, (index,))
            index += 1
            to_send, to_throw = None, None
            try:
                to_send = yield item
            except GeneratorExit:
                await agen.aclose()
                call.finish()
                raise
            except BaseException as exc:
                to_throw = exc
    finally:
        if span.is_recording():
            span.end()


__all__ = ["tool"]
