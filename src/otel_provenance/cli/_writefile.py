"""File output for the CLI: whole-file atomic writes, so a reader never sees half a report — and
never a device, a FIFO or a symlink replaced by a regular file.

What the target is decides how it is written (``_plan``):

- a regular file, or a name that does not exist yet: the text goes to a sibling temporary file that
  is then renamed over the target. The result has the permissions the user would expect from a
  plain write: an existing file keeps its mode, and a new file gets the default for the user's umask
  (the temporary file is created with ``0o666`` and the kernel applies the umask) — not the ``0o600``
  of ``tempfile.mkstemp``. An interrupted write (Ctrl-C) removes the temporary file and leaves the
  target as it was.
- a symlink is followed: its target is written by these same rules and the link stays a link
  (a dangling link creates its target, as a shell's ``>`` does).
- the process's own standard output or error (``/dev/stdout``, ``/dev/fd/2``, or any name for the
  file the shell redirected them to): written in place through that descriptor, after what was
  already printed — never renamed over, which would orphan the shell's open file.
- a character device (``/dev/null``, a terminal) or a FIFO: opened and written in place, without
  creating or truncating anything. A FIFO waits for its reader, as ``echo > fifo`` does — but not
  forever (#50): no reader within ``OTEL_PROVENANCE_WRITE_DEADLINE`` seconds (default 60), or a
  reader that takes nothing for that long, is an error naming the FIFO, and no report is claimed
  written. A device that cannot take the bytes (``/dev/full``) is an error, and stays the device.
- a directory, a socket or a block device: refused with a message naming what it is.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import io
import os
import secrets
import select
import signal
import stat
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from .. import environment
from ..errors import ConfigurationError
from . import _interrupt

DEFAULT_DEADLINE_S = 60.0  # a FIFO's reader: to open it, and to take more of the report
_POLL_S = 0.05  # how often the open of a FIFO is tried again while no reader has it open

_REFUSED = {
    stat.S_IFDIR: "a directory",
    stat.S_IFSOCK: "a socket",
    stat.S_IFBLK: "a block device",
}


class _WriteFailed(OSError):
    """A write to the target failed (told apart from the caller's own errors inside the block)."""


class _Target(io.FileIO):
    def write(self, b: object) -> int:  # type: ignore[override]
        try:
            return super().write(b)  # type: ignore[arg-type]
        except OSError as exc:
            raise _WriteFailed(exc.errno, exc.strerror) from exc


class _FifoTarget(_Target):
    """A FIFO opened without blocking: a write that the pipe cannot take yet waits for the reader —
    up to ``deadline_s`` without progress, then fails (a reader that went to sleep holds no CI job)."""

    def __init__(self, fd: int, deadline_s: float) -> None:
        super().__init__(fd, "w")
        self.deadline_s = deadline_s

    def write(self, b: object) -> int:  # type: ignore[override]
        while True:
            written = super().write(b)
            if written is not None:
                return written
            poller = select.poll()
            poller.register(self.fileno(), select.POLLOUT)
            if not poller.poll(self.deadline_s * 1000):
                raise _WriteFailed(errno.ETIMEDOUT, f"its reader took nothing for {self.deadline_s:g} s")


def _text(fd: int, raw: io.FileIO | None = None) -> TextIO:
    target = raw if raw is not None else _Target(fd, "w")
    return io.TextIOWrapper(io.BufferedWriter(target), encoding="utf-8", newline="\n")


def write_deadline() -> float:
    """``OTEL_PROVENANCE_WRITE_DEADLINE`` (seconds, > 0), else :data:`DEFAULT_DEADLINE_S`."""
    name = environment.OTEL_PROVENANCE_WRITE_DEADLINE
    value = environment.number(name)
    if value is None:
        return DEFAULT_DEADLINE_S
    if not value > 0 or value == float("inf"):
        raise ConfigurationError(f"{name}: expected a positive number of seconds, found {value!r}")
    return value


def _open_fifo(path: str, deadline_s: float) -> int:
    """Open a FIFO for writing once a reader has it open (``ENXIO`` until then), trying again until
    ``deadline_s``; a ``ConfigurationError`` naming it when nobody came."""
    ends = time.monotonic() + deadline_s
    while True:
        try:
            return os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
        except OSError as exc:
            if exc.errno != errno.ENXIO:
                raise
        if time.monotonic() >= ends:
            raise ConfigurationError(
                f"{path}: a FIFO that nobody opened for reading within {deadline_s:g} s "
                f"({environment.OTEL_PROVENANCE_WRITE_DEADLINE}); nothing written"
            )
        time.sleep(_POLL_S)


_held: contextvars.ContextVar[list[tuple[Path, Path]] | None] = contextvars.ContextVar("held", default=None)


@contextlib.contextmanager
def committed_together() -> Iterator[None]:
    """The regular files written in the block are put in place together when it ends, or none is:
    each is written whole to its temporary file first; then the renames are done in one step that a
    Ctrl-C cannot cut (SIGINT is held for those few system calls and acted on after them). Whatever
    ends the block early — an error, a Ctrl-C — removes every temporary file. A device, FIFO or the
    process's own output is written in place as it comes, as always."""
    held: list[tuple[Path, Path]] = []
    token = _held.set(held)
    try:
        yield
        _interrupt.check()
        with _sigint_held():
            while held:
                tmp, target = held[0]
                try:
                    os.replace(tmp, target)
                except OSError as exc:
                    raise _cannot(str(target), exc) from None
                held.pop(0)
    finally:
        _held.reset(token)
        for tmp, _ in held:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


@contextlib.contextmanager
def _sigint_held() -> Iterator[None]:
    try:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    except (AttributeError, ValueError, OSError):  # no POSIX signal masks here: nothing to hold
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def write_text(path: str, text: str) -> None:
    """Write ``text`` to ``path`` (UTF-8, ``\\n`` line ends): atomically to a regular file, in place
    to a device or FIFO, through a symlink to its target; never replacing a special file."""
    with open_output(path) as out:
        out.write(text)


@contextlib.contextmanager
def open_output(path: str) -> Iterator[TextIO]:
    """A text stream for ``path``, committed when the block ends without an exception (see the
    module's docstring for what each kind of target gets). Errors are ``ConfigurationError``."""
    try:
        how, where = _plan(path)
    except OSError as exc:
        raise _cannot(path, exc) from None
    if how == "refuse":
        raise ConfigurationError(f"{path}: is {where}; a report can only go to a file, a device or a FIFO")
    if how == "atomic":
        with _atomic(path, Path(where)) as out:
            yield out
        return
    with _in_place(path, how, where) as out:
        yield out


def _plan(path: str) -> tuple[str, str]:
    """How to write ``path``: ``("atomic", real path)``, ``("fd", descriptor)``, ``("open", path)``
    or ``("refuse", what it is)``."""
    try:
        st = os.stat(path)  # follows symlinks: what the bytes would land in
    except FileNotFoundError:
        return "atomic", os.path.realpath(path)  # new file (a dangling link's target is created)
    kind = stat.S_IFMT(st.st_mode)
    if kind in _REFUSED:
        return "refuse", _REFUSED[kind]
    for fd in (1, 2):  # the process's own stdout/stderr, by whatever name (/dev/stdout, a file …)
        with contextlib.suppress(OSError):
            mine = os.fstat(fd)
            if (mine.st_dev, mine.st_ino) == (st.st_dev, st.st_ino):
                return "fd", str(fd)
    if kind == stat.S_IFREG:
        return "atomic", os.path.realpath(path)  # a symlink's target is replaced, the link kept
    return "open", path  # a character device or a FIFO: written in place


@contextlib.contextmanager
def _atomic(path: str, target: Path) -> Iterator[TextIO]:
    tmp: Path | None = None
    body = False
    try:
        try:
            mode: int | None = stat.S_IMODE(os.stat(target).st_mode)
        except FileNotFoundError:
            mode = None
        name = target.parent / f".{target.name}.{secrets.token_hex(6)}.tmp"
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        tmp = name
        if mode is not None:
            os.fchmod(fd, mode)
        with _text(fd) as f:
            body = True
            yield f
            body = False
        _interrupt.check()  # after a Ctrl-C (even one Python swallowed) no report is put in place
        held = _held.get()
        if held is not None:
            held.append((tmp, target))  # put in place with the others (committed_together)
            return
        os.replace(tmp, target)
    except BaseException as exc:  # a write error, or Ctrl-C mid-write: no temporary file is left
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        if not isinstance(exc, OSError) or (body and not isinstance(exc, _WriteFailed)):
            raise  # the caller's own error (reading its input) is not a write error
        raise _cannot(path, exc) from None


@contextlib.contextmanager
def _in_place(path: str, how: str, where: str) -> Iterator[TextIO]:
    body = False
    raw: io.FileIO | None = None
    try:
        if how == "fd":
            for stream in (sys.stdout, sys.stderr):  # what was printed before stays before
                with contextlib.suppress(Exception):
                    stream.flush()
            fd = os.dup(int(where))
        else:
            if stat.S_ISFIFO(os.stat(where).st_mode):
                deadline = write_deadline()
                fd = _open_fifo(where, deadline)  # no O_CREAT, no O_TRUNC
                raw = _FifoTarget(fd, deadline)
            else:
                fd = os.open(where, os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC)  # no O_CREAT, no O_TRUNC
            if stat.S_IFMT(os.fstat(fd).st_mode) == stat.S_IFREG:  # swapped for a file since _plan
                os.close(fd)
                raise ConfigurationError(f"{path}: changed while it was being opened; not written")
        with _text(fd, raw) as f:
            body = True
            yield f
            body = False
    except OSError as exc:
        if body and not isinstance(exc, _WriteFailed):
            raise  # the caller's own error (reading its input) is not a write error
        raise _cannot(path, exc) from None


def _cannot(path: str, exc: OSError) -> ConfigurationError:
    return ConfigurationError(f"{path}: cannot write ({exc.strerror or type(exc).__name__})")
