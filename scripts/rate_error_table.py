"""The error rates a failing-run rate rule implies, computed exactly; docs/contracts.md quotes the output.

For a rule ``max_failing_rate: "1/10"``, ``confidence: "0.95"`` (every run with evidence, ``min_runs``
met), a release whose runs fail independently at a true rate ``q`` gets each verdict with an exact
probability: FAIL when ``k`` failing of ``n`` runs make ``P(X ≥ k | n, 1/10) ≤ 1/20``, PASS when
``P(X ≤ k | n, 1/10) ≤ 1/20``, INSUFFICIENT otherwise; summed over ``k`` under ``Binomial(n, q)``.
The verdicts come from the gate's own functions (``contracts.confidence``), so the table cannot drift
from the code; ``tests/offline/contracts/test_rate_docs_table.py`` checks the docs quote this output.

    python scripts/rate_error_table.py > table.md
"""

from __future__ import annotations

from fractions import Fraction

from otel_provenance.offline.contracts.confidence import at_least_tail, at_most_tail, judge_rate
from otel_provenance.offline.contracts.model import RateLimit
from otel_provenance.offline.contracts.rational import format_rounded

LIMIT = RateLimit(Fraction(1, 10), Fraction(95, 100))
TRUE_RATES = (Fraction(0), Fraction(5, 100), Fraction(10, 100), Fraction(20, 100), Fraction(30, 100))
SIZES = (10, 20, 50, 100, 200)


def verdict_probabilities(
    q: Fraction, n: int, limit: RateLimit = LIMIT
) -> tuple[Fraction, Fraction, Fraction]:
    """Exact (P(FAIL), P(PASS), P(INSUFFICIENT)) for ``n`` runs failing independently at rate ``q``.
    Both tests are monotone in the failing count, so each verdict is one tail of ``Binomial(n, q)``."""
    fails_from = next((k for k in range(n + 1) if judge_rate(limit, n, k).fails), None)
    passes_to = max((k for k in range(n + 1) if judge_rate(limit, n, k).passes), default=None)
    fail = at_least_tail(fails_from, n, q) if fails_from is not None else Fraction(0)
    passed = at_most_tail(passes_to, n, q) if passes_to is not None else Fraction(0)
    return fail, passed, 1 - fail - passed


def _percent(value: Fraction) -> str:
    return format_rounded(value * 100, 1) + " %"


def table(limit: RateLimit = LIMIT) -> str:
    """The Markdown table: per true rate and run count, P(FAIL) / P(PASS) / P(INSUFFICIENT)."""
    head = "| true failing rate | " + " | ".join(f"n = {n}" for n in SIZES) + " |"
    lines = [head, "|---|" + "---|" * len(SIZES)]
    for q in TRUE_RATES:
        cells = []
        for n in SIZES:
            fail, passed, undecided = verdict_probabilities(q, n, limit)
            cells.append(f"{_percent(fail)} / {_percent(passed)} / {_percent(undecided)}")
        lines.append(f"| {format_rounded(q * 100, 0)} % | " + " | ".join(cells) + " |")
    fails = " | ".join(str(next(k for k in range(n + 1) if judge_rate(limit, n, k).fails)) for n in SIZES)
    passes = " | ".join(
        str(max((k for k in range(n + 1) if judge_rate(limit, n, k).passes), default="never")) for n in SIZES
    )
    lines.append(f"| fails with at least … failing runs | {fails} |")
    lines.append(f"| passes with at most … failing runs | {passes} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(table(), end="")
