"""Argument-value policies (#34): each check judges the call before its body runs and names the rule
and the argument, never the value. Through ``@op.tool`` and ``op.run`` with the real SDK; asks through
a ``ToolCall`` (the approval flow decides what an ask does)."""

from __future__ import annotations

import sys
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

import otel_provenance as op
from instrument_helpers import Traced, settings
from otel_provenance.instrument.call.lifecycle import ToolCall, ToolSpec
from otel_provenance.instrument.call.policy import PolicyCheck, policy_checks

BOUNDS = op.Policy(
    arguments={
        "amount": {"minimum": 1, "maximum": 500},
        "fee": {"exclusive_minimum": 0, "exclusive_maximum": "2.5"},
    }
)
AMOUNT = op.Policy(arguments={"amount": {"maximum": 500}})
PATTERNS = op.Policy(
    arguments={
        "to": {"patterns": [r"[a-z.]+@example\.com", r"[a-z.]+@example\.org"], "denied_patterns": ["ceo@.*"]}
    }
)
SCHEMA = op.Policy(
    schema={
        "type": "object",
        "required": ["to", "subject"],
        "properties": {
            "subject": {"type": "string", "maxLength": 20},
            "cc": {"type": "array", "maxItems": 1},
        },
    }
)


def _refused(traced: Traced, tool, **arguments) -> tuple[tuple[str, ...], dict]:
    """Call ``tool`` in a run, expect it blocked; its violations and its span's attributes."""
    with op.run(), pytest.raises(op.ProvenanceError) as blocked:
        tool(**arguments)
    span = [s for s in traced.spans if s.name.startswith("execute_tool ")][-1]
    return blocked.value.violations, dict(span.attributes)


@pytest.fixture
def refund(traced):
    ran: list[dict] = []

    @op.tool(side_effect="read", policy=BOUNDS, tracer_provider=traced.provider)
    def refund(amount=None, fee=None) -> dict:
        ran.append({"amount": amount, "fee": fee})
        return {"ok": True}

    refund.ran = ran
    return refund


@pytest.mark.parametrize(
    ("arguments", "violations"),
    [
        ({"amount": 0}, ("policy:amount:minimum",)),
        ({"amount": 501}, ("policy:amount:maximum",)),
        ({"amount": 500.000001}, ("policy:amount:maximum",)),
        ({"amount": Decimal("500.01")}, ("policy:amount:maximum",)),
        ({"amount": "400"}, ("policy:amount:minimum", "policy:amount:maximum")),  # text is no number
        ({"amount": True}, ("policy:amount:minimum", "policy:amount:maximum")),  # nor is a bool
        ({"amount": float("nan")}, ("policy:amount:minimum", "policy:amount:maximum")),
        ({"fee": 0}, ("policy:fee:exclusive_minimum",)),
        ({"fee": Fraction(5, 2)}, ("policy:fee:exclusive_maximum",)),
        ({"amount": 600, "fee": 3}, ("policy:amount:maximum", "policy:fee:exclusive_maximum")),
    ],
)
def test_a_bound_blocks_before_the_body_and_names_the_argument_and_the_check(
    traced, refund, arguments, violations
):
    found, attributes = _refused(traced, refund, **arguments)
    assert refund.ran == []
    assert found == violations
    assert tuple(attributes["agent.violations"]) == violations
    assert attributes["agent.tool.status"] == "blocked"


def test_values_within_the_bounds_run(traced, refund):
    with op.run():
        refund(amount=1, fee=Decimal("0.01"))
        refund(amount=500, fee=2.4999)
        refund(amount=Fraction(999, 2))
        refund()  # an argument not passed is not judged
    assert len(refund.ran) == 4
    assert all(s.attributes.get("agent.tool.status") in (None, "ok") for s in traced.spans)


@pytest.mark.parametrize(
    ("to", "violations"),
    [
        ("someone@evil.com", ("policy:to:pattern",)),
        ("someone@example.com.evil.com", ("policy:to:pattern",)),  # a full match, not a search
        ("xsomeone@example.com\n", ("policy:to:pattern",)),
        ("ceo@example.com", ("policy:to:denied_pattern",)),
        (42, ("policy:to:pattern", "policy:to:denied_pattern")),  # not a string: fails both
        (b"a@example.com", ("policy:to:pattern", "policy:to:denied_pattern")),
    ],
)
def test_patterns_are_full_matches_and_a_non_string_fails_them(traced, to, violations):
    ran: list[object] = []

    @op.tool(side_effect="read", policy=PATTERNS, tracer_provider=traced.provider)
    def notify(to) -> None:
        ran.append(to)

    found, _ = _refused(traced, notify, to=to)
    assert ran == []
    assert found == violations
    with op.run():
        notify(to="ann.lee@example.org")
    assert ran == ["ann.lee@example.org"]


DENY_ONLY = op.Policy(arguments={"to": {"denied_patterns": ["ceo@.*"]}})
ANY_OF_OURS = op.Policy(arguments={"to": {"patterns": [r"[^@]+@example\.com"]}})


@pytest.mark.parametrize(
    ("policy", "to"),
    [
        (DENY_ONLY, "CEO@example.com"),  # a mail server reads the case away
        (DENY_ONLY, "ceo\u200b@example.com"),  # a zero-width space: invisible, still the CEO
        (DENY_ONLY, "c\u00adeo@example.com"),  # a soft hyphen
        (DENY_ONLY, "\uff43\uff45\uff4f@example.com"),  # full-width letters
        (DENY_ONLY, "\uff23\uff25\uff2f\uff20example.com"),  # full-width, upper case, a full-width @
        (ANY_OF_OURS, "bob\uff20evil.example@example.com"),  # a full-width @ hides a second address
    ],
    ids=["upper-case", "zero-width-space", "soft-hyphen", "full-width", "full-width-upper", "full-width-at"],
)
def test_a_pattern_judges_the_value_as_it_reads_not_only_as_it_is_written(traced, policy, to):
    """#50: a denied pattern is not passed by another spelling of the same address, and an allowed
    one must hold for the value as it reads too."""
    ran: list[object] = []

    @op.tool(side_effect="read", policy=policy, tracer_provider=traced.provider)
    def notify(to) -> None:
        ran.append(to)

    found, _ = _refused(traced, notify, to=to)
    assert ran == []
    assert found in (("policy:to:denied_pattern",), ("policy:to:pattern",))
    with op.run():
        notify(to="ann.lee@example.com")
    assert ran == ["ann.lee@example.com"]


@pytest.mark.parametrize(
    ("arguments", "violations"),
    [
        ({"to": "a"}, ("policy:schema:/required",)),
        ({"to": "a", "subject": 7}, ("policy:schema:/properties/subject/type",)),
        ({"to": "a", "subject": "x" * 21}, ("policy:schema:/properties/subject/maxLength",)),
        (
            {"to": "a", "subject": "x" * 21, "cc": ("b", "c")},  # a tuple is an array, as JSON carries it
            ("policy:schema:/properties/cc/maxItems", "policy:schema:/properties/subject/maxLength"),
        ),
    ],
)
def test_a_schema_names_the_failing_keywords_by_json_pointer(traced, arguments, violations):
    @op.tool(side_effect="read", policy=SCHEMA, tracer_provider=traced.provider)
    def send(**fields) -> None:
        return None

    found, _ = _refused(traced, send, **arguments)
    assert found == violations
    with op.run():
        send(to="a", subject="hello", cc=["b"])


def test_a_schema_pointer_escapes_the_names_it_walks_through():
    policy = op.Policy(schema={"properties": {"a/b~c": {"type": "integer"}}})
    assert policy.law.judge({"a/b~c": "x"}) == ["policy:schema:/properties/a~1b~0c/type"]


def test_a_schema_judges_the_arguments_by_the_names_the_span_gives_them(traced):
    """A caller-chosen name that could be data is exported as ``<parameter>.<position>``; the schema
    sees that name too, so a schema cannot tell the span what the name was."""
    policy = op.Policy(schema={"properties": {"fields.0": {"type": "integer"}}})

    @op.tool(side_effect="read", policy=policy, tracer_provider=traced.provider)
    def tool(**fields) -> None:
        return None

    found, _ = _refused(traced, tool, **{"not an identifier": "x"})
    assert found == ("policy:schema:/properties/fields.0/type",)


def test_a_schema_that_cannot_judge_the_value_blocks_as_a_whole(traced):
    deep: list = []
    for _ in range(5000):  # the validator recurses through it
        deep = [deep]
    policy = op.Policy(
        schema={"properties": {"v": {"$ref": "#/$defs/n"}}, "$defs": {"n": {"items": {"$ref": "#/$defs/n"}}}}
    )

    @op.tool(side_effect="read", policy=policy, tracer_provider=traced.provider)
    def nested(v) -> None:
        return None

    found, _ = _refused(traced, nested, v=deep)
    assert found == ("policy:schema:",)


def test_several_policies_on_one_tool_each_add_their_objections(traced):
    @op.tool(side_effect="read", policy=[AMOUNT, PATTERNS], tracer_provider=traced.provider)
    def pay(amount, to) -> None:
        return None

    found, _ = _refused(traced, pay, amount=900, to="ceo@example.com")
    assert found == ("policy:amount:maximum", "policy:to:denied_pattern")


def test_policy_objections_join_the_budgets_in_one_decision(traced):
    @op.tool(side_effect="write", policy=AMOUNT, tracer_provider=traced.provider)
    def refund(order: str, amount: int) -> None:
        return None

    with op.run(inputs={"order": "ORD-1001", "amount": 900}), pytest.raises(op.ProvenanceError) as blocked:
        refund(order="ORD-9999", amount=900)  # amount observed (an input), order assumed
    assert blocked.value.violations == ("max_assumed:order=assumed", "policy:amount:maximum")


def test_advisory_mode_tags_the_violation_and_runs_the_call(traced, refund):
    with settings(enforce=False), op.run():
        refund(amount=900)
    assert len(refund.ran) == 1
    span = next(s for s in traced.spans if s.name == "execute_tool refund")
    assert span.attributes["agent.tool.status"] == "ok"
    assert tuple(span.attributes["agent.violations"]) == ("policy:amount:maximum",)


# -- ask: the objection a person may overrule ---------------------------------------------------------


def _decide(spec: ToolSpec, **arguments) -> ToolCall:
    return ToolCall(spec, lambda: arguments)


def test_an_ask_policy_makes_an_ask_objection_not_a_block(traced):
    ask = op.Policy(arguments={"amount": {"maximum": 100}}, on_violation="ask")
    spec = ToolSpec(
        "refund", side_effect="read", tracer_provider=traced.provider, checks=policy_checks((ask,))
    )
    with op.run():
        call = _decide(spec, amount=250)
    assert not call.blocked
    assert call.decision.asks == ("policy:amount:maximum",)
    assert call.violations == ("policy:amount:maximum",)
    with op.run():
        assert _decide(spec, amount=100).decision.asks == ()


def test_a_blocking_policy_wins_over_an_ask_on_the_same_call(traced):
    tiers = (
        op.Policy(arguments={"amount": {"maximum": 100}}, on_violation="ask"),
        op.Policy(arguments={"amount": {"maximum": 500}}),
    )
    spec = ToolSpec(
        "refund", side_effect="read", tracer_provider=traced.provider, checks=(PolicyCheck(tiers),)
    )
    with op.run():
        asked, blocked = _decide(spec, amount=250), _decide(spec, amount=900)
    assert asked.decision.asks == ("policy:amount:maximum",) and not asked.blocked
    assert blocked.blocked and blocked.decision.asks == ()
    assert blocked.violations == ("policy:amount:maximum",)


# -- declaring a policy ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "Policy: names no check: give schema, arguments or run_count"),
        ({"on_violation": "ask"}, "Policy: names no check: give schema, arguments or run_count"),
        ({"run_count": -1}, "Policy.run_count: expected an integer >= 0"),
        ({"run_count": True}, "Policy.run_count: expected an integer >= 0"),
        ({"run_count": 1, "on_violation": "warn"}, "Policy.on_violation: must be one of 'block', 'ask'"),
        ({"arguments": {}}, "Policy.arguments: expected a mapping of argument name to its checks"),
        (
            {"arguments": {"amount": {"maxmum": 5}}},
            "Policy.arguments.amount.maxmum: unknown key 'maxmum' (allowed: denied_patterns, "
            "exclusive_maximum, exclusive_minimum, maximum, minimum, patterns, run_sum)",
        ),
        (
            {"arguments": {"amount": {"maximum": "lots"}}},
            "Policy.arguments.amount.maximum: expected an exact number: "
            'an integer or a string like "1/20" or "0.05"',
        ),
        (
            {"arguments": {"amount": {"minimum": 10, "maximum": 5}}},
            "Policy.arguments.amount.maximum: no value passes: maximum is below minimum",
        ),
        (
            {"arguments": {"amount": {"minimum": 5, "exclusive_maximum": 5}}},
            "Policy.arguments.amount.exclusive_maximum: no value passes: "
            "exclusive_maximum is not above minimum",
        ),
        (
            {"arguments": {"to": {"patterns": "a.*"}}},
            "Policy.arguments.to.patterns: expected a non-empty list of regular expressions",
        ),
        (
            {"arguments": {"to": {"denied_patterns": ["ok", "("]}}},
            "Policy.arguments.to.denied_patterns[1]: not a regular expression: "
            "missing ), unterminated subpattern at 0",
        ),
        ({"arguments": {"amount": {"run_sum": -5}}}, "Policy.arguments.amount.run_sum: must be at least 0"),
        (
            {"arguments": {"amount": {"run_sum": {"input": "a..b"}}}},
            "Policy.arguments.amount.run_sum.input: "
            "an input is named by a dotted path such as 'order.amount'",
        ),
        ({"schema": "object"}, "Policy.schema: expected a JSON Schema (a mapping)"),
        (
            {"schema": {"type": "objec"}},
            "Policy.schema.type: not a valid JSON Schema: "
            "'objec' is not valid under any of the given schemas",
        ),
    ],
)
def test_a_policy_that_cannot_mean_what_it_says_is_refused_naming_the_field(kwargs, message):
    with pytest.raises(op.ConfigurationError) as refused:
        op.Policy(**kwargs)
    assert str(refused.value) == message


def test_a_policy_naming_an_argument_the_tool_lacks_is_refused_at_decoration():
    with pytest.raises(op.ConfigurationError) as refused:

        @op.tool(policy=op.Policy(arguments={"amont": {"maximum": 5}}))
        def refund(order: str, amount: int) -> None:
            return None

    assert str(refused.value) == (
        "op.tool(refund): policy names 'amont', which is not a parameter of refund "
        "(parameters: amount, order)"
    )


@pytest.mark.parametrize("policy", [{"run_count": 1}, [AMOUNT, "x"], "policy"])
def test_policy_must_be_a_policy_or_a_list_of_them(policy):
    with pytest.raises(op.ConfigurationError, match=r"op.tool\(policy=...\): expected an op.Policy"):
        op.tool(name="t", policy=policy)


def test_a_policy_is_compiled_once_later_changes_to_its_data_change_nothing(traced):
    schema = {"properties": {"n": {"maximum": 5}}}
    arguments = {"n": {"patterns": ["[0-9]+"]}}
    policy = op.Policy(schema=schema, arguments=arguments)
    schema["properties"]["n"]["maximum"] = 10**9
    arguments["n"]["patterns"] = [".*"]

    @op.tool(side_effect="read", policy=policy, tracer_provider=traced.provider)
    def tool(n) -> None:
        return None

    found, _ = _refused(traced, tool, n=7)
    assert found == ("policy:n:pattern", "policy:schema:/properties/n/maximum")


@given(
    value=st.one_of(
        st.integers(-(10**30), 10**30),
        st.floats(allow_nan=False, allow_infinity=False),
        st.fractions(),
        st.decimals(-(10**30), 10**30, allow_nan=False, allow_infinity=False, places=4),
    ),
    low=st.fractions(),
    width=st.fractions(min_value=0),
)
def test_bounds_are_exact_comparisons(value, low, width):
    """A bound passes exactly when the value, as an exact fraction, is within it: no float rounding."""
    high = low + width
    policy = op.Policy(arguments={"v": {"minimum": low, "maximum": high}})
    failed = set(policy.law.judge({"v": value}))
    exact = Fraction(value)
    assert ("policy:v:minimum" in failed) == (exact < low)
    assert ("policy:v:maximum" in failed) == (exact > high)


def test_a_schema_without_jsonschema_installed_says_which_extra_to_install(monkeypatch):
    """``jsonschema`` is an extra: a schema policy without it is refused when it is made, in words
    that say what to install (``None`` in ``sys.modules`` makes the import fail as if absent)."""
    monkeypatch.setitem(sys.modules, "jsonschema", None)
    message = r"^Policy\.schema: an argument schema needs jsonschema: pip install 'otel-provenance\[policy\]'"
    with pytest.raises(op.ConfigurationError, match=message):
        op.Policy(schema={"type": "object"})
