"""Shared pieces of the CLI: exit codes, the output streams, usage errors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, TextIO

from ..offline.outcome import Outcome
from . import _interrupt

# The exit codes are the outcomes' (offline.outcome): one place says which number means what.
EXIT_PASS: Final = Outcome.PASS.exit_code
EXIT_ERROR: Final = Outcome.ERROR.exit_code
EXIT_FAIL: Final = Outcome.FAIL.exit_code
EXIT_INSUFFICIENT: Final = Outcome.INSUFFICIENT.exit_code


class UsageError(Exception):
    """Bad command-line usage: exits 1 with the message on stderr."""


@dataclass(frozen=True, slots=True)
class IO:
    stdout: TextIO
    stderr: TextIO

    def out(self, text: str = "") -> None:
        _interrupt.check()  # nothing is printed after a Ctrl-C, even one Python swallowed
        self.stdout.write(text + "\n")

    def error(self, text: str) -> None:
        self.stderr.write(f"otel-provenance: error: {text}\n")

    def warn(self, text: str) -> None:
        self.stderr.write(f"otel-provenance: warning: {text}\n")

    def note(self, text: str) -> None:
        """Something the user should know that needs no action (what was left out of normal input)."""
        self.stderr.write(f"otel-provenance: note: {text}\n")

    @property
    def is_tty(self) -> bool:
        isatty = getattr(self.stderr, "isatty", None)
        return bool(isatty and isatty())
