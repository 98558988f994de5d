"""The ``otel-provenance`` command line: the only place that prints and exits.

``run(argv, stdout, stderr) -> int`` is the whole CLI (tests call it with in-memory streams);
``main()`` is ``sys.exit(run(...))``. Each command lives in its own module here and exposes
``register(subparsers)``, which adds its parser with ``handler=<callable(args, io) -> int>``.

Exit codes (``gate check`` and ``audit``): 0 pass, 2 fail, 3 insufficient data, 1 any error.
Nothing but a pass exits 0; nothing but a failed threshold exits 2; usage errors exit 1.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sys
from collections.abc import Iterator, Sequence
from typing import TextIO

from .. import __version__
from ..errors import OtelProvenanceError
from . import audit, diff, fetch, fingerprint, gate, keygen, mine, routes
from ._common import EXIT_ERROR, IO, UsageError

_COMMANDS = (audit, diff, fingerprint, mine, routes, gate, fetch, keygen)


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing and calling ``sys.exit(2)`` (2 means *fail* here)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message}")

    def exit(self, status: int = 0, message: str | None = None) -> None:  # type: ignore[override]
        raise _ParserExit(status, message)


class _ParserExit(Exception):
    def __init__(self, status: int, message: str | None) -> None:
        self.status, self.message = status, message


@contextlib.contextmanager
def _offline_gc() -> Iterator[None]:
    """Reading traces allocates millions of acyclic objects; the default collector thresholds make
    it rescan them over and over (~15% of a gate check). Raise them while a command runs."""
    before = gc.get_threshold()
    gc.set_threshold(50_000, 20, 100)
    try:
        yield
    finally:
        gc.set_threshold(*before)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="otel-provenance", description="Prove what an AI agent did, from its traces.")
    parser.add_argument("--version", action="version", version=f"otel-provenance {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for module in _COMMANDS:
        module.register(sub)
    return parser


def run(argv: Sequence[str] | None = None, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    stdout = stdout if stdout is not None else sys.stdout
    stderr = stderr if stderr is not None else sys.stderr
    io = IO(stdout, stderr)
    parser = build_parser()
    try:
        with contextlib.redirect_stdout(stdout):  # --help writes to the stream we were given
            args = parser.parse_args(list(argv) if argv is not None else sys.argv[1:])
        handler = getattr(args, "handler", None)
        if handler is None:
            parser.print_help(stderr)
            return EXIT_ERROR
        with _offline_gc():
            return int(handler(args, io))
    except _ParserExit as exc:  # --help / --version
        if exc.message:
            stderr.write(exc.message)
        return 0 if exc.status == 0 else EXIT_ERROR
    except UsageError as exc:
        io.error(str(exc))
        return EXIT_ERROR
    except OtelProvenanceError as exc:
        io.error(str(exc))
        return EXIT_ERROR
    except KeyboardInterrupt:
        io.error("interrupted")
        return EXIT_ERROR
    except BrokenPipeError:  # `… | head` closed our stdout: end quietly (1: the output is not whole)
        _silence(stdout)
        return EXIT_ERROR
    except Exception as exc:  # an internal error is never a pass, never a fail
        io.error(f"internal error: {type(exc).__name__}: {exc}")
        return EXIT_ERROR


def _silence(stream: TextIO) -> None:
    """Point a closed pipe's file descriptor at /dev/null, so that the interpreter's final flush of
    the unwritten buffer cannot raise (and print) BrokenPipeError again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # not a real file (tests' StringIO): nothing to do
        pass


def main() -> None:
    code = run()
    try:
        sys.stdout.flush()  # the buffered rest of the report; the reader may have gone
    except BrokenPipeError:
        _silence(sys.stdout)
        code = EXIT_ERROR
    sys.exit(code)
