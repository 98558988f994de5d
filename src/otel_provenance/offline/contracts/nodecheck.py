"""Validate a composed YAML node tree against the published JSON Schema, with line and column.

The contract's ``schema.json`` is the single description of the DSL: this module interprets the
subset of JSON Schema it uses (``$ref``, ``type``, ``properties``, ``required``,
``additionalProperties``, ``items``, ``minItems``, ``minProperties``, ``minLength``, ``minimum``,
``pattern``, ``enum``, ``const``, ``anyOf``, and ``oneOf`` discriminated by a ``const`` ``type``)
directly over PyYAML nodes, so every error names the line and column where it is. Editors and
other tools validate the same files with any JSON Schema validator.

YAML-specific checks happen here too: duplicate keys, floats (never exact), non-string keys,
tags other than the core schema's.
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ...errors import ContractError
from .rational import MAX_MAGNITUDE

_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_BOOL = "tag:yaml.org,2002:bool"
_FLOAT = "tag:yaml.org,2002:float"
_NULL = "tag:yaml.org,2002:null"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"

_MAX_INT_TEXT = 64  # longer integer text is out of range whatever its digits (no huge-int parsing)

_TYPE_NAMES = {
    _STR: "string",
    _INT: "integer",
    _BOOL: "boolean",
    _FLOAT: "float",
    _NULL: "null",
    _MAP: "mapping",
    _SEQ: "list",
}


class NodeChecker:
    """Checks nodes against ``schema`` and returns plain Python data (dict, list, str, int, bool)."""

    def __init__(self, schema: dict[str, Any], source: str) -> None:
        self._schema = schema
        self._source = source
        self._constructor = yaml.SafeLoader("")  # only its scalar constructors are used

    def error(self, node: Node, path: str, problem: str) -> ContractError:
        mark = node.start_mark
        where = f"{path}: " if path else ""
        return ContractError(self._source, where + problem, mark.line + 1, mark.column + 1)

    def check(self, node: Node, schema: dict[str, Any] | None = None, path: str = "") -> Any:
        schema = self._schema if schema is None else self._resolve(schema)
        if "oneOf" in schema:
            return self._check_one_of(node, schema, path)
        if "anyOf" in schema:
            self._check_any_of(node, schema, path)
        value = self._check_type(node, schema, path)
        if "const" in schema and value != schema["const"]:
            raise self.error(node, path, f"must be {schema['const']!r}")
        if "enum" in schema and value not in schema["enum"]:
            choices = ", ".join(repr(v) for v in schema["enum"])
            raise self.error(node, path, f"{value!r} is not one of {choices}")
        return value

    # -- pieces ------------------------------------------------------------------------------------

    def _resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in schema:
            ref = schema["$ref"]
            if not ref.startswith("#/$defs/"):
                raise RuntimeError(f"unsupported $ref {ref}")
            schema = self._schema["$defs"][ref[len("#/$defs/") :]]
        return schema

    def _scalar(self, node: Node, path: str) -> Any:
        if node.tag == _FLOAT:
            raise self.error(
                node,
                path,
                f"{node.value} is a floating-point number, which is not exact; "
                'write an integer or a string like "1/20" or "0.05"',
            )
        if node.tag not in (_STR, _INT, _BOOL, _NULL):
            raise self.error(node, path, f"unsupported YAML tag {node.tag}")
        if node.tag == _INT and len(node.value) > _MAX_INT_TEXT:
            raise self.error(node, path, f"integer out of range (at most {MAX_MAGNITUDE})")
        value = self._constructor.construct_object(node, deep=True)
        if node.tag == _INT and abs(value) > MAX_MAGNITUDE:
            raise self.error(node, path, f"integer out of range (at most {MAX_MAGNITUDE})")
        return value

    def _check_type(self, node: Node, schema: dict[str, Any], path: str) -> Any:
        expected = schema.get("type")
        if isinstance(node, MappingNode):
            if expected not in (None, "object"):
                raise self.error(node, path, f"expected {expected}, found a mapping")
            return self._check_mapping(node, schema, path)
        if isinstance(node, SequenceNode):
            if expected not in (None, "array"):
                raise self.error(node, path, f"expected {expected}, found a list")
            return self._check_sequence(node, schema, path)
        value = self._scalar(node, path)
        found = _TYPE_NAMES.get(node.tag, node.tag)
        ok = {
            None: True,
            "string": node.tag == _STR,
            "integer": node.tag == _INT,
            "boolean": node.tag == _BOOL,
            "object": False,
            "array": False,
        }[expected]
        if not ok:
            raise self.error(node, path, f"expected {expected}, found {found} {node.value!r}")
        if node.tag == _STR:
            if len(value) < schema.get("minLength", 0):
                raise self.error(node, path, "must not be empty")
            if "pattern" in schema and not re.search(schema["pattern"], value):
                raise self.error(node, path, f"{value!r} does not match {schema['pattern']}")
        if node.tag == _INT and "minimum" in schema and value < schema["minimum"]:
            raise self.error(node, path, f"must be at least {schema['minimum']}")
        return value

    def _check_mapping(self, node: MappingNode, schema: dict[str, Any], path: str) -> dict[str, Any]:
        props: dict[str, Any] = schema.get("properties", {})
        additional = schema.get("additionalProperties", True)
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, ScalarNode) or key_node.tag != _STR:
                raise self.error(key_node, path, "mapping keys must be strings")
            key = key_node.value
            sub = f"{path}.{key}" if path else key
            if key in out:
                raise self.error(key_node, path, f"duplicate key {key!r}")
            if key in props:
                out[key] = self.check(value_node, props[key], sub)
            elif additional is False:
                allowed = ", ".join(sorted(props))
                raise self.error(key_node, path, f"unknown key {key!r} (allowed: {allowed})")
            elif isinstance(additional, dict):
                out[key] = self.check(value_node, additional, sub)
            else:
                out[key] = self.check(value_node, {}, sub)
        for key in schema.get("required", ()):
            if key not in out:
                raise self.error(node, path, f"missing required key {key!r}")
        if len(out) < schema.get("minProperties", 0):
            raise self.error(node, path, "must not be empty")
        return out

    def _check_sequence(self, node: SequenceNode, schema: dict[str, Any], path: str) -> list[Any]:
        items = schema.get("items", {})
        out = [self.check(item, items, f"{path}[{i}]") for i, item in enumerate(node.value)]
        if len(out) < schema.get("minItems", 0):
            raise self.error(node, path, f"needs at least {schema['minItems']} item(s)")
        return out

    def _check_any_of(self, node: Node, schema: dict[str, Any], path: str) -> None:
        branches = [self._resolve(b) for b in schema["anyOf"]]
        if all(set(b) == {"required"} for b in branches):  # "at least one of these keys"
            keys = {k.value for k, _ in node.value} if isinstance(node, MappingNode) else set()
            if not any(set(b["required"]) <= keys for b in branches):
                names = ", ".join(k for b in branches for k in b["required"])
                raise self.error(node, path, f"needs at least one of: {names}")
            return
        for branch in branches:
            try:
                self.check(node, branch, path)
                return
            except ContractError as exc:
                if isinstance(node, ScalarNode) and node.tag == _FLOAT:
                    raise exc
        what = schema.get("description") or " or ".join(b.get("type", "value") for b in branches)
        raise self.error(node, path, f"expected {what}")

    def _check_one_of(self, node: Node, schema: dict[str, Any], path: str) -> Any:
        """Discriminated union on the ``type`` key (rules): pick the branch whose ``type`` const matches."""
        if not isinstance(node, MappingNode):
            raise self.error(node, path, "expected a mapping")
        branches = {self._resolve(b)["properties"]["type"]["const"]: b for b in schema["oneOf"]}
        type_node = next((v for k, v in node.value if isinstance(k, ScalarNode) and k.value == "type"), None)
        if type_node is None:
            raise self.error(node, path, "missing required key 'type'")
        kind = type_node.value if isinstance(type_node, ScalarNode) else None
        if kind not in branches:
            raise self.error(
                type_node,
                f"{path}.type",
                f"unknown rule type {kind!r} (one of: {', '.join(sorted(branches))})",
            )
        return self.check(node, branches[kind], path)
