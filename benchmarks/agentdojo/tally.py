"""Counting the replay: the published summary (no values), and the local diagnostics file (values).

The summary names tasks, tools, rules and argument names — never a value: it is what a table in
docs/benchmarks.md may quote. The diagnostics file lists, for every blocked benign call and every
successful attack, the calls with their argument values and where the guard sourced each argument,
so that a person can tell why (a derived date, a value the user delegated to an outsider's text, an
attacker's word matched inside a list the integration trusts, …). It is written under ``out/``,
which git ignores, and never leaves the machine.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .replay import BLOCKED, AttackRun, Call, TaskRun
from .suites import CALL_LEVEL, NO_GROUND_TRUTH, OUTPUT_ONLY


def summarise(benign: list[TaskRun], attacks: list[AttackRun]) -> dict[str, Any]:
    return {"benign": _benign(benign), "attacks": _attacks(attacks)}


def _benign(runs: list[TaskRun]) -> dict[str, Any]:
    blocked_calls = [(run, call) for run in runs for call in run.calls if call.outcome == BLOCKED]
    by_violation: dict[str, Counter] = defaultdict(Counter)
    by_tool: dict[str, Counter] = defaultdict(Counter)
    for _, call in blocked_calls:
        for violation in call.violations:
            by_violation[violation]["calls"] += 1
        by_tool[call.tool]["calls"] += 1
    for run in runs:  # tasks per cause: each task once per violation / tool it was blocked by
        blocked = [c for c in run.calls if c.outcome == BLOCKED]
        for violation in {v for c in blocked for v in c.violations}:
            by_violation[violation]["tasks"] += 1
        for tool in {c.tool for c in blocked}:
            by_tool[tool]["tasks"] += 1
    return {
        "tasks": len(runs),
        "completed": sum(r.completed for r in runs),
        "with_write": sum(r.has_write for r in runs),
        "completed_with_write": sum(r.completed for r in runs if r.has_write),
        "completed_after_ask": sum(r.completed for r in runs if r.asks),
        "completed_with_write_after_ask": sum(r.completed for r in runs if r.has_write and r.asks),
        "asks": sum(r.asks for r in runs),
        "tasks_blocked": sum(r.blocked for r in runs),
        "calls_blocked": len(blocked_calls),
        # the replay's own limit: no call blocked, yet AgentDojo's utility check fails
        "utility_failed_unblocked": [
            f"{r.suite}/{r.user_task}" for r in runs if not r.blocked and not r.utility
        ],
        "by_suite": {
            suite: {
                "tasks": len(group),
                "completed": sum(r.completed for r in group),
                "with_write": sum(r.has_write for r in group),
                "completed_with_write": sum(r.completed for r in group if r.has_write),
            }
            for suite, group in _group(runs, lambda r: r.suite).items()
        },
        "blocked_by_violation": _ranked(by_violation),
        "blocked_by_tool": _ranked(by_tool),
    }


def _attacks(runs: list[AttackRun]) -> dict[str, Any]:
    call_level = [r for r in runs if r.kind == CALL_LEVEL]
    synthesized = [r for r in call_level if r.synthesized]

    def tally(group: list[AttackRun]) -> dict[str, int]:
        level = [r for r in group if r.kind == CALL_LEVEL]
        return {
            "call_level": len(level),
            "succeeded": sum(bool(r.success) for r in level),
            "synthesized": sum(r.synthesized for r in level),
        }

    return {
        "pairs": len(runs),
        "call_level": len(call_level),
        "call_level_succeeded": sum(bool(r.success) for r in call_level),
        # of those, the pairs whose injection calls are ours (.synthesized), not AgentDojo's
        "call_level_synthesized": len(synthesized),
        "call_level_synthesized_succeeded": sum(bool(r.success) for r in synthesized),
        "output_only": sum(r.kind == OUTPUT_ONLY for r in runs),
        "no_ground_truth": sum(r.kind == NO_GROUND_TRUTH for r in runs),
        "injected_calls_asked": sum(1 for r in call_level for c in r.injected_calls if c.asked),
        "stopped_by_denied_ask": sum(1 for r in call_level if r.denied and not r.success),
        "user_calls_asked": sum(1 for r in call_level for c in r.calls if c.asked and c.phase == "user"),
        "utility_under_attack": sum(bool(r.utility) for r in call_level),
        "by_suite": {suite: tally(group) for suite, group in _group(runs, lambda r: r.suite).items()},
        "by_injection_task": {
            key: tally(group)
            for key, group in _group(runs, lambda r: f"{r.suite}/{r.injection_task}").items()
            if any(r.kind == CALL_LEVEL for r in group)
        },
        "not_replayed": {
            key: group[0].kind
            for key, group in _group(runs, lambda r: f"{r.suite}/{r.injection_task}").items()
            if group[0].kind != CALL_LEVEL
        },
    }


def records(benign: list[TaskRun], attacks: list[AttackRun]) -> dict[str, list[dict[str, Any]]]:
    """Every run, call by call, without values (tools, outcomes, violations)."""
    return {"benign": [r.record() for r in benign], "attacks": [r.record() for r in attacks]}


def write_diagnostics(path: Path, benign: list[TaskRun], attacks: list[AttackRun], prompts: dict) -> int:
    """One JSON line per blocked benign call and per successful attack, values included. Returns the
    number of lines."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for run in benign:
        for index, call in enumerate(run.calls):
            if call.outcome == BLOCKED:
                lines.append(
                    {
                        "type": "blocked_benign_call",
                        "suite": run.suite,
                        "user_task": run.user_task,
                        "prompt": prompts[(run.suite, run.user_task)],
                        "call_index": index,
                        **_with_values(call),
                    }
                )
    for run in attacks:
        if run.success:
            lines.append(
                {
                    "type": "successful_attack",
                    "suite": run.suite,
                    "user_task": run.user_task,
                    "injection_task": run.injection_task,
                    "synthesized": run.synthesized,
                    "goal": prompts[(run.suite, run.injection_task)],
                    "calls": [_with_values(c) for c in run.calls],
                }
            )
    with path.open("w", encoding="utf-8") as out:
        for line in lines:
            out.write(json.dumps(line, default=str, sort_keys=True) + "\n")
    return len(lines)


def _with_values(call: Call) -> dict[str, Any]:
    return {**call.summary(), "arguments": call.arguments, "sources": call.sources}


def _group(items: Iterable[Any], key: Any) -> dict[str, list[Any]]:
    groups: dict[str, list[Any]] = defaultdict(list)
    for item in items:
        groups[key(item)].append(item)
    return dict(groups)


def _ranked(counts: dict[str, Counter]) -> list[dict[str, Any]]:
    """Most tasks first (then most calls, then by name): a list, so the order survives JSON."""
    order = sorted(counts, key=lambda k: (-counts[k]["tasks"], -counts[k]["calls"], k))
    return [{"cause": k, "tasks": counts[k]["tasks"], "calls": counts[k]["calls"]} for k in order]


__all__ = ["records", "summarise", "write_diagnostics"]
