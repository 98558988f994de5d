"""The quick validity test of a contract (each rule against the branch its ``type`` names) never passes
a document the published schema refuses, and passes the contracts the docs show.

The documents are the docs' own contracts (every rule type), mutated the ways a hand edit goes wrong:
a rule's type changed, a key dropped, added or given another rule's value."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from otel_provenance.errors import ContractError
from otel_provenance.offline.contracts import RULE_TYPES, contract_schema, parse_contract
from otel_provenance.offline.contracts.schemacheck import _passes_quickly

DOCS = Path(__file__).resolve().parents[3] / "docs"


def _docs_contracts() -> list[dict[str, Any]]:
    found = []
    for page in sorted(DOCS.glob("*.md")):
        for block in re.findall(r"```ya?ml\n(.*?)```", page.read_text(encoding="utf-8"), re.S):
            data = yaml.safe_load(block)
            if isinstance(data, dict) and "rules" in data and "version" in data:
                found.append(data)
    return found


CONTRACTS = _docs_contracts()
PUBLISHED = jsonschema.Draft202012Validator(contract_schema())
VALID = [c for c in CONTRACTS if PUBLISHED.is_valid(c)]
KEYS = sorted({k for c in VALID for rule in c["rules"] for k in rule} | {"colour"})
VALUES = [v for c in VALID for rule in c["rules"] for v in rule.values()] + [None, 3, -1, "x", [], {}, True]


def test_the_docs_show_a_contract_of_every_rule_type_and_each_passes_quickly() -> None:
    assert {rule["type"] for c in VALID for rule in c["rules"]} == set(RULE_TYPES)
    assert len(VALID) == len(CONTRACTS)  # a docs contract the schema refuses is a docs bug
    for contract in VALID:
        assert _passes_quickly()(contract)


def _edited(contract: dict[str, Any], draw: st.DrawFn) -> dict[str, Any]:
    doc = copy.deepcopy(contract)
    rules = doc["rules"]
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(rules) - 1))
        rule = rules[i]
        if not isinstance(rule, dict):
            continue
        edit = draw(st.sampled_from(["type", "drop", "add", "swap", "not-a-mapping"]))
        if edit == "type":
            rule["type"] = draw(st.sampled_from([*RULE_TYPES, "RequiredSpans", 7]))
        elif edit == "drop" and rule:
            del rule[draw(st.sampled_from(sorted(rule)))]
        elif edit in ("add", "swap"):
            key = draw(st.sampled_from(KEYS if edit == "add" or not rule else sorted(rule)))
            rule[key] = copy.deepcopy(draw(st.sampled_from(VALUES)))
        elif edit == "not-a-mapping":
            rules[i] = draw(st.sampled_from([[], "rule", None]))
    return doc


@st.composite
def edited_contracts(draw: st.DrawFn) -> dict[str, Any]:
    return _edited(draw(st.sampled_from(VALID)), draw)


@settings(max_examples=300, deadline=None)
@given(edited_contracts())
def test_the_quick_test_agrees_with_the_published_schema(doc: dict[str, Any]) -> None:
    assert _passes_quickly()(doc) == PUBLISHED.is_valid(doc)


@settings(max_examples=60, deadline=None)
@given(edited_contracts())
def test_a_contract_the_schema_refuses_is_refused(doc: dict[str, Any]) -> None:
    if PUBLISHED.is_valid(doc):
        return
    with pytest.raises(ContractError):
        parse_contract(yaml.safe_dump(doc, sort_keys=False), "edited.yaml")
