"""Whether a zstd stream stopped between frames or inside one, from its headers alone (RFC 8878 §3.1).

``zstandard``'s stream reader ends a stream that was cut off mid-frame as if it were whole: the
blocks before the cut come out, then nothing — no error. (gzip and ``compression.zstd`` raise
``EOFError`` there.) A trace file cut off by a stopped writer would then read as complete, minus
its last block of spans. ``FrameWalker`` is fed the compressed bytes the decompressor consumes and
follows the frame and block headers, skipping their contents: at the end of the input it tells
whether the stream ended on a frame boundary, without decompressing anything twice.
"""

from __future__ import annotations

from typing import Final

ZSTD_MAGIC: Final = b"\x28\xb5\x2f\xfd"  # a frame's first four bytes
_ZSTD_MAGIC: Final = int.from_bytes(ZSTD_MAGIC, "little")
_SKIPPABLE_MAGIC: Final = 0x184D2A50  # the low four bits are free
_DICTIONARY_ID_SIZE: Final = (0, 1, 2, 4)
_CONTENT_SIZE_SIZE: Final = (0, 2, 4, 8)  # flag 0 means 1 byte when the frame is a single segment
_RLE: Final = 1
_RESERVED: Final = 3


def starts_zstd(head: bytes) -> bool:
    """``head`` opens a zstd stream: a frame, or a skippable frame (pzstd writes one before each)."""
    magic = int.from_bytes(head[:4], "little")
    return len(head) >= 4 and (magic == _ZSTD_MAGIC or magic & ~0xF == _SKIPPABLE_MAGIC)


class FrameWalker:
    """Follows zstd frame structure over bytes fed in order; ``between_frames`` at the end says
    whether the stream is whole. Unknown or reserved structure is never "between frames" (and the
    decompressor refuses it first)."""

    __slots__ = ("_checksum", "_header", "_need", "_skip", "_state")

    def __init__(self) -> None:
        self._state = "magic"
        self._need = 4  # bytes of the next header
        self._header = bytearray()
        self._skip = 0  # bytes of content (a block, a skippable frame) still to pass over
        self._checksum = False

    @property
    def between_frames(self) -> bool:
        return self._state == "magic" and not self._header and not self._skip

    def feed(self, data: bytes) -> None:
        at, end = 0, len(data)
        while at < end:
            if self._skip:
                step = min(self._skip, end - at)
                self._skip -= step
                at += step
                continue
            take = min(self._need - len(self._header), end - at)
            self._header += data[at : at + take]
            at += take
            if len(self._header) == self._need:
                header = int.from_bytes(self._header, "little")
                self._header.clear()
                self._advance(header)

    def _advance(self, header: int) -> None:
        state = self._state
        if state == "magic":
            if header == _ZSTD_MAGIC:
                self._expect("descriptor", 1)
            elif header & ~0xF == _SKIPPABLE_MAGIC:
                self._expect("skippable size", 4)
            else:
                self._state = "unknown"
        elif state == "descriptor":
            single_segment = header >> 5 & 1
            self._checksum = bool(header >> 2 & 1)
            content_size = _CONTENT_SIZE_SIZE[header >> 6] or single_segment
            # never empty: a window descriptor, or (a single segment) the content size
            rest = (1 - single_segment) + _DICTIONARY_ID_SIZE[header & 3] + content_size
            self._expect("frame header", rest)
        elif state == "frame header":
            self._expect("block", 3)
        elif state == "block":
            kind = header >> 1 & 3
            if kind == _RESERVED:
                self._state = "unknown"
                return
            self._skip = 1 if kind == _RLE else header >> 3
            if not header & 1:  # not the frame's last block
                self._expect("block", 3)
            elif self._checksum:
                self._expect("checksum", 4)
            else:
                self._expect("magic", 4)
        elif state == "skippable size":
            self._skip = header
            self._expect("magic", 4)
        elif state == "checksum":
            self._expect("magic", 4)
        # "unknown" (not zstd, or a reserved block type) matches no state: never between frames again

    def _expect(self, state: str, size: int) -> None:
        self._state = state
        self._need = size
