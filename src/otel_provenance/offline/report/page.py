"""What the three HTML pages share (``gate check``, ``audit`` and ``diff`` with ``--report-html``):
rendering a page template, the legend of marks, and a run figure's facts as text.

The frame itself — head, stylesheet, the Content-Security-Policy that forbids every fetch, footer —
is ``templates/page.html.j2``; the legend and the list of differences are macros of
``templates/run.html.j2``. Here is only what they show, computed from a ``RunView``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from ... import __version__
from ..contracts.model import Rule
from .run_view import ARG_ALLOWED, ARG_OBSERVED, ARG_STANDINGS, ARG_VIOLATING, MARK_LABELS, MARKS, RunView
from .svg import Figure
from .templating import render

MARK_HELP: Final = {
    "missing": "in the route beside it, not in this run",
    "duplicated": "a write tool called more than once",
    "blocked": "agent.tool.status = blocked: the call did not happen",
    "extra": "no place in the route beside it",
    "error": "the call or span reported an error",
}


_ARG_HELP: Final = {
    ARG_OBSERVED: "argument (kind) a tool result supplied",
    ARG_ALLOWED: "assumed, but on the call's allow-list (agent.budget.allowed): not counted",
    ARG_VIOLATING: "assumed, invented or of no known kind and not allowed: it counts against the budget",
}


@dataclass(frozen=True, slots=True)
class LegendEntry:
    mark: str  # the CSS class suffix: mark-<mark>, or arg-<standing> for an argument
    label: str
    help: str
    arg: bool = False


def legend(
    labels: Mapping[str, str] = MARK_LABELS, helps: Mapping[str, str] = MARK_HELP
) -> tuple[LegendEntry, ...]:
    """The marks (named by ``labels``), then how arguments are drawn."""
    marks = tuple(LegendEntry(m, labels[m], helps[m]) for m in MARKS)
    return marks + tuple(LegendEntry(a, a, _ARG_HELP[a], arg=True) for a in ARG_STANDINGS)


LEGEND: Final = legend()


@dataclass(frozen=True, slots=True)
class Marked:
    """The nodes carrying one mark: (step, span id or None for a placeholder), in node order."""

    label: str
    nodes: tuple[tuple[str, str | None], ...]


@dataclass(frozen=True, slots=True)
class Flagged:
    kind: str  # ASSUMED | INVENTED
    arg: str
    step: str
    span_id: str | None
    allowed: bool = False  # on the call's allow-list: drawn as allowed, not counted


@dataclass(frozen=True, slots=True)
class FlowText:
    source: str  # steps
    consumer: str
    args: str


@dataclass(frozen=True, slots=True)
class DanglingText:
    arg: str
    consumer: str  # step
    source_span_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class Differences:
    """The figure's marks and flows as text (greyscale, screen readers, copy-paste)."""

    marked: tuple[Marked, ...]
    flagged: tuple[Flagged, ...]
    flows: tuple[FlowText, ...]
    dangling: tuple[DanglingText, ...]
    no_route: bool  # say that no route is drawn beside the run


@dataclass(frozen=True, slots=True)
class DrawnRun:
    """A run a page draws — or, when its spans are not there (``gate merge``), only names."""

    run_id: str
    anchor: str | None = None  # the id of its section
    figure: Figure | None = None
    differences: Differences | None = None
    traces: tuple[str, ...] = ()
    failing: tuple[Rule, ...] = ()  # the gate's rules it fails
    same: tuple[str, ...] = ()  # other runs drawn exactly alike (ids aside): drawn once, counted


def render_page(template: str, title: str, page_format: str, **context: object) -> str:
    """A page: ``template`` extends ``page.html.j2``, which needs the title and the page's format
    (and gets ``legend``, unless the page brings its own)."""
    context.setdefault("legend", LEGEND)
    return render(template, title=title, page_format=page_format, version=__version__, **context)


def differences(
    view: RunView, route_note: bool = True, labels: Mapping[str, str] = MARK_LABELS
) -> Differences:
    nodes = view.tree.node_map()
    marked = []
    for mark in MARKS:
        carrying = tuple((n.step, n.span_id) for n in view.tree.nodes if mark in n.marks)
        if carrying:
            marked.append(Marked(labels[mark], carrying))
    flagged = tuple(
        Flagged(kind.upper(), arg, node.step, node.span_id, (arg, kind, ARG_ALLOWED) in node.args)
        for node in view.tree.nodes
        for arg, kind in node.flagged_args
    )
    flows = tuple(
        FlowText(nodes[f.source].step, nodes[f.consumer].step, ", ".join(f.args)) for f in view.flows
    )
    dangling = tuple(
        DanglingText(d.arg, nodes[d.consumer].step, d.source_span_id, d.reason.replace("_", " "))
        for d in view.dangling
    )
    return Differences(tuple(marked), flagged, flows, dangling, view.route is None and route_note)
