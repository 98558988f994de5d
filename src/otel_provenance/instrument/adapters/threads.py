"""Tool calls on threads a framework owns: carry the run there, or say that a call ran outside one (#47).

``op.run`` binds the run in a ``contextvars`` variable, and Python copies a context into a thread only
when asked: ``asyncio.to_thread`` does, ``loop.run_in_executor`` does not. Microsoft AutoGen runs a
plain ``def`` tool with ``loop.run_in_executor(None, ...)`` (its ``FunctionTool``), so there the call
sees no run and no span: every argument reads as assumed, a sourced write is blocked, and each call
is a trace of its own. ``async def`` tools run in the agent's own task and are right.

:func:`carry_context_into_threads` gives the loop a default executor that runs each call in a copy of
the caller's context — as ``asyncio.to_thread`` does — so the tool sees its ``op.run`` and the
framework's ``execute_tool`` span (which ``@op.tool`` then adopts: one span per call, in the run's
trace). Call it once in the coroutine that runs the agent, before the agent runs.

A call that finds no run says so, once per tool and process (``call/outside_run.py``): its block —
nothing can be observed outside a run — is never silent.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

_T = TypeVar("_T")


class ContextThreadPoolExecutor(ThreadPoolExecutor):
    """A thread pool whose every call runs in a copy of the context it was submitted from."""

    def submit(self, fn: Callable[..., _T], /, *args: Any, **kwargs: Any) -> Future[_T]:
        return super().submit(contextvars.copy_context().run, fn, *args, **kwargs)


def carry_context_into_threads(loop: asyncio.AbstractEventLoop | None = None) -> ContextThreadPoolExecutor:
    """Make ``loop``'s default executor (the running loop's when None) a :class:`ContextThreadPoolExecutor`,
    so a tool a framework runs there with ``loop.run_in_executor(None, ...)`` sees the ``op.run`` it was
    called in. Returns the executor; calling it again on the same loop changes nothing."""
    loop = loop if loop is not None else asyncio.get_running_loop()
    current = getattr(loop, "_default_executor", None)  # asyncio's own record; absent elsewhere
    if isinstance(current, ContextThreadPoolExecutor):
        return current
    executor = ContextThreadPoolExecutor(thread_name_prefix="otel-provenance")
    loop.set_default_executor(executor)
    return executor
