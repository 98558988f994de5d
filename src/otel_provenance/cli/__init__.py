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
import importlib
import os
import re
import sys
from collections.abc import Iterator, Sequence
from types import ModuleType
from typing import TextIO

from .. import __version__
from ..errors import OtelProvenanceError
from . import _interrupt
from ._common import EXIT_ERROR, IO, UsageError

#: What only the command line needs, installed by ``pip install 'otel-provenance[cli]'``.
CLI_EXTRA_MODULES = {"yaml": "PyYAML", "httpx": "httpx"}
CLI_EXTRA_HINT = "pip install 'otel-provenance[cli]'"

#: The command modules, in the order ``--help`` lists them.
_COMMAND_MODULES = ("audit", "diff", "fingerprint", "mine", "routes", "gate", "fetch", "keygen")


def _commands(names: Sequence[str] = _COMMAND_MODULES) -> tuple[ModuleType, ...]:
    """The command modules, imported when the parser is built — inside ``run``, not when this
    package is imported: loading them is most of the command's start-up, and a Ctrl-C then must end
    as "interrupted", exit 1, like one at any other moment, not a traceback. The base install is for
    instrumented apps: without the cli extra, :func:`run` names the extra (:func:`_missing_extra`)."""
    return tuple(importlib.import_module(f"{__name__}.{name}") for name in names)


def _missing_extra(missing: ModuleNotFoundError) -> UsageError | None:
    """The usage error for a module of the cli extra that is not installed — found when a command
    is loaded, or later, when it reaches a part that needs it (SigNoz's HTTP client) — else None."""
    if missing.name not in CLI_EXTRA_MODULES:
        return None
    package = CLI_EXTRA_MODULES[missing.name]
    return UsageError(f"the command line needs the cli extra ({package} is missing): {CLI_EXTRA_HINT}")


_INVALID_CHOICE = re.compile(
    r"argument \w+: invalid choice: '(?P<given>[^']*)' \(choose from (?P<known>.*)\)$"
)  # argparse's message for a command or action it does not know


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing and calling ``sys.exit(2)`` (2 means *fail* here),
    and that names an unknown option first, with the closest known one: a misspelt ``--contrat``
    reads "unknown option --contrat (did you mean --contract?)", not "--contract is required"."""

    _given: Sequence[str] = ()

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[no-untyped-def,override]
        self._given = list(args) if args is not None else sys.argv[1:]
        parsed, extras = super().parse_known_args(args, namespace)
        unknown = self._unknown_option(extras)
        if unknown is not None:
            self.error(self._unknown_message(unknown))
        return parsed, extras

    def error(self, message: str) -> None:  # type: ignore[override]
        # A leaf command's other complaints (a required option missing, a value missing) are most
        # often the unknown option's doing: name that one. A parent sees its commands' options.
        if not self._subparsers:
            unknown = self._unknown_option(self._given)
            if unknown is not None:
                message = self._unknown_message(unknown)
        choice = _INVALID_CHOICE.match(message)
        if choice is not None:  # a misspelt command or action: name the closest one
            close = _close_matches(choice["given"], re.findall(r"'([^']*)'", choice["known"]), n=1)
            message += f" (did you mean {close[0]}?)" if close else ""
        raise UsageError(f"{self.prog}: {message}")

    def _unknown_option(self, strings: Sequence[str]) -> str | None:
        known = self._option_string_actions
        for text in strings:
            if text == "--":
                break
            if not text.startswith("-") or text == "-" or self._negative_number_matcher.match(text):
                continue
            name = text.split("=", 1)[0]
            if name in known or (not name.startswith("--") and name[:2] in known):
                continue  # -oFILE
            if name.startswith("--") and any(option.startswith(name) for option in known):
                continue  # an abbreviation argparse accepts (or names as ambiguous)
            return name
        return None

    def _unknown_message(self, name: str) -> str:
        # Compared without the leading dashes, which every option shares: with them, --bogus was
        # "close" to --jobs. 0.75 still names --contract for --contrat and --jobs for --jbos.
        options = {option[2:]: option for option in self._option_string_actions if option.startswith("--")}
        close = _close_matches(name.lstrip("-"), options, n=1, cutoff=0.75)
        return f"unknown option {name}" + (f" (did you mean {options[close[0]]}?)" if close else "")

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


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The parser of every command, or — when ``argv`` starts with a command's name — of that one
    only: a gate in CI imports the gate, not the audit's HTML pages or the mining (start-up is paid
    on every run, and counted in the gate's time, benchmark case 4). ``--help``, ``--version`` and a
    misspelt command still see them all."""
    parser = _Parser(prog="otel-provenance", description="Prove what an AI agent did, from its traces.")
    parser.add_argument("--version", action="version", version=f"otel-provenance {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    named = argv[0] if argv and argv[0] in _COMMAND_MODULES else None
    for module in _commands((named,) if named is not None else _COMMAND_MODULES):
        module.register(sub)
    return parser


def run(argv: Sequence[str] | None = None, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    stdout = stdout if stdout is not None else sys.stdout
    stderr = stderr if stderr is not None else sys.stderr
    io = IO(stdout, stderr)
    try:
        with _interrupt.heard():
            given = list(argv) if argv is not None else sys.argv[1:]
            parser = build_parser(given)
            with contextlib.redirect_stdout(stdout):  # --help writes to the stream we were given
                args = parser.parse_args(given)
            handler = getattr(args, "handler", None)
            if handler is None:
                parser.print_help(stderr)
                return EXIT_ERROR
            with _offline_gc():
                code = int(handler(args, io))
            _interrupt.check()  # a Ctrl-C Python swallowed on the way is no verdict
            return code
    except _ParserExit as exc:  # --help / --version
        if exc.message:
            stderr.write(exc.message)
        return 0 if exc.status == 0 else EXIT_ERROR
    except UsageError as exc:
        io.error(str(exc))
        return EXIT_ERROR
    except ModuleNotFoundError as exc:
        usage = _missing_extra(exc)
        if usage is None:
            io.error(f"internal error: {type(exc).__name__}: {exc}")
        else:
            io.error(str(usage))
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
    try:
        code = run()
        try:
            sys.stdout.flush()  # the buffered rest of the report; the reader may have gone
        except BrokenPipeError:
            _silence(sys.stdout)
            code = EXIT_ERROR
    except KeyboardInterrupt:  # between the command's end and the process's: said, not a traceback
        IO(sys.stdout, sys.stderr).error("interrupted")
        code = EXIT_ERROR
    sys.exit(code)


def _close_matches(word: str, candidates: list[str], n: int, cutoff: float = 0.6) -> list[str]:
    """``difflib.get_close_matches``, loaded only when a command line is mistyped."""
    import difflib

    return difflib.get_close_matches(word, candidates, n=n, cutoff=cutoff)
