"""Cyclic garbage a block of code leaves behind, kept for inspection: a refused call must leave none
of its own (#45: a cycle through a refused call's error, traceback and frame kept its span, events
and ``ToolCall`` alive until the cyclic collector ran)."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

import otel_provenance as op
from otel_provenance.instrument.call.lifecycle import ToolCall


@contextlib.contextmanager
def garbage_kept() -> Iterator[list]:
    """Cyclic garbage made inside the block, kept for inspection (``gc.DEBUG_SAVEALL``)."""
    flags, enabled = gc.get_debug(), gc.isenabled()
    gc.disable()
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    del gc.garbage[:]
    kept: list = []
    try:
        yield kept
        gc.collect()
        kept.extend(gc.garbage)
    finally:
        del gc.garbage[:]
        gc.set_debug(flags)
        if enabled:
            gc.enable()


def ours(garbage: list) -> list[str]:
    """The type names of this package's call objects among ``garbage``."""
    return sorted({type(o).__name__ for o in garbage if isinstance(o, ToolCall | op.ProvenanceError)})
