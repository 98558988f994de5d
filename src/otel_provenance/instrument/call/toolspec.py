"""What one tool is: its name, side effect, budget and options, and the tracer its calls' spans go to.

A :class:`ToolSpec` is made once per tool — by ``@op.tool`` at decoration, by the MCP session wrapper
per listed tool, by any other client gate per remote tool — and is shared by every call of it; each
call is a :class:`.lifecycle.ToolCall`. It holds what every call of the tool has in common, worked
out once: the option checks, the span name, the attributes every span carries, the tracer and how
many per-argument attributes fit under that tracer's attribute limit.

The option checks name the tool as ``op.tool(<name>)``, the shape users write most; an integration
that takes the same options under another name (MCP's ``ToolPolicy``) checks its own first.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from opentelemetry import trace

from ... import __version__
from ... import semconv as sc
from ...errors import ConfigurationError
from ..evidence.trust import SourceTrust, source_trust
from .adopt import framework_call_id
from .budget import Budget
from .decision import Objection
from .plan import CallPlan

_SCOPE = "otel_provenance"
_RESERVED_ATTRIBUTES = 4  # room kept for attributes set after the call (status, error.type, ...)
_DEFAULT_BUDGET = Budget()


class ToolSpec:
    """One tool's options, checked once, and what every call of it shares.

    ``tool_type`` is ``gen_ai.tool.type`` (``function`` for code in the process, ``extension`` for a
    tool a client calls on a server). ``span_attributes`` are added to every call's span after the
    provenance attributes (the MCP wrapper's ``mcp.*`` keys). ``checks`` are this tool's own checks
    before each call (argument-value policies, approval): each takes the
    :class:`.lifecycle.ToolCall`, bound, classified and budgeted, and yields its
    :class:`.decision.Objection` values. ``trust``, ``trusted_fields``, ``trusted_records`` and
    ``untrusted_fields`` say what the tool's results are worth as evidence (:mod:`.trust`); ``egress``
    names the arguments through which a call sends data out, judged like a write's destination.
    """

    __slots__ = (
        "_constant",
        "_room",
        "_tracer",
        "budget",
        "checks",
        "egress",
        "idempotency_key",
        "invented",
        "judged",
        "name",
        "plan",
        "side_effect",
        "span_attributes",
        "span_name",
        "tracer_provider",
        "trust",
    )

    def __init__(
        self,
        name: Any,
        *,
        side_effect: str = "none",
        data_domain: str | None = None,
        budget: Budget | None = None,
        invented: Iterable[str] | None = (),
        idempotency_key: str | None = None,
        tracer_provider: trace.TracerProvider | None = None,
        tool_type: str = "function",
        span_attributes: Mapping[str, Any] | None = None,
        checks: Iterable[Callable[[Any], Iterable[Objection]]] = (),
        trust: str = sc.TRUST_VALUES,
        trusted_fields: Iterable[str] | None = (),
        trusted_records: Callable[[Any], Any] | None = None,
        untrusted_fields: Iterable[str] | None = (),
        egress: Iterable[str] | None = (),
    ) -> None:
        if not isinstance(name, str) or not name:
            raise ConfigurationError("op.tool(name=...): expected a non-empty string")
        if side_effect not in sc.SIDE_EFFECTS:
            raise ConfigurationError(
                f"op.tool({name}): side_effect={side_effect!r} is not one of "
                f"{', '.join(map(repr, sc.SIDE_EFFECTS))}"
            )
        if data_domain is not None and not isinstance(data_domain, str):
            raise ConfigurationError(f"op.tool({name}): data_domain must be a string")
        if budget is not None and not isinstance(budget, Budget):
            raise ConfigurationError(f"op.tool({name}): budget must be an op.Budget")
        if isinstance(invented, str) or not all(isinstance(n, str) for n in (invented or ())):
            raise ConfigurationError(f"op.tool({name}): invented must be a collection of argument names")
        if isinstance(egress, str) or not all(isinstance(n, str) and n for n in (egress or ())):
            raise ConfigurationError(f"op.tool({name}): egress must be a collection of argument names")
        if idempotency_key is not None and not isinstance(idempotency_key, str):
            raise ConfigurationError(f"op.tool({name}): idempotency_key must be an argument name")
        self.trust: SourceTrust = source_trust(
            f"op.tool({name})", trust, trusted_fields, trusted_records, untrusted_fields
        )
        self.name: str = name
        self.side_effect = side_effect
        self.budget = budget or _DEFAULT_BUDGET
        self.invented = frozenset(invented or ())
        self.egress: frozenset[str] = frozenset(egress or ())
        # a budget counts this tool's arguments: a write's, an egress argument, an enforced budget's
        self.judged = side_effect == "write" or bool(self.egress) or self.budget.enforce is True
        self.idempotency_key = idempotency_key
        self.tracer_provider = tracer_provider
        self.span_name = sc.TOOL_SPAN_PREFIX + name
        self.span_attributes: Mapping[str, Any] = dict(span_attributes or {})
        self.checks: tuple[Callable[[Any], Iterable[Objection]], ...] = tuple(checks)
        # what every call carries, in its place among the essentials (after the call id)
        self._constant: dict[str, Any] = {sc.GEN_AI_TOOL_TYPE: tool_type, sc.SIDE_EFFECT: side_effect}
        if data_domain is not None:
            self._constant[sc.DATA_DOMAIN] = data_domain
        # the compiled call path: the static tail of every span, the budget's decisions by pattern (#45)
        self.plan = CallPlan(
            name,
            budget=self.budget,
            side_effect=side_effect,
            egress=self.egress,
            span_attributes=self.span_attributes,
        )
        self._tracer: trace.Tracer | None = None
        self._room: tuple[Any, int | None] = (None, None)  # (tracer, its attribute limit), per tracer

    @property
    def tracer(self) -> trace.Tracer:
        """The tracer of ``tracer_provider``, or of the global provider — looked up on each call until
        one is set, so a tool decorated at import time follows the provider set up later."""
        tracer = self._tracer
        if tracer is None:
            provider = self.tracer_provider
            if provider is not None:
                tracer = self._tracer = provider.get_tracer(_SCOPE, __version__)
            else:
                tracer = trace.get_tracer(_SCOPE, __version__)
                if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
                    self._tracer = tracer
        return tracer

    def first_attributes(self, run_id: str | None) -> dict[str, Any]:
        """The first essential attributes of a new call: its call id, the constants, the run id. The
        framework's call id, when it has one, is ``gen_ai.tool.call.id`` (it joins the span to the
        model's request); else a fresh one of this package's own, under its own key
        ``agent.tool.call.id`` — never passed off as the model's (#48). :func:`call_id_of` reads either."""
        framework = framework_call_id(self.name)
        essential: dict[str, Any] = (
            {sc.GEN_AI_TOOL_CALL_ID: framework}
            if framework
            else {sc.TOOL_CALL_ID: f"call_{random.getrandbits(64):016x}"}
        )
        essential.update(self._constant)
        if run_id is not None:
            essential[sc.RUN_ID] = run_id
        return essential

    def per_argument_room(self, essential_count: int) -> int | None:
        """How many per-argument attributes fit beside ``essential_count`` essential ones (None: all)."""
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


def _attribute_limit(tracer: Any) -> int | None:
    """The SDK tracer's attribute limit (None: unlimited; the SDK has refused a negative one). Another
    tracer (the API's no-op one, which records nothing) gets the SDK's default."""
    limits = getattr(tracer, "_span_limits", None)
    return 128 if limits is None else limits.max_span_attributes


def call_id_of(essential: Mapping[str, Any]) -> str:
    """A call's id: the framework's (``gen_ai.tool.call.id``), else this package's own."""
    return str(essential.get(sc.GEN_AI_TOOL_CALL_ID) or essential[sc.TOOL_CALL_ID])


__all__ = ["ToolSpec"]
