"""``ReadLimits.check``: where the size and ratio limits start, and what their refusals say.

Output up to ``ratio_floor`` bytes is never refused for its ratio, output of exactly ``max_ratio``
times its input is allowed, nothing read yet counts as one byte, and each refusal names the source,
what expanded and the setting to raise.
"""

from __future__ import annotations

import pytest

from otel_provenance.errors import TraceReadError
from otel_provenance.offline.readers import ReadLimits


def test_output_up_to_the_ratio_floor_is_never_refused_for_its_ratio() -> None:
    limits = ReadLimits(max_ratio=1, ratio_floor=100)
    limits.check("t.gz", 100, 1)
    with pytest.raises(TraceReadError, match="expands more than 1 times"):
        limits.check("t.gz", 101, 1)


def test_output_of_exactly_max_ratio_times_its_input_is_allowed() -> None:
    limits = ReadLimits(max_ratio=2, ratio_floor=0)
    limits.check("t.gz", 20, 10)
    with pytest.raises(TraceReadError, match="expands more than 2 times"):
        limits.check("t.gz", 21, 10)


@pytest.mark.parametrize("consumed", [0, 1])
def test_nothing_or_one_byte_read_counts_as_one_byte(consumed: int) -> None:
    limits = ReadLimits(max_ratio=2, ratio_floor=0)
    limits.check("t.gz", 2, consumed)
    with pytest.raises(TraceReadError, match="expands more than 2 times"):
        limits.check("t.gz", 3, consumed)


def test_the_size_refusal_names_the_source_and_the_setting() -> None:
    with pytest.raises(TraceReadError) as info:
        ReadLimits(max_bytes=10).check("traces/t.jsonl.gz", 11, 1)
    assert info.value.source == "traces/t.jsonl.gz"
    assert info.value.problem == (
        "the data decompresses to more than 10 bytes (the limit; raise "
        "ReadLimits.max_bytes / OTEL_PROVENANCE_READ_MAX_BYTES to read it)"
    )


def test_the_ratio_refusal_names_what_expanded() -> None:
    with pytest.raises(TraceReadError) as info:
        ReadLimits(max_ratio=2, ratio_floor=0).check("t.pb.zst", 30, 10, "record 3")
    assert info.value.source == "t.pb.zst"
    assert info.value.problem == (
        "record 3 expands more than 2 times (a decompression bomb?); raise "
        "ReadLimits.max_ratio / OTEL_PROVENANCE_READ_MAX_RATIO to read it"
    )


def test_the_smallest_limits_allowed_are_one_byte_ratio_one_and_floor_zero() -> None:
    ReadLimits(max_bytes=1, max_ratio=1, ratio_floor=0).check("t.gz", 1, 1)
    message = "ReadLimits: max_bytes and max_ratio must be at least 1, ratio_floor 0 or more"
    for bad in ({"max_bytes": 0}, {"max_ratio": 0.5}, {"ratio_floor": -1}):
        with pytest.raises(ValueError) as info:
            ReadLimits(**bad)
        assert str(info.value) == message, bad
