"""The published contract schema compiled into plain Python tests, to pass a valid contract quickly.

Every ``gate check`` loads a contract, and on the happy path it is valid: importing ``jsonschema``
and walking the 28 KB schema with it was ~40 % of the command's start-up (issue #46). This module
turns the schema into nested closures, one per (sub)schema, that answer *is this instance valid?*
with the same semantics as ``jsonschema``'s Draft 2020-12 validator for each keyword it knows — the
same type checker (``bool`` is no integer, ``2.0`` is one), the same equality for ``const``/``enum``
(``True`` is not ``1``), ``re.search`` for ``pattern``. ``schemacheck`` still runs ``jsonschema``
whenever this test refuses a document, to find and word the problem; so a verdict can only come
from here when it is "valid", and a property test holds the two to the same verdict.

A schema keyword not listed in ``_COMPILERS`` (or in ``_ANNOTATIONS``) makes :func:`compile_schema`
return ``None``: an edited schema is then checked by ``jsonschema`` alone, never half-checked here.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

Check = Callable[[Any], bool]

#: Keywords that say nothing about validity.
_ANNOTATIONS = frozenset(
    {"$schema", "$id", "$defs", "$comment", "title", "description", "discriminator", "default", "examples"}
)


class _Unsupported(Exception):
    """The schema uses a keyword (or a form of one) this module does not compile."""


def compile_schema(schema: Mapping[str, Any]) -> Check | None:
    """The validity test of ``schema`` (its local ``$ref`` s resolved), or None if it cannot be exact."""
    try:
        return _Compiler(schema).compile(schema)
    except _Unsupported:
        return None


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Number) and not isinstance(value, bool)


_TYPES: dict[str, Check] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": _is_integer,
    "number": _is_number,
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}

_TRUE, _FALSE = object(), object()


def _unbool(value: Any) -> Any:
    return _TRUE if value is True else _FALSE if value is False else value


def equal(one: Any, two: Any) -> bool:
    """JSON equality as ``jsonschema`` judges it: ``True`` is not ``1``, ``1`` is ``1.0``, recursively."""
    if one is two:
        return True
    if isinstance(one, str) or isinstance(two, str):
        return bool(one == two)
    if isinstance(one, Sequence) and isinstance(two, Sequence):
        return len(one) == len(two) and all(equal(i, j) for i, j in zip(one, two, strict=True))
    if isinstance(one, Mapping) and isinstance(two, Mapping):
        return len(one) == len(two) and all(k in two and equal(v, two[k]) for k, v in one.items())
    return bool(_unbool(one) == _unbool(two))


class _Compiler:
    def __init__(self, root: Mapping[str, Any]) -> None:
        self._root = root
        self._refs: dict[str, Check] = {}

    def compile(self, schema: Any) -> Check:
        if schema is True:
            return lambda _value: True
        if schema is False:
            return lambda _value: False
        if not isinstance(schema, Mapping):
            raise _Unsupported(schema)
        checks = []
        for keyword, value in schema.items():
            if keyword in _ANNOTATIONS or keyword in ("then", "else"):  # then/else: compiled with "if"
                continue
            compiler = _COMPILERS.get(keyword)
            if compiler is None:
                raise _Unsupported(keyword)
            checks.append(compiler(self, value, schema))
        if len(checks) == 1:
            return checks[0]
        return lambda value: all(check(value) for check in checks)

    def ref(self, ref: str) -> Check:
        """A local ``#/$defs/NAME``, compiled once; a cycle of references is bound late."""
        if not ref.startswith("#/$defs/"):
            raise _Unsupported(ref)
        if ref not in self._refs:
            target: list[Check] = []
            self._refs[ref] = lambda value: target[0](value)
            try:
                target.append(self.compile(self._root["$defs"][ref.removeprefix("#/$defs/")]))
            except KeyError:
                raise _Unsupported(ref) from None
        return self._refs[ref]


def _type(c: _Compiler, types: Any, _schema: Mapping[str, Any]) -> Check:
    try:
        tests = [_TYPES[t] for t in ([types] if isinstance(types, str) else types)]
    except (KeyError, TypeError):
        raise _Unsupported(types) from None
    return lambda value: any(test(value) for test in tests)


def _properties(c: _Compiler, properties: Mapping[str, Any], _schema: Mapping[str, Any]) -> Check:
    checks = [(name, c.compile(sub)) for name, sub in properties.items()]
    return lambda value: (
        not isinstance(value, dict) or all(check(value[name]) for name, check in checks if name in value)
    )


def _additional(c: _Compiler, additional: Any, schema: Mapping[str, Any]) -> Check:
    if "patternProperties" in schema:
        raise _Unsupported("patternProperties")
    known = frozenset(schema.get("properties", {}))
    if additional is False:
        return lambda value: not isinstance(value, dict) or all(k in known for k in value)
    check = c.compile(additional)
    return lambda value: (
        not isinstance(value, dict) or all(check(v) for k, v in value.items() if k not in known)
    )


def _required(c: _Compiler, names: Sequence[str], _schema: Mapping[str, Any]) -> Check:
    return lambda value: not isinstance(value, dict) or all(name in value for name in names)


def _dependent_required(c: _Compiler, needs: Mapping[str, Sequence[str]], _s: Mapping[str, Any]) -> Check:
    pairs = list(needs.items())
    return lambda value: (
        not isinstance(value, dict)
        or all(all(k in value for k in needed) for key, needed in pairs if key in value)
    )


def _property_names(c: _Compiler, names: Any, _schema: Mapping[str, Any]) -> Check:
    check = c.compile(names)
    return lambda value: not isinstance(value, dict) or all(check(k) for k in value)


def _min_properties(c: _Compiler, least: int, _schema: Mapping[str, Any]) -> Check:
    return lambda value: not isinstance(value, dict) or len(value) >= least


def _items(c: _Compiler, items: Any, schema: Mapping[str, Any]) -> Check:
    if "prefixItems" in schema:
        raise _Unsupported("prefixItems")
    check = c.compile(items)
    return lambda value: not isinstance(value, list) or all(check(item) for item in value)


def _min_items(c: _Compiler, least: int, _schema: Mapping[str, Any]) -> Check:
    return lambda value: not isinstance(value, list) or len(value) >= least


def _unique_items(c: _Compiler, unique: Any, schema: Mapping[str, Any]) -> Check:
    """Only where the items must be strings (as in this schema): a list holding anything else is
    refused by ``items`` whatever its duplicates, and strings are equal exactly when ``==``."""
    items = schema.get("items")
    if not unique:
        return lambda _value: True
    if not isinstance(items, Mapping) or items.get("type") != "string":
        raise _Unsupported("uniqueItems")
    return lambda value: (
        not isinstance(value, list)
        or not all(isinstance(item, str) for item in value)
        or len(set(value)) == len(value)
    )


def _min_length(c: _Compiler, least: int, _schema: Mapping[str, Any]) -> Check:
    return lambda value: not isinstance(value, str) or len(value) >= least


def _pattern(c: _Compiler, pattern: str, _schema: Mapping[str, Any]) -> Check:
    search = re.compile(pattern).search
    return lambda value: not isinstance(value, str) or search(value) is not None


def _minimum(c: _Compiler, least: Any, _schema: Mapping[str, Any]) -> Check:
    return lambda value: not _is_number(value) or not value < least


def _const(c: _Compiler, const: Any, _schema: Mapping[str, Any]) -> Check:
    return lambda value: equal(value, const)


def _enum(c: _Compiler, values: Sequence[Any], _schema: Mapping[str, Any]) -> Check:
    return lambda value: any(equal(each, value) for each in values)


def _ref(c: _Compiler, ref: str, _schema: Mapping[str, Any]) -> Check:
    return c.ref(ref)


def _any_of(c: _Compiler, branches: Sequence[Any], _schema: Mapping[str, Any]) -> Check:
    checks = [c.compile(b) for b in branches]
    return lambda value: any(check(value) for check in checks)


def _one_of(c: _Compiler, branches: Sequence[Any], _schema: Mapping[str, Any]) -> Check:
    checks = [c.compile(b) for b in branches]

    def one_of(value: Any) -> bool:
        passed = (check for check in checks if check(value))
        return next(passed, None) is not None and next(passed, None) is None

    return one_of


def _not(c: _Compiler, negated: Any, _schema: Mapping[str, Any]) -> Check:
    check = c.compile(negated)
    return lambda value: not check(value)


def _if(c: _Compiler, condition: Any, schema: Mapping[str, Any]) -> Check:
    test = c.compile(condition)
    then, otherwise = c.compile(schema.get("then", True)), c.compile(schema.get("else", True))
    return lambda value: then(value) if test(value) else otherwise(value)


_COMPILERS: dict[str, Callable[[_Compiler, Any, Mapping[str, Any]], Check]] = {
    "type": _type,
    "properties": _properties,
    "additionalProperties": _additional,
    "required": _required,
    "dependentRequired": _dependent_required,
    "propertyNames": _property_names,
    "minProperties": _min_properties,
    "items": _items,
    "minItems": _min_items,
    "uniqueItems": _unique_items,
    "minLength": _min_length,
    "pattern": _pattern,
    "minimum": _minimum,
    "const": _const,
    "enum": _enum,
    "$ref": _ref,
    "anyOf": _any_of,
    "oneOf": _one_of,
    "not": _not,
    "if": _if,
}
