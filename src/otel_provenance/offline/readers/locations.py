"""Where trace files are: local paths, globs, and fsspec URLs (``file://``, ``s3://``, ``memory://`` …).

A plain path is opened with ``open`` and never needs fsspec. A URL (``scheme://…``) is opened through
fsspec, which the ``dask`` extra installs (``s3://`` also needs ``s3fs``, ``gs://`` ``gcsfs``, as
fsspec itself says). A path or URL with glob characters (``* ? [``) names every file it matches,
sorted; a pattern that matches nothing is an error, never an empty input (a file whose very name
holds such characters is that file).

Every reader opens files through :func:`open_binary` and sizes them with :func:`size`, so the
single-process path and the Dask workers read exactly the same bytes.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable
from typing import IO, Any, Final

from ...errors import TraceReadError

INSTALL_HINT: Final = "pip install 'otel-provenance[dask]'"
_GLOB_CHARS: Final = frozenset("*?[")


def is_url(path: str) -> bool:
    return "://" in path


def _fsspec(path: str) -> Any:
    try:
        import fsspec
    except ImportError:
        raise TraceReadError(path, f"reading a URL needs fsspec: {INSTALL_HINT}") from None
    return fsspec


def _filesystem(path: str) -> tuple[Any, str]:
    fsspec = _fsspec(path)
    try:
        fs, inner = fsspec.core.url_to_fs(path)
    except (ImportError, ValueError) as exc:  # an unknown scheme, or its package (s3fs…) missing
        raise TraceReadError(path, f"cannot open this URL ({exc})") from None
    return fs, inner


def expand(inputs: Iterable[str]) -> list[str]:
    """Each input as the files it names, in the order given (a glob's matches sorted)."""
    out: list[str] = []
    for item in inputs:
        item = str(item)
        if not _GLOB_CHARS & set(item) or (not is_url(item) and os.path.exists(item)):
            out.append(item)  # a plain path, or a file whose name holds glob characters
            continue
        if is_url(item):
            fs, inner = _filesystem(item)
            try:
                if fs.isfile(inner):
                    out.append(item)
                    continue
                matches = sorted(fs.unstrip_protocol(p) for p in fs.glob(inner) if not fs.isdir(p))
            except OSError as exc:
                raise TraceReadError(item, f"cannot list files ({type(exc).__name__}: {exc})") from None
        else:
            matches = sorted(p for p in glob.glob(item) if not os.path.isdir(p))
        if not matches:
            raise TraceReadError(item, "no file matches this pattern")
        out.extend(matches)
    return out


def open_binary(path: str) -> IO[bytes]:
    """The file's bytes, for reading (raises ``OSError`` as ``open`` does)."""
    if not is_url(path):
        return open(path, "rb")
    fs, inner = _filesystem(path)
    return fs.open(inner, "rb")


def size(path: str) -> int:
    """The file's size in bytes (raises ``OSError`` when it cannot be found)."""
    if not is_url(path):
        return os.stat(path).st_size
    fs, inner = _filesystem(path)
    info = fs.info(inner)
    if info.get("type") == "directory":
        raise IsADirectoryError(21, "Is a directory")
    return int(info.get("size") or 0)
