"""Check a contract document against the published ``schema.json`` with the ``jsonschema`` library.

The schema is the single description of the DSL: the parser, editors and any other tool validate the
same files with the same JSON Schema (draft 2020-12) validator, so they cannot drift apart. This module
turns the validator's errors into the project's contract errors — ``file:line:column: path: problem``,
located by mapping each error's path back to the YAML node it came from (``yamldata.Located``).

Of several errors the one reported is the first in the file, as a reader fixing it from the top would
meet them: each error is ordered by where its node starts, except that a mapping's or list's own
problem (a missing key, too few items) counts at its end, after anything wrong inside it. This is our
own total order rather than ``jsonschema.exceptions.best_match``, whose heuristic the library says may
change between versions; the message must be the same with every ``jsonschema`` the range admits.

The rule union is discriminated by its ``type`` (the schema's ``discriminator`` annotation): a rule
is judged only against the branch its ``type`` names, so its errors say what is wrong with that rule
instead of why it is none of the thirteen.
"""

from __future__ import annotations

import importlib.util
import json
import pkgutil
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Final

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ...errors import ConfigurationError
from .schemacompile import compile_schema
from .yamldata import Located, Path, format_path

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

# Ties between errors at one place: the kind of value first, then what it must be, then its parts.
_KEYWORD_ORDER: Final = (
    "type",
    "const",
    "enum",
    "oneOf",
    "anyOf",
    "minLength",
    "pattern",
    "minimum",
    "additionalProperties",
    "required",
    "minProperties",
    "minItems",
)
# Problems of a mapping or a list as a whole: found after its contents.
_WHOLE: Final = frozenset({"minProperties", "minItems"})
_JSON_TYPES: Final = {bool: "boolean", int: "integer", str: "string", type(None): "null"}


@lru_cache(maxsize=1)
def contract_schema() -> dict[str, Any]:
    """The published JSON Schema of contract version 1, read by the package's loader (a wheel, a zip):
    ``pkgutil`` rather than ``importlib.resources``, whose import (temporary files, zip readers) was
    ~5 % of a gate check's start-up."""
    data = pkgutil.get_data(__package__, "schema.json")
    if data is None:  # a loader that cannot read package data
        raise ConfigurationError(f"cannot read {__package__}/schema.json")
    return json.loads(data.decode("utf-8"))


_NEEDS_JSONSCHEMA: Final = "checking a contract needs jsonschema: pip install 'otel-provenance[cli]'"


@lru_cache(maxsize=1)
def _validator() -> Validator:
    """Created once. ``jsonschema`` is imported here, not at module level: it costs a tenth of a second,
    which the commands that read no contract (``audit``, ``fetch``…) should not pay. An install without
    it (the ``cli`` extra from before it was added) is told what to install, not shown a traceback."""
    try:
        from jsonschema import Draft202012Validator
    except ModuleNotFoundError as exc:
        if exc.name != "jsonschema":
            raise
        raise ConfigurationError(_NEEDS_JSONSCHEMA) from None
    return Draft202012Validator(contract_schema())


def _check_installed() -> None:
    """A valid contract is passed without importing ``jsonschema``; an install without it is still
    told what to install, whether its contract is valid or not (found, not imported: no cost)."""
    if importlib.util.find_spec("jsonschema") is None:
        raise ConfigurationError(_NEEDS_JSONSCHEMA)


def check_document(doc: Located) -> None:
    """Raise the contract error of the first schema violation in ``doc``; return if there is none."""
    _check_installed()
    if _passes_quickly()(doc.data):
        return
    problems = [p for error in _validator().iter_errors(doc.data) for p in _worded(error, doc)]
    if problems:
        first = min(problems, key=lambda p: p.order)
        raise doc.error(first.path, first.message, first.node)


@lru_cache(maxsize=1)
def _passes_quickly() -> Callable[[Any], bool]:
    """The schema compiled into plain Python tests (``schemacompile``): a valid contract is passed
    without importing ``jsonschema`` at all, which with its validation was ~40 % of a ``gate check``'s
    start-up. A document it refuses goes to the full validation, which finds and words the problem (or
    finds none: the verdict is always ``jsonschema``'s); a schema it cannot compile exactly is left to
    ``jsonschema`` alone. ``test_46u_schema_compiled.py`` holds the two to one verdict."""
    return compile_schema(contract_schema()) or (lambda _document: False)


@dataclass(frozen=True, slots=True)
class _Problem:
    path: Path
    message: str
    node: Node  # where the error is reported
    order: tuple[int, int, int, str, str]  # line, column, keyword rank, path, message: a total order


def _problem(path: Path, message: str, node: Node, keyword: str, whole: bool = False) -> _Problem:
    """``whole``: a problem of the mapping or list itself, ordered at its end."""
    mark = node.end_mark if whole else node.start_mark
    rank = _KEYWORD_ORDER.index(keyword) if keyword in _KEYWORD_ORDER else len(_KEYWORD_ORDER)
    return _Problem(path, message, node, (mark.line, mark.column, rank, format_path(path), message))


def _worded(error: ValidationError, doc: Located) -> list[_Problem]:
    """The project's wording of one validator error — never none, so no error can go unreported."""
    problems = list(_problems(error, doc))
    if not problems:  # a case the wording below did not foresee: the library's own words
        path: Path = tuple(error.absolute_path)
        problems.append(_problem(path, error.message, doc.node(path), str(error.validator)))
    return problems


def _problems(error: ValidationError, doc: Located) -> Iterator[_Problem]:
    path: Path = tuple(error.absolute_path)
    keyword = str(error.validator)
    node = doc.node(path)
    value, instance = error.validator_value, error.instance
    if keyword == "oneOf" and "discriminator" in error.schema:
        yield from _discriminated(error, doc)
        return
    if keyword == "anyOf" and all(set(_resolve(b)) == {"required"} for b in value):
        names = ", ".join(k for b in value for k in _resolve(b)["required"])
        yield _problem(path, f"needs at least one of: {names}", node, keyword, whole=True)
        return
    if keyword == "additionalProperties" and value is False:
        for key in _additional(instance, error.schema):
            allowed = ", ".join(sorted(error.schema.get("properties", {})))
            message = f"unknown key {key!r} (allowed: {allowed})"
            yield _problem(path, message, doc.keys[(*path, key)], keyword)
        return
    if "propertyNames" in error.relative_schema_path:  # a mapping key is wrong: say so, at the key
        at = doc.keys.get((*path, instance), node) if isinstance(instance, str) else node
        yield _problem(path, f"key {instance!r}: {_message(error, at)}", at, keyword)
        return
    if keyword == "dependentRequired":
        for key, needed in value.items():
            missing = [k for k in needed if key in instance and k not in instance]
            if missing:
                at = doc.keys[(*path, key)]
                yield _problem(path, f"{key!r} needs {', '.join(map(repr, missing))} beside it", at, keyword)
        return
    if keyword == "not" and set(value) == {"required"}:  # keys that exclude one another
        names = " and ".join(repr(k) for k in value["required"])
        yield _problem(path, f"give one of {names}, not both", node, keyword)
        return
    if keyword == "required":
        missing = next(k for k in value if k not in instance)
        yield _problem(path, f"missing required key {missing!r}", node, keyword, whole=True)
        return
    yield _problem(path, _message(error, node), node, keyword, whole=keyword in _WHOLE)


def _message(error: ValidationError, node: Node) -> str:
    keyword, value, instance = error.validator, error.validator_value, error.instance
    if keyword == "type":
        expected = " or ".join(value) if isinstance(value, list) else value
        return f"expected {expected}, found {_found(instance, node)}"
    if keyword == "const":
        return f"must be {value!r}"
    if keyword == "enum":
        return f"{instance!r} is not one of {', '.join(repr(v) for v in value)}"
    if keyword in ("minLength", "minProperties"):
        return "must not be empty"
    if keyword == "pattern":
        return f"{instance!r} does not match {value}"
    if keyword == "minimum":
        return f"must be at least {value}"
    if keyword == "minItems":
        return f"needs at least {value} item(s)"
    if keyword == "anyOf":
        what = error.schema.get("description") or " or ".join(_resolve(b).get("type", "value") for b in value)
        return f"expected {what}"
    return error.message  # a keyword this schema does not use yet: the library's own words


def _found(instance: Any, node: Node) -> str:
    """What the document holds instead, in YAML's words and as written (``string 'two'``)."""
    if isinstance(node, MappingNode):
        return "a mapping"
    if isinstance(node, SequenceNode):
        return "a list"
    assert isinstance(node, ScalarNode)
    return f"{_JSON_TYPES.get(type(instance), type(instance).__name__)} {node.value!r}"


def _discriminated(error: ValidationError, doc: Located) -> Iterator[_Problem]:
    """A ``oneOf`` whose branches each fix ``discriminator`` to a constant: judge the named branch only."""
    path: Path = tuple(error.absolute_path)
    key = error.schema["discriminator"]
    node = doc.node(path)
    if not isinstance(error.instance, dict):
        yield _problem(path, "expected a mapping", node, "type")
        return
    if key not in error.instance:
        yield _problem(path, f"missing required key {key!r}", node, "required", whole=True)
        return
    branches = {_resolve(b)["properties"][key]["const"]: i for i, b in enumerate(error.schema["oneOf"])}
    kind = error.instance[key]
    index = branches.get(kind) if isinstance(kind, str) else None
    if index is None:
        names = ", ".join(sorted(branches))
        at = (*path, key)
        kind_node = doc.node(at)
        written = kind_node.value if isinstance(kind_node, ScalarNode) else kind  # as the file has it
        yield _problem(at, f"unknown rule type {written!r} (one of: {names})", kind_node, "const")
        return
    for sub in error.context:
        if sub.relative_schema_path[0] == index:
            yield from _worded(sub, doc)


def _additional(instance: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    """The keys of ``instance`` that ``additionalProperties: false`` refuses, in document order."""
    patterns = [re.compile(p) for p in schema.get("patternProperties", {})]
    return [
        k
        for k in instance
        if k not in schema.get("properties", {}) and not any(p.search(k) for p in patterns)
    ]


def _resolve(schema: dict[str, Any]) -> dict[str, Any]:
    """Follow a local ``$ref`` (the only kind this schema has) to the definition it names."""
    while "$ref" in schema:
        schema = contract_schema()["$defs"][schema["$ref"].removeprefix("#/$defs/")]
    return schema
