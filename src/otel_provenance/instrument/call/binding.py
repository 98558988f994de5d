"""Naming a Python call's arguments by its function's parameters: step 1 (bind) of ``@op.tool``.

Only the arguments the caller passed are named — defaults filled in by the code are not the model's.
``*args`` become ``<name>.0``, ``<name>.1`` …; ``**kwargs`` keep their keys when those look like
identifiers, else ``<name>.<position>`` (a name the caller chose can itself be data, and is then
classified as a value too). Either way a ``**kwargs`` name is a :class:`~.fieldpaths.CallerName`:
the default allow-list never exempts it — a ``body`` passed through ``**kwargs`` is not a declared
free-text parameter ``body``. The same parameters are what the decorator's options may name,
checked once at decoration.
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Callable, Iterable
from typing import Any

import wrapt

from ...errors import ConfigurationError
from ..base.settings import get_settings
from ..evidence.classify import classify_arguments
from ..evidence.fieldpaths import caller_names, safe_names
from .budget import DEFAULT_ALLOW, RULE_FAULT, Budget
from .decision import Decision
from .frameworks import without_framework_context

_MAX_SIGNATURES = 64


class ArgumentBinder:
    """Names one tool function's passed arguments; keeps the signature of each function it wraps."""

    __slots__ = ("_signatures",)

    def __init__(self) -> None:
        self._signatures: dict[Any, tuple[inspect.Signature, tuple[str, ...] | None]] = {}

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
                return {f"args.{i}": v for i, v in enumerate(args)} | safe_names(kwargs, "kwargs")
            simple = all(
                p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) for p in signature.parameters.values()
            )
            positional = tuple(
                p.name for p in signature.parameters.values() if p.kind is p.POSITIONAL_OR_KEYWORD
            )
            cached = (signature, positional if simple else None)
            if len(self._signatures) < _MAX_SIGNATURES:
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
                out.update(caller_names(value, pname))
            else:
                out[pname] = value
        return out


def check_option_names(
    func: Any,
    tool: str,
    invented: Iterable[str],
    idempotency_key: str | None,
    budget: Budget | None,
    *,
    policy_arguments: Iterable[str] = (),
    egress: Iterable[str] = (),
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
    options.append(("policy", policy_arguments))
    options.append(("egress", egress))
    for option, values in options:
        for arg in sorted(values):
            if not known(arg):
                raise ConfigurationError(
                    f"op.tool({tool}): {option} names {arg!r}, which is not a parameter of "
                    f"{getattr(func, '__name__', tool)} (parameters: {listed})"
                )


#: The violation of a call whose arguments changed between the decision and the start of its body.
ARGUMENTS_CHANGED = f"{RULE_FAULT}:arguments_changed"


def refuse_if_changed(
    call: Any, binder: ArgumentBinder, wrapped: Callable, args: tuple, kwargs: dict
) -> None:
    """When a body starts later than its call was decided — a generator's at its first step — bind and
    digest the arguments again: if any differs from what was decided (the caller mutated a list, a
    dict, a model in between), the decision gains ``provenance_fault:arguments_changed`` and blocks
    where the tool's budget is enforced (a write tool, by default). The body never sees values that
    were not checked. ``call`` is the :class:`.lifecycle.ToolCall`, not yet started."""
    decided = call.classification
    if decided is None:  # classifying failed at the call: decided as a fault already
        return
    try:
        named = without_framework_context(dict(binder.bind(wrapped, args, kwargs)))
        now = classify_arguments(call.spec.name, named, None, invented=call.spec.invented)
        changed = now.signature() != decided.signature()
    except Exception:  # what cannot be compared is not known to be unchanged: fail closed
        changed = True
    if not changed:
        return
    spec = call.spec
    enforced = spec.budget.enforce if spec.budget.enforce is not None else spec.side_effect == "write"
    decision = call.decision
    call.decision = Decision(
        tuple(dict.fromkeys((*decision.violations, ARGUMENTS_CHANGED))),
        decision.blocked or (enforced and get_settings().enforce),
        decision.verdict,
        decision.asks,
    )
    changes = call.decision.attributes()
    call.essential = {**call.essential, **changes}
    call.attributes = {**call.attributes, **changes}


def _signature(wrapped: Any) -> inspect.Signature:
    """The parameters a call passes. wrapt hands ``Class.method(instance, ...)`` over as a partial
    proxy binding exactly the instance; its signature excludes ``self`` under wrapt 2, but wrapt 1.x
    reports the function's own, so drop the bound first parameter the same way for both."""
    if isinstance(wrapped, wrapt.PartialCallableObjectProxy):
        return inspect.signature(functools.partial(wrapped.__wrapped__, None))
    return inspect.signature(wrapped)


__all__ = ["ARGUMENTS_CHANGED", "ArgumentBinder", "check_option_names", "refuse_if_changed"]
