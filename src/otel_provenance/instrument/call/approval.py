"""Ask a person: the approver the application gives, asked before a call that needs approval runs.

Any source of evidence consulted before a call may object with an *ask* (a
:class:`.decision.Objection` with ``ask=True``): the call may run only if a person approves it. The
trigger of this module is the tool's own ``needs_approval`` (``@op.tool(needs_approval=...)``, MCP's
``ToolPolicy``): :func:`needs_approval_check` is a check of the tool's :class:`.toolspec.ToolSpec`.
The lifecycle's *ask* step (:meth:`.lifecycle.ToolCall.ask`, between decide and start) hands an
:class:`ApprovalRequest` to the approver — the application's callable, sync or async, from
``op.configure(approver=...)`` or, for one run, ``op.run(approver=...)`` — and waits for its answer
until one deadline.

Only an explicit ``True`` approves (``answer is True``, not truthiness). ``False``, ``None``, any other
value, an exception, no answer before the deadline and no approver at all are denials: the call is
blocked and its body never runs. What is recorded of an answer is its :data:`outcome <OUTCOMES>` and,
for the error message, the answer's type or the exception's type — never a value.

How the approver runs, so that one that hangs never holds the agent past the deadline:

* from a sync tool (:func:`ask`): in a worker thread, waited with the deadline; an async approver runs
  in its own event loop in that thread;
* from an async tool (:func:`ask_async`): an async approver is a task of the caller's loop, cancelled at
  the deadline; a sync one runs in a worker thread whose answer the loop awaits.

Worker threads are daemon threads of their own, not an executor's: an executor is joined when the
interpreter exits (and ``asyncio.run`` joins its loop's default executor), so an approver that never
returns would hang the exit. An answer that arrives after the deadline is ignored. Each thread runs in
a copy of the caller's context (the current span, the run).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import copy
import inspect
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

from ... import semconv as sc
from ...errors import ConfigurationError
from ..base.internal_errors import reraise_own_bug_under_pytest
from .decision import RULE_APPROVAL, RULE_NEEDS_APPROVAL, Objection

APPROVED: Final = sc.APPROVAL_APPROVED
DENIED: Final = sc.APPROVAL_DENIED
TIMEOUT: Final = sc.APPROVAL_TIMEOUT
ERROR: Final = sc.APPROVAL_ERROR
OUTCOMES: Final = sc.APPROVAL_OUTCOMES

NO_APPROVER: Final = (
    "no approver is configured, so every call that needs approval is denied "
    "(op.configure(approver=...) or op.run(approver=...))"
)


@dataclass(frozen=True)
class ApprovalRequest:
    """What the approver is asked: may this call run?

    ``arguments`` are the call's passed arguments by name (as the span names them), in-process only:
    a read-only view, left out of ``repr`` so that logging a request logs no value. ``reasons`` are
    the asks (``<rule>:<detail>``, e.g. ``needs_approval:refund``); ``run_id`` is the run's
    ``agent.run.id`` (``None`` outside ``op.run``) and ``call_id`` the call's ``gen_ai.tool.call.id``
    (its ``agent.tool.call.id`` where the framework gave none), so an answer can be found on the
    trace. ``sources`` says, for each argument asked about because
    the user's request named where to take it from (``delegated:<name>``), which tool and field its
    value came from (``read_file content``): the person sees the value beside its source.
    """

    tool: str
    arguments: Mapping[str, Any] = field(repr=False)
    reasons: tuple[str, ...]
    run_id: str | None
    call_id: str
    side_effect: str = "none"
    sources: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:  # a view of a copy: the approver cannot change what the call gets
        object.__setattr__(self, "arguments", _ReadOnly(_copied(self.arguments)))


def _copied(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of each argument, so that nothing the approver does to a list or a dict it is shown
    reaches the tool's body (#50). A value that cannot be copied (a lock, an open file) is shown as it
    is: :func:`changed` then refuses a call whose arguments differ from what was decided."""
    out: dict[str, Any] = {}
    for name, value in arguments.items():
        try:
            out[name] = copy.deepcopy(value)
        except Exception:
            out[name] = value
    return out


class Answer(NamedTuple):
    """The approver's outcome (:data:`OUTCOMES`) and what it did, in words naming no value."""

    outcome: str
    detail: str


def approver_for(scope: Any, settings: Any) -> tuple[Callable[..., Any] | None, float]:
    """The approver and deadline of a call: the run's (``op.run(approver=...)``), else the settings'."""
    approver = getattr(scope, "approver", None)
    timeout = getattr(scope, "approval_timeout", None)
    return (
        approver if approver is not None else settings.approver,
        timeout if timeout is not None else settings.approval_timeout,
    )


# -- answers --------------------------------------------------------------------------------------------
def judge(answer: Any) -> Answer:
    """Only ``True`` itself approves; the detail names ``False``/``None`` or the answer's type."""
    if answer is True:
        return Answer(APPROVED, "the approver answered True")
    if answer is None or answer is False:
        return Answer(DENIED, f"the approver answered {answer}")
    return Answer(DENIED, f"the approver answered a {type(answer).__name__}, not True")


def raised(error: BaseException) -> Answer:
    return Answer(ERROR, f"the approver raised {type(error).__name__}")


def fault(error: BaseException) -> Answer:
    """The approval could not be asked (this package's machinery failed): a denial, by type only."""
    reraise_own_bug_under_pytest(error)
    return Answer(ERROR, f"the approval could not be asked ({type(error).__name__})")


def changed() -> Answer:
    """An approval that does not hold: the arguments changed while the approver was asked (another
    thread, or the approver itself) — a person approved other values than the call would run with."""
    return Answer(DENIED, "the approver answered True, but the call's arguments changed while it was asked")


def timed_out(timeout: float) -> Answer:
    return Answer(TIMEOUT, f"the approver gave no answer within {timeout:g} s")


def denial_message(tool: str, reasons: Iterable[str], answer: Answer) -> str:
    """The blocked call's error message: the asks, the approver's outcome — never a value."""
    return (
        f"{tool}: blocked: needs a person's approval ({', '.join(reasons)}), not given: "
        f"{answer.detail} ({RULE_APPROVAL}:{answer.outcome})"
    )


# -- asking ---------------------------------------------------------------------------------------------
def ask(approver: Callable[..., Any] | None, request: ApprovalRequest, timeout: float) -> Answer:
    """Ask ``approver`` from synchronous code: in a worker thread, waited ``timeout`` seconds."""
    if approver is None:
        return Answer(DENIED, NO_APPROVER)
    deadline = time.monotonic() + timeout
    done = threading.Event()
    box: list[Answer] = []

    def put(answer: Answer) -> None:
        box.append(answer)
        done.set()

    _start_worker(_answer_in_thread, approver, request, deadline, timeout, put)
    if not done.wait(timeout):
        return timed_out(timeout)
    return box[0]


async def ask_async(approver: Callable[..., Any] | None, request: ApprovalRequest, timeout: float) -> Answer:
    """Ask ``approver`` from a coroutine: an async approver as a task of this loop, a sync one in a
    worker thread; either waited ``timeout`` seconds without blocking the loop."""
    if approver is None:
        return Answer(DENIED, NO_APPROVER)
    if _is_async(approver):
        try:
            awaitable = approver(request)
        except Exception as error:
            return raised(error)
        if not inspect.isawaitable(awaitable):
            return judge(awaitable)
        return await _within(awaitable, timeout)
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Answer] = loop.create_future()

    def put(answer: Answer) -> None:  # from the worker thread
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody is waiting any more
            loop.call_soon_threadsafe(_settle, future, answer)

    _start_worker(_answer_in_thread, approver, request, time.monotonic() + timeout, timeout, put)
    done, _ = await asyncio.wait({future}, timeout=timeout)
    if not done:
        future.cancel()
        return timed_out(timeout)
    return future.result()


def _is_async(approver: Callable[..., Any]) -> bool:
    call = approver.__call__ if callable(approver) and not inspect.isroutine(approver) else None
    return inspect.iscoroutinefunction(approver) or inspect.iscoroutinefunction(call)


def _settle(future: asyncio.Future[Answer], answer: Answer) -> None:
    if not future.done():
        future.set_result(answer)


def _start_worker(work: Callable[..., None], *args: Any) -> None:
    """Run ``work(*args)`` in a daemon thread, in a copy of the caller's context."""
    context = contextvars.copy_context()
    threading.Thread(
        target=context.run, args=(work, *args), name="otel-provenance-approver", daemon=True
    ).start()


def _answer_in_thread(
    approver: Callable[..., Any],
    request: ApprovalRequest,
    deadline: float,
    timeout: float,
    put: Callable[[Answer], None],
) -> None:
    """The worker: call the approver; an awaitable answer is awaited in an event loop of this thread,
    cancelled at the deadline. Whatever happens is put as an answer (a late one is ignored)."""
    try:
        answer = approver(request)
        if inspect.isawaitable(answer):
            put(asyncio.run(_within(answer, timeout, deadline)))
        else:
            put(judge(answer))
    except BaseException as error:  # a thread's exception would be lost: it is the answer
        put(raised(error))


async def _within(awaitable: Any, timeout: float, deadline: float | None = None) -> Answer:
    """Await the approver's answer for ``timeout`` seconds (or until ``deadline``, on the monotonic
    clock); then cancel it and answer ``timeout`` (without waiting for the cancellation: an approver
    that ignores it does not hold the call)."""
    task = asyncio.ensure_future(awaitable)
    wait = timeout if deadline is None else max(0.0, deadline - time.monotonic())
    try:
        done, _ = await asyncio.wait({task}, timeout=wait)
    except BaseException:  # the caller was cancelled while waiting: so is the question
        task.cancel()
        raise
    if not done:
        task.cancel()
        task.add_done_callback(_retrieve)
        return timed_out(timeout)
    try:
        return judge(task.result())
    except (Exception, asyncio.CancelledError) as error:
        return raised(error)


def _retrieve(task: asyncio.Future[Any]) -> None:
    """Mark a cancelled approver's outcome as seen (else asyncio logs "exception never retrieved")."""
    if not task.cancelled():
        task.exception()


# -- the trigger: a tool that needs approval -----------------------------------------------------------
def needs_approval_check(
    needs_approval: bool | Callable[[Mapping[str, Any]], bool], where: str
) -> Callable[[Any], Iterator[Objection]] | None:
    """The check of ``needs_approval`` for :attr:`.toolspec.ToolSpec.checks` (``None`` for ``False``).

    ``True``: every call asks (``needs_approval:<tool>``). A callable is given the call's arguments
    (a read-only mapping, by name) and asks unless it returns ``False``. A callable that raises is a
    fault and blocks the call (``needs_approval:<tool>=<ExceptionType>``): fail closed.
    """
    if needs_approval is False:
        return None
    if needs_approval is True:
        return _always_ask
    if not callable(needs_approval) or isinstance(needs_approval, type):
        raise ConfigurationError(
            f"{where}: needs_approval must be True, False or a function of the arguments"
        )
    if _is_async(needs_approval):
        raise ConfigurationError(
            f"{where}: needs_approval must be a plain function (it is called before the call, synchronously)"
        )

    def check(call: Any) -> Iterator[Objection]:
        reason = f"{RULE_NEEDS_APPROVAL}:{call.spec.name}"
        try:
            needed = needs_approval(_ReadOnly(call.arguments))
        except Exception as error:
            yield Objection(f"{reason}={type(error).__name__}")
            return
        if needed is not False:
            yield Objection(reason, ask=True)

    return check


def _always_ask(call: Any) -> Iterator[Objection]:
    yield Objection(f"{RULE_NEEDS_APPROVAL}:{call.spec.name}", ask=True)


class _ReadOnly(Mapping[str, Any]):
    """A read-only view of a call's arguments, without copying them."""

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, Any]) -> None:
        self._data = data

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"<arguments {', '.join(map(str, self._data))}>"  # names only: a value could leak by print


__all__ = [
    "APPROVED",
    "DENIED",
    "ERROR",
    "OUTCOMES",
    "TIMEOUT",
    "Answer",
    "ApprovalRequest",
    "approver_for",
    "ask",
    "ask_async",
    "needs_approval_check",
]
