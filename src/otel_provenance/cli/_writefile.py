"""File output for the CLI: whole-file atomic writes, so a reader never sees half a report.

The text goes to a sibling temporary file that is then renamed over the target. The result has the
permissions the user would expect from a plain write: an existing file keeps its mode, and a new
file gets the default for the user's umask (the temporary file is created with ``0o666`` and the
kernel applies the umask) — not the ``0o600`` of ``tempfile.mkstemp``. An interrupted write
(Ctrl-C) removes the temporary file and leaves the target as it was.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

from ..errors import ConfigurationError


def write_text(path: str, text: str) -> None:
    """Write ``text`` to ``path`` (UTF-8, ``\\n`` line ends) by writing a sibling file and renaming it."""
    target = Path(path)
    tmp: Path | None = None
    try:
        try:
            mode: int | None = stat.S_IMODE(os.stat(target).st_mode)
        except FileNotFoundError:
            mode = None
        name = target.parent / f".{target.name}.{secrets.token_hex(6)}.tmp"
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        tmp = name
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            if mode is not None:
                os.fchmod(f.fileno(), mode)
            f.write(text)
        os.replace(tmp, target)
    except BaseException as exc:  # a write error, or Ctrl-C mid-write: no temporary file is left
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        if not isinstance(exc, OSError):
            raise
        raise ConfigurationError(f"{path}: cannot write ({exc.strerror or type(exc).__name__})") from None
