"""File output for the CLI: whole-file atomic writes, so a reader never sees half a report."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from ..errors import ConfigurationError


def write_text(path: str, text: str) -> None:
    """Write ``text`` to ``path`` (UTF-8, ``\\n`` line ends) by writing a sibling file and renaming it."""
    target = Path(path)
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.replace(tmp, target)
    except OSError as exc:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise ConfigurationError(f"{path}: cannot write ({exc.strerror or type(exc).__name__})") from None
