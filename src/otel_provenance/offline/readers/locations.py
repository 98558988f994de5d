"""Where trace files are: local paths, globs, and fsspec URLs (``file://``, ``s3://``, ``memory://`` …).

A plain path is opened with ``open`` and never needs fsspec. A URL (``scheme://…``) is opened through
fsspec, which the ``dask`` extra installs (``s3://`` also needs ``s3fs``, ``gs://`` ``gcsfs``, as
fsspec itself says). A path or URL with glob characters (``* ? [``) names every file it matches,
sorted; a pattern that matches nothing is an error, never an empty input (a file whose very name
holds such characters is that file). A directory names every file below it, recursively, sorted by
path; an empty one is an error too. Hidden files and folders (a name starting with ``.``) below a
directory are left out, as an editor's or a tool's own files are.

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
# A JSON Lines trace file holds lines of hundreds of KB (a batch of spans each): with the default 8 KiB
# buffer, reading one line costs dozens of reads and joins, which take half the time of reading it.
_BUFFER: Final = 1 << 20


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
        if not is_url(item) and os.path.isdir(item):
            out.extend(_directory_files(item))
            continue
        if not _GLOB_CHARS & set(item) or (not is_url(item) and os.path.exists(item)):
            if is_url(item):
                fs, inner = _filesystem(item)
                if _isdir(fs, inner, item):
                    out.extend(_url_directory_files(fs, inner, item))
                    continue
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


def _hidden(relative: str) -> bool:
    return any(part.startswith(".") for part in relative.replace(os.sep, "/").split("/"))


def _directory_files(folder: str) -> list[str]:
    """Every file below ``folder``, recursively, hidden ones left out, sorted by path."""
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        found.extend(os.path.join(root, name) for name in files if not name.startswith("."))
    if not found:
        raise TraceReadError(folder, "a directory with no file in it")
    return sorted(found)


def _isdir(fs: Any, inner: str, item: str) -> bool:
    try:
        return bool(fs.isdir(inner))
    except OSError as exc:
        raise TraceReadError(item, f"cannot list files ({type(exc).__name__}: {exc})") from None


def _url_directory_files(fs: Any, inner: str, item: str) -> list[str]:
    """Every file below the directory URL ``item``, recursively, hidden ones left out, sorted."""
    try:
        paths = fs.find(inner)
    except OSError as exc:
        raise TraceReadError(item, f"cannot list files ({type(exc).__name__}: {exc})") from None
    base = inner.rstrip("/") + "/"
    found = sorted(
        fs.unstrip_protocol(p) for p in paths if not _hidden(p[len(base) :] if p.startswith(base) else p)
    )
    if not found:
        raise TraceReadError(item, "a directory with no file in it")
    return found


def open_binary(path: str) -> IO[bytes]:
    """The file's bytes, for reading (raises ``OSError`` as ``open`` does)."""
    if not is_url(path):
        return open(path, "rb", buffering=_BUFFER)
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
