"""Weighted Jaccard similarity of two runs' step/edge multisets, kept as an exact integer ratio.

``similarity(a, b) = Σ min(a[k], b[k]) / Σ max(a[k], b[k])`` over every step and every edge key.
It is returned as ``(numerator, denominator)`` and compared to a threshold by cross-multiplication
(``rational.ratio_at_least``), so no float ever decides whether two routes are the same family.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

RouteShape = Counter[tuple[str, ...]]  # keys: ("step", key) and ("edge", parent_key, child_key)


def route_shape(steps: Mapping[str, int], edges: Iterable[tuple[tuple[str, str], int]]) -> RouteShape:
    shape: RouteShape = Counter()
    for key, count in steps.items():
        shape[("step", key)] += count
    for (parent, child), count in edges:
        shape[("edge", parent, child)] += count
    return shape


def weighted_jaccard(a: RouteShape, b: RouteShape) -> tuple[int, int]:
    """``(Σ min, Σ max)``; two empty shapes are identical: ``(1, 1)``."""
    keys = set(a) | set(b)
    low = sum(min(a[k], b[k]) for k in keys)
    high = sum(max(a[k], b[k]) for k in keys)
    return (1, 1) if high == 0 else (low, high)


def more_similar(x: tuple[int, int], y: tuple[int, int]) -> bool:
    """``x > y`` as ratios, by cross-multiplication."""
    return x[0] * y[1] > y[0] * x[1]
