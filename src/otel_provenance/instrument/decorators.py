"""``@op.tool``: an ``execute_tool {name}`` span per call, argument provenance, and fail-closed budgets.

Order of one call: bind the passed arguments (defaults filled in by the code are not classified) →
classify them against the current run's ledger → check the budget → open the span with every
attribute known before the call → if blocked, end the span (status ERROR, ``agent.tool.status=blocked``)
and raise :class:`ProvenanceError` *before the body runs* → run the body with the span current →
remember the result (or each yielded item) in the ledger under the span's id → end the span.

What never reaches the span: argument and result values, exception messages and stack traces (a
stack trace can quote a literal value). An exception from the body is recorded by its type only.

Span attributes: per-argument attributes go first and are capped to fit the tracer's attribute limit;
essential attributes (``gen_ai.operation.name``, ``gen_ai.tool.name``, budgets, status) go last, so the
SDK's oldest-first eviction can only drop per-argument detail, and they are re-set at the end if
anything was evicted meanwhile.
"""

from __future__ import annotations

import functools
import inspect
import logging
import random
import types
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import wrapt
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from .. import __version__
from .. import semconv as sc
from ..errors import ConfigurationError, ProvenanceError
from . import metrics as _metrics
from .adopt import adopt_outer_tool_span
from .budget import DEFAULT_ALLOW, RULE_FAULT, Budget
from .classify import classify_arguments
from .frameworks import without_framework_context
from .ledger import safe_names
from .runscope import current_run, explicit_retry_number
from .settings import get_settings

_log = logging.getLogger("otel_provenance")
_SCOPE = "otel_provenance"
_RESERVED_ATTRIBUTES = 4  # room kept for attributes set after the call (status, error.type, ...)
_DEFAULT_BUDGET = Budget()
_NO_ATTRIBUTES: Mapping[str, Any] = types.MappingProxyType({})


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
) -> Any:
    """Decorate a tool: ``@op.tool`` or ``@op.tool(side_effect="write", budget=op.Budget(...))``.

    ``invented`` names arguments through which the tool may receive a new, model-proposed value (a new
    file name); they are tagged ``invented``, counted against ``max_invented`` and never matched.
    ``idempotency_key`` names the argument whose non-empty presence sets ``agent.idempotency.present``.
    ``blocked_error`` is the exception class a blocked call raises instead of :class:`ProvenanceError`
    (built from the same message, chained to it): the tool-error type of an agent framework, such as
    LangChain's ``ToolException`` or PydanticAI's ``ToolFailed``, so the model sees the refusal.
    """
    spec_args = dict(
        name=name,
        side_effect=side_effect,
        data_domain=data_domain,
        budget=budget,
        invented=invented,
        idempotency_key=idempotency_key,
        tracer_provider=tracer_provider,
        blocked_error=blocked_error,
    )
    if func is None:
        if name is not None:  # the tool's name is known: check the options now
            _ToolSpec(None, **spec_args)
        # otherwise at ``def``, right below, where the function's name and parameters are known
        return lambda f: _ToolSpec(f, **spec_args).wrap(f)
    if not callable(func) and not isinstance(func, classmethod | staticmethod):
        raise ConfigurationError("op.tool: expected a function; use op.tool(...) with keyword arguments")
    return _ToolSpec(func, **spec_args).wrap(func)


class _Call:
    """Everything decided before a call: attributes, block decision, ledger to remember into."""

    __slots__ = (
        "arguments",
        "attributes",
        "blocked",
        "classification",
        "essential",
        "ledger",
        "started",
        "unsourced",
        "violations",
    )

    def __init__(
        self,
        arguments,
        attributes,
        essential,
        ledger,
        violations,
        blocked,
        unsourced=None,
        classification=None,
    ) -> None:
        self.classification = classification  # for the metrics (#19); None if classifying failed
        self.started = 0.0
        self.arguments = arguments
        self.unsourced = unsourced  # assumed/invented arguments: their echoes in the result are not evidence
        self.attributes = attributes
        self.essential = essential
        self.ledger = ledger
        self.violations = violations
        self.blocked = blocked


class _ToolSpec:
    # Attributes an integration adds to every span of this tool (the MCP wrapper's ``mcp.*`` keys).
    extra_attributes: Mapping[str, Any] = _NO_ATTRIBUTES

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
    ) -> None:
        inner = func.__func__ if isinstance(func, classmethod | staticmethod) else func
        self.name = name if name is not None else getattr(inner, "__name__", None)
        if not isinstance(self.name, str) or not self.name:
            raise ConfigurationError("op.tool(name=...): expected a non-empty string")
        if side_effect not in sc.SIDE_EFFECTS:
            raise ConfigurationError(
                f"op.tool({self.name}): side_effect={side_effect!r} is not one of "
                f"{', '.join(map(repr, sc.SIDE_EFFECTS))}"
            )
        if data_domain is not None and not isinstance(data_domain, str):
            raise ConfigurationError(f"op.tool({self.name}): data_domain must be a string")
        if budget is not None and not isinstance(budget, Budget):
            raise ConfigurationError(f"op.tool({self.name}): budget must be an op.Budget")
        if isinstance(invented, str) or not all(isinstance(n, str) for n in (invented or ())):
            raise ConfigurationError(f"op.tool({self.name}): invented must be a collection of argument names")
        if idempotency_key is not None and not isinstance(idempotency_key, str):
            raise ConfigurationError(f"op.tool({self.name}): idempotency_key must be an argument name")
        if blocked_error is not None and not (
            isinstance(blocked_error, type) and issubclass(blocked_error, Exception)
        ):
            raise ConfigurationError(f"op.tool({self.name}): blocked_error must be an exception class")
        if inner is not None:
            _check_argument_names(inner, self.name, invented, idempotency_key, budget)
        self.side_effect = side_effect
        self.blocked_error = blocked_error
        self.budget = budget or _DEFAULT_BUDGET
        self.invented = frozenset(invented or ())
        self.idempotency_key = idempotency_key
        self.tracer_provider = tracer_provider
        self.span_name = sc.TOOL_SPAN_PREFIX + self.name
        self._tracer: trace.Tracer | None = None
        self._room: tuple[Any, int | None] = (None, None)  # (tracer, its attribute limit), per tracer
        # attributes every call of this tool carries, in their place in the essentials (after the call id)
        self._constant: dict[str, Any] = {sc.GEN_AI_TOOL_TYPE: "function", sc.SIDE_EFFECT: side_effect}
        if data_domain is not None:
            self._constant[sc.DATA_DOMAIN] = data_domain
        self._signatures: dict[Any, tuple[inspect.Signature, tuple[str, ...] | None]] = {}
        self.flavour = (
            "asyncgen"
            if inspect.isasyncgenfunction(inner)
            else "async"
            if inspect.iscoroutinefunction(inner)
            else "gen"
            if inspect.isgeneratorfunction(inner)
            else "sync"
        )

    # -- wrapping ---------------------------------------------------------------------------------------
    def wrap(self, func: Any) -> Any:
        spec = self

        if self.flavour == "async":

            async def call(wrapped, instance, args, kwargs):
                return await spec.call_async(wrapped, args, kwargs)
        elif self.flavour == "gen":

            def call(wrapped, instance, args, kwargs):
                return spec.call_generator(wrapped, args, kwargs)
        elif self.flavour == "asyncgen":

            def call(wrapped, instance, args, kwargs):
                return spec.call_async_generator(wrapped, args, kwargs)
        else:

            def call(wrapped, instance, args, kwargs):
                return spec.call_sync(wrapped, args, kwargs)

        return wrapt.FunctionWrapper(func, call)

    @property
    def tracer(self) -> trace.Tracer:
        tracer = self._tracer
        if tracer is None:
            provider = self.tracer_provider
            if provider is not None:
                tracer = self._tracer = provider.get_tracer(_SCOPE, __version__)
            else:
                tracer = trace.get_tracer(_SCOPE, __version__)  # the global provider, resolved lazily
                if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
                    self._tracer = tracer
        return tracer

    # -- the four call shapes ---------------------------------------------------------------------------
    def call_sync(self, wrapped: Callable, args: tuple, kwargs: dict) -> Any:
        call = self.prepare(wrapped, args, kwargs)
        span = self.start(call)
        token = otel_context.attach(trace.set_span_in_context(span))
        try:
            result = wrapped(*args, **kwargs)
        except BaseException as exc:
            self.finish_error(span, call, exc)
            raise
        finally:
            otel_context.detach(token)
        self.finish_ok(span, call, result)
        return result

    async def call_async(self, wrapped: Callable, args: tuple, kwargs: dict) -> Any:
        call = self.prepare(wrapped, args, kwargs)
        span = self.start(call)
        token = otel_context.attach(trace.set_span_in_context(span))
        try:
            result = await wrapped(*args, **kwargs)
        except BaseException as exc:
            self.finish_error(span, call, exc)
            raise
        finally:
            otel_context.detach(token)
        self.finish_ok(span, call, result)
        return result

    def call_generator(self, wrapped: Callable, args: tuple, kwargs: dict) -> Any:
        call = self.prepare(wrapped, args, kwargs)
        if call.blocked:
            self.start(call)  # ends the span and raises before the generator exists
        return self._drive(wrapped(*args, **kwargs), call)

    def call_async_generator(self, wrapped: Callable, args: tuple, kwargs: dict) -> Any:
        call = self.prepare(wrapped, args, kwargs)
        if call.blocked:
            self.start(call)
        return self._drive_async(wrapped(*args, **kwargs), call)

    def _drive(self, gen: Any, call: _Call) -> Any:
        """Run ``gen`` step by step with the span current; the span covers the whole iteration."""
        span = self.start(call)
        span_id = _span_id(span)
        index = 0
        to_send: Any = None
        to_throw: BaseException | None = None
        try:
            while True:
                token = otel_context.attach(trace.set_span_in_context(span))
                try:
                    item = gen.throw(to_throw) if to_throw is not None else gen.send(to_send)
                except StopIteration as stop:
                    self.finish_ok(span, call, stop.value, remember=False)
                    return stop.value
                except BaseException as exc:
                    self.finish_error(span, call, exc)
                    raise
                finally:
                    otel_context.detach(token)
                self.remember(call, item, span_id, (index,))
                index += 1
                to_send, to_throw = None, None
                try:
                    to_send = yield item
                except GeneratorExit:
                    gen.close()
                    self.finish_ok(span, call, None, remember=False)
                    raise
                except BaseException as exc:
                    to_throw = exc
        finally:
            if span.is_recording():  # abandoned mid-way by an unexpected path: still end the span
                span.end()

    async def _drive_async(self, agen: Any, call: _Call) -> Any:
        span = self.start(call)
        span_id = _span_id(span)
        index = 0
        to_send: Any = None
        to_throw: BaseException | None = None
        try:
            while True:
                token = otel_context.attach(trace.set_span_in_context(span))
                try:
                    if to_throw is not None:
                        item = await agen.athrow(to_throw)
                    else:
                        item = await agen.asend(to_send)
                except StopAsyncIteration:
                    self.finish_ok(span, call, None, remember=False)
                    return
                except BaseException as exc:
                    self.finish_error(span, call, exc)
                    raise
                finally:
                    otel_context.detach(token)
                self.remember(call, item, span_id, (index,))
                index += 1
                to_send, to_throw = None, None
                try:
                    to_send = yield item
                except GeneratorExit:
                    await agen.aclose()
                    self.finish_ok(span, call, None, remember=False)
                    raise
                except BaseException as exc:
                    to_throw = exc
        finally:
            if span.is_recording():
                span.end()

    # -- before the call --------------------------------------------------------------------------------
    def prepare(self, wrapped: Callable, args: tuple, kwargs: dict) -> _Call:
        return self.decide(lambda: without_framework_context(self.bind(wrapped, args, kwargs)))

    def decide(self, arguments_of_call: Callable[[], dict[str, Any]]) -> _Call:
        """Classify and budget one call's arguments (named by ``arguments_of_call``) before it runs.

        The shared entry point of ``@op.tool`` and the MCP session wrapper: a failure to name the
        arguments counts as a provenance fault like any other, so it is called inside the guard.
        """
        scope = current_run()
        ledger = scope.ledger if scope is not None else None
        essential: dict[str, Any] = {sc.GEN_AI_TOOL_CALL_ID: f"call_{random.getrandbits(64):016x}"}
        essential.update(self._constant)
        if scope is not None:
            essential[sc.RUN_ID] = scope.run_id
        arguments: dict[str, Any] = {}
        classification = None
        try:
            settings = get_settings()
            arguments = arguments_of_call()
            classification = classify_arguments(
                self.name, arguments, ledger, invented=self.invented, settings=settings
            )
            verdict = self.budget.check(classification, self.side_effect, enforce_globally=settings.enforce)
            retry = explicit_retry_number()
            if retry is None:
                retry = (
                    ledger.next_attempt(self.name, classification.signature()) if ledger is not None else 0
                )
            key = self.idempotency_key
            essential[sc.RETRY_NUMBER] = retry
            essential[sc.IDEMPOTENCY_PRESENT] = key is not None and _present(arguments.get(key))
            essential.update(verdict.attributes())
            per_arg = classification.attributes(self._per_argument_room(len(essential)))
            violations, blocked = verdict.violations, verdict.blocked
            unsourced = classification.unsourced(arguments)
        except Exception as exc:  # the provenance machinery failed: block writes, record it elsewhere
            violations = (f"{RULE_FAULT}:{type(exc).__name__}",)
            blocked = self.side_effect == "write"
            per_arg = {}
            unsourced = arguments
            essential[sc.VIOLATIONS] = list(violations)
            essential.setdefault(sc.RETRY_NUMBER, 0)
        if violations and not blocked:
            _log.warning(
                "%s: provenance budget exceeded, advisory only (%s)", self.name, ", ".join(violations)
            )
        essential.update(self.extra_attributes)
        essential[sc.GEN_AI_TOOL_NAME] = self.name
        essential[sc.GEN_AI_OPERATION_NAME] = sc.EXECUTE_TOOL
        per_arg.update(essential)  # essentials last: the SDK evicts oldest keys first
        return _Call(arguments, per_arg, essential, ledger, violations, blocked, unsourced, classification)

    def bind(self, wrapped: Callable, args: tuple, kwargs: dict) -> dict[str, Any]:
        """Passed arguments by parameter name; ``*args`` as ``name.0``..., ``**kwargs`` by their keys."""
        # ``type``, not ``isinstance``: wrapt's partial proxy for ``Class.method(instance, ...)`` claims
        # the function's class, and as a key of its own (one per call, holding ``instance``) it would
        # fill the cache with dead calls. Keyed on the function it wraps, it is stable.
        if type(wrapped) is types.MethodType:
            cache_key: Any = (wrapped.__func__, 1)
        elif type(wrapped) is types.FunctionType:
            cache_key = (wrapped, 0)
        else:
            cache_key = (getattr(wrapped, "__wrapped__", wrapped), 2)
        cached = self._signatures.get(cache_key)
        if cached is None:
            try:
                signature = _signature(wrapped)
            except (TypeError, ValueError):  # no introspectable signature (some builtins, C extensions)
                return {f"args.{i}": v for i, v in enumerate(args)} | dict(kwargs)
            simple = all(
                p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) for p in signature.parameters.values()
            )
            positional = tuple(
                p.name for p in signature.parameters.values() if p.kind is p.POSITIONAL_OR_KEYWORD
            )
            cached = (signature, positional if simple else None)
            if len(self._signatures) < 64:
                self._signatures[cache_key] = cached
        signature, positional = cached
        if positional is not None and len(args) <= len(positional):
            bound = dict(zip(positional, args, strict=False))
            parameters = signature.parameters
            if all(k in parameters and k not in bound for k in kwargs):  # else: a call that cannot bind
                bound.update(kwargs)
                return bound
        try:
            arguments = signature.bind(*args, **kwargs).arguments
        except TypeError:  # the body will raise the real TypeError; classify what we can name
            return {f"args.{i}": v for i, v in enumerate(args)} | safe_names(kwargs, "kwargs")
        out: dict[str, Any] = {}
        for pname, value in arguments.items():
            kind = signature.parameters[pname].kind
            if kind is inspect.Parameter.VAR_POSITIONAL:
                out.update((f"{pname}.{i}", v) for i, v in enumerate(value))
            elif kind is inspect.Parameter.VAR_KEYWORD:  # names chosen by the caller: maybe data
                out.update(safe_names(value, pname))
            else:
                out[pname] = value
        return out

    def _per_argument_room(self, essential_count: int) -> int | None:
        tracer = self.tracer
        if isinstance(tracer, trace.ProxyTracer):  # the API's proxy: the tracer it resolves to now
            tracer = tracer._tracer
        cached_tracer, limit = self._room
        if cached_tracer is not tracer:  # a tracer's span limits are fixed when it is made
            limit = _attribute_limit(tracer)
            self._room = (tracer, limit)
        if limit is None:
            return None
        return max(0, limit - essential_count - 2 - _RESERVED_ATTRIBUTES)

    # -- the span ---------------------------------------------------------------------------------------
    def start(self, call: _Call) -> Span:
        """Open the span (or adopt a framework's span for this call, see :mod:`.adopt`); a blocked
        call's span is ended here and ProvenanceError raised."""
        span: Any = adopt_outer_tool_span(self.name, call.attributes) or self.tracer.start_span(
            self.span_name, kind=SpanKind.INTERNAL, attributes=call.attributes
        )
        call.started = _metrics.now()
        if call.blocked:
            error = ProvenanceError(self.name, call.violations, _no_run_message(self.name, call))
            self.finish_error(span, call, error, status=sc.TOOL_STATUS_BLOCKED)
            if self.blocked_error is not None:
                raise self.blocked_error(str(error)) from error
            raise error
        return span

    def remember(self, call: _Call, result: Any, span_id: str, prefix: tuple = ()) -> None:
        if call.ledger is None:
            return
        try:
            call.ledger.remember(
                self.name,
                result,
                span_id,
                field_prefix=prefix,
                call_arguments=call.arguments,
                unsourced=call.unsourced,
            )
        except Exception as exc:  # remembering is best effort; the tool already succeeded
            _log.warning("%s: could not remember the result (%s)", self.name, type(exc).__name__)

    def finish_ok(self, span: Span, call: _Call, result: Any, *, remember: bool = True) -> None:
        if remember and result is not None:
            self.remember(call, result, _span_id(span), ())
        span.set_attribute(sc.TOOL_STATUS, sc.TOOL_STATUS_OK)
        _restore_essentials(span, call)
        span.end()
        self.record_metrics(span, call, sc.TOOL_STATUS_OK, None)

    def finish_error(
        self,
        span: Span,
        call: _Call,
        exc: BaseException | None,
        *,
        status: str = sc.TOOL_STATUS_ERROR,
        error_type: str | None = None,
    ) -> None:
        """Record the exception by type only: no message, no stack trace, no locals.

        Without an exception (a tool that reported its own failure) ``error_type`` names the failure.
        """
        if exc is not None:
            error_type = error_type or _error_type(exc)
            span.add_event("exception", {"exception.type": error_type})
        error_type = error_type or "error"
        span.set_attributes({sc.TOOL_STATUS: status, sc.ERROR_TYPE: error_type})
        span.set_status(Status(StatusCode.ERROR, type(exc).__qualname__ if exc is not None else error_type))
        _restore_essentials(span, call)
        span.end()
        self.record_metrics(span, call, status, error_type)

    def record_metrics(self, span: Span, call: _Call, status: str, error_type: str | None) -> None:
        """The call's counters and duration (:mod:`.metrics`); a no-op without a MeterProvider."""
        classification = call.classification
        _metrics.record_tool_call(
            self.name,
            status=status,
            side_effect=self.side_effect,
            kinds=(a.kind for a in classification.arguments) if classification is not None else (),
            violations=call.violations,
            retry=call.essential.get(sc.RETRY_NUMBER, 0),
            ledger_full=classification is not None and classification.ledger_full,
            duration=_metrics.now() - call.started,
            error_type=error_type,
            context=trace.set_span_in_context(span),
        )


def _check_argument_names(
    func: Any, tool: str, invented: Iterable[str], idempotency_key: str | None, budget: Budget | None
) -> None:
    """Every argument name an option refers to is a parameter of ``func`` (decoration-time check).

    A ``**kwargs`` parameter accepts any name; ``*args`` accepts ``args.0``, ``args.1``, ... . The
    default ``Budget.allow`` list is generic and not checked; an explicit one is.
    """
    try:
        parameters = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):  # no introspectable signature: nothing to check against
        return
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return
    names = {p.name for p in parameters if p.kind is not p.VAR_POSITIONAL}
    star = next((p.name for p in parameters if p.kind is p.VAR_POSITIONAL), None)

    def known(arg: str) -> bool:
        if arg in names:
            return True
        head, _, index = arg.partition(".")
        return star is not None and head == star and index.isdigit()

    listed = ", ".join(sorted(names)) or "none"
    options: list[tuple[str, Iterable[str]]] = [("invented", invented or ())]
    if idempotency_key is not None:
        options.append(("idempotency_key", (idempotency_key,)))
    if budget is not None and budget.allow is not DEFAULT_ALLOW:
        options.append(("budget allow", budget.allow))  # type: ignore[arg-type]
    for option, values in options:
        for arg in sorted(values):
            if not known(arg):
                raise ConfigurationError(
                    f"op.tool({tool}): {option} names {arg!r}, which is not a parameter of "
                    f"{getattr(func, '__name__', tool)} (parameters: {listed})"
                )


def _no_run_message(tool: str, call: _Call) -> str | None:
    """A blocked call outside any run: say so, and how to open one (no ledger means nothing observed)."""
    if call.ledger is not None:
        return None
    return (
        f"{tool}: blocked by provenance budget ({', '.join(call.violations)}): no op.run is active, so "
        "no argument can have been observed; call tools inside `with op.run(inputs={...}):` "
        "(or `async with`), declaring the task's inputs there"
    )


def _signature(wrapped: Any) -> inspect.Signature:
    """The parameters a call passes. wrapt hands ``Class.method(instance, ...)`` over as a partial
    proxy binding exactly the instance; its signature excludes ``self`` under wrapt 2, but wrapt 1.x
    reports the function's own, so drop the bound first parameter the same way for both."""
    if isinstance(wrapped, wrapt.PartialCallableObjectProxy):
        return inspect.signature(functools.partial(wrapped.__wrapped__, None))
    return inspect.signature(wrapped)


def _restore_essentials(span: Span, call: _Call) -> None:
    """If the body added enough attributes to evict some, put the essential ones back (newest)."""
    if getattr(span, "dropped_attributes", 0):
        span.set_attributes(call.essential)


def _attribute_limit(tracer: Any) -> int | None:
    """The SDK tracer's attribute limit (None: unlimited; the SDK has refused a negative one). Another
    tracer (the API's no-op one, which records nothing) gets the SDK's default."""
    limits = getattr(tracer, "_span_limits", None)
    return 128 if limits is None else limits.max_span_attributes


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


__all__ = ["tool"]
