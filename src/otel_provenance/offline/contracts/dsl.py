"""YAML → ``Contract``. Every error names the file, line and column; nothing is silently skipped.

``yamldata`` turns the text into plain data, refusing what only YAML can get wrong (duplicate keys,
floats…); ``schemacheck`` validates that data against the published ``schema.json`` with
``jsonschema``. This module adds what a schema cannot say (duplicate rule ids, ``min <= max``, a
threshold fraction within 0..1, the value types of the attributes this project defines) and converts
the plain data into frozen rule objects. ``dump_document`` writes a contract back in one canonical
layout, so a rewritten file (``routes approve``, ``mine``) is the same bytes every time.
"""

from __future__ import annotations

import hashlib
import json
from fractions import Fraction
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from ...errors import ContractError
from ...policy_law import ARGUMENT_FIELDS, FIELDS, PolicyProblem, compile_policy
from .confidence import MAX_RATE_DENOMINATOR
from .model import Contract, RateLimit, RouteFamily, Rule, Thresholds
from .rational import parse_rational
from .rules import REGISTRY
from .schemacheck import check_document
from .selectors import Selector
from .typing import check_value_type
from .yamldata import Located, load_located
from .yamldata import Path as DocPath

_SELECTOR_KEYS = ("select", "parent", "child", "ancestor", "descendant", "from", "to", "unless_preceded_by")


def load_contract(path: str | Path) -> Contract:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        problem = exc.strerror or type(exc).__name__
        raise ContractError(str(path), f"cannot read contract ({problem})") from None
    except UnicodeDecodeError as exc:
        raise ContractError(str(path), f"cannot read contract: not UTF-8 text (byte {exc.start})") from None
    return parse_contract(text, source=str(path))


def parse_contract(text: str, source: str = "<string>") -> Contract:
    """Parse and check a contract; every problem is a ``ContractError`` naming ``source``."""
    try:
        return _parse(text, source)
    except RecursionError:
        raise ContractError(source, "the contract is nested too deeply to be a contract") from None


def _parse(text: str, source: str) -> Contract:
    doc = load_located(text, source)
    check_document(doc)
    document: dict[str, Any] = doc.data
    default = _thresholds(document.get("gate", {}), Thresholds(), doc, ("gate",))
    rules: list[Rule] = []
    seen: dict[str, int] = {}
    for index, data in enumerate(document["rules"]):
        if data["id"] in seen:
            raise doc.error(
                ("rules", index, "id"),
                f"duplicate rule id {data['id']!r} (first used by rules[{seen[data['id']]}])",
            )
        seen[data["id"]] = index
        rules.append(_rule(data, doc, index, default))
    _check_policies(document.get("policies", {}), doc)
    notes = _check_seal(document, doc, text)
    min_runs = document.get("gate", {}).get("min_runs", 1)
    return Contract(
        name=document["name"],
        version=document["version"],
        description=document.get("description", ""),
        min_runs=min_runs,
        rules=tuple(rules),
        digest=document_digest(document),
        document=document,
        source=source,
        notes=notes,
    )


SEAL = "seal"
END_LINE = "# end of contract"  # the seal's value: the line a sealed contract ends with
UNSEALED_NOTE = (
    "the contract has no seal (written before seals, or by hand), so a copy cut short cannot be told "
    "from a whole one; `otel-provenance routes approve` or `mine` write one"
)


def _check_seal(document: dict[str, Any], doc: Located, text: str) -> tuple[str, ...]:
    """A contract cut at a line boundary can still be valid YAML and a valid contract — with its last
    rules, or the strictest part of one, gone. ``dump_document`` therefore writes a seal near the top
    naming the line the contract ends with (:data:`END_LINE`). Any cut loses the last line while the
    seal stays, so a sealed contract that does not end with that line is refused. A person's edits
    (a rule removed, a limit changed) keep the last line and load as written: the seal vouches for the
    end of the file, not for its content. Without a seal the contract loads, with a note."""
    seal = document.get(SEAL)
    if seal is None:
        return (UNSEALED_NOTE,)
    # the end line as written, at the line's start: an indented one is text inside a block scalar (a
    # rule's description), and a cut right after it is a cut (#50)
    last = next((line.rstrip() for line in reversed(text.splitlines()) if line.strip()), "")
    if last != seal:
        raise doc.error(
            (SEAL,),
            f"the contract's seal says it ends with the line {seal!r}, but it ends with {last[:60]!r}: "
            "cut short (restore the rest of the file), or that line was moved (put it back last) "
            "or deleted (delete the seal too, to load it unsealed)",
        )
    return ()


def sealed(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` with its seal (any old one replaced); :func:`dump_document` writes the end line."""
    out = {k: v for k, v in document.items() if k != SEAL}
    out[SEAL] = END_LINE
    return out


def document_digest(document: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of ``document`` with rules (and families) sorted by id; the seal
    is left out (it is not content: a sealed and an unsealed copy are one contract)."""
    canonical = {k: v for k, v in document.items() if k != SEAL}
    canonical["rules"] = sorted((_sorted_families(r) for r in document["rules"]), key=lambda r: r["id"])
    blob = json.dumps(canonical, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _sorted_families(rule: dict[str, Any]) -> dict[str, Any]:
    if "families" not in rule:
        return rule
    return {**rule, "families": sorted(rule["families"], key=lambda f: f["id"])}


# -- semantic checks and conversion --------------------------------------------------------------


def _check_policies(policies: dict[str, Any], doc: Located) -> None:
    """Each argument-value policy means what it says, by the one law the agent judges calls with
    (``otel_provenance.policy_law``): patterns that compile, a schema that is a JSON Schema, bounds
    some value passes. Nothing is kept: policies are judged online only, never by the evaluator."""
    for tool, entry in policies.items():
        located = (
            [((tool, i), p) for i, p in enumerate(entry)] if isinstance(entry, list) else [((tool,), entry)]
        )
        for at, policy in located:
            try:
                compile_policy(policy)
            except PolicyProblem as exc:
                raise doc.error(("policies", *at, *exc.path), exc.problem) from None


def _thresholds(data: dict[str, Any], default: Thresholds, doc: Located, at: DocPath) -> Thresholds:
    """``data``'s thresholds over ``default``. A failing-run limit given here — a count
    (``max_failing_runs``) or a rate with its confidence (``max_failing_rate``, ``confidence``; the
    schema allows one kind, and the rate only with its confidence) — replaces the default's."""

    def exact(key: str) -> Fraction:
        try:
            return parse_rational(data[key])
        except ValueError as exc:
            raise doc.error((*at, key), str(exc)) from None

    fraction = default.max_insufficient_fraction
    if "max_insufficient_fraction" in data:
        fraction = exact("max_insufficient_fraction")
        if not 0 <= fraction <= 1:
            raise doc.error((*at, "max_insufficient_fraction"), "must be between 0 and 1")
    runs, rate = default.max_failing_runs, default.rate
    if "max_failing_runs" in data:
        runs, rate = data["max_failing_runs"], None
    if "max_failing_rate" in data:
        rate = RateLimit(exact("max_failing_rate"), exact("confidence"))
        if not 0 < rate.max_rate < 1:
            raise doc.error((*at, "max_failing_rate"), 'must be above 0 and below 1 (a rate such as "1/10")')
        if rate.max_rate.denominator > MAX_RATE_DENOMINATOR:
            raise doc.error(
                (*at, "max_failing_rate"),
                f"denominator above {MAX_RATE_DENOMINATOR} (write at most 6 decimals)",
            )
        if not Fraction(1, 2) < rate.confidence < 1:
            raise doc.error((*at, "confidence"), 'must be above 1/2 and below 1 (e.g. "0.95")')
    return Thresholds(max_failing_runs=runs, max_insufficient_fraction=fraction, rate=rate)


def _rule(data: dict[str, Any], doc: Located, index: int, default: Thresholds) -> Rule:
    def fail(key: str, problem: str) -> ContractError:
        """The error at the rule's ``key`` (at the rule itself when it has no such key)."""
        return doc.error(("rules", index, key), problem)

    params: dict[str, Any] = {}
    for key, value in data.items():
        if key in ("id", "type", "code", "description", "support", "thresholds"):
            continue
        if key in _SELECTOR_KEYS:
            for attr, expected in value.get("attributes", {}).items():
                check_value_type(attr, expected, lambda problem, key=key: fail(key, problem))
            params[key] = Selector.from_document(value)
        elif key == "similarity" or (key == "max" and data["type"] == "numeric_budgets"):
            try:
                params[key] = parse_rational(value)
            except ValueError as exc:
                raise fail(key, str(exc)) from None
        elif key == "families":
            params[key] = tuple(_family(f) for f in value)
        elif key in ("values", "allow"):
            params[key] = tuple(value)
        else:
            params[key] = value

    kind = data["type"]
    rule_type = REGISTRY[kind]
    if rule_type.validate is not None:
        rule_type.validate(params, fail)
    thresholds = _thresholds(data.get("thresholds", {}), default, doc, ("rules", index, "thresholds"))
    return Rule(
        id=data["id"],
        type=kind,
        code=data.get("code", rule_type.default_code),
        description=data.get("description", ""),
        params=MappingProxyType(params),
        thresholds=thresholds,
        line=doc.node(("rules", index)).start_mark.line + 1,
        support=data.get("support"),
    )


def _family(data: dict[str, Any]) -> RouteFamily:
    return RouteFamily(
        id=data["id"],
        status=data["status"],
        fingerprints=tuple(sorted(data["fingerprints"])),
        runs=data.get("runs", 0),
        example_trace_ids=tuple(data.get("example_trace_ids", ())),
        steps=tuple(sorted(data["steps"].items())),
        edges=tuple(sorted((e["from"], e["to"], e["count"]) for e in data["edges"])),
        order=tuple(data.get("order", ())),
        prerequisites=(
            tuple((w, tuple(sorted(c))) for w, c in sorted(data["prerequisites"].items()))
            if "prerequisites" in data
            else None
        ),
    )


# -- writing -------------------------------------------------------------------------------------

_TOP_ORDER = ("version", "name", "seal", "description", "gate", "rules", "policies")  # seal: before a cut
_RULE_ORDER = (
    "id",
    "type",
    "code",
    "description",
    "support",
    "on_violation",
    "select",
    "parent",
    "child",
    "ancestor",
    "descendant",
    "from",
    "to",
    "unless_preceded_by",
    "one_to_one",
    "attribute",
    "duration",
    "op",
    "value",
    "values",
    "aggregate",
    "min",
    "max",
    "exact",
    "max_retries",
    "max_assumed",
    "max_invented",
    "max_untrusted",
    "allow",
    "similarity",
    "thresholds",
    "families",
)
_FAMILY_ORDER = (
    "id",
    "status",
    "runs",
    "fingerprints",
    "example_trace_ids",
    "steps",
    "edges",
    "order",
    "prerequisites",
)


def dump_document(document: dict[str, Any]) -> str:
    """Canonical YAML text of a contract document (validated plain data), sealed (``_check_seal``).
    Same document → same bytes."""
    ordered = _order(sealed(document), _TOP_ORDER)
    ordered["rules"] = [_order_rule(r) for r in document["rules"]]
    if "policies" in document:
        ordered["policies"] = {
            tool: [_order_policy(p) for p in entry] if isinstance(entry, list) else _order_policy(entry)
            for tool, entry in sorted(document["policies"].items())
        }
    body = yaml.dump(
        ordered, Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True, width=4096
    )
    return f"{body}{END_LINE}\n"


class _Dumper(yaml.SafeDumper):
    """Safe dumper that writes repeated values out in full (no ``&id001`` anchors)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _order(data: dict[str, Any], order: tuple[str, ...]) -> dict[str, Any]:
    out = {k: data[k] for k in order if k in data}
    out.update({k: data[k] for k in sorted(data) if k not in out})
    return out


def _order_rule(rule: dict[str, Any]) -> dict[str, Any]:
    out = _order(rule, _RULE_ORDER)
    for key in _SELECTOR_KEYS:
        if key in out and "attributes" in out[key]:
            out[key] = {**out[key], "attributes": dict(sorted(out[key]["attributes"].items()))}
    if "families" in out:
        out["families"] = [
            {
                **_order(f, _FAMILY_ORDER),
                "steps": dict(sorted(f["steps"].items())),
                "edges": sorted(f["edges"], key=lambda e: (e["from"], e["to"])),
                **(
                    {"prerequisites": {w: sorted(c) for w, c in sorted(f["prerequisites"].items())}}
                    if "prerequisites" in f
                    else {}
                ),
            }
            for f in out["families"]
        ]
    return out


def _order_policy(policy: dict[str, Any]) -> dict[str, Any]:
    """A policy's fields in the law's order, its arguments by name, each one's checks in order."""
    out = _order(policy, FIELDS)
    if "arguments" in out:
        out["arguments"] = {
            name: _order(checks, ARGUMENT_FIELDS) for name, checks in sorted(out["arguments"].items())
        }
    return out


def thresholds_document(value: Fraction) -> str:
    """A rational as the string a contract stores."""
    return str(value)
