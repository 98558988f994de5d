"""CrewAI: OpenLLMetry's CrewAI instrumentation writes ``str()`` of whole agents, tasks and results."""

from __future__ import annotations

from .dialect import Dialect

DIALECT = Dialect(
    name="crewai",
    content_keys=frozenset(
        {
            "crewai.*.result",
            "crewai.crew.tasks_output",
            "crewai.crew.tasks",
            "crewai.crew.agents",
            "crewai.agent.goal",
            "crewai.agent.backstory",
            "crewai.task.description",
            "crewai.task.expected_output",
            "crewai.task.output",
            "crewai.task.context",
        }
    ),
    scope_words=("crewai",),
    key_prefixes=("crewai.",),
)
