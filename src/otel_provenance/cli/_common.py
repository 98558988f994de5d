"""Shared pieces of the CLI: exit codes, the output streams, usage errors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, TextIO

EXIT_PASS: Final = 0
EXIT_ERROR: Final = 1
EXIT_FAIL: Final = 2
EXIT_INSUFFICIENT: Final = 3


class UsageError(Exception):
    """Bad command-line usage: exits 1 with the message on stderr."""


@dataclass(frozen=True, slots=True)
class IO:
    stdout: TextIO
    stderr: TextIO

    def out(self, text: str = "") -> None:
        self.stdout.write(text + "\n")

    def error(self, text: str) -> None:
        self.stderr.write(f"otel-provenance: error: {text}\n")

    def warn(self, text: str) -> None:
        self.stderr.write(f"otel-provenance: warning: {text}\n")

    @property
    def is_tty(self) -> bool:
        isatty = getattr(self.stderr, "isatty", None)
        return bool(isatty and isatty())
