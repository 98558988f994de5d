"""The figure of a ``RunView``: the run's causal graph beside the closest approved route, as geometry.

This module decides what is drawn and where — integer coordinates, the marks of each node, labels
wrapped over as many lines as they need (a step name, argument names and kinds are never cut), tooltips
— so equal views give equal figures; ``templates/figure.svg.j2`` writes a
``Figure`` as inline SVG, every string escaped by the template environment (``templating``), so a
hostile attribute value cannot inject markup. Each mark is drawn with a colour *and* written as text
in the node, so the figure reads in greyscale; the ``<title>``/``<desc>`` and the HTML lists beside
it carry the same facts for a screen reader. Styling lives in the page's stylesheet (in
``templates/page.html.j2``), keyed by the mark classes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from .layout import Placed, lanes, layered
from .run_view import MARK_LABELS, MARK_MISSING, Node, RunView, Tree
from .templating import render_macro

ROW_GAP: Final = 10  # between one node's box and the next row's
BOX_W: Final = 280
BOX_H: Final = 48  # the smallest box: three lines of text
LINE_H: Final = 14  # between two baselines of a box's text
INDENT: Final = 24
LANE_W: Final = 12
PAD: Final = 16
TITLE_H: Final = 30
TITLE_BASELINE: Final = 20
LABEL_W: Final = 210  # least room right of the lanes for argument names (more when they need it)
MAX_NODES: Final = 300  # a run larger than this is cut (and says so)
_TEXT_INSET: Final = 8  # from a box's left edge to its text
_FIRST_BASELINE: Final = 15  # from a box's top edge
_BOTTOM: Final = 5  # from the last baseline to the box's bottom edge
_STEP_CHARS: Final = 34  # a line of the step name (12px bold monospace) inside a box, wrapped, never cut
_LINE_CHARS: Final = 38  # a line of the rest (11px monospace)
_FLOW_CHAR_W: Final = 7  # generous width of one flow-label character (10px monospace)
_TITLE_CHAR_W: Final = 8  # generous width of one panel-title character (13px sans-serif)


@dataclass(frozen=True, slots=True)
class TextLine:
    """One line of a box's text at baseline ``y``: pieces of text, each with its CSS class."""

    cls: str  # step | detail | args | marks marks-<first mark>
    y: int
    pieces: tuple[tuple[str, str], ...]  # (text, class); the class "" is the line's own

    @property
    def text(self) -> str:
        return "".join(text for text, _ in self.pieces)


@dataclass(frozen=True, slots=True)
class NodeBox:
    """A node's box at (``x``, ``y``) and its lines of text: the step name, the detail, every
    argument's name and kind (in its standing's colour) and the marks, each wrapped, never cut."""

    step: str
    marks: tuple[str, ...]
    span_id: str | None
    tooltip: str
    x: int
    y: int
    width: int
    height: int
    text_x: int
    lines: tuple[TextLine, ...]


@dataclass(frozen=True, slots=True)
class TreeEdge:
    """Parent → child: down from the parent's box at ``x``, then right to the child's box."""

    missing: bool
    x: int
    y: int
    to_y: int
    to_x: int


@dataclass(frozen=True, slots=True)
class FlowEdge:
    """Source → consumer, right of the boxes in the lane at ``lane_x``."""

    x: int
    y: int
    lane_x: int
    to_y: int
    to_x: int
    title: str


@dataclass(frozen=True, slots=True)
class Label:
    x: int
    y: int
    text: str


@dataclass(frozen=True, slots=True)
class Panel:
    title: Label
    edges: tuple[TreeEdge, ...]
    flows: tuple[FlowEdge, ...]
    flow_labels: tuple[Label, ...]
    nodes: tuple[NodeBox, ...]
    cut: Label | None  # "… N more node(s) not drawn"


@dataclass(frozen=True, slots=True)
class Figure:
    prefix: str  # makes element ids unique in the page
    run_id: str
    width: int
    height: int
    title: str
    desc: str
    panels: tuple[Panel, ...]


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def wrap(text: str, width: int) -> tuple[str, ...]:
    """``text`` in lines of at most ``width`` characters, broken after a space where one is near
    the end, else mid-word; nothing is dropped: ``"".join(wrap(t, w)) == t``."""
    lines = []
    while len(text) > width:
        cut = text.rfind(" ", width // 2, width) + 1 or width
        lines.append(text[:cut])
        text = text[cut:]
    lines.append(text)
    return tuple(lines)


def _wrap_pieces(pieces: list[tuple[str, str]], width: int) -> list[list[tuple[str, str]]]:
    """Pieces (text, class) filled into lines of at most ``width`` characters; a piece that does not
    fit the rest of a line starts the next, and a piece longer than a line is wrapped itself."""
    lines: list[list[tuple[str, str]]] = [[]]
    used = 0
    for text, cls in pieces:
        if used and used + len(text) > width:
            lines.append([])
            used = 0
        for k, part in enumerate(wrap(text, width) if len(text) > width else (text,)):
            if k:
                lines.append([])
                used = 0
            lines[-1].append((part, cls))
            used += len(part)
    return lines


def run_figure(
    view: RunView, prefix: str, run_label: str = "This run", labels: Mapping[str, str] = MARK_LABELS
) -> str:
    """One ``<svg>``: the run (left) and, when there is one, what it is compared with (right).
    ``prefix`` makes element ids unique in the page; ``labels`` names the marks."""
    return render_macro("figure.svg.j2", "figure", figure(view, prefix, run_label, labels))


def figure(
    view: RunView, prefix: str, run_label: str = "This run", labels: Mapping[str, str] = MARK_LABELS
) -> Figure:
    """What ``run_figure`` draws (the pages put it in place with the template's macro)."""
    run_panel, run_w, run_h = _panel(
        view.tree, view, f"{run_label} · {clip(view.run_id, 40)}", PAD, labels, with_flows=True
    )
    panels = [run_panel]
    width, height = PAD + run_w, run_h
    if view.route is not None:
        name = clip(view.route.id, 40 if view.route.kind == "run" else 24)
        if view.route.kind == "run":
            title = f"Run A · {name} ({view.route.similarity} similar)"
        else:
            title = f"Closest approved route: family {name} ({view.route.similarity} similar)"
        route_panel, route_w, route_h = _panel(view.route.tree, None, title, width + 2 * PAD, labels)
        panels.append(route_panel)
        width += 2 * PAD + route_w
        height = max(height, route_h)
    route_text = ""
    if view.route is not None:
        what = "run" if view.route.kind == "run" else "approved route family"
        route_text = f" beside {what} {view.route.id}"
    return Figure(
        prefix,
        view.run_id,
        width + PAD,
        height + PAD,
        f"Causal graph of run {view.run_id}{route_text}",
        describe(view, labels),
        tuple(panels),
    )


def describe(view: RunView, labels: Mapping[str, str] = MARK_LABELS) -> str:
    """The figure's facts as one sentence per kind of mark (for ``<desc>``)."""
    by_mark: dict[str, list[str]] = {}
    for node in view.tree.nodes:
        for mark in node.marks:
            by_mark.setdefault(mark, []).append(node.step)
    sentences = [f"{labels[m]}: {', '.join(steps)}." for m, steps in sorted(by_mark.items())]
    sentences += [f"{len(view.flows)} data-flow edge(s)."]
    return " ".join(sentences)


def _panel(
    tree: Tree,
    view: RunView | None,
    title: str,
    x0: int,
    labels: Mapping[str, str],
    with_flows: bool = False,
) -> tuple[Panel, int, int]:
    """One panel, its width and height. Rows are as tall as their node's text needs."""
    placed = layered(tree.roots, tree.child_map())
    hidden = max(len(placed) - MAX_NODES, 0)
    placed = placed[:MAX_NODES]
    at = {p.key: p for p in placed}
    nodes = tree.node_map()
    y0 = TITLE_H
    texts = {p.key: _texts(nodes[p.key], labels) for p in placed}
    heights = {key: max(BOX_H, _FIRST_BASELINE + (len(t) - 1) * LINE_H + _BOTTOM) for key, t in texts.items()}
    top: dict[str, int] = {}
    y = y0
    for p in placed:  # one node per row, in row order
        top[p.key] = y
        y += heights[p.key] + ROW_GAP
    max_depth = max((p.depth for p in placed), default=0)
    right = x0 + max_depth * INDENT + BOX_W
    edges = []
    for parent, kids in tree.children:
        if parent not in at:
            continue
        p = at[parent]
        px, py = x0 + p.depth * INDENT + 10, top[parent] + heights[parent]
        for kid in kids:
            if kid in at:
                c = at[kid]
                cy = top[kid] + BOX_H // 2
                edges.append(TreeEdge(MARK_MISSING in nodes[kid].marks, px, py, cy, x0 + c.depth * INDENT))
    width = max(right - x0, len(title) * _TITLE_CHAR_W)
    flows: tuple[FlowEdge, ...] = ()
    flow_labels: tuple[Label, ...] = ()
    if with_flows and view is not None:
        flows, flow_labels, flow_w = _flows(view, at, top, heights, x0, right)
        width += flow_w
    boxes = tuple(
        _node(nodes[p.key], x0 + p.depth * INDENT, top[p.key], heights[p.key], texts[p.key], labels)
        for p in placed
    )
    height = y
    cut = None
    if hidden:
        cut = Label(x0, height + 12, f"… {hidden} more node(s) not drawn")
        height += 20
    panel = Panel(Label(x0, TITLE_BASELINE, title), tuple(edges), flows, flow_labels, boxes, cut)
    return panel, width, height


def _texts(node: Node, labels: Mapping[str, str]) -> list[tuple[str, list[tuple[str, str]]]]:
    """A node's lines before placing: (line class, pieces). Step, detail, arguments, marks."""
    lines: list[tuple[str, list[tuple[str, str]]]] = [
        ("step", [(t, "")]) for t in wrap(node.step, _STEP_CHARS)
    ]
    if node.detail:
        lines += [("detail", [(t, "")]) for t in wrap(node.detail, _LINE_CHARS)]
    if node.args:
        pieces = [
            (f"{name} ({kind})" + (", " if i < len(node.args) - 1 else ""), f"arg arg-{standing}")
            for i, (name, kind, standing) in enumerate(node.args)
        ]
        lines += [("args", line) for line in _wrap_pieces(pieces, _LINE_CHARS)]
    if node.marks:
        marks = " · ".join(labels[m] for m in node.marks)
        lines += [(f"marks marks-{node.marks[0]}", [(t, "")]) for t in wrap(marks, _LINE_CHARS)]
    return lines


def _node(
    node: Node,
    x: int,
    y: int,
    height: int,
    texts: list[tuple[str, list[tuple[str, str]]]],
    labels: Mapping[str, str],
) -> NodeBox:
    args = ", ".join(f"{name} ({kind}, {standing})" for name, kind, standing in node.args)
    marks = " · ".join(labels[m] for m in node.marks)
    tooltip = " — ".join(
        part
        for part in (node.step, node.detail, args, marks, f"span {node.span_id}" if node.span_id else "")
        if part
    )
    lines = tuple(
        TextLine(cls, y + _FIRST_BASELINE + i * LINE_H, tuple(pieces))
        for i, (cls, pieces) in enumerate(texts)
    )
    return NodeBox(
        step=node.step,
        marks=node.marks,
        span_id=node.span_id,
        tooltip=tooltip,
        x=x,
        y=y,
        width=BOX_W,
        height=height,
        text_x=x + _TEXT_INSET,
        lines=lines,
    )


def _flows(
    view: RunView,
    at: dict[str, Placed],
    top: dict[str, int],
    heights: dict[str, int],
    x0: int,
    right: int,
) -> tuple[tuple[FlowEdge, ...], tuple[Label, ...], int]:
    """Data-flow edges in lanes right of the nodes, each labelled with its argument names (whole);
    the width they take."""
    drawn = [f for f in view.flows if f.source in at and f.consumer in at]
    if not drawn:
        return (), (), 0
    assigned = lanes([(at[f.source].row, at[f.consumer].row) for f in drawn])
    into: dict[str, list[int]] = {}
    out_of: dict[str, list[int]] = {}
    for i, f in enumerate(drawn):
        into.setdefault(f.consumer, []).append(i)
        out_of.setdefault(f.source, []).append(i)
    lane_x0 = right + 18
    edges = []
    for i, f in enumerate(drawn):
        s, c = at[f.source], at[f.consumer]
        sx = x0 + s.depth * INDENT + BOX_W
        cx = x0 + c.depth * INDENT + BOX_W
        sy = top[f.source] + _offset(out_of[f.source].index(i), len(out_of[f.source]), heights[f.source])
        cy = top[f.consumer] + _offset(into[f.consumer].index(i), len(into[f.consumer]), heights[f.consumer])
        title = f"argument(s) {', '.join(f.args)}: from {f.source[2:]} to {f.consumer[2:]}"
        edges.append(FlowEdge(sx, sy, lane_x0 + assigned[i] * LANE_W, cy, cx + 2, title))
    max_lane = max(assigned)
    label_x = lane_x0 + (max_lane + 1) * LANE_W + 4
    labels = []
    for consumer, indices in into.items():
        for k, i in enumerate(indices):
            cy = top[consumer] + _offset(k, len(indices), heights[consumer])
            labels.append(Label(label_x, cy + 4, "← " + ", ".join(drawn[i].args)))
    label_w = max(LABEL_W, max(len(label.text) for label in labels) * _FLOW_CHAR_W + 8)
    return tuple(edges), tuple(labels), 18 + (max_lane + 1) * LANE_W + label_w


def _offset(index: int, count: int, height: int = BOX_H) -> int:
    """Where the ``index``-th of ``count`` edges meets a node box (spread over its height)."""
    step = height // (count + 1)
    return step * (index + 1)
