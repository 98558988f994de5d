"""A small deterministic layered layout for run graphs: one row per node, one layer per depth.

A run's causal graph is a forest (parent/child edges), so it is drawn the way trace viewers draw
one: nodes in pre-order — children in the order given, which for a run is time order — each on
its own row, indented by its depth (its layer). Nothing overlaps, the result depends only on the
input order, and it needs no font metrics and no system binary.

Data-flow edges (source span → consuming call) run in vertical *lanes* right of the nodes. Two
edges whose row spans overlap get different lanes: interval colouring, greedy by start row, which
uses the fewest lanes possible for intervals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Placed:
    key: str
    row: int  # 0-based, top to bottom
    depth: int  # the layer: 0 for roots


def layered(roots: Sequence[str], children: Mapping[str, Sequence[str]]) -> tuple[Placed, ...]:
    """Pre-order rows of the forest under ``roots``. A key reached twice (not a forest) is placed
    once, where it is first reached, so a malformed input cannot loop or duplicate rows."""
    placed: list[Placed] = []
    seen: set[str] = set()
    stack = [(key, 0) for key in reversed(roots)]
    while stack:
        key, depth = stack.pop()
        if key in seen:
            continue
        seen.add(key)
        placed.append(Placed(key, len(placed), depth))
        stack.extend((child, depth + 1) for child in reversed(children.get(key, ())))
    return tuple(placed)


def lanes(spans: Sequence[tuple[int, int]]) -> tuple[int, ...]:
    """A lane (0, 1, …) for each ``(row_a, row_b)`` interval such that intervals sharing a row never
    share a lane. Ties are settled by the input position, so equal input gives equal lanes."""
    order = sorted(range(len(spans)), key=lambda i: (min(spans[i]), max(spans[i]), i))
    lane_end: list[int] = []  # last row used by each lane
    out = [0] * len(spans)
    for i in order:
        low, high = min(spans[i]), max(spans[i])
        for lane, end in enumerate(lane_end):
            if end < low:
                lane_end[lane] = high
                out[i] = lane
                break
        else:
            lane_end.append(high)
            out[i] = len(lane_end) - 1
    return tuple(out)
