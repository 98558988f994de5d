"""Compressed input (gzip, zstd) with limits on what it may expand to.

A 1 MB gzip file can hold a gigabyte of newlines; read naively it costs minutes and gigabytes. The
decompressed stream here counts what it produced against what it consumed and stops with a
``TraceReadError`` as soon as the output passes ``ReadLimits.max_bytes``, or passes
``ReadLimits.ratio_floor`` bytes while being more than ``max_ratio`` times the compressed bytes
read so far. OTLP JSON with its random ids compresses 5-30×; a bomb compresses 400-1000×, so it is
refused after a few MiB of output: quickly, and with memory bounded accordingly. The compressed file
is read in small chunks so that "consumed so far" is not inflated by the decompressor's read-ahead.

zstd needs a zstd library: ``compression.zstd`` (Python 3.14+) or ``zstandard``, installed by the
``zstd`` extra (``pip install 'otel-provenance[zstd]'``). Without one, a zstd file is refused with
a message naming the extra.
"""

from __future__ import annotations

import gzip
import io
from dataclasses import dataclass
from typing import IO, Any, Final

from ...errors import TraceReadError
from . import locations
from ._zstd_frames import FrameWalker, starts_zstd

GZIP_MAGIC: Final = b"\x1f\x8b"
_GIB: Final = 1 << 30
_MIB: Final = 1 << 20


@dataclass(frozen=True, slots=True)
class ReadLimits:
    """How far compressed input may expand. The defaults let real traces through and stop bombs."""

    max_bytes: int = 64 * _GIB
    """Decompressed bytes allowed per file (or per compressed record)."""
    max_ratio: float = 200.0
    """Decompressed bytes allowed per compressed byte, checked past ``ratio_floor``."""
    ratio_floor: int = _MIB // 2
    """Output below this size is never refused for its ratio (small test files compress very well)."""

    def __post_init__(self) -> None:
        if self.max_bytes < 1 or self.max_ratio < 1 or self.ratio_floor < 0:
            raise ValueError("ReadLimits: max_bytes and max_ratio must be at least 1, ratio_floor 0 or more")

    def check(self, source: str, produced: int, consumed: int, what: str = "the data") -> None:
        if produced > self.max_bytes:
            raise TraceReadError(
                source,
                f"{what} decompresses to more than {self.max_bytes} bytes (the limit; raise "
                "ReadLimits.max_bytes / OTEL_PROVENANCE_READ_MAX_BYTES to read it)",
            )
        if produced > self.ratio_floor and produced > self.max_ratio * max(consumed, 1):
            raise TraceReadError(
                source,
                f"{what} expands more than {self.max_ratio:g} times (a decompression bomb?); raise "
                "ReadLimits.max_ratio / OTEL_PROVENANCE_READ_MAX_RATIO to read it",
            )


def zstd_module() -> Any:
    """``compression.zstd`` or ``zstandard``; a ``ModuleNotFoundError`` naming the extra otherwise."""
    try:
        from compression import zstd  # type: ignore[import-not-found]  # Python 3.14+

        return zstd
    except ImportError:
        pass
    try:
        import zstandard

        return zstandard
    except ImportError:
        raise ModuleNotFoundError(
            "zstd-compressed input needs a zstd library: install the 'zstd' extra "
            "(pip install 'otel-provenance[zstd]')"
        ) from None


def _zstd_reader(raw: IO[bytes]) -> IO[bytes]:
    module = zstd_module()
    if hasattr(module, "ZstdFile"):  # compression.zstd
        return module.ZstdFile(raw, mode="rb")
    return module.ZstdDecompressor().stream_reader(raw, read_across_frames=True, closefd=False)


class _SmallReads:
    """The compressed file, handed to the decompressor a little at a time (see the module doc)."""

    CHUNK: Final = 4 * 1024

    def __init__(self, raw: IO[bytes], frames: FrameWalker | None = None) -> None:
        self.raw = raw
        self.frames = frames

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(self.CHUNK if size < 0 else min(size, self.CHUNK))
        if self.frames is not None:
            self.frames.feed(data)
        return data

    def readable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        return self.raw.seek(offset, whence)

    def tell(self) -> int:
        return self.raw.tell()

    def close(self) -> None:
        pass  # the raw file is closed by its owner


class _Limited(io.RawIOBase):
    """A decompressing stream that counts and enforces ``ReadLimits``."""

    def __init__(self, make: Any, raw: IO[bytes], source: str, limits: ReadLimits) -> None:
        self.make = make
        self.name = "gzip" if make is _gzip_reader else "zstd"
        self.raw = raw
        self.source = source
        self.limits = limits
        self._start()

    def _start(self) -> None:
        # zstd's frames are followed as they are read: a stream cut between them is whole, one cut
        # inside a frame is not, and zstandard's reader ends both alike (see ._zstd_frames)
        self.frames = FrameWalker() if self.name == "zstd" else None
        self.inner = self.make(_SmallReads(self.raw, self.frames))
        self.produced = 0
        self.truncated = False

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        """Only back to the start (the format sniffer re-reads the head): decompression restarts."""
        if offset != 0 or whence != 0:
            raise io.UnsupportedOperation("compressed input can only be rewound to its start")
        self.inner.close()
        self.raw.seek(0)
        self._start()
        return 0

    def tell(self) -> int:
        return self.produced

    def readinto(self, buffer: Any) -> int:
        if self.truncated:
            return 0
        try:
            # one decompressor step at a time: a looping read would lose its partial result to a cut
            n = self.inner.readinto1(buffer)
        except EOFError:  # cut off mid-stream: what came before stands; the reader reports the cut
            self.truncated = True
            return 0
        if not n and self.frames is not None and not self.frames.between_frames:
            self.truncated = True  # the same cut, ended silently by zstandard
            return 0
        self.produced += n or 0
        self.limits.check(self.source, self.produced, self.raw.tell())
        return n

    def compressed_position(self) -> int:
        return self.raw.tell()

    def close(self) -> None:
        try:
            self.inner.close()
        finally:
            self.raw.close()
            super().close()


def open_input(path: str, limits: ReadLimits) -> IO[bytes]:
    """``path`` as a binary stream: gzip and zstd (whole-stream, as the Collector's native zstd
    compression writes it) undone, with ``limits`` enforced. Raises ``OSError`` to the caller."""
    raw = locations.open_binary(path)  # a local path or an fsspec URL; the caller closes it
    try:
        head = raw.read(4)
        raw.seek(0)
        if head[:2] == GZIP_MAGIC:
            make: Any = _gzip_reader
        elif starts_zstd(head):
            try:
                zstd_module()
            except ModuleNotFoundError as exc:
                raise TraceReadError(path, str(exc)) from None
            make = _zstd_reader
        else:
            return raw
        return io.BufferedReader(_Limited(make, raw, path, limits), buffer_size=256 * 1024)
    except BaseException:
        raw.close()
        raise


def _gzip_reader(raw: IO[bytes]) -> IO[bytes]:
    return gzip.GzipFile(fileobj=raw, mode="rb")


def position(f: IO[bytes]) -> int:
    """Bytes of the file on disk read so far (compressed bytes for compressed input): for progress."""
    raw = getattr(f, "raw", None)
    if isinstance(raw, _Limited):
        return raw.compressed_position()
    return f.tell()


def truncated(f: IO[bytes]) -> str | None:
    """``"gzip"``/``"zstd"`` when ``f``'s compressed stream was found cut off, else None."""
    raw = getattr(f, "raw", None)
    return raw.name if isinstance(raw, _Limited) and raw.truncated else None


def zstd_decompress_record(data: bytes, source: str, limits: ReadLimits, what: str) -> bytes:
    """One zstd-compressed record (the Collector's legacy per-message compression), bounded."""
    try:
        module = zstd_module()
    except ModuleNotFoundError as exc:
        raise TraceReadError(source, f"{what}: {exc}") from None
    cap = min(limits.max_bytes, max(limits.ratio_floor, int(limits.max_ratio * len(data)))) + 1
    try:
        if hasattr(module, "ZstdFile"):
            stream: Any = module.ZstdFile(io.BytesIO(data), mode="rb")
        else:
            stream = module.ZstdDecompressor().stream_reader(io.BytesIO(data), read_across_frames=True)
        with stream:
            out = stream.read(cap)
    except Exception as exc:  # each library raises its own error type for corrupt data
        raise TraceReadError(source, f"{what}: corrupt zstd data ({type(exc).__name__})") from None
    frames = FrameWalker()
    frames.feed(data)
    if not frames.between_frames:  # zstandard returns what it could of a cut record, without a word
        raise TraceReadError(source, f"{what}: corrupt zstd data (it ends inside a frame)")
    limits.check(source, len(out), len(data), what)
    return out
