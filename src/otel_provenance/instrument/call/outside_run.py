"""A tool call that finds no ``op.run`` says so, once per tool and process (#47).

Outside a run nothing can be observed: every argument reads as assumed, a write is blocked, and the
call is a trace of its own. That is right for a call really made outside any run, and a silent false
block for one made inside a run whose context never reached the call's thread — Microsoft AutoGen runs
a plain ``def`` tool with ``loop.run_in_executor``, which does not copy the context
(``op.carry_context_into_threads()``, ``instrument/adapters/threads.py``, carries it). Either way the
call says so on the ``otel_provenance`` logger, naming the tool and the fix, never a value.
"""

from __future__ import annotations

import logging
import threading

_log = logging.getLogger("otel_provenance")
_warned: set[str] = set()
_warned_lock = threading.Lock()


def note_outside_run(tool_name: str) -> None:
    """Warn, once per tool and process, that a call of ``tool_name`` ran outside any ``op.run``."""
    with _warned_lock:
        if tool_name in _warned:
            return
        _warned.add(tool_name)
    _log.warning(
        "%s ran outside any op.run (thread %s): no argument can be observed there, so a write is blocked "
        "and the call is a trace of its own. If the agent was running inside op.run, the framework ran "
        "this tool on a thread without the run's context (AutoGen runs a plain def tool on the event "
        "loop's thread pool): call op.carry_context_into_threads() in the coroutine that runs the agent, "
        "or make the tool async def (docs/frameworks.md, AutoGen)",
        tool_name,
        threading.current_thread().name,
    )
