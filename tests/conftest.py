"""Session set-up shared by every test module.

Hypothesis profiles, chosen with ``HYPOTHESIS_PROFILE`` (docs/testing.md): ``ci`` (the default when
``CI`` is set) is derandomized — the same examples every run, so a red CI is reproducible and a green
one is not luck; ``local`` (the default elsewhere) draws fresh examples; ``dev`` searches ten times
longer. None has a deadline or the too-slow health check: these machines are shared and noisy, and no
test here asserts a time (benchmarks/ does that, as same-run ratios). A test's own
``@settings(max_examples=…)`` still sets its example count.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from interop import TEST_SET_ENV, missing

_QUIET = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("ci", derandomize=True, print_blob=True, **_QUIET)
settings.register_profile("local", **_QUIET)
settings.register_profile("dev", max_examples=1000, **_QUIET)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "local"))


def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get(TEST_SET_ENV) == "newest" and missing():
        raise pytest.UsageError(
            f"{TEST_SET_ENV}=newest but the interop packages are missing: {', '.join(missing())} "
            "(pip install -e '.[test,interop]' -c constraints/newest.txt)"
        )


@pytest.fixture(autouse=True)
def _fresh_leak_warnings():
    """The exporter-leak warning is given once per process and set of processors: start each test
    without the record of earlier ones, so no test depends on which ran first (or on the suite running
    once per process: mutmut runs it again in the same process)."""
    from otel_provenance.instrument import processor

    processor._WARNED.clear()
