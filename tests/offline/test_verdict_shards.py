"""Sharding a gate run: which shard owns a run must never change between versions or machines,
or partial results computed apart would count a run twice or not at all when merged."""

from __future__ import annotations

import pytest

from otel_provenance.offline.gate import Shard


def test_a_run_belongs_to_the_shard_given_by_the_first_eight_bytes_of_its_sha256():
    # sha256(run id), first 8 bytes as a big-endian integer, modulo the shard count (1-based index)
    expected = {"run-1": (2, 1, 2), "run-2": (2, 3, 2), "run-3": (1, 2, 1), "run-6": (1, 1, 3)}
    for run_id, shards in expected.items():
        owners = tuple(next(i for i in range(1, n + 1) if Shard(i, n).owns(run_id)) for n in (2, 3, 4))
        assert owners == shards, run_id


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("4/3", "shard '4/3': I must be between 1 and N"),
        ("0/3", "shard '0/3': I must be between 1 and N"),
        ("2-3", "shard must look like I/N (e.g. 2/4), found '2-3'"),
    ],
)
def test_a_malformed_shard_is_refused_with_what_to_write(text, message):
    with pytest.raises(ValueError) as info:
        Shard.parse(text)
    assert str(info.value) == message
