"""The compiled schema (``schemacompile``) accepts and refuses exactly the documents ``jsonschema``
accepts and refuses: the docs' contracts, and those contracts broken anywhere — any value replaced by
another JSON value (``True`` where ``1`` is due, ``2.0`` for an integer, a duplicate in a unique
list), a key dropped or added. A keyword it does not know leaves the schema to ``jsonschema``."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_contract_schema_quick import PUBLISHED, VALID

from otel_provenance.offline.contracts import contract_schema
from otel_provenance.offline.contracts.schemacompile import compile_schema

COMPILED = compile_schema(contract_schema())


def _with_family_orders(contract: dict[str, Any]) -> dict[str, Any]:
    """The docs' route families with the ``order`` and ``prerequisites`` mining writes (unique lists)."""
    doc = copy.deepcopy(contract)
    for rule in doc["rules"]:
        for family in rule.get("families", ()):
            steps = sorted(family["steps"])
            family["order"] = steps
            family["prerequisites"] = {steps[-1]: steps[:-1]}
    return doc


DOCUMENTS = VALID + [_with_family_orders(c) for c in VALID if "families" in str(c)]
SCHEMA_KEYS = sorted(
    {k for d in contract_schema()["$defs"].values() for k in d.get("properties", {})}
    | set(contract_schema()["properties"])
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0.0, 1.0, 2.0, 0.5, -1.5]),
    st.sampled_from(["", "x", "a.b", "1/20", "0.05", "-3", "2/0", "A_B", "#", "# end of contract"]),
)
KEYS = st.sampled_from(SCHEMA_KEYS)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
    max_leaves=6,
)


def _places(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path in a document, the root included."""
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _places(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _places(item, (*path, index))
    return found


def _at(doc: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        doc = doc[step]
    return doc


def _twin(value: Any) -> Any:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return bool(value) if value in (0, 1) else float(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


@st.composite
def broken_contracts(draw: st.DrawFn) -> Any:
    doc: Any = copy.deepcopy(draw(st.sampled_from(DOCUMENTS)))
    for _ in range(draw(st.integers(1, 3))):
        lists = [p for p in _places(doc) if isinstance(_at(doc, p), list) and _at(doc, p)]
        if lists and draw(st.integers(0, 5)) == 0:  # a list item repeated (unique lists refuse it)
            items = _at(doc, draw(st.sampled_from(lists)))
            items.append(copy.deepcopy(draw(st.sampled_from(items))))
            continue
        path = draw(st.sampled_from(_places(doc)))
        edit = draw(st.sampled_from(["replace", "drop", "add", "same-kind", "twin", "twin", "less"]))
        if not path:
            if edit == "replace":
                doc = draw(JSON)
            continue
        parent, last = _at(doc, path[:-1]), path[-1]
        if edit == "replace":
            parent[last] = draw(JSON)
        elif edit == "same-kind":  # another value of the same place kind, as a hand edit would give
            parent[last] = copy.deepcopy(_at(doc, draw(st.sampled_from(_places(doc)))))
        elif edit == "twin":  # a value JSON tells apart but Python may not: 1 / 1.0 / True
            parent[last] = _twin(parent[last])
        elif edit == "less" and isinstance(parent[last], int):  # below a minimum
            parent[last] -= draw(st.integers(1, 2))
        elif edit == "drop":
            del parent[last]
            return doc  # the other paths drawn from this document may be gone
        elif edit == "add" and isinstance(parent, dict):
            parent[draw(st.sampled_from(SCHEMA_KEYS))] = draw(JSON)
    return doc


def test_the_schema_compiles_and_passes_every_docs_contract() -> None:
    assert COMPILED is not None
    assert len(DOCUMENTS) > len(VALID)
    for doc in DOCUMENTS:
        assert PUBLISHED.is_valid(doc)
        assert COMPILED(doc)


@settings(max_examples=600, deadline=None)
@given(broken_contracts())
def test_the_compiled_schema_agrees_with_jsonschema(doc: Any) -> None:
    assert COMPILED is not None
    assert COMPILED(doc) == PUBLISHED.is_valid(doc)


@pytest.mark.parametrize(
    ("schema", "value", "valid"),
    [
        ({"type": "integer"}, 2.0, True),
        ({"type": "integer"}, True, False),
        ({"type": "number", "minimum": 0}, -0.5, False),
        ({"const": 1}, True, False),
        ({"enum": [0, "x"]}, 0.0, True),
        ({"enum": [0, "x"]}, False, False),
        ({"type": "array", "items": {"type": "string"}, "uniqueItems": True}, ["a", "a"], False),
        ({"type": "array", "items": {"type": "string"}, "uniqueItems": True}, ["a", 1], False),
        ({"if": {"type": "array"}, "then": {"minItems": 1}, "else": {"type": "string"}}, [], False),
        ({"if": {"type": "array"}, "then": {"minItems": 1}, "else": {"type": "string"}}, 3, False),
        ({"oneOf": [{"type": "integer"}, {"type": "number"}]}, 1, False),
        ({"oneOf": [{"type": "integer"}, {"type": "number"}]}, 0.5, True),
        ({"propertyNames": {"minLength": 1}}, {"": 1}, False),
        ({"not": {"required": ["a", "b"]}}, {"a": 1}, True),
        ({"dependentRequired": {"a": ["b"]}}, {"a": 1}, False),
    ],
)
def test_each_keyword_judges_as_jsonschema_does(schema: dict[str, Any], value: Any, valid: bool) -> None:
    import jsonschema

    check = compile_schema(schema)
    assert check is not None
    assert jsonschema.Draft202012Validator(schema).is_valid(value) is valid
    assert check(value) is valid


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "maxLength": 3},  # a keyword it does not compile
        {"type": "array", "uniqueItems": True},  # uniqueItems over anything but strings
        {"properties": {"a": {"$ref": "https://example.com/other.json"}}},  # not a local reference
        {"items": {"$ref": "#/$defs/missing"}},
    ],
)
def test_a_schema_it_cannot_judge_exactly_is_left_to_jsonschema(schema: dict[str, Any]) -> None:
    assert compile_schema(schema) is None
