"""Session set-up shared by every test module.

Hypothesis profiles, chosen with ``HYPOTHESIS_PROFILE`` (docs/testing.md): ``ci`` (the default when
``CI`` is set) is derandomized — the same examples every run, so a red CI is reproducible and a green
one is not luck; ``local`` (the default elsewhere) draws fresh examples; ``dev`` searches ten times
longer. None has a deadline or the too-slow health check: these machines are shared and noisy, and no
test here asserts a time (benchmarks/ does that, as same-run ratios). A test's own
``@settings(max_examples=…)`` still sets its example count.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from interop import TEST_SET_ENV, missing

_QUIET = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("ci", derandomize=True, print_blob=True, **_QUIET)
settings.register_profile("local", **_QUIET)
settings.register_profile("dev", max_examples=1000, **_QUIET)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "local"))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked ``last`` run after every other test (a stable sort keeps the rest in file order):
    they change a library for the rest of the process, and LangChain under an instrumentor that
    cannot be undone breaks the framework tests that would otherwise follow them.

    Under mutmut only (it runs the tests from its ``mutants/`` copy, with its timing of every test
    beside them): run the cheapest test modules first, and within a module the fastest tests first.

    mutmut stops a mutant at its first failing test (``-x``), so a mutant that is killed costs the
    tests before the killing one; in file order that is often a slow CLI test. Modules stay together
    so that a module's fixtures are set up once. The clean run mutmut makes before any mutant uses
    the same order, so a test that depends on running after another fails there, not as a "kill"."""
    items.sort(key=lambda item: item.get_closest_marker("last") is not None)
    stats = Path("mutmut-stats.json")
    if Path.cwd().name != "mutants" or os.environ.get("MUTANT_UNDER_TEST") == "stats" or not stats.is_file():
        return
    durations: dict[str, float] = json.loads(stats.read_text()).get("duration_by_test", {})
    slowest = max(durations.values(), default=0.0) + 1.0
    cost = {item.nodeid: durations.get(item.nodeid, slowest) for item in items}
    module_cost: dict[str, float] = {}
    for item in items:
        module_cost[item.path.name] = module_cost.get(item.path.name, 0.0) + cost[item.nodeid]
    items.sort(key=lambda item: (module_cost[item.path.name], item.path.name, cost[item.nodeid]))
    for item in items:
        _fewer_examples(getattr(item, "obj", None))


def _fewer_examples(test: object) -> None:
    """Under mutmut, a property test draws a tenth of its examples (at least 10; derandomized, so the
    same ones for every mutant). A mutant that survives runs every test that covers its function, and
    the reader fuzz tests alone are 180 s of the 215 s of a reader mutant's tests. Fewer examples can
    only let a mutant survive that more would have killed: the score can be lower, never higher."""
    current = getattr(test, "_hypothesis_internal_use_settings", None)
    if not isinstance(current, settings) or getattr(test, "_fewer_examples", False):
        return  # not a property test, or already cut (parametrized tests share a function; mutmut
        # collects the suite again for each mutant, in a process that imported it once)
    test._hypothesis_internal_use_settings = settings(  # type: ignore[attr-defined]
        current, max_examples=max(10, current.max_examples // 10), derandomize=True
    )
    test._fewer_examples = True  # type: ignore[attr-defined]


def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get(TEST_SET_ENV) == "newest" and missing():
        raise pytest.UsageError(
            f"{TEST_SET_ENV}=newest but the interop packages are missing: {', '.join(missing())} "
            "(pip install -e '.[test,interop]' -c constraints/newest.txt)"
        )


@pytest.fixture
def traced():
    """A real SDK provider whose finished spans are kept in memory (``instrument_helpers.Traced``)."""
    from instrument_helpers import Traced

    return Traced()


@pytest.fixture
def reader():
    """A real MeterProvider with an in-memory reader, installed as the tools' meter provider for the test."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    from otel_provenance.instrument.spans import metrics as tool_metrics

    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    tool_metrics.use_meter_provider(provider)
    try:
        yield reader
    finally:
        tool_metrics.use_meter_provider(None)
        provider.shutdown()


@pytest.fixture(autouse=True)
def _fresh_leak_warnings():
    """The exporter-leak warning is given once per process and set of processors: start each test
    without the record of earlier ones, so no test depends on which ran first (or on the suite running
    once per process: mutmut runs it again in the same process)."""
    from otel_provenance.instrument.spans import leaks

    leaks._WARNED.clear()
