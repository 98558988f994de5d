"""``approved_routes``: the run's route must be an approved family's, or close enough to one."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

from ...fingerprint import edge_counts, fingerprint, step_counts
from ..evidence import RunEvidence
from ..model import RouteFamily, Rule
from ..outcomes import Observation, Unknown, Violation
from ..rational import ratio_at_least
from ..ruletype import Absence, AtCall, Fail, Passes, RuleType, always
from ..similarity import RouteShape, more_similar, route_shape, weighted_jaccard


def family_shape(family: RouteFamily) -> RouteShape:
    return route_shape(dict(family.steps), (((p, c), n) for p, c, n in family.edges))


def run_shape(ev: RunEvidence) -> RouteShape:
    return route_shape(step_counts(ev.run), edge_counts(ev.run).items())


def check_approved_routes(rule: Rule, ev: RunEvidence) -> Iterator[Observation]:
    threshold: Fraction = rule.params["similarity"]
    families: tuple[RouteFamily, ...] = rule.params["families"]
    approved = [f for f in families if f.status == "approved"]
    print_ = fingerprint(ev.run)
    if any(print_ in f.fingerprints for f in approved):
        return
    best = _closest(families, print_, ev)
    if best is not None and ratio_at_least(best[1][0], best[1][1], threshold):
        return
    if not ev.complete:
        yield Unknown(
            "the run's route cannot be judged: the run is incomplete.", ev.witnesses(fingerprint=print_)
        )
        return
    pending = next((f.id for f in families if f.status != "approved" and print_ in f.fingerprints), None)
    if best is None:
        closest, observed = "no family is approved", {}
    else:
        ratio = _fraction(Fraction(*best[1]))
        closest = f"the closest approved family, {best[0].id}, is {ratio} similar"
        observed = {"closest_family": best[0].id, "similarity": f"{best[1][0]}/{best[1][1]}"}
    if pending:
        observed["pending_family"] = pending
        start = f"this run follows route family {pending}, which is pending approval"
    else:
        start = "this run's route matches no approved family"
    yield Violation(
        f"{start}; {closest} and the contract requires {_fraction(threshold)}.",
        ev.witnesses(fingerprint=print_, **observed),
    )


_Closest = tuple[RouteFamily, tuple[int, int]] | None


class _Routes(threading.local):
    """The last families tuple checked (on this thread), its approved families' shapes in id order,
    and each route's closest one found so far, by fingerprint: a fingerprint is the hash of the step
    tree with its multiplicities, which the step and edge counts compared are read from, so runs of
    one route have one closest family (the failing runs of a release repeat a few routes)."""

    families: tuple[RouteFamily, ...] | None = None
    shapes: tuple[tuple[RouteFamily, RouteShape], ...] = ()
    closest: dict[str, _Closest] = {}  # noqa: RUF012 - replaced per families tuple, per thread


_ROUTES = _Routes()
_ROUTES_KEPT = 4096


def _closest(families: tuple[RouteFamily, ...], print_: str, ev: RunEvidence) -> _Closest:
    """The approved family most similar to the run's route and the similarity (the first by id
    among equals); None when no family is approved."""
    routes = _ROUTES
    if routes.families is not families:
        approved = sorted((f for f in families if f.status == "approved"), key=lambda f: f.id)
        routes.shapes = tuple((family, family_shape(family)) for family in approved)
        routes.closest = {}
        routes.families = families
    if print_ in routes.closest:
        return routes.closest[print_]
    shape = run_shape(ev)
    best: _Closest = None
    for family, family_route in routes.shapes:
        score = weighted_jaccard(shape, family_route)
        if best is None or more_similar(score, best[1]):
            best = (family, score)
    if len(routes.closest) >= _ROUTES_KEPT:
        routes.closest.clear()
    routes.closest[print_] = best
    return best


def _compile_routes(rule: Rule) -> Passes:
    """The run's fingerprint is an approved family's."""
    approved = frozenset(p for f in rule.params["families"] if f.status == "approved" for p in f.fingerprints)
    return lambda ev: fingerprint(ev.run) in approved


def _fraction(value: Fraction) -> str:
    """Similarities as fractions, both sides alike ("4/7 … requires 4/5"), as the contract writes them."""
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def _validate(params: dict[str, Any], fail: Fail) -> None:
    sim = params["similarity"]
    if not 0 <= sim <= 1:
        raise fail("similarity", f"similarity must be between 0 and 1, found {sim}")
    ids = [f.id for f in params["families"]]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise fail("families", f"duplicate family id {dupes[0]!r}")


RULE_TYPES = (
    RuleType(
        "approved_routes",
        check_approved_routes,
        "UNAPPROVED_ROUTE",
        always(Absence.IRRELEVANT),
        _validate,
        _compile_routes,
        at_call=AtCall.OFFLINE,
    ),
)
