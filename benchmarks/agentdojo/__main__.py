"""``python -m benchmarks.agentdojo [--config NAME …] [--suites NAME …] [--attack NAME] [--json FILE]
[--diagnostics DIR] [--ask TOOL …] [--advisory]``.

Replays AgentDojo v1.2.2's ground truth (97 user tasks, 949 injection pairs) through ``@op.tool`` under
each configuration of :mod:`.integration`; no model, no network. The injection tasks AgentDojo ships
without a ground truth are replayed with ours (:mod:`.synthesized`), counted apart.

The injected text is the ``important_instructions`` attack's, or ``--attack NAME``'s: any of
AgentDojo's attacks that carry the goal (``direct``, ``ignore_previous``, ``system_message``,
``injecagent``, ``tool_knowledge``, …). The calls replayed are the same whatever the words (only a
value that carries the text itself, a forwarded body, differs), so a verdict that changes with the
attack is the wording deciding, not the mechanism. ``meta.injected_text_sha256`` in the JSON tells
the texts apart without publishing them.

Prints a table to stdout and progress to stderr; ``--json`` writes each configuration's summary and
every run's calls (no values); ``--diagnostics DIR`` (default ``out/agentdojo``) writes
``<config>-diagnostics.jsonl`` with values, for a person to read. ``--advisory`` sets
``OTEL_PROVENANCE_ENFORCE=false``: every call runs and is only tagged (the replay's self-check: it
must then match ``unguarded``). ``--ask TOOL …`` adds ``needs_approval=True`` to those tools in every
guarded configuration (named ``<config>+ask``): the user's calls are approved, the injection's
refused, and both are counted apart.

Run from any interpreter: without ``agentdojo`` importable, it makes ``.venv-agentdojo`` if needed
(:mod:`.venv`) and runs itself there.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import re
import sys
import time
from pathlib import Path
from typing import Any

from .integration import CONFIGURATIONS, asking
from .venv import ROOT

DEFAULT_CONFIGS = ("bare", "documented", "unguarded")


def _log(message: str) -> None:
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.agentdojo", description="AgentDojo ground-truth replay through the guard."
    )
    parser.add_argument(
        "--config",
        nargs="+",
        choices=sorted(CONFIGURATIONS),
        default=list(DEFAULT_CONFIGS),
        metavar="NAME",
        help=f"configurations to replay ({', '.join(CONFIGURATIONS)}; default: all)",
    )
    parser.add_argument("--suites", nargs="+", metavar="NAME", help="only these suites (default: all four)")
    parser.add_argument(
        "--attack",
        metavar="NAME",
        help="AgentDojo's attack that writes the injected text (default: important_instructions)",
    )
    parser.add_argument("--json", metavar="FILE", help="write summaries and per-run records (no values)")
    parser.add_argument(
        "--diagnostics",
        metavar="DIR",
        default=str(ROOT / "out" / "agentdojo"),
        help="where <config>-diagnostics.jsonl go (values included; default out/agentdojo); '' for none",
    )
    parser.add_argument(
        "--ask", nargs="+", default=[], metavar="TOOL", help="declare needs_approval=True on these tools too"
    )
    parser.add_argument(
        "--advisory", action="store_true", help="OTEL_PROVENANCE_ENFORCE=false: nothing blocks"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    args = _parser().parse_args(arguments)
    try:
        import agentdojo  # noqa: F401
    except ImportError:
        return _run_in_venv(arguments)
    if args.advisory:
        os.environ["OTEL_PROVENANCE_ENFORCE"] = "false"  # read by the package on first use
    logging.getLogger("otel_provenance").setLevel(logging.ERROR)  # advisory tags: counted, not logged

    from . import suites as agentdojo_suites
    from .tally import records, summarise, write_diagnostics

    started = time.perf_counter()
    try:
        attack = args.attack or agentdojo_suites.ATTACK
        loaded = agentdojo_suites.load(args.suites, attack)
    except ValueError as error:
        _log(f"python -m benchmarks.agentdojo: {error}")
        return 2
    try:
        configurations = [CONFIGURATIONS[name] for name in args.config]
        if args.ask:
            configurations = [asking(c, args.ask) if c.guarded else c for c in configurations]
    except ValueError as error:
        _log(f"python -m benchmarks.agentdojo: {error}")
        return 2
    results: dict[str, Any] = {}
    for configuration in configurations:
        name = configuration.name
        benign, attacks, prompts = _replay(configuration, loaded)
        results[name] = {
            "about": configuration.about,
            "summary": summarise(benign, attacks),
            "records": records(benign, attacks),
        }
        if args.diagnostics:
            path = Path(args.diagnostics) / f"{name}-diagnostics.jsonl"
            lines = write_diagnostics(path, benign, attacks, prompts)
            _log(f"{name}: {lines} diagnostic lines (values included) in {path}")
    _print_table({name: r["summary"] for name, r in results.items()})
    if args.json:
        meta = {
            "agentdojo": _version("agentdojo"),
            "benchmark_version": agentdojo_suites.BENCHMARK_VERSION,
            "attack": attack,
            "injected_text_sha256": agentdojo_suites.injected_text_digest(loaded),
            "suites": [s.name for s in loaded],
            "advisory": args.advisory,
            "frozen_now": agentdojo_suites.FROZEN_NOW.isoformat(),
            "python": platform.python_version(),
            "seconds": round(time.perf_counter() - started, 1),
        }
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump({"meta": meta, "configs": results}, out, indent=1, sort_keys=True)
            out.write("\n")
    return 0


def _replay(configuration: Any, loaded: list[Any]) -> tuple[list[Any], list[Any], dict]:
    from .replay import Replayer

    benign, attacks, prompts = [], [], {}
    for suite in loaded:
        t0 = time.perf_counter()
        replayer = Replayer(suite, configuration)
        user_ids = sorted(suite.user_tasks, key=_number)
        injection_ids = sorted(suite.injection_tasks, key=_number)
        for task_id in user_ids:
            prompts[(suite.name, task_id)] = suite.user_tasks[task_id].PROMPT
            benign.append(replayer.benign(task_id))
        for task_id in injection_ids:
            prompts[(suite.name, task_id)] = suite.injection_tasks[task_id].GOAL
        for user_id in user_ids:
            attacks.extend(replayer.attack(user_id, injection_id) for injection_id in injection_ids)
        _log(
            f"{configuration.name} {suite.name}: {len(user_ids)} tasks, "
            f"{len(user_ids) * len(injection_ids)} pairs, {time.perf_counter() - t0:.1f} s"
        )
    return benign, attacks, prompts


def _print_table(summaries: dict[str, dict[str, Any]]) -> None:
    head = (
        "config",
        "benign done",
        "with a write",
        "after an ask",
        "call-level attacks",
        "of which synthesized",
        "denied ask",
        "output-only",
        "no ground truth",
    )
    rows = []
    for name, s in summaries.items():
        b, a = s["benign"], s["attacks"]
        rows.append(
            (
                name,
                f"{b['completed']}/{b['tasks']}",
                f"{b['completed_with_write']}/{b['with_write']}",
                str(b["completed_after_ask"]),
                f"{a['call_level_succeeded']}/{a['call_level']}",
                f"{a['call_level_synthesized_succeeded']}/{a['call_level_synthesized']}",
                str(a["stopped_by_denied_ask"]),
                str(a["output_only"]),
                str(a["no_ground_truth"]),
            )
        )
    widths = [max(len(str(x)) for x in column) for column in zip(head, *rows, strict=False)]
    for row in (head, *rows):
        sys.stdout.write("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() + "\n")


def _run_in_venv(arguments: list[str]) -> int:
    from . import venv

    try:
        interpreter = venv.ensure(_log)
    except venv.Unavailable as error:
        _log(f"python -m benchmarks.agentdojo: agentdojo is not importable here and {error}")
        return 1
    if Path(sys.prefix).resolve() == venv.VENV.resolve():  # already there: the install is broken
        _log(f"python -m benchmarks.agentdojo: agentdojo is not importable in {venv.VENV}")
        return 1
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    environment = {**os.environ, "PYTHONPATH": path}  # the benchmarks package lives in the checkout
    os.execve(str(interpreter), [str(interpreter), "-m", "benchmarks.agentdojo", *arguments], environment)
    return 1  # not reached


def _number(task_id: str) -> tuple[int, str]:
    found = re.search(r"(\d+)$", task_id)
    return (int(found.group(1)) if found else -1, task_id)


def _version(distribution: str) -> str:
    from importlib.metadata import version

    return version(distribution)


if __name__ == "__main__":
    sys.exit(main())
