"""``op.adk_plugin()`` where Google ADK is not installed (the newest test set: ADK pins an older SDK):
a ``ConfigurationError`` that says what to install, not an ImportError from inside the package. Where
ADK is installed (``scripts/install_check.sh``'s adk case) the plugin itself is tested instead
(``tests/integration/test_framework_adk.py``)."""

from __future__ import annotations

import importlib.util

import pytest

import otel_provenance as op


def _adk_installed() -> bool:
    try:
        return importlib.util.find_spec("google.adk") is not None
    except ModuleNotFoundError:  # no google namespace at all
        return False


@pytest.mark.skipif(_adk_installed(), reason="Google ADK is installed")
def test_the_plugin_without_adk_says_how_to_install_it() -> None:
    with pytest.raises(op.ConfigurationError) as refused:
        op.adk_plugin()
    assert str(refused.value) == "op.adk_plugin(): Google ADK is not installed (pip install google-adk)"
    assert isinstance(refused.value.__cause__, ImportError)
