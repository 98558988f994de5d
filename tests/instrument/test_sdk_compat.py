"""What differs between the supported OpenTelemetry SDK releases, checked on whichever is installed.

CI runs the suite on the oldest supported set (constraints/oldest.txt) and the newest
(constraints/newest.txt); each test here states what must hold on the release it finds.
"""

from __future__ import annotations

from importlib import metadata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.attributes import BoundedAttributes

import otel_provenance as op
from otel_provenance.instrument.base import _sdkcompat
from otel_provenance.instrument.configure import configure_logs


def _sdk() -> tuple[int, int]:
    major, minor = metadata.version("opentelemetry-sdk").split(".")[:2]
    return int(major), int(minor)


def test_the_installed_sdk_is_in_the_supported_range():
    assert (1, 33) <= _sdk() < (2, 0)


def test_logs_support_matches_the_sdk_release():
    assert (_sdk() >= (1, 39)) == _sdkcompat.HAS_CURRENT_LOGS_SDK


@pytest.mark.skipif(_sdkcompat.HAS_CURRENT_LOGS_SDK, reason="only on SDKs before 1.39")
def test_before_1_39_the_logs_processor_refuses_with_a_clear_error():
    message = r"needs opentelemetry-sdk >= 1\.39 .* installed: 1\.\d+\.\d+\. Spans are supported"
    with pytest.raises(op.ConfigurationError, match="ProvenanceLogRecordProcessor " + message):
        op.ProvenanceLogRecordProcessor()
    with pytest.raises(op.ConfigurationError, match=r"configure_logs \(logs=True, OTEL_PROVENANCE_LOGS\) "):
        configure_logs(exporter="none", set_global=False)
    with pytest.raises(op.ConfigurationError, match="configure_logs"):
        op.configure(exporter="none", logs=True, set_global=False)


_SCALAR = st.one_of(
    st.text(max_size=20), st.integers(-(2**63), 2**63 - 1), st.booleans(), st.floats(allow_nan=False)
)
_ATTRIBUTE_VALUE = st.one_of(
    _SCALAR,
    st.lists(st.text(max_size=8), max_size=4).map(tuple),
    st.lists(st.integers(0, 99), max_size=4).map(tuple),
)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=12), _ATTRIBUTE_VALUE, max_size=12), st.integers(0, 5))
def test_attributes_rebuilt_from_validated_ones_equal_the_sdks_own(raw, dropped):
    """A stripped span's attributes are rebuilt without validating them again (#45): on the installed
    SDK that must give what its public constructor gives — the same items in the same order, the
    dropped count kept, and no way to change them."""
    validated = dict(BoundedAttributes(attributes=raw))  # as the SDK stores them on a span
    fast = _sdkcompat.validated_attributes(validated, dropped)
    public = BoundedAttributes(maxlen=None, attributes=validated, immutable=True)
    assert list(fast.items()) == list(public.items())
    assert fast.dropped == dropped
    with pytest.raises(TypeError):
        fast["x"] = "y"
