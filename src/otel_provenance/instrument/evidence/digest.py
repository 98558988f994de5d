"""Keyed digests of normalised argument values (keyed BLAKE2b, 128-bit output).

Why keyed: a plain SHA-256 of a six-digit PIN is reversed in under a second. Digests made with one key
are linkable to each other (equal values give equal digests), which is what retry detection and
offline data-flow checks need; without the key they cannot be reversed or linked to other keys.
Only values used as tool arguments are ever digested, so the cost is per argument, not per observed leaf.
"""

from __future__ import annotations

import hashlib
from typing import Any

_BLAKE2B_MAX_KEY = 64


def prepare_key(key: bytes) -> bytes:
    """BLAKE2b takes keys up to 64 bytes; longer keys are first reduced with unkeyed BLAKE2b."""
    return key if len(key) <= _BLAKE2B_MAX_KEY else hashlib.blake2b(key).digest()


_KEYED: dict[bytes, Any] = {}  # key -> BLAKE2b state with the key block already absorbed


def keyed_digest(text: str, key: bytes) -> str:
    """Hex digest (32 chars) of ``text`` (a normalised value) under ``key``."""
    base = _KEYED.get(key)
    if base is None:
        base = hashlib.blake2b(key=prepare_key(key), digest_size=16, person=b"otelprov-arg")
        if len(_KEYED) >= 8:  # keys rotate rarely; never hold more than a few
            _KEYED.clear()
        _KEYED[key] = base
    state = base.copy()
    state.update(text.encode("utf-8", "surrogatepass"))
    return state.hexdigest()


__all__ = ["keyed_digest", "prepare_key"]
