"""Inline SVG of a ``RunView``: the run's causal graph beside the closest approved route.

Pure string building with integer coordinates, so equal views give equal bytes. Every string that
came from a trace or a contract goes through ``esc`` (hostile attribute values cannot inject
markup). Each mark is drawn with a colour *and* written as text in the node, so the figure reads in
greyscale; the ``<title>``/``<desc>`` and the HTML lists beside it carry the same facts for a
screen reader. Styling lives in the page's stylesheet (``STYLE``), keyed by the mark classes.
"""

from __future__ import annotations

import html
import re
from typing import Final

from .layout import Placed, lanes, layered
from .run_view import MARK_LABELS, MARK_MISSING, Node, RunView, Tree

ROW_H: Final = 58
BOX_W: Final = 280
BOX_H: Final = 48
INDENT: Final = 24
LANE_W: Final = 12
PAD: Final = 16
TITLE_H: Final = 30
LABEL_W: Final = 210  # room right of the lanes for argument names
MAX_NODES: Final = 300  # a run larger than this is cut (and says so)
_STEP_CHARS: Final = 36
_LINE_CHARS: Final = 42
_LABEL_CHARS: Final = 32
_TITLE_CHAR_W: Final = 8  # generous width of one panel-title character (13px sans-serif)
# Control characters (other than tab/newline) and lone surrogates are not valid in an HTML document.
_INVALID: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufdd0-\ufdef\ufffe\uffff]")


def esc(text: object) -> str:
    """``text`` safe as HTML/SVG text and as a quoted attribute value."""
    return html.escape(_INVALID.sub("\ufffd", str(text)), quote=True)


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def run_figure(view: RunView, prefix: str, run_label: str = "This run") -> str:
    """One ``<svg>``: the run (left) and, when there is one, what it is compared with (right).
    ``prefix`` makes element ids unique in the page."""
    run_panel, run_w, run_h = _panel(
        view.tree, view, f"{run_label} · {clip(view.run_id, 40)}", PAD, prefix, with_flows=True
    )
    parts = [run_panel]
    width, height = PAD + run_w, run_h
    if view.route is not None:
        name = clip(view.route.id, 40 if view.route.kind == "run" else 24)
        if view.route.kind == "run":
            title = f"Run A · {name} ({view.route.similarity} similar)"
        else:
            title = f"Closest approved route: family {name} ({view.route.similarity} similar)"
        route_panel, route_w, route_h = _panel(view.route.tree, None, title, width + 2 * PAD, prefix)
        parts.append(route_panel)
        width += 2 * PAD + route_w
        height = max(height, route_h)
    width += PAD
    height += PAD
    label = f"{prefix}-title"
    route_text = ""
    if view.route is not None:
        what = "run" if view.route.kind == "run" else "approved route family"
        route_text = f" beside {what} {view.route.id}"
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="run-graph" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-labelledby="{label} {prefix}-desc" '
        f'data-run-id="{esc(view.run_id)}">'
        f'<title id="{label}">Causal graph of run {esc(view.run_id)}{esc(route_text)}</title>'
        f'<desc id="{prefix}-desc">{esc(describe(view))}</desc>'
        f'<defs><marker id="{prefix}-arrow" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="8" '
        f'markerHeight="8" orient="auto"><path d="M0,0 L8,4 L0,8 z" class="arrowhead"/></marker></defs>'
        + "".join(parts)
        + "</svg>"
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
    tree: Tree, view: RunView | None, title: str, x0: int, prefix: str, with_flows: bool = False
) -> tuple[str, int, int]:
    """One panel's SVG, its width and height."""
    placed = layered(tree.roots, tree.child_map())
    hidden = max(len(placed) - MAX_NODES, 0)
    placed = placed[:MAX_NODES]
    at = {p.key: p for p in placed}
    nodes = tree.node_map()
    y0 = TITLE_H
    max_depth = max((p.depth for p in placed), default=0)
    right = x0 + max_depth * INDENT + BOX_W
    out = [f'<g class="panel"><text class="panel-title" x="{x0}" y="20">{esc(title)}</text>']
    for parent, kids in tree.children:
        if parent not in at:
            continue
        p = at[parent]
        px, py = x0 + p.depth * INDENT + 10, y0 + p.row * ROW_H + BOX_H
        for kid in kids:
            if kid in at:
                c = at[kid]
                cls = "tree-edge missing" if MARK_MISSING in nodes[kid].marks else "tree-edge"
                cy = y0 + c.row * ROW_H + BOX_H // 2
                out.append(f'<path class="{cls}" d="M{px},{py} V{cy} H{x0 + c.depth * INDENT}"/>')
    width = max(right - x0, len(title) * _TITLE_CHAR_W)
    if with_flows and view is not None:
        flow_svg, flow_w = _flows(view, at, x0, y0, right, prefix)
        out.append(flow_svg)
        width += flow_w
    for p in placed:
        out.append(_node(nodes[p.key], x0 + p.depth * INDENT, y0 + p.row * ROW_H))
    height = y0 + len(placed) * ROW_H
    if hidden:
        out.append(f'<text class="cut" x="{x0}" y="{height + 12}">… {hidden} more node(s) not drawn</text>')
        height += 20
    out.append("</g>")
    return "".join(out), width, height


def _node(node: Node, x: int, y: int) -> str:
    classes = " ".join(["node", *(f"mark-{m}" for m in node.marks)])
    flagged = ", ".join(f"{kind.upper()}: {arg}" for arg, kind in node.flagged_args)
    detail = " · ".join(part for part in (node.detail, flagged) if part)
    shown = clip(detail, _LINE_CHARS)
    plain = shown[: len(node.detail)] if flagged else shown
    rest = shown[len(plain) :]
    marks = " · ".join(MARK_LABELS[m] for m in node.marks)
    tooltip = " — ".join(
        part for part in (node.step, detail, marks, f"span {node.span_id}" if node.span_id else "") if part
    )
    first = node.marks[0] if node.marks else "none"
    return (
        f'<g class="{classes}" data-step="{esc(node.step)}" data-marks="{" ".join(node.marks)}"'
        + (f' data-span-id="{esc(node.span_id)}"' if node.span_id else "")
        + f"><title>{esc(tooltip)}</title>"
        f'<rect x="{x}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="4"/>'
        f'<text class="step" x="{x + 8}" y="{y + 15}">{esc(clip(node.step, _STEP_CHARS))}</text>'
        f'<text class="detail" x="{x + 8}" y="{y + 29}">{esc(plain)}'
        + (f'<tspan class="flagged">{esc(rest)}</tspan>' if rest else "")
        + "</text>"
        + (
            f'<text class="marks marks-{first}" x="{x + 8}" y="{y + 43}">'
            f"{esc(clip(marks, _LINE_CHARS))}</text>"
            if marks
            else ""
        )
        + "</g>"
    )


def _flows(
    view: RunView, at: dict[str, Placed], x0: int, y0: int, right: int, prefix: str
) -> tuple[str, int]:
    """Data-flow edges in lanes right of the nodes, each labelled with its argument names."""
    drawn = [f for f in view.flows if f.source in at and f.consumer in at]
    if not drawn:
        return "", 0
    assigned = lanes([(at[f.source].row, at[f.consumer].row) for f in drawn])
    into: dict[str, list[int]] = {}
    out_of: dict[str, list[int]] = {}
    for i, f in enumerate(drawn):
        into.setdefault(f.consumer, []).append(i)
        out_of.setdefault(f.source, []).append(i)
    lane_x0 = right + 18
    out = ['<g class="flows">']
    for i, f in enumerate(drawn):
        s, c = at[f.source], at[f.consumer]
        sx = x0 + s.depth * INDENT + BOX_W
        cx = x0 + c.depth * INDENT + BOX_W
        sy = y0 + s.row * ROW_H + _offset(out_of[f.source].index(i), len(out_of[f.source]))
        cy = y0 + c.row * ROW_H + _offset(into[f.consumer].index(i), len(into[f.consumer]))
        lx = lane_x0 + assigned[i] * LANE_W
        args = ", ".join(f.args)
        out.append(
            f'<path class="flow" d="M{sx},{sy} H{lx} V{cy} H{cx + 2}" marker-end="url(#{prefix}-arrow)">'
            f"<title>{esc(f'argument(s) {args}: from {f.source[2:]} to {f.consumer[2:]}')}</title></path>"
        )
    max_lane = max(assigned)
    label_x = lane_x0 + (max_lane + 1) * LANE_W + 4
    for consumer, indices in into.items():
        c = at[consumer]
        for k, i in enumerate(indices):
            cy = y0 + c.row * ROW_H + _offset(k, len(indices))
            out.append(
                f'<text class="flow-label" x="{label_x}" y="{cy + 4}">'
                f"{esc(clip('← ' + ', '.join(drawn[i].args), _LABEL_CHARS))}</text>"
            )
    out.append("</g>")
    return "".join(out), 18 + (max_lane + 1) * LANE_W + LABEL_W


def _offset(index: int, count: int) -> int:
    """Where the ``index``-th of ``count`` edges meets a node box (spread over its height)."""
    step = BOX_H // (count + 1)
    return step * (index + 1)
