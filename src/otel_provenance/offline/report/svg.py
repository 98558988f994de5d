"""The figure of a ``RunView``: the run's causal graph beside the closest approved route, as geometry.

This module decides what is drawn and where — integer coordinates, the marks of each node, clipped
labels, tooltips — so equal views give equal figures; ``templates/figure.svg.j2`` writes a
``Figure`` as inline SVG, every string escaped by the template environment (``templating``), so a
hostile attribute value cannot inject markup. Each mark is drawn with a colour *and* written as text
in the node, so the figure reads in greyscale; the ``<title>``/``<desc>`` and the HTML lists beside
it carry the same facts for a screen reader. Styling lives in the page's stylesheet (in
``templates/page.html.j2``), keyed by the mark classes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from .layout import Placed, lanes, layered
from .run_view import MARK_LABELS, MARK_MISSING, Node, RunView, Tree
from .templating import render_macro

ROW_H: Final = 58
BOX_W: Final = 280
BOX_H: Final = 48
INDENT: Final = 24
LANE_W: Final = 12
PAD: Final = 16
TITLE_H: Final = 30
TITLE_BASELINE: Final = 20
LABEL_W: Final = 210  # room right of the lanes for argument names
MAX_NODES: Final = 300  # a run larger than this is cut (and says so)
_TEXT_INSET: Final = 8  # from a box's left edge to its text
_BASELINES: Final = (15, 29, 43)  # of a box's three lines of text: step, detail, marks
_STEP_CHARS: Final = 36
_LINE_CHARS: Final = 42
_LABEL_CHARS: Final = 32
_TITLE_CHAR_W: Final = 8  # generous width of one panel-title character (13px sans-serif)


@dataclass(frozen=True, slots=True)
class NodeBox:
    """A node's box at (``x``, ``y``) and its three lines of text."""

    step: str
    marks: tuple[str, ...]
    span_id: str | None
    tooltip: str
    x: int
    y: int
    width: int
    height: int
    text_x: int
    baselines: tuple[int, int, int]
    step_label: str
    detail: str  # the detail line, up to the flagged arguments
    flagged: str  # the rest of it: the assumed/invented arguments, drawn in their own colour
    marks_label: str
    first_mark: str  # the class of the marks line's colour


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


def run_figure(view: RunView, prefix: str, run_label: str = "This run") -> str:
    """One ``<svg>``: the run (left) and, when there is one, what it is compared with (right).
    ``prefix`` makes element ids unique in the page."""
    return render_macro("figure.svg.j2", "figure", figure(view, prefix, run_label))


def figure(view: RunView, prefix: str, run_label: str = "This run") -> Figure:
    """What ``run_figure`` draws (the pages put it in place with the template's macro)."""
    run_panel, run_w, run_h = _panel(
        view.tree, view, f"{run_label} · {clip(view.run_id, 40)}", PAD, with_flows=True
    )
    panels = [run_panel]
    width, height = PAD + run_w, run_h
    if view.route is not None:
        name = clip(view.route.id, 40 if view.route.kind == "run" else 24)
        if view.route.kind == "run":
            title = f"Run A · {name} ({view.route.similarity} similar)"
        else:
            title = f"Closest approved route: family {name} ({view.route.similarity} similar)"
        route_panel, route_w, route_h = _panel(view.route.tree, None, title, width + 2 * PAD)
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
        describe(view),
        tuple(panels),
    )


def describe(view: RunView) -> str:
    """The figure's facts as one sentence per kind of mark (for ``<desc>``)."""
    by_mark: dict[str, list[str]] = {}
    for node in view.tree.nodes:
        for mark in node.marks:
            by_mark.setdefault(mark, []).append(node.step)
    sentences = [f"{MARK_LABELS[m]}: {', '.join(steps)}." for m, steps in sorted(by_mark.items())]
    sentences += [f"{len(view.flows)} data-flow edge(s)."]
    return " ".join(sentences)


def _panel(
    tree: Tree, view: RunView | None, title: str, x0: int, with_flows: bool = False
) -> tuple[Panel, int, int]:
    """One panel, its width and height."""
    placed = layered(tree.roots, tree.child_map())
    hidden = max(len(placed) - MAX_NODES, 0)
    placed = placed[:MAX_NODES]
    at = {p.key: p for p in placed}
    nodes = tree.node_map()
    y0 = TITLE_H
    max_depth = max((p.depth for p in placed), default=0)
    right = x0 + max_depth * INDENT + BOX_W
    edges = []
    for parent, kids in tree.children:
        if parent not in at:
            continue
        p = at[parent]
        px, py = x0 + p.depth * INDENT + 10, y0 + p.row * ROW_H + BOX_H
        for kid in kids:
            if kid in at:
                c = at[kid]
                cy = y0 + c.row * ROW_H + BOX_H // 2
                edges.append(TreeEdge(MARK_MISSING in nodes[kid].marks, px, py, cy, x0 + c.depth * INDENT))
    width = max(right - x0, len(title) * _TITLE_CHAR_W)
    flows: tuple[FlowEdge, ...] = ()
    flow_labels: tuple[Label, ...] = ()
    if with_flows and view is not None:
        flows, flow_labels, flow_w = _flows(view, at, x0, y0, right)
        width += flow_w
    boxes = tuple(_node(nodes[p.key], x0 + p.depth * INDENT, y0 + p.row * ROW_H) for p in placed)
    height = y0 + len(placed) * ROW_H
    cut = None
    if hidden:
        cut = Label(x0, height + 12, f"… {hidden} more node(s) not drawn")
        height += 20
    panel = Panel(Label(x0, TITLE_BASELINE, title), tuple(edges), flows, flow_labels, boxes, cut)
    return panel, width, height


def _node(node: Node, x: int, y: int) -> NodeBox:
    flagged = ", ".join(f"{kind.upper()}: {arg}" for arg, kind in node.flagged_args)
    detail = " · ".join(part for part in (node.detail, flagged) if part)
    shown = clip(detail, _LINE_CHARS)
    plain = shown[: len(node.detail)] if flagged else shown
    marks = " · ".join(MARK_LABELS[m] for m in node.marks)
    tooltip = " — ".join(
        part for part in (node.step, detail, marks, f"span {node.span_id}" if node.span_id else "") if part
    )
    return NodeBox(
        step=node.step,
        marks=node.marks,
        span_id=node.span_id,
        tooltip=tooltip,
        x=x,
        y=y,
        width=BOX_W,
        height=BOX_H,
        text_x=x + _TEXT_INSET,
        baselines=(y + _BASELINES[0], y + _BASELINES[1], y + _BASELINES[2]),
        step_label=clip(node.step, _STEP_CHARS),
        detail=plain,
        flagged=shown[len(plain) :],
        marks_label=clip(marks, _LINE_CHARS),
        first_mark=node.marks[0] if node.marks else "none",
    )


def _flows(
    view: RunView, at: dict[str, Placed], x0: int, y0: int, right: int
) -> tuple[tuple[FlowEdge, ...], tuple[Label, ...], int]:
    """Data-flow edges in lanes right of the nodes, each labelled with its argument names; the
    width they take."""
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
        sy = y0 + s.row * ROW_H + _offset(out_of[f.source].index(i), len(out_of[f.source]))
        cy = y0 + c.row * ROW_H + _offset(into[f.consumer].index(i), len(into[f.consumer]))
        title = f"argument(s) {', '.join(f.args)}: from {f.source[2:]} to {f.consumer[2:]}"
        edges.append(FlowEdge(sx, sy, lane_x0 + assigned[i] * LANE_W, cy, cx + 2, title))
    max_lane = max(assigned)
    label_x = lane_x0 + (max_lane + 1) * LANE_W + 4
    labels = []
    for consumer, indices in into.items():
        c = at[consumer]
        for k, i in enumerate(indices):
            cy = y0 + c.row * ROW_H + _offset(k, len(indices))
            labels.append(Label(label_x, cy + 4, clip("← " + ", ".join(drawn[i].args), _LABEL_CHARS)))
    return tuple(edges), tuple(labels), 18 + (max_lane + 1) * LANE_W + LABEL_W


def _offset(index: int, count: int) -> int:
    """Where the ``index``-th of ``count`` edges meets a node box (spread over its height)."""
    step = BOX_H // (count + 1)
    return step * (index + 1)
