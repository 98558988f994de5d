"""Optimal matching of repeated calls (min-cost bipartite assignment, integers only).

Greedy matching pairs the first similar call it sees and can leave a better pairing impossible;
the Hungarian algorithm (Kuhn–Munkres with potentials, O(n²m)) finds a pairing of minimum total
cost. Every row is matched when rows ≤ columns (and every column otherwise).

Ties are broken deterministically: among pairings of equal cost, the one whose pairs stay closest
to their positions (least total |row − column|) wins, by scaling the costs; any remaining tie is
settled by the algorithm's fixed scan order. No floats, no randomness.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def optimal_assignment(cost: Sequence[Sequence[int]]) -> list[tuple[int, int]]:
    """Pairs ``(row, column)`` of minimum total ``cost``, sorted by row. ``cost`` is rectangular."""
    n = len(cost)
    if n == 0:
        return []
    m = len(cost[0])
    if any(len(row) != m for row in cost):
        raise ValueError("cost matrix is not rectangular")
    if m == 0:
        return []
    for row in cost:
        for value in row:
            if type(value) is not int:
                raise TypeError("costs must be integers")
    # Secondary objective: total |i - j|, which is at most min(n, m) * max(n, m) < scale.
    scale = min(n, m) * max(n, m) + 1
    scaled = [[cost[i][j] * scale + abs(i - j) for j in range(m)] for i in range(n)]
    if n <= m:
        return sorted(_hungarian(scaled))
    transposed = [[scaled[i][j] for i in range(n)] for j in range(m)]
    return sorted((i, j) for j, i in _hungarian(transposed))


def _hungarian(a: list[list[int]]) -> list[tuple[int, int]]:
    """Rows ≤ columns. Classic potentials formulation (1-indexed internally)."""
    n, m = len(a), len(a[0])
    inf = math.inf  # only ever an initial bound: every delta actually applied is a finite int
    u = [0] * (n + 1)
    v = [0] * (m + 1)
    p = [0] * (m + 1)  # p[j]: row matched to column j (0 = none)
    way = [0] * (m + 1)
    for i in range(1, n + 1):
        p[0] = i
        j0 = 0
        minv = [inf] * (m + 1)
        used = [False] * (m + 1)
        while True:
            used[j0] = True
            i0 = p[j0]
            delta = inf
            j1 = 0
            row = a[i0 - 1]
            ui0 = u[i0]
            for j in range(1, m + 1):
                if not used[j]:
                    cur = row[j - 1] - ui0 - v[j]
                    if cur < minv[j]:
                        minv[j] = cur
                        way[j] = j0
                    if minv[j] < delta:
                        delta = minv[j]
                        j1 = j
            for j in range(m + 1):
                if used[j]:
                    u[p[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if p[j0] == 0:
                break
        while j0:
            j1 = way[j0]
            p[j0] = p[j1]
            j0 = j1
    return [(p[j] - 1, j - 1) for j in range(1, m + 1) if p[j] != 0]


def assignment_cost(cost: Sequence[Sequence[int]], pairs: Sequence[tuple[int, int]]) -> int:
    return sum(cost[i][j] for i, j in pairs)
