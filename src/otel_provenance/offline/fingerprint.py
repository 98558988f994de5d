"""Canonical form and fingerprint of a run's behaviour.

The canonical form is the run's *step tree* (``stepkey.step_key`` of each span, parent/child
edges, orphans and roots at the top) written one node per line, two spaces of indent per level,
each step as a JSON string. Children are sorted canonically — by step, then by the digest of their
own subtree — never by time, and identical sibling subtrees are written once with a count
(``3x "retry.call"``). So identical behaviour gives identical bytes whatever the span order in the
input, the span and trace ids, the timestamps, the attribute key order or the volatile identifiers
in names; a different route (a step added, dropped, repeated or moved) gives different bytes.

Not in the fingerprint, on purpose: the time order of siblings (concurrency makes it flaky —
ordering rules belong in a contract), statuses and attributes.

``fingerprint(run)`` is ``"v1:" + sha256(canonical form)``. Bump the version when the form changes.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterator
from functools import lru_cache
from typing import Final

from .graph import CausalGraph, tree
from .model import Run
from .stepkey import run_steps

VERSION: Final = "v1"
ROOT_STEP: Final = ""  # the virtual root's step in edge_counts; step_key never returns ""


@lru_cache(maxsize=4096)  # steps repeat across spans and runs
def _leaf(step: str) -> tuple[bytes, bytes]:
    """A step's length-prefixed bytes and the digest of a subtree that is that step alone."""
    raw = step.encode("utf-8", "surrogatepass")  # JSON input may hold lone surrogates
    prefix = b"%d:" % len(raw) + raw
    return prefix, hashlib.sha256(prefix).digest()


@lru_cache(maxsize=4096)
def _label(step: str) -> str:
    return json.dumps(step, ensure_ascii=False)


def _step_tree(run: Run) -> tuple[CausalGraph, dict[str, str], dict[str, bytes]]:
    """The graph, each span's step, and each span's subtree digest (computed leaves first)."""
    graph = CausalGraph.of(run)
    steps = run_steps(run)
    children = graph.children
    digests: dict[str, bytes] = {}
    order: list[str] = []  # parents before children
    stack = list(graph.roots)
    while stack:
        sid = stack.pop()
        order.append(sid)
        stack.extend(children(sid))
    for sid in reversed(order):
        # Unambiguous: a length-prefixed step, then the children's fixed-size digests in canonical order.
        prefix, leaf = _leaf(steps[sid])
        kids = children(sid)
        if kids:
            ordered = sorted((steps[c], digests[c]) for c in kids)
            digests[sid] = hashlib.sha256(prefix + b"".join(d for _, d in ordered)).digest()
        else:
            digests[sid] = leaf
    return graph, steps, digests


def _shape(run: Run) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """Each span's step and its parent's position in ``run.spans`` (-1 for a root or an orphan), in
    span order. It determines the step tree, so the canonical form, exactly; it is cheap to build
    (the steps are the rule evidence's, the parents by position ``graph.tree``'s, else the graph's),
    and a route's runs repeat it."""
    found = tree(run)  # validates the run first, as _step_tree does
    steps = run_steps(run)
    if found is not None:  # the steps are in span order (span ids are unique in a valid run)
        return tuple(steps.values()), found.parents
    parents = CausalGraph.of(run).parents
    spans = run.spans
    position = {s.span_id: i for i, s in enumerate(spans)}
    return tuple([steps[i] for i in position]), tuple([position.get(parents[i], -1) for i in position])


def _rows(graph: CausalGraph, steps: dict[str, str], digests: dict[str, bytes]) -> Iterator[tuple[int, str]]:
    """The canonical form one line at a time, as (depth, the line after its indent), parents first.

    A generator of unindented rows, so the fingerprint hashes the form without ever holding it: the
    text grows with the square of the depth (two spaces of indent per level — 2.5 GB for a
    50,000-deep chain), the walk only with the number of spans."""
    # Each stack entry: (depth, count, representative span id) — groups of identical subtrees.
    stack: list[tuple[int, int, str]] = []

    def push_groups(depth: int, members: tuple[str, ...]) -> None:
        if not members:
            return
        groups = Counter((steps[m], digests[m]) for m in members)
        representative = {(steps[m], digests[m]): m for m in members}
        for key in sorted(groups, reverse=True):  # reversed: the stack pops the smallest first
            stack.append((depth, groups[key], representative[key]))

    push_groups(0, graph.roots)
    while stack:
        depth, count, sid = stack.pop()
        prefix = f"{count}x " if count > 1 else ""
        yield depth, prefix + _label(steps[sid])
        push_groups(depth + 1, graph.children(sid))


def canonical_form(run: Run) -> str:
    """Deterministic text of the run's step tree with multiplicities (ends with a newline)."""
    return "".join(f"{'  ' * depth}{text}\n" for depth, text in _rows(*_step_tree(run)))


_PRINTS: dict[tuple, str] = {}  # a run's shape -> its fingerprint (a route's runs repeat it)
_PRINTS_KEPT = 4096
_PRINTS_LARGEST = 1024  # spans: a shape's key grows with its run, so the cache holds small runs only


def fingerprint(run: Run) -> str:
    """``"v1:" + sha256 hex`` of ``canonical_form(run)``, hashed row by row with the indent fed from
    one growing buffer of spaces, so memory stays linear in the run however deep it is. Runs of one
    shape (same steps, same parent positions) have the same form: it is hashed once."""
    shape = _shape(run)
    found = _PRINTS.get(shape)
    if found is not None:
        return found
    h = hashlib.sha256()
    spaces = bytearray()
    for depth, text in _rows(*_step_tree(run)):
        if 2 * depth > len(spaces):
            spaces.extend(b" " * max(2 * depth - len(spaces), len(spaces)))
        h.update(memoryview(spaces)[: 2 * depth])
        h.update(text.encode("utf-8", "surrogatepass"))
        h.update(b"\n")
    found = f"{VERSION}:{h.hexdigest()}"
    if len(shape[0]) <= _PRINTS_LARGEST:
        if len(_PRINTS) >= _PRINTS_KEPT:
            _PRINTS.clear()
        _PRINTS[shape] = found
    return found


def step_counts(run: Run) -> Counter[str]:
    """How many spans of each step the run has."""
    return Counter(run_steps(run).values())


def edge_counts(run: Run) -> Counter[tuple[str, str]]:
    """Multiset of (parent step, child step) edges; top-level spans count under ``ROOT_STEP``."""
    graph = CausalGraph.of(run)
    steps = run_steps(run)
    counts: Counter[tuple[str, str]] = Counter()
    for span in run.spans:
        parent = graph.parent(span.span_id)
        counts[(steps[parent] if parent is not None else ROOT_STEP, steps[span.span_id])] += 1
    return counts
