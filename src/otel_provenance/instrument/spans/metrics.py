"""Tool-call metrics: calls, argument provenance, budget violations, retries, a full ledger — over time.

Spans answer "what happened in this run"; these instruments answer "how often, per tool, per
release" without a trace query: how many write calls were blocked this hour, which tool's arguments
are increasingly ``assumed``, whether 2.0.0 retries more than 1.1.0 (``service.version`` is on the
resource, so every series can be split by release).

Recorded through the OpenTelemetry metrics **API**: without a MeterProvider every call is a no-op.
``op.configure()`` builds one (see :func:`.configure.configure_metrics`); an application with its
own MeterProvider gets the instruments through the global provider, or through
:func:`use_meter_provider`.

Instruments (the list, with the question each answers, is in ``docs/metrics.md``):

=============================  =========  ==========  ==============================================
``gen_ai.execute_tool.duration``  histogram  ``s``     ``gen_ai.tool.name``, ``gen_ai.tool.type`` and
                                                       ``gen_ai.agent.name`` (when known), ``error.type``
                                                       (only when the call failed)
``agent.tool.calls``           counter    ``{call}``  ``gen_ai.tool.name``, ``agent.side_effect``,
                                                       ``agent.tool.status`` (ok | error | blocked)
``agent.tool.arguments``       counter    ``{argument}``  ``gen_ai.tool.name``, ``agent.arg.kind``
``agent.budget.violations``    counter    ``{violation}``  ``gen_ai.tool.name``, ``agent.budget.rule``
``agent.tool.retries``         counter    ``{call}``  ``gen_ai.tool.name``
``agent.ledger.full``          counter    ``{call}``  ``gen_ai.tool.name``
``agent.guard.approvals``      counter    ``{call}``  ``gen_ai.tool.name``, ``agent.guard.approval``
                                                       (approved | denied | timeout | error)
``gen_ai.invoke_agent.duration``  histogram  ``s``     ``gen_ai.agent.name`` (when known), ``error.type``
                                                       (only when the run raised): one per ``op.run``
                                                       that opened its ``invoke_agent`` span
=============================  =========  ==========  ==============================================

The counters are observable counters fed from sums kept in the process (:class:`_Tally`): a call
adds to a dictionary instead of making an SDK measurement per counter.

The duration histogram follows the GenAI semantic conventions' tool metric as
open-telemetry/semantic-conventions-genai defines it (``gen_ai.execute_tool.duration``, unit ``s``,
no ``gen_ai.operation.name``; the buckets ``opentelemetry-util-genai`` uses). It is
not recorded here for spans made by ``opentelemetry-util-genai``, which records it itself.

Attributes are drawn only from bounded, content-free sets: tool and agent names (printable
identifiers, capped at :data:`MAX_TOOL_NAMES` / :data:`MAX_AGENT_NAMES` distinct values, the rest
become ``_other``), fixed enums (``gen_ai.tool.type`` outside the conventions' values becomes
``_OTHER``), rule names, and ``error.type`` reduced by :func:`metric_error_type` to an exception class
name (or the leading class name of ``"Type: message"`` text) or a conventional value, else ``_OTHER``
as the conventions say, at most :data:`MAX_ERROR_TYPES` distinct values. A third-party span's
``error.type`` is whatever text its library wrote (#36: 2,000 free-text values made 2,000 series,
each carrying the text).
Never an argument or result value, an argument name (a violation ``max_assumed:order_id=assumed``
is counted under its rule ``max_assumed`` only), a run id or a trace id. The duration is recorded
with the tool span as context, so an SDK with exemplars on links a bucket to a trace there — in the
exemplar, not in an attribute.
"""

from __future__ import annotations

import builtins
import re
import sys
import threading
import time
from collections.abc import Iterable
from typing import Any, Final

from opentelemetry import metrics

from ... import __version__
from ... import semconv as sc
from ..base.internal_errors import reraise_own_bug_under_pytest

SCOPE: Final = "otel_provenance"

TOOL_DURATION: Final = "gen_ai.execute_tool.duration"
AGENT_DURATION: Final = "gen_ai.invoke_agent.duration"  # #48: util-genai records it for its agents
TOOL_CALLS: Final = "agent.tool.calls"
TOOL_ARGUMENTS: Final = "agent.tool.arguments"
BUDGET_VIOLATIONS: Final = "agent.budget.violations"
TOOL_RETRIES: Final = "agent.tool.retries"
LEDGER_FULL: Final = "agent.ledger.full"
GUARD_RUNS: Final = "agent.guard.runs"
APPROVALS: Final = "agent.guard.approvals"
INSTRUMENTS: Final = (
    TOOL_DURATION,
    TOOL_CALLS,
    TOOL_ARGUMENTS,
    BUDGET_VIOLATIONS,
    TOOL_RETRIES,
    LEDGER_FULL,
    GUARD_RUNS,
    APPROVALS,
    AGENT_DURATION,
)  # fmt: skip

#: Metric-only attribute keys (spans carry the kind per argument, ``agent.arg.<name>.kind``).
ARG_KIND: Final = "agent.arg.kind"
BUDGET_RULE: Final = "agent.budget.rule"

#: Budget rules recorded by name; any other tag counts as ``other`` (a tag may name an argument).
KNOWN_RULES: Final = frozenset(
    {
        "max_assumed",
        "max_invented",
        "max_untrusted",
        "provenance_fault",
        "needs_approval",
        "approval",
        "contract",
    }
)
OTHER_RULE: Final = "other"

#: Buckets of ``opentelemetry-util-genai`` for the same histogram, so both sources aggregate alike.
DURATION_BUCKETS: Final = (
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92
)  # fmt: skip

#: Buckets of ``opentelemetry-util-genai`` for ``gen_ai.invoke_agent.duration`` (an agent run takes longer
#: than one tool call: 0.1 s to about 7 minutes).
AGENT_DURATION_BUCKETS: Final = (
    0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 51.2, 102.4, 204.8, 409.6
)  # fmt: skip

#: Distinct tool names recorded before further names are folded into :data:`OTHER_TOOL`. Decorated
#: tools are named in code; a third-party span's tool name may come from a model and be unbounded.
MAX_TOOL_NAMES: Final = 200
OTHER_TOOL: Final = "_other"
#: Distinct agent names recorded on the duration before further names become :data:`OTHER_TOOL`.
MAX_AGENT_NAMES: Final = 200
#: Longest tool or agent name recorded as itself (a longer one, or one with control characters, is
#: not a name written in code: it becomes :data:`OTHER_TOOL`).
MAX_NAME_LENGTH: Final = 256

#: ``error.type`` of the conventions for a value outside the known set.
OTHER_ERROR: Final = "_OTHER"
#: Distinct ``error.type`` values recorded before further ones become :data:`OTHER_ERROR`.
MAX_ERROR_TYPES: Final = 100
#: ``error.type`` values kept as they are: this package's own (``error``, an MCP ``tool_error``) and
#: the conventions' ``_OTHER`` and ``timeout``.
KNOWN_ERROR_TYPES: Final = frozenset({"error", sc.MCP_TOOL_ERROR, OTHER_ERROR, "timeout"})
#: A dotted Python name whose last part is CapWords, the shape of an exception class's name.
_CLASS_NAME: Final = re.compile(r"(?:[A-Za-z_][A-Za-z0-9_]*\.){0,15}[A-Z][A-Za-z0-9_]{0,127}")
#: Endings of exception class names (PEP 8: "use the suffix Error on your exception names"), plus
#: the builtins' and common libraries' other shapes (``KeyboardInterrupt``, ``StopIteration``,
#: ``ReadTimeout``, ``CancelledError``, ``ExceptionGroup``).
_CLASS_SUFFIXES: Final = (
    "Error", "Exception", "Warning", "Exit", "Interrupt", "Iteration", "Timeout", "Cancelled", "Group"
)  # fmt: skip
#: ``gen_ai.tool.type`` values the conventions define.
TOOL_TYPES: Final = frozenset({"function", "extension", "datastore"})


class _Tally:
    """One counter's sums by attribute values, kept in the process and reported through an
    observable counter each time a reader collects.

    A synchronous counter's ``add`` is a whole SDK measurement — the attribute set hashed into a
    frozenset, a lock, an aggregation, an exemplar filter — ~70,000 instructions (10–15 µs), and a
    tool call made three or four of them (#45: the metrics were a third of an ``@op.tool`` call).
    Here a call adds to a dictionary under one lock. The exported data is the same monotonic sum,
    cumulative or delta as the reader asks (the SDK takes deltas of an observable counter's totals);
    the counters carry no exemplars (the duration histogram does: it stays synchronous)."""

    __slots__ = ("keys", "sums")

    def __init__(self, keys: tuple[str, ...]) -> None:
        self.keys = keys
        self.sums: dict[tuple[str, ...], int] = {}

    def add(self, values: tuple[str, ...], amount: int = 1) -> None:
        """Count ``amount`` under ``values`` (one per key); the caller holds ``_sums_lock``."""
        sums = self.sums
        sums[values] = sums.get(values, 0) + amount

    def observe(self, options: metrics.CallbackOptions) -> list[metrics.Observation]:
        with _sums_lock:
            items = list(self.sums.items())
        keys = self.keys
        return [metrics.Observation(total, dict(zip(keys, values, strict=True))) for values, total in items]


class _Instruments:
    __slots__ = (
        "agent_duration",
        "approvals",
        "arguments",
        "calls",
        "duration",
        "guard_runs",
        "ledger_full",
        "retries",
        "violations",
    )

    def __init__(self, meter: metrics.Meter) -> None:
        self.duration = meter.create_histogram(
            TOOL_DURATION,
            unit="s",
            description="Duration of a tool execution.",
            explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS),
        )

        def counter(name: str, keys: tuple[str, ...], unit: str, description: str) -> _Tally:
            tally = _Tally(keys)
            meter.create_observable_counter(
                name, callbacks=[tally.observe], unit=unit, description=description
            )
            return tally

        self.calls = counter(
            TOOL_CALLS,
            (sc.GEN_AI_TOOL_NAME, sc.SIDE_EFFECT, sc.TOOL_STATUS),
            "{call}",
            "Tool calls by tool, side effect and outcome.",
        )
        self.arguments = counter(
            TOOL_ARGUMENTS,
            (sc.GEN_AI_TOOL_NAME, ARG_KIND),
            "{argument}",
            "Classified tool arguments by kind: observed, assumed or invented.",
        )
        self.violations = counter(
            BUDGET_VIOLATIONS,
            (sc.GEN_AI_TOOL_NAME, BUDGET_RULE),
            "{violation}",
            "Tool calls that broke a provenance budget rule, once per call and rule.",
        )
        self.retries = counter(
            TOOL_RETRIES,
            (sc.GEN_AI_TOOL_NAME,),
            "{call}",
            "Tool calls that repeat an earlier call (retry > 0).",
        )
        self.ledger_full = counter(
            LEDGER_FULL,
            (sc.GEN_AI_TOOL_NAME,),
            "{call}",
            "Tool calls classified against a ledger that had evicted entries.",
        )
        self.guard_runs = counter(
            GUARD_RUNS,
            (sc.GUARD_RUN_VERDICT, sc.GUARD_CONTRACT),
            "{run}",
            "Runs judged against a contract at call time when they ended, by verdict.",
        )
        self.approvals = counter(
            APPROVALS,
            (sc.GEN_AI_TOOL_NAME, sc.GUARD_APPROVAL),
            "{call}",
            "Tool calls a person was asked to approve, by the approver's outcome.",
        )
        self.agent_duration = meter.create_histogram(
            AGENT_DURATION,
            unit="s",
            description="Measures the duration of an in-process agent invocation.",
            explicit_bucket_boundaries_advisory=list(AGENT_DURATION_BUCKETS),
        )


_lock = threading.Lock()
_sums_lock = threading.Lock()  # the tallies' sums (_Tally); never taken with _lock held
_provider: metrics.MeterProvider | None = None
_instruments: _Instruments | None = None
_tool_names: set[str] = set()
_agent_names: set[str] = set()
_error_types: set[str] = set()


def use_meter_provider(provider: metrics.MeterProvider | None) -> None:
    """Record into ``provider`` from now on; ``None`` goes back to the global MeterProvider."""
    global _provider, _instruments
    with _lock:
        _provider = provider
        _instruments = None


def _get() -> _Instruments:
    global _instruments
    instruments = _instruments
    if instruments is None:
        with _lock:
            if _instruments is None:
                provider = _provider if _provider is not None else metrics.get_meter_provider()
                # A meter from the global proxy provider forwards to the real one once it is set.
                _instruments = _Instruments(provider.get_meter(SCOPE, __version__))
            instruments = _instruments
    return instruments


_NO_PROVIDER = frozenset({"_ProxyMeterProvider", "NoOpMeterProvider"})


def recording() -> bool:
    """Whether a measurement goes anywhere: a provider was given (:func:`use_meter_provider`) or set
    globally. The API's proxy drops measurements until one is set, so skipping them before is the
    same — and spares each call the work of its attributes (#45)."""
    if _provider is not None:
        return True
    return type(metrics.get_meter_provider()).__name__ not in _NO_PROVIDER


def _tool_label(name: str) -> str:
    return _name_label(name, _tool_names, MAX_TOOL_NAMES) or OTHER_TOOL


def _is_exception_class(name: str) -> bool:
    """Whether ``name`` is an exception class: found (without importing or running any module
    ``__getattr__``) among builtins or a loaded module's names, or shaped like one."""
    if not _CLASS_NAME.fullmatch(name):
        return False
    if name.endswith(_CLASS_SUFFIXES):
        return True
    parts = name.split(".")
    candidates = [(vars(builtins), parts)] if len(parts) == 1 else []
    for cut in range(len(parts) - 1, 0, -1):
        module = sys.modules.get(".".join(parts[:cut]))
        if module is not None:
            candidates.append((vars(module), parts[cut:]))
            break
    for namespace, path in candidates:
        found: Any = namespace.get(path[0])
        for part in path[1:]:
            found = vars(found).get(part) if isinstance(found, type) else None
        if isinstance(found, type) and issubclass(found, BaseException):
            return True
    return False


def metric_error_type(value: Any) -> str:
    """``error.type`` as a metric attribute: a value from a bounded, content-free set.

    A known value (:data:`KNOWN_ERROR_TYPES`) or an exception class name stays (text such as
    ``"ValueError: order 123 not found"`` keeps only its leading class name); anything else —
    free text a library wrote — is :data:`OTHER_ERROR`, as are names past :data:`MAX_ERROR_TYPES`.
    """
    if not isinstance(value, str) or not value:
        return OTHER_ERROR
    if value in KNOWN_ERROR_TYPES:
        return value
    head = value.split(":", 1)[0].strip() if ":" in value else value
    if not _is_exception_class(head):
        return OTHER_ERROR
    return _bounded_label(head, _error_types, MAX_ERROR_TYPES, other=OTHER_ERROR)


def _name_label(name: Any, seen: set[str], limit: int) -> str | None:
    """A tool or agent name as a metric attribute: a printable one-line name, bounded in count."""
    if not isinstance(name, str) or not name:
        return None
    if len(name) > MAX_NAME_LENGTH or not name.isprintable():
        return OTHER_TOOL
    return _bounded_label(name, seen, limit)


def _bounded_label(name: str, seen: set[str], limit: int, other: str = OTHER_TOOL) -> str:
    if name in seen:
        return name
    with _lock:
        if len(seen) >= limit:
            return other
        seen.add(name)
    return name


def _rule(tag: str) -> str:
    rule = tag.split(":", 1)[0]
    return rule if rule in KNOWN_RULES else OTHER_RULE


def now() -> float:
    """A monotonic start time for :func:`record_tool_call`."""
    return time.perf_counter()


def record_tool_call(
    tool: str,
    *,
    status: str,
    side_effect: str | None,
    kinds: Iterable[str] = (),
    violations: Iterable[str] = (),
    retry: int = 0,
    ledger_full: bool = False,
    duration: float | None = None,
    error_type: str | None = None,
    context: Any = None,
    tool_type: str | None = None,
    agent_name: str | None = None,
) -> None:
    """Record one finished (or blocked) tool call. Never raises into the tool's caller.

    ``kinds`` is one kind per classified argument; ``violations`` are the budget's violation tags
    (``rule:detail``), of which only the rule is kept. ``duration`` in seconds, or ``None`` to
    leave the histogram alone (a library that records it itself). ``tool_type`` and ``agent_name``
    (``gen_ai.tool.type``, ``gen_ai.agent.name``) go on the duration when known.
    """
    try:
        instruments = _get()
        label = _tool_label(tool)
        if duration is not None:
            attributes = {sc.GEN_AI_TOOL_NAME: label}
            if isinstance(tool_type, str) and tool_type:
                attributes[sc.GEN_AI_TOOL_TYPE] = tool_type if tool_type in TOOL_TYPES else OTHER_ERROR
            agent = _name_label(agent_name, _agent_names, MAX_AGENT_NAMES)
            if agent is not None:
                attributes[sc.GEN_AI_AGENT_NAME] = agent
            if error_type is not None:
                attributes[sc.ERROR_TYPE] = metric_error_type(error_type)
            instruments.duration.record(max(duration, 0.0), attributes, context=context)
        counts: dict[str, int] = {}
        for kind in kinds:
            if kind in sc.ARG_KINDS:
                counts[kind] = counts.get(kind, 0) + 1
        rules = {_rule(tag) for tag in violations} if violations else ()
        with _sums_lock:
            instruments.calls.add((label, side_effect or "unknown", status))
            for kind, count in counts.items():
                instruments.arguments.add((label, kind), count)
            for rule in rules:
                instruments.violations.add((label, rule))
            if retry > 0:
                instruments.retries.add((label,))
            if ledger_full:
                instruments.ledger_full.add((label,))
    except Exception as error:  # metrics are best effort: a broken reader never fails a tool call
        reraise_own_bug_under_pytest(error)
        return


def record_run_verdict(verdict: str, contract: str) -> None:
    """One run judged by its contract when it ended (:mod:`.guard`). Never raises."""
    try:
        guard_runs = _get().guard_runs
        with _sums_lock:
            guard_runs.add((verdict, contract))
    except Exception as error:
        reraise_own_bug_under_pytest(error)


def record_agent_run(
    duration: float, *, agent_name: str | None, error_type: str | None, context: Any = None
) -> None:
    """One ``op.run`` that opened its ``invoke_agent`` span ended after ``duration`` seconds
    (``gen_ai.invoke_agent.duration``, as ``opentelemetry-util-genai`` records it for its own agent
    invocations). ``error_type``: the exception's class when the run raised. Never raises."""
    try:
        attributes: dict[str, str] = {}
        agent = _name_label(agent_name, _agent_names, MAX_AGENT_NAMES)
        if agent is not None:
            attributes[sc.GEN_AI_AGENT_NAME] = agent
        if error_type is not None:
            attributes[sc.ERROR_TYPE] = metric_error_type(error_type)
        _get().agent_duration.record(max(duration, 0.0), attributes, context=context)
    except Exception as error:  # best effort, as above
        reraise_own_bug_under_pytest(error)


def record_approval(tool: str, outcome: str) -> None:
    """Record the approver's outcome (``agent.guard.approval``) for one call that asked a person."""
    try:
        approvals, label = _get().approvals, _tool_label(tool)
        with _sums_lock:
            approvals.add((label, outcome))
    except Exception as error:  # best effort, as above
        reraise_own_bug_under_pytest(error)


__all__ = [
    "ARG_KIND",
    "BUDGET_RULE",
    "INSTRUMENTS",
    "metric_error_type",
    "now",
    "record_agent_run",
    "record_approval",
    "record_run_verdict",
    "record_tool_call",
    "use_meter_provider",
]
