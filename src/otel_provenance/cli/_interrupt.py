"""A Ctrl-C is never lost.

Python turns SIGINT into ``KeyboardInterrupt`` wherever the main thread happens to be. Where that is
inside code whose exceptions Python only prints — a weak-reference callback of the import system
(``Exception ignored in: <function _get_module_lock.<locals>.cb>``), a ``__del__``, a garbage
collector callback — the interrupt is gone, and the command would go on to write its reports and
exit with a verdict. Found by Ctrl-C at random moments of ``gate check --jobs 2``
(``scripts/interrupt_check.py``): one in about ten went on to exit 2.

While a command runs (``heard``), the signal is remembered as well as raised, such a swallowed
``KeyboardInterrupt`` is not printed, and ``check()`` raises it again at the points where the command
would commit to something: reading on (the progress callback), printing, writing a report, returning
its exit code. Only in the main thread, and only over Python's own handler: an application that
calls ``run`` with a SIGINT handler of its own keeps it.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any

_heard = threading.Event()


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    _heard.set()
    raise KeyboardInterrupt


def _quiet_about_interrupts(previous: Any) -> Any:
    def hook(unraisable: Any) -> None:
        if issubclass(unraisable.exc_type, KeyboardInterrupt):
            return  # remembered by _on_sigint; check() raises it where it can be handled
        previous(unraisable)

    return hook


@contextlib.contextmanager
def heard() -> Iterator[None]:
    """Remember a Ctrl-C for the duration of a command (see the module's docstring)."""
    _heard.clear()
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return
    hook = sys.unraisablehook
    signal.signal(signal.SIGINT, _on_sigint)
    sys.unraisablehook = _quiet_about_interrupts(hook)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        sys.unraisablehook = hook


def check() -> None:
    """Raise ``KeyboardInterrupt`` if a Ctrl-C was heard during this command, handled or not."""
    if _heard.is_set():
        raise KeyboardInterrupt
