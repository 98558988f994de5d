"""Session checks shared by every test module."""

from __future__ import annotations

import os

import pytest

from interop import TEST_SET_ENV, missing


def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get(TEST_SET_ENV) == "newest" and missing():
        raise pytest.UsageError(
            f"{TEST_SET_ENV}=newest but the interop packages are missing: {', '.join(missing())} "
            "(pip install -e '.[test,interop]' -c constraints/newest.txt)"
        )
