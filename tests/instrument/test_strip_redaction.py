"""Pure stripping rules: which keys go, nested maps, allow-back, options validation."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from otel_provenance import ConfigurationError
from otel_provenance.instrument.spans.redaction import (
    DEFAULT_CONTENT_EVENTS,
    DEFAULT_FORBIDDEN_KEYS,
    MAX_DEPTH,
    StripOptions,
    has_forbidden_key,
    reduced_status_description,
    strip_attributes,
    strip_event_attributes,
    strip_log_body,
)

OPTS = StripOptions()


@pytest.mark.parametrize(
    "key",
    [
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.system_instructions",
        "gen_ai.tool.definitions",
        "gen_ai.tool.description",
        "gen_ai.prompt",
        "gen_ai.prompt.0.content",
        "gen_ai.completion.3.tool_calls.0.arguments",
        "traceloop.entity.input",
        "traceloop.entity.output",
        "input.value",
        "output.value",
        "llm.input_messages.0.message.content",
        "llm.output_messages.1.message.tool_calls.0.tool_call.function.arguments",
        "llm.prompts.0",
        "tool_call.function.arguments",
        "message.tool_calls.0.tool_call.function.arguments",
        "retrieval.documents.0.document.content",
    ],
)
def test_default_forbidden_keys_are_removed(key):
    assert OPTS.is_forbidden(key)
    assert strip_attributes({key: "v", "gen_ai.tool.name": "t"}, OPTS) == {"gen_ai.tool.name": "t"}


@pytest.mark.parametrize(
    "key",
    [
        "gen_ai.tool.name",
        "gen_ai.operation.name",
        "gen_ai.tool.call.id",
        "gen_ai.request.model",
        "gen_ai.usage.input_tokens",
        "input.mime_type",
        "error.type",
        "service.name",
        "agent.arg.prompt.kind",  # an argument *called* prompt keeps its provenance
        "agent.arg.input.value.kind",
        "agent.violations",
        "inputs.values",  # component match, not substring
    ],
)
def test_other_keys_are_kept(key):
    assert not OPTS.is_forbidden(key)


def test_nested_maps_at_any_depth_and_inside_arrays():
    attrs = {
        "app.request": {
            "payload": {"gen_ai.input.messages": "x", "size": 3},
            "items": [{"output.value": "x", "n": 1}, {"n": 2}],
        },
        "gen_ai": {"output": {"messages": "x"}, "provider": {"name": "p"}},
    }
    assert strip_attributes(attrs, OPTS) == {
        "app.request": {"payload": {"size": 3}, "items": ({"n": 1}, {"n": 2})},
        "gen_ai": {"provider": {"name": "p"}},
    }


def test_shells_left_by_removal_are_removed_too():
    # {"gen_ai": {"input": {}}} would still say a prompt was there
    attrs = {"wrap": {"gen_ai": {"input": {"messages": "x"}}}, "arr": [{"input.value": "x"}], "empty": {}}
    assert strip_attributes(attrs, OPTS) == {"empty": {}}


def test_too_deep_values_are_removed_whole():
    deep: dict = {"leaf": 1}
    for _ in range(MAX_DEPTH + 5):
        deep = {"d": deep}
    assert strip_attributes({"deep": deep, "ok": 1}, OPTS) == {"ok": 1}


def test_user_keys_prefixes_patterns_and_allow_back():
    opts = StripOptions(
        keys={"myapp.secret"},
        prefixes=("corp.pii_",),
        patterns=(r"\.password$",),
        allow={"gen_ai.tool.description", "input.value"},
    )
    attrs = {
        "myapp.secret": 1,
        "myapp.secret.part": 2,
        "corp.pii_email": 3,
        "db.password": 4,
        "gen_ai.tool.description": "describes",
        "input.value": "kept on request",
        "output.value": "gone",
        "keep": 5,
    }
    assert strip_attributes(attrs, opts) == {
        "gen_ai.tool.description": "describes",
        "input.value": "kept on request",
        "keep": 5,
    }


def test_allowed_key_still_loses_forbidden_children():
    opts = StripOptions(allow={"input.value"})
    assert strip_attributes({"input.value": {"prompt": 1, "gen_ai.prompt": "x"}}, opts) == {
        "input.value": {"prompt": 1}
    }


def test_defaults_off_starts_empty():
    opts = StripOptions(defaults=False, keys={"only.this"})
    assert strip_attributes({"input.value": 1, "only.this": 2}, opts) == {"input.value": 1}
    assert not opts.is_content_event("gen_ai.user.message")


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"patterns": ("(",)}, "patterns[0]"),
        ({"keys": "one.string"}, "StripOptions.keys"),
        ({"prefixes": ("",)}, "prefixes[0]"),
        ({"allow": (3,)}, "allow[0]"),
        ({"exception_scope": "some"}, "exception_scope"),
    ],
)
def test_bad_options_name_the_problem(kwargs, fragment):
    with pytest.raises(ConfigurationError, match=fragment.replace("[", r"\[").replace("]", r"\]")):
        StripOptions(**kwargs)


def test_content_events_dropped_whole_and_exception_details():
    for name in DEFAULT_CONTENT_EVENTS:
        assert strip_event_attributes(name, {"x": 1}, OPTS, scrub_exception=True) is None
    exc = {"exception.type": "ValueError", "exception.message": "m", "exception.stacktrace": "s"}
    assert strip_event_attributes("exception", exc, OPTS, scrub_exception=True) == {
        "exception.type": "ValueError"
    }
    assert strip_event_attributes("exception", exc, OPTS, scrub_exception=False) == exc


def test_status_description_reduced_to_type_or_nothing():
    assert reduced_status_description("ValueError: secret", ["ValueError"], scrub=True) == "ValueError"
    assert reduced_status_description("secret", [], scrub=True) is None
    assert reduced_status_description(None, ["ValueError"], scrub=True) is None
    assert reduced_status_description("kept", [], scrub=False) == "kept"
    assert reduced_status_description("MyErr", ["app.errors.MyErr"], scrub=True) == "MyErr"
    assert reduced_status_description("MyErr: x", ["app.errors.MyErr"], scrub=True) == "app.errors.MyErr"


def test_log_body():
    assert strip_log_body({"content": "hi", "input.value": "x"}, OPTS) == {"content": "hi"}
    assert strip_log_body({"input.value": "x"}, OPTS) is None
    assert strip_log_body("plain line", OPTS) == "plain line"


def test_log_body_key_paths_start_at_the_body_top_level():
    """A map body's keys are judged as paths from the body itself: a user prefix naming a nested
    path removes it, and an allowed path is kept."""
    options = StripOptions(prefixes=("request.card",), allow={"gen_ai.prompt"})
    body = {"request": {"card_number": "4111", "id": 7}, "gen_ai.prompt": "allowed back"}
    assert strip_log_body(body, options) == {"request": {"id": 7}, "gen_ai.prompt": "allowed back"}


# --- property: nothing forbidden survives, everything else does ------------------------------------

_FORBIDDEN = sorted(DEFAULT_FORBIDDEN_KEYS)
_SAFE = ["a", "b.c", "size", "name", "gen_ai.tool.name", "items", "x.y.z"]
_keys = st.one_of(st.sampled_from(_FORBIDDEN), st.sampled_from(_SAFE))
_leaves = st.one_of(st.text(max_size=5), st.integers(), st.booleans())
_values = st.recursive(
    _leaves,
    lambda inner: st.one_of(st.dictionaries(_keys, inner, max_size=4), st.lists(inner, max_size=3)),
    max_leaves=20,
)


def _paths(value, prefix=""):
    if isinstance(value, dict):
        for key, inner in value.items():
            path = f"{prefix}.{key}" if prefix else key
            yield path, key
            yield from _paths(inner, path)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _paths(item, prefix)


def _leaf_count(value):
    if isinstance(value, dict):
        return sum(_leaf_count(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(_leaf_count(v) for v in value)
    return 1


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_keys, _values, max_size=6))
def test_property_no_forbidden_path_survives(attrs):
    out = strip_attributes(attrs, OPTS)
    for path, key in _paths(out):
        assert not OPTS.is_forbidden(path), path
        assert not OPTS.is_forbidden(key), path


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(_SAFE),
        st.recursive(
            _leaves,
            lambda inner: st.dictionaries(st.sampled_from(_SAFE), inner, min_size=1, max_size=3),
            max_leaves=10,
        ),
        max_size=5,
    )
)
def test_property_clean_attributes_pass_unchanged(attrs):
    out = strip_attributes(attrs, OPTS)
    assert out == attrs
    assert _leaf_count(out) == _leaf_count(attrs)


def _as_exported(value):
    """Lists become tuples, as the SDK stores them."""
    if isinstance(value, dict):
        return {k: _as_exported(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return tuple(_as_exported(v) for v in value)
    return value


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        _keys,
        st.one_of(_values, st.lists(st.one_of(_leaves, st.none()), max_size=4).map(tuple)),
        max_size=6,
    )
)
def test_property_the_fast_clean_check_agrees_with_stripping(attrs):
    """The processor forwards a span unchanged when ``has_forbidden_key`` says so (its fast path):
    that must happen exactly when stripping would leave the attributes as they are."""
    attrs = _as_exported(attrs)
    assert has_forbidden_key(attrs, OPTS) == (strip_attributes(attrs, OPTS) != attrs)


def test_a_prefix_rule_applies_to_a_nested_key_as_well_as_to_a_path():
    """``corp.pii_`` forbids the key ``corp.pii_email`` wherever it is nested, not only at the top."""
    opts = StripOptions(prefixes=("corp.pii_",))
    attrs = {"app.user": {"corp.pii_email": "ann@example.com", "plan": "pro"}, "corp.pii_phone": "555"}
    assert strip_attributes(attrs, opts) == {"app.user": {"plan": "pro"}}


def test_a_value_nested_exactly_to_the_depth_limit_is_kept_one_deeper_is_removed():
    def nested(levels: int) -> dict:
        value: dict = {"leaf": 1}
        for _ in range(levels):
            value = {"d": value}
        return value

    # the attribute's value is at depth 0, its innermost map at depth ``levels``
    assert strip_attributes({"v": nested(MAX_DEPTH)}, OPTS) == {"v": nested(MAX_DEPTH)}
    assert strip_attributes({"v": nested(MAX_DEPTH + 1), "ok": 1}, OPTS) == {"ok": 1}


def test_a_full_key_path_rule_reaches_maps_inside_arrays():
    opts = StripOptions(keys={"app.items.secret"})
    attrs = {"app.items": [{"secret": "s3cr3t", "n": 1}, {"n": 2}], "other": [{"secret": "kept"}]}
    assert strip_attributes(attrs, opts) == {
        "app.items": ({"n": 1}, {"n": 2}),
        "other": ({"secret": "kept"},),
    }


def test_arrays_count_towards_the_depth_limit_like_maps():
    def nested(levels: int) -> list:
        value: list = [1]
        for _ in range(levels):
            value = [value]
        return value

    def as_tuples(value):
        return tuple(as_tuples(v) for v in value) if isinstance(value, list) else value

    assert strip_attributes({"v": nested(MAX_DEPTH)}, OPTS) == {"v": as_tuples(nested(MAX_DEPTH))}
    assert strip_attributes({"v": nested(MAX_DEPTH + 1), "ok": 1}, OPTS) == {"ok": 1}


def test_a_tuple_of_maps_is_checked_for_forbidden_keys_not_waved_through_as_scalars():
    """The clean check skips a tuple only when every item is a plain scalar (what the SDK makes of a
    list attribute); a tuple of maps — a log attribute — can hold content."""
    assert has_forbidden_key({"items": ({"input.value": "x"},)}, OPTS)
    assert has_forbidden_key({"items": (None, {"gen_ai.prompt": "x"})}, OPTS)
    assert not has_forbidden_key({"items": ("a", 1, None, 2.5, True)}, OPTS)
