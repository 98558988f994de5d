"""Digests of arguments that are not one text: structures, bytes, None and flags.

A digest is how a reviewer tells, across processes and releases, that two calls had the same
argument (a retried payment) without the value leaving the process. So equal values must digest
alike however they are spelled (key order, list or tuple, a dataclass or a dict, a path's spelling),
different values must not, and the canonical text behind a structure's digest must not drift.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import subprocess
import sys
from pathlib import Path

import pytest

import otel_provenance
from otel_provenance.instrument.base.settings import configure_settings
from otel_provenance.instrument.evidence.classify import classify_arguments
from otel_provenance.instrument.evidence.digest import keyed_digest

KEY = bytes(range(32))
SETTINGS = configure_settings(digest_key=KEY, environ={})


class Opaque:
    """Neither a structure nor a text: digested by identity, never by content."""


@dataclasses.dataclass
class Point:
    x: int
    y: int


def digest(value: object) -> str:
    (argument,) = classify_arguments("t", {"arg": value}, None, settings=SETTINGS).arguments
    assert argument.kind == "assumed"  # no run: nothing is observed
    return argument.digest


def test_a_structure_is_digested_as_its_canonical_json() -> None:
    value = {
        "b": [1, "x//y", None, True, False, 2.5, Opaque()],
        "a": {"é": "/p/./q", "t": (1, 2)},
    }
    canonical = '{"a":{"t":["1","2"],"é":"/p/q"},"b":["1","x/y",null,true,false,"2.5","\\u0000opaque"]}'
    assert digest(value) == keyed_digest(canonical, KEY)


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}),  # key order
        ([1, 2], (1, 2)),  # list or tuple
        (Point(1, 2), {"x": 1, "y": 2}),  # a dataclass is its fields
        ({"p": "/a//b/./c"}, {"p": "/a/b/c"}),  # a path's spelling
        ({"n": [None]}, {"n": [None]}),
        (b"ab", bytearray(b"ab")),
        ({"body": b"ab"}, {"body": bytearray(b"ab")}),
    ],
    ids=["key-order", "list-tuple", "dataclass", "path", "none", "bytes-bytearray", "in-bytes-bytearray"],
)
def test_equal_values_spelled_differently_digest_alike(one: object, other: object) -> None:
    assert digest(one) == digest(other)


DIFFERENT = {
    "none": None,
    "true": True,
    "false": False,
    "text-null": "null",
    "text-true": "true",
    "bytes": b"ab",
    "other-bytes": b"ac",
    "bytes-hex-text": "6162",
    "dict": {"a": 1},
    "dict-other-value": {"a": 2},
    "dict-other-key": {"b": 1},
    "list": [1, 2],
    "list-reversed": [2, 1],
    "nested": {"a": [1]},
    "nested-deeper": {"a": [[1]]},
    "in-none": {"a": None},
    "in-true": {"a": True},
    "in-false": {"a": False},
    "in-text": {"a": "x"},
    "in-opaque": {"a": Opaque()},
    "in-bytes": {"a": b"ab"},  # two payments whose bodies differ are two calls, not a retry
    "in-other-bytes": {"a": b"ac"},
    "in-bytes-hex-text": {"a": "6162"},
    "in-list-none": [None],
    "in-list-true": [True],
    "in-list-opaque": [Opaque()],
    "opaque": Opaque(),
    "another-opaque": Opaque(),
}


@pytest.mark.parametrize(("one", "other"), list(itertools.combinations(DIFFERENT, 2)))
def test_different_values_digest_apart(one: str, other: str) -> None:
    assert digest(DIFFERENT[one]) != digest(DIFFERENT[other])


def test_texts_inside_a_structure_are_normalised_like_a_text_argument() -> None:
    assert digest({"p": "/srv/./data//x"}) == digest({"p": "/srv/data/x"})
    assert digest({"p": "/srv/data/x"}) != digest({"p": "/srv/data/y"})


def test_numbers_and_flags_inside_a_structure_keep_their_kind() -> None:
    assert digest([1]) == digest(["1"])  # a number's text, as for a number argument
    assert digest([True]) != digest(["true"]) != digest([1])


def test_the_same_opaque_object_digests_alike_twice() -> None:
    thing = Opaque()
    assert digest(thing) == digest(thing)


class Other:
    """Another opaque class, laid out like Opaque."""


def test_an_opaque_object_whose_class_changed_is_another_argument() -> None:
    """Identity is the object's address *and* its type: an address reused by an object of another
    type (here the same object, its class swapped) must not read as the same argument."""
    thing = Opaque()
    before = digest(thing)
    thing.__class__ = Other
    assert digest(thing) != before
    thing.__class__ = Opaque
    assert digest(thing) == before


@pytest.mark.parametrize(
    ("value", "text"),
    [(None, "\x00null"), (True, "\x00true"), (False, "\x00false"), (b"ab", "\x00bytes:6162")],
    ids=["none", "true", "false", "bytes"],
)
def test_none_flags_and_bytes_have_fixed_texts_so_digests_match_across_processes(
    value: object, text: str
) -> None:
    assert digest(value) == keyed_digest(text, KEY)


@pytest.mark.parametrize("size", [2**20, 2**20 + 1])
def test_bytes_up_to_one_mib_are_digested_by_content_larger_by_identity(size: int) -> None:
    one, other = b"x" * size, b"x" * size  # both alive: an identity is never reused
    assert (digest(one) == digest(other)) is (size <= 2**20)


def _nested(depth: int) -> list:
    value: list = [1]
    for _ in range(depth - 1):
        value = [value]
    return value


@pytest.mark.parametrize("depth", [16, 17])
def test_structures_up_to_sixteen_levels_are_digested_by_content_deeper_by_identity(depth: int) -> None:
    """The 16th level's leaves count; a 17th level makes the argument too big to look into."""
    one, other = _nested(depth), _nested(depth)
    assert (digest(one) == digest(other)) is (depth <= 16)


@pytest.mark.parametrize("leaves", [256, 257])
def test_structures_up_to_256_leaves_are_digested_by_content_more_by_identity(leaves: int) -> None:
    one, other = list(range(leaves)), list(range(leaves))
    assert (digest(one) == digest(other)) is (leaves <= 256)


def test_a_structure_holding_the_same_object_twice_is_digested_by_identity() -> None:
    """The guard against cycles: an object met twice stops the walk."""
    shared = [1]
    twice, copies = [shared, shared], [[1], [1]]
    assert digest(twice) != digest(copies)
    assert digest(copies) == digest([[1], [1]])


def test_a_dataclass_field_never_set_is_digested_as_null() -> None:
    @dataclasses.dataclass
    class Late:
        x: int = dataclasses.field(init=False)

    assert digest(Late()) == digest({"x": None})


def test_a_pydantic_field_never_set_is_digested_as_null_not_as_a_fault() -> None:
    """``model_construct`` skips validation, so a required field can be missing: reading it raises.
    Like an unset dataclass field, it is a null in the structure, not an argument that cannot be
    examined (which would be listed as a fault and digested apart from the same structure)."""
    import pydantic

    class Partial(pydantic.BaseModel):
        x: int
        y: int

    classification = classify_arguments("t", {"arg": Partial.model_construct(x=1)}, None, settings=SETTINGS)
    assert classification.faults == ()
    assert classification.arguments[0].digest == digest({"x": 1, "y": None})


_SET_DIGEST = """
from otel_provenance.instrument.evidence.classify import classify_arguments
from otel_provenance.instrument.base.settings import configure_settings

settings = configure_settings(digest_key=bytes(range(32)), environ={})
members = {f"member-{i:02d}" for i in range(24)} | {7, 3.5}
(argument,) = classify_arguments("t", {"arg": members}, None, settings=settings).arguments
print(argument.digest)
"""


# The child imports the package from where this process did (under mutation testing, the mutated copy).
_IMPORTED_FROM = os.pathsep.join(
    [str(Path(otel_provenance.__file__).parents[1]), *filter(None, [os.environ.get("PYTHONPATH")])]
)


def test_a_set_digests_alike_in_processes_with_different_hash_seeds() -> None:
    """A set's iteration order follows the process's hash seed; its digest must not (a retried call
    in another worker is the same argument)."""
    digests = {
        subprocess.run(
            [sys.executable, "-c", _SET_DIGEST],
            env={**os.environ, "PYTHONHASHSEED": str(seed), "PYTHONPATH": _IMPORTED_FROM},
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for seed in (0, 1, 2, 3)
    }
    # and in this process too (mutation testing then counts this test as one that calls the code)
    assert digests == {digest({f"member-{i:02d}" for i in range(24)} | {7, 3.5})}, digests
