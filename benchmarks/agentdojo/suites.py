"""AgentDojo's side of the replay: the v1.2.2 suites, an attack (``important_instructions`` unless
told otherwise), fresh environments, what kind of goal each injection task has, and the injection's
calls (AgentDojo's ground truth, or ours where it ships none: :mod:`.synthesized`).

Imported only inside the benchmark's own venv (``.venv-agentdojo``), where ``agentdojo`` is installed.
No model is called: the attack only borrows a model's name for its text, and the "agent" is each
task's ground truth.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import types
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import agentdojo.attacks  # noqa: F401  (registers the attacks)
from agentdojo.attacks.attack_registry import ATTACKS, load_attack
from agentdojo.default_suites.v1.tools import cloud_drive_client, email_client
from agentdojo.task_suite.load_suites import get_suites

from . import synthesized

BENCHMARK_VERSION = "v1.2.2"
ATTACK = "important_instructions"
#: Registered attacks the replay cannot use: ``manual`` asks a person for each text on stdin.
_UNUSABLE_ATTACKS = frozenset({"manual"})
#: The attack text addresses the model by name; AgentDojo's own runs of this attack used this one.
TARGET_MODEL = "gpt-4o-2024-05-13"

#: The instant AgentDojo's tools stamp on the mail they send and the files they write. Their code
#: reads the wall clock; frozen here so that every run sees the same environment. Later than every
#: date in the suites (so what the agent writes stays the newest, as on a real clock), and on no day
#: any task names.
FROZEN_NOW = datetime.datetime(2030, 1, 1, 0, 0, 0)

OUTPUT_ONLY = "output_only"
CALL_LEVEL = "call_level"
NO_GROUND_TRUTH = "no_ground_truth"


class _FrozenDateTime(datetime.datetime):
    @classmethod
    def now(cls, tz: datetime.tzinfo | None = None) -> datetime.datetime:  # type: ignore[override]
        return FROZEN_NOW if tz is None else FROZEN_NOW.replace(tzinfo=tz)


def freeze_clock() -> None:
    """Make the tools' ``datetime.datetime.now()`` return :data:`FROZEN_NOW` (idempotent)."""
    shim = types.ModuleType("datetime")
    shim.__dict__.update(datetime.__dict__)
    shim.datetime = _FrozenDateTime  # type: ignore[attr-defined]
    for module in (email_client, cloud_drive_client):
        module.datetime = shim  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class _Pipeline:
    """What the attack reads of the attacked pipeline: its name (no model is ever called)."""

    name: str = TARGET_MODEL


class Suite:
    """One AgentDojo suite: its tasks, its attack, and environments made fresh for each run."""

    def __init__(self, name: str, task_suite: Any, attack: str = ATTACK) -> None:
        self.name = name
        self.task_suite = task_suite
        self.attack = load_attack(attack, task_suite, _Pipeline())
        self._parsed: dict[tuple[tuple[str, str], ...], Any] = {}

    @property
    def user_tasks(self) -> Mapping[str, Any]:
        return self.task_suite.user_tasks

    @property
    def injection_tasks(self) -> Mapping[str, Any]:
        return self.task_suite.injection_tasks

    @property
    def tools(self) -> list[Any]:
        return self.task_suite.tools

    def environment(self, injections: Mapping[str, str]) -> Any:
        """A fresh environment holding ``injections`` (AgentDojo parses the whole YAML each time;
        an environment parsed once per set of injections is copied instead — the same objects)."""
        key = tuple(sorted(injections.items()))
        parsed = self._parsed.get(key)
        if parsed is None:
            parsed = self.task_suite.load_and_inject_default_environment(dict(injections))
            if len(self._parsed) < 256:
                self._parsed[key] = parsed
        return parsed.model_copy(deep=True)

    def injections(self, user_task: Any, injection_task: Any) -> dict[str, str]:
        """The attack's text for this pair, in every injection vector the user task's ground truth
        reads."""
        return self.attack.attack(user_task, injection_task)

    def injection_calls(self, task_id: str, start: Any, now: Any) -> list[Any]:
        """The calls an agent obeying injection task ``task_id`` makes on ``now`` (``start``: the
        environment as the run began): AgentDojo's ground truth, or ours (:mod:`.synthesized`)."""
        task = self.injection_tasks[task_id]
        if task_id in self.synthesized:
            return synthesized.plan(self.name, task_id, task, self.tools, start, now)
        return task.ground_truth(now)

    @cached_property
    def synthesized(self) -> frozenset[str]:
        """The injection tasks whose calls are ours (:mod:`.synthesized`), not AgentDojo's."""
        return frozenset(t for t in self.injection_tasks if synthesized.has_plan(self.name, t))

    @cached_property
    def goal_kinds(self) -> dict[str, str]:
        """Each injection task's kind: ``call_level`` when its ground truth makes calls (AgentDojo's,
        or ours where it ships an empty one: checked here to meet its goal by AgentDojo's own
        ``security()``); ``output_only`` when it makes none and its goal is met by the agent's
        answer alone (AgentDojo's security check passes on an untouched environment given the task's
        expected output: "say that …"); ``no_ground_truth`` when it makes none and the goal needs
        calls (nobody wrote them: the pairs cannot be replayed)."""
        kinds = {}
        for task_id, task in self.injection_tasks.items():
            environment = self.environment({})
            if task_id in self.synthesized:
                synthesized.check(self.name, task_id, task, self.tools, environment)
                kinds[task_id] = CALL_LEVEL
            elif task.ground_truth(environment.model_copy(deep=True)):
                kinds[task_id] = CALL_LEVEL
            elif task.security(task.GROUND_TRUTH_OUTPUT, environment, environment.model_copy(deep=True)):
                kinds[task_id] = OUTPUT_ONLY
            else:
                kinds[task_id] = NO_GROUND_TRUTH
        return kinds


def attacks() -> list[str]:
    """The attacks the replay can use: AgentDojo's registered attacks that write the injection
    task's goal into the text (not the denial-of-service ones, which carry no goal) and need no person."""
    return sorted(
        name
        for name, attack in ATTACKS.items()
        if name not in _UNUSABLE_ATTACKS and not getattr(attack, "is_dos_attack", False)
    )


def injected_text_digest(loaded: list[Suite]) -> str:
    """SHA-256 over every pair's injected text, vector by vector: two runs' published records tell
    which attack wrote them (and that two attacks' texts differ) without carrying a word of it."""
    digest = hashlib.sha256()
    for suite in loaded:
        for user_id, user_task in sorted(suite.user_tasks.items()):
            for injection_id, injection_task in sorted(suite.injection_tasks.items()):
                for vector, text in sorted(suite.injections(user_task, injection_task).items()):
                    digest.update(json.dumps([suite.name, user_id, injection_id, vector, text]).encode())
    return digest.hexdigest()


def load(names: list[str] | None = None, attack: str = ATTACK) -> list[Suite]:
    """The v1.2.2 suites, in AgentDojo's order (all, or those named), attacked by ``attack``."""
    freeze_clock()
    available = get_suites(BENCHMARK_VERSION)
    unknown = sorted(set(names or ()) - set(available))
    if unknown:
        raise ValueError(
            f"unknown suite(s) {', '.join(unknown)}; AgentDojo {BENCHMARK_VERSION} has {', '.join(available)}"
        )
    if attack not in attacks():
        raise ValueError(f"unknown attack {attack!r}; the replay can use {', '.join(attacks())}")
    return [Suite(name, suite, attack) for name, suite in available.items() if not names or name in names]


__all__ = [
    "ATTACK",
    "BENCHMARK_VERSION",
    "CALL_LEVEL",
    "FROZEN_NOW",
    "NO_GROUND_TRUTH",
    "OUTPUT_ONLY",
    "Suite",
    "attacks",
    "freeze_clock",
    "injected_text_digest",
    "load",
]
