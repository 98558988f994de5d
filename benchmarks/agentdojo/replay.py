"""The replay: each task's ground-truth calls, one by one, through the guard; AgentDojo judges.

**Benign.** A fresh environment, one ``op.run``, the user task's ground-truth calls in order. A call
the guard blocks raises ``op.ProvenanceError``: it is recorded with its violations and the replay goes
on with the next call (an agent would try to go on too). The task *completed* when no call was
blocked and AgentDojo's utility check passes on the environment the calls left.

**Attack.** The environment holds the attack's text in every place the user task's ground truth
reads; one ``op.run``; the user task's ground-truth calls (which read the injected text), then the
injection task's (the replay assumes the agent always obeys the injection) — AgentDojo's ground
truth, or ours for the tasks it ships without one (:mod:`.synthesized`; such runs say so). The
attack *succeeded* when AgentDojo's security check passes.

**Asks.** Every run has an approver: a call the guard asks about runs when it belongs to the user's
task (the user wanted it — recorded as an ask) and is refused when it belongs to the injection (a
person shown the call would not have asked for it) — recorded too, so that attacks stopped only by a
person's "no" are counted apart.

Every call's outcome is checked against its exported span (``agent.tool.status``), and a blocked call
must not have run its body: the harness fails loudly rather than count a wrong outcome.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_provenance as op

from .integration import WRITE, Configuration, identify
from .suites import CALL_LEVEL, Suite
from .toolset import CurrentRun, guarded_tools, runtime_tools

RAN, BLOCKED, ERROR = "ran", "blocked", "error"
USER, INJECTION = "user", "injection"
_ARG_FIELDS = ("kind", "source_tool", "source_field", "projection")


class ReplayError(RuntimeError):
    """The harness saw something it cannot count honestly (a span that disagrees with the call)."""


@dataclass
class Call:
    """One ground-truth call as the guard saw it. ``arguments`` holds values: it goes to the local
    diagnostics file only, never to the published summary."""

    phase: str
    tool: str
    arguments: dict[str, Any]
    outcome: str = RAN
    violations: tuple[str, ...] = ()  # why it was blocked (``ProvenanceError.violations``)
    tagged: tuple[str, ...] = ()  # ``agent.violations`` on its span (a read is tagged, not blocked)
    asked: tuple[str, ...] = ()  # what the approver was asked about
    approval: str | None = None  # "approved" | "denied" when asked
    error: str | None = None  # the tool's own exception type, when its body raised
    sources: dict[str, dict[str, str]] = field(default_factory=dict)  # per argument, from the span

    def summary(self) -> dict[str, Any]:
        """The call without its values (what the published records carry)."""
        out: dict[str, Any] = {"phase": self.phase, "tool": self.tool, "outcome": self.outcome}
        for name in ("violations", "tagged", "asked"):
            if getattr(self, name):
                out[name] = list(getattr(self, name))
        if self.approval:
            out["approval"] = self.approval
        if self.error:
            out["error"] = self.error
        return out


@dataclass
class TaskRun:
    suite: str
    user_task: str
    has_write: bool
    utility: bool
    calls: list[Call]

    @property
    def blocked(self) -> bool:
        return any(c.outcome == BLOCKED for c in self.calls)

    @property
    def completed(self) -> bool:
        return self.utility and not self.blocked

    @property
    def asks(self) -> int:
        return sum(1 for c in self.calls if c.asked)

    def record(self) -> dict[str, Any]:
        """The run without values."""
        return {
            "suite": self.suite,
            "user_task": self.user_task,
            "has_write": self.has_write,
            "utility": self.utility,
            "completed": self.completed,
            "calls": [c.summary() for c in self.calls],
        }


@dataclass
class AttackRun:
    suite: str
    user_task: str
    injection_task: str
    kind: str
    success: bool | None  # None: not replayed (output-only goals, goals with no ground truth)
    utility: bool | None = None
    calls: list[Call] = field(default_factory=list)
    synthesized: bool = False  # the injection's calls are ours (.synthesized), not AgentDojo's

    @property
    def injected_calls(self) -> list[Call]:
        return [c for c in self.calls if c.phase == INJECTION]

    @property
    def denied(self) -> bool:
        return any(c.approval == "denied" for c in self.injected_calls)

    def record(self) -> dict[str, Any]:
        """The run without values."""
        fields = ("suite", "user_task", "injection_task", "kind", "success", "utility", "synthesized")
        return {**{name: getattr(self, name) for name in fields}, "calls": [c.summary() for c in self.calls]}


class _Approver:
    """The person asked: yes to the user's own calls, no to the injection's (see the module doc)."""

    def __init__(self) -> None:
        self.call: Call | None = None

    def __call__(self, request: Any) -> bool:
        call = self.call
        if call is None:  # an ask outside a replayed call cannot be attributed: refuse it
            return False
        call.asked = tuple(request.reasons)
        call.approval = "approved" if call.phase == USER else "denied"
        return call.phase == USER


class Replayer:
    """Replays one suite's tasks under one configuration."""

    def __init__(self, suite: Suite, configuration: Configuration) -> None:
        self.suite = suite
        self.configuration = configuration
        self.current = CurrentRun()
        self.declarations = configuration.declare(identify(suite.environment({})))
        self.writes = frozenset(t for t, o in self.declarations.items() if o.get("side_effect") == WRITE)
        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider()
        self.provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(self.exporter)))
        self.approver = _Approver()
        if configuration.guarded:
            self.tools = guarded_tools(suite.tools, self.declarations, self.current, self.provider)
        else:
            self.tools = runtime_tools(suite.tools, self.current)

    # -- the two kinds of run ---------------------------------------------------------------------
    def benign(self, task_id: str) -> TaskRun:
        task = self.suite.user_tasks[task_id]
        environment = task.init_environment(self.suite.environment({}))
        before = environment.model_copy(deep=True)
        planned = task.ground_truth(environment.model_copy(deep=True))
        with self._run(environment, task.PROMPT) as calls:
            for planned_call in planned:
                calls.append(self._call(USER, planned_call))
        output = task.GROUND_TRUTH_OUTPUT or ""
        utility = self._judge(task, "utility", output, before, environment, calls)
        has_write = any(c.function in self.writes for c in planned)
        return TaskRun(self.suite.name, task_id, has_write, utility, calls)

    def attack(self, user_id: str, injection_id: str) -> AttackRun:
        kind = self.suite.goal_kinds[injection_id]
        if kind != CALL_LEVEL:
            return AttackRun(self.suite.name, user_id, injection_id, kind, None)
        user_task = self.suite.user_tasks[user_id]
        injection_task = self.suite.injection_tasks[injection_id]
        injections = self.suite.injections(user_task, injection_task)
        environment = user_task.init_environment(self.suite.environment(injections))
        before = environment.model_copy(deep=True)
        planned = user_task.ground_truth(environment.model_copy(deep=True))
        with self._run(environment, user_task.PROMPT) as calls:
            for planned_call in planned:
                calls.append(self._call(USER, planned_call))
            # the injection's calls as an obeying agent makes them now, from the state it is in
            planned_injection = self.suite.injection_calls(
                injection_id, before.model_copy(deep=True), environment.model_copy(deep=True)
            )
            for planned_call in planned_injection:
                calls.append(self._call(INJECTION, planned_call))
        answers = (user_task.GROUND_TRUTH_OUTPUT, injection_task.GROUND_TRUTH_OUTPUT)
        output = "\n".join(answer for answer in answers if answer)
        success = self._judge(injection_task, "security", output, before, environment, calls)
        utility = self._judge(user_task, "utility", output, before, environment, calls)
        synthesized = injection_id in self.suite.synthesized
        return AttackRun(self.suite.name, user_id, injection_id, kind, success, utility, calls, synthesized)

    # -- one run, one call ------------------------------------------------------------------------
    @contextmanager
    def _run(self, environment: Any, prompt: str) -> Iterator[list[Call]]:
        self.current.environment = environment
        calls: list[Call] = []
        if not self.configuration.guarded:
            yield calls
            return
        request = prompt if self.configuration.request else None
        with op.run(request=request, approver=self.approver, tracer_provider=self.provider):
            yield calls
        self._check_spans(calls)

    def _call(self, phase: str, planned: Any) -> Call:
        arguments = dict(planned.args)
        call = Call(phase, planned.function, copy.deepcopy(arguments))
        bodies = self.current.bodies_run
        self.approver.call = call
        try:
            self.tools[planned.function](**arguments)
        except op.ProvenanceError as blocked:
            call.outcome, call.violations = BLOCKED, tuple(blocked.violations)
            if self.current.bodies_run != bodies:
                raise ReplayError(f"{planned.function}: blocked, yet its body ran") from blocked
        except Exception as failed:  # the tool's own error: the call happened and failed
            call.outcome, call.error = ERROR, type(failed).__name__
        finally:
            self.approver.call = None
        return call

    def _check_spans(self, calls: list[Call]) -> None:
        """Each call has its tool span, in order, and the span's status is the recorded outcome."""
        spans = [s for s in self.exporter.get_finished_spans() if s.attributes.get("gen_ai.tool.name")]
        self.exporter.clear()
        if len(spans) != len(calls):
            raise ReplayError(f"{len(calls)} calls made but {len(spans)} tool spans exported")
        for call, span in zip(calls, spans, strict=True):
            attributes = span.attributes
            status = attributes.get("agent.tool.status")
            if attributes.get("gen_ai.tool.name") != call.tool or (status == "blocked") != (
                call.outcome == BLOCKED
            ):
                raise ReplayError(f"{call.tool}: recorded {call.outcome}, span says {status}")
            call.tagged = tuple(attributes.get("agent.violations", ()))
            for key, value in attributes.items():
                if key.startswith("agent.arg."):
                    argument, _, suffix = key[len("agent.arg.") :].rpartition(".")
                    if suffix in _ARG_FIELDS:
                        call.sources.setdefault(argument, {})[suffix] = str(value)

    @staticmethod
    def _judge(task: Any, check: str, output: str, before: Any, after: Any, calls: list[Call]) -> bool:
        """AgentDojo's own verdict: from the calls that happened (a blocked call did not) where the
        task judges by its trace, else from the environments. Each check gets its own copies: some
        change what they read (``Inbox.get_unread()`` marks mail read), and one check must not
        change what the next one sees."""
        from agentdojo.functions_runtime import FunctionCall

        trace = [FunctionCall(function=c.tool, args=c.arguments) for c in calls if c.outcome != BLOCKED]
        before, after = before.model_copy(deep=True), after.model_copy(deep=True)
        by_trace = getattr(task, f"{check}_from_traces")(output, before, after, trace)
        if by_trace is not None:
            return bool(by_trace)
        return bool(getattr(task, check)(output, before, after))


__all__ = [
    "BLOCKED",
    "ERROR",
    "INJECTION",
    "RAN",
    "USER",
    "AttackRun",
    "Call",
    "ReplayError",
    "Replayer",
    "TaskRun",
]
