"""Case 3 — remembering results: the run ledger vs an eager design that SHA-256-hashes every leaf.

Two results, built deterministically: a 10,000-entry directory listing (``{"root", "files": [...]}``)
and a ~5 MB nested JSON document (invoices with customers, addresses and line items). Time per leaf
compares ``Ledger.remember`` with :class:`EagerLedger` — the straightforward design the ledger is
meant to beat: walk every leaf, hash its text with SHA-256 as it is stored, index digest → (tool,
span, field path). For the timing both index *every* leaf (the ledger gets a bound above the leaf
count), so "per leaf" means the same work on both sides.

Memory (tracemalloc): bytes the index keeps alive after the result itself is dropped, per leaf, for
both designs; then the bound: a ledger with the configured ``ledger_max_entries`` remembers the
listing and the big document twice — it must hold at most that many entries and its retained
memory must stay flat (within 10 %) when the second copy arrives.
"""

from __future__ import annotations

import gc
import hashlib
import random
import tracemalloc
from collections.abc import Callable
from typing import Any

from otel_provenance.instrument.base.settings import get_settings
from otel_provenance.instrument.evidence.ledger import Ledger

from .harness import CPU_CLOCK, Result, paired_medians, speedup_result

CASE = "3 remember"
LISTING_SIZE = 10_000
DOCUMENT_BYTES = 5_000_000


class EagerLedger:
    """Baseline: hash every leaf with SHA-256 as it is stored; index digest -> (tool, span, path)."""

    def __init__(self) -> None:
        self.index: dict[str, tuple[str, str, str]] = {}

    def remember(self, tool: str, result: Any, span_id: str) -> None:
        self._walk(tool, span_id, result, "")

    def _walk(self, tool: str, span_id: str, value: Any, path: str) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                self._walk(tool, span_id, item, f"{path}.{key}" if path else str(key))
        elif isinstance(value, list | tuple):
            for i, item in enumerate(value):
                self._walk(tool, span_id, item, f"{path}.{i}" if path else str(i))
        elif value is not None:
            digest = hashlib.sha256(str(value).encode()).hexdigest()
            self.index[digest] = (tool, span_id, path)


def listing() -> dict[str, Any]:
    return {"root": "/srv/repo", "files": [f"src/pkg{i % 50}/module_{i}.py" for i in range(LISTING_SIZE)]}


def document(target_bytes: int = DOCUMENT_BYTES, seed: int = 3) -> dict[str, Any]:
    """Nested JSON-like invoices, about ``target_bytes`` when serialised (~520 bytes per invoice)."""
    rng = random.Random(seed)
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]
    invoices = []
    for i in range(max(1, target_bytes // 520)):
        invoices.append(
            {
                "id": f"INV-{i:07d}",
                "status": rng.choice(("paid", "open", "void")),
                "issued": f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}",
                "total": round(rng.uniform(5, 5000), 2),
                "customer": {
                    "id": f"CUST-{rng.randrange(10**6):06d}",
                    "name": f"{rng.choice(words).title()} {rng.choice(words).title()}",
                    "email": f"{rng.choice(words)}.{i}@example.com",
                    "address": {
                        "street": f"{rng.randrange(1, 999)} {rng.choice(words)} road",
                        "zip": f"{i % 99999:05d}",
                    },
                },
                "lines": [
                    {
                        "sku": f"SKU-{rng.randrange(10**5):05d}",
                        "qty": rng.randrange(1, 9),
                        "price": round(rng.uniform(1, 500), 2),
                        "description": " ".join(rng.choices(words, k=4)),
                    }
                    for _ in range(3)
                ],
            }
        )
    return {"account": "acme", "invoices": invoices}


def count_leaves(value: Any) -> int:
    if isinstance(value, dict):
        return sum(count_leaves(v) for v in value.values())
    if isinstance(value, list | tuple):
        return sum(count_leaves(v) for v in value)
    return 0 if value is None else 1


def retained_bytes(build: Callable[[], Any], index: Callable[[Any], object]) -> int:
    """Bytes still allocated after ``index(build())`` once the result itself is released."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        result = build()
        keep = index(result)
        del result
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    del keep
    return after - before


def run(quick: bool) -> list[Result]:
    repeat = 3 if quick else 7
    doc_bytes = 100_000 if quick else DOCUMENT_BYTES
    results: list[Result] = []
    for label, build in (("listing 10k", listing), ("json ~5MB", lambda: document(doc_bytes))):
        value = build()
        leaves = count_leaves(value)

        def ledger_once(value: Any = value, leaves: int = leaves) -> Ledger:
            ledger = Ledger(max_entries=leaves + 16)
            ledger.remember("tool", value, "00f067aa0ba902b7")
            return ledger

        def eager_once(value: Any = value) -> EagerLedger:
            eager = EagerLedger()
            eager.remember("tool", value, "00f067aa0ba902b7")
            return eager

        held = len(ledger_once())
        ledger_s, eager_s = paired_medians(ledger_once, eager_once, repeat, clock=CPU_CLOCK)
        ledger_mem = retained_bytes(build, lambda v: ledger_once(v, count_leaves(v)))
        eager_mem = retained_bytes(build, eager_once)
        results.append(
            speedup_result(
                f"{CASE} {label}",
                ledger_s / leaves,
                eager_s / leaves,
                min_speedup=3,
                note=f"per leaf, {leaves} leaves; retained {ledger_mem / leaves:.0f} B/leaf vs eager "
                f"{eager_mem / leaves:.0f} B/leaf",
                extra={
                    "leaves": leaves,
                    "entries_held": held,
                    "retained_bytes": ledger_mem,
                    "eager_retained_bytes": eager_mem,
                    "retained_bytes_per_leaf": ledger_mem / leaves,
                    "eager_retained_bytes_per_leaf": eager_mem / leaves,
                },
            )
        )
    results.append(_bound(doc_bytes))
    return results


def _bound(doc_bytes: int) -> Result:
    """Default-bounded ledger: entries never exceed the bound, memory stays flat past it.

    The listing and three different big documents arrive one after the other; the first eviction
    happens during the second document, so "flat" compares the memory retained after the third
    document with that after the second (steady state), and the peak during the remembering.
    """
    bound = get_settings().ledger_max_entries
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        ledger = Ledger()
        ledger.remember("list_files", listing(), "00000000000000a1")
        retained = []
        held = []
        for seed in (3, 4, 5):
            ledger.remember("get_invoices", document(doc_bytes, seed=seed), f"00000000000000b{seed}")
            gc.collect()
            retained.append(tracemalloc.get_traced_memory()[0] - base)
            held.append(len(ledger))
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    first, second = retained[1], retained[2]
    passed = max(held) <= bound and second <= first * 1.10
    return Result(
        case=f"{CASE} bound",
        unit="B",
        median=float(second),
        baseline=float(first),
        ratio=second / first if first else float("inf"),
        target=f"<= {bound} entries, flat",
        passed=passed,
        note=f"max {max(held)} entries held (bound {bound}), {second / max(held[-1], 1):.0f} B/entry, "
        f"transient peak {peak / 1e6:.1f} MB; 3rd vs 2nd document",
        extra={"bound": bound, "entries_held": held[-1], "evicted": ledger.evicted, "peak_bytes": peak},
    )
