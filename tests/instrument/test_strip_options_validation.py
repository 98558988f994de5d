"""StripOptions: how its arguments are checked and normalised, and the edges of a key decision.

* a refused argument gets a message naming the argument exactly (``StripOptions.<field>…``);
* ``max_key_length`` takes an integer >= 1 only, and a key path of exactly that length is judged;
* rules given as one-shot iterables (generators) keep working, also in a copy made with
  ``dataclasses.replace``;
* in allow-list mode a key the allow-list does not know is forbidden, and below a user-allowed key
  the rules judge the part under it from its start;
* a decision that needs no name match reports zero trie steps (``decide``).
"""

from __future__ import annotations

import dataclasses

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_provenance as op
from otel_provenance import ConfigurationError
from otel_provenance.instrument.spans.redaction import StripOptions, strip_attributes

# --- refused arguments: the exact message -----------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"exception_scope": "some"}, "StripOptions.exception_scope: expected 'genai' or 'all'"),
        ({"mode": "maybe"}, "StripOptions.mode: expected one of hybrid, denylist, allowlist"),
        ({"max_key_length": 0}, "StripOptions.max_key_length: expected an integer >= 1"),
        ({"content_events": ("",)}, "StripOptions.content_events[0]: expected a non-empty string"),
        (
            {"content_events": "gen_ai.choice"},
            "StripOptions.content_events: expected a collection of strings, got one string",
        ),
        ({"patterns": (r"\.password$", "")}, "StripOptions.patterns[1]: expected a non-empty string"),
        (
            {"patterns": r"\.password$"},
            "StripOptions.patterns: expected a collection of strings, got one string",
        ),
    ],
)
def test_a_refused_option_gets_a_message_naming_the_argument(kwargs, message):
    with pytest.raises(ConfigurationError) as refused:
        StripOptions(**kwargs)
    assert str(refused.value) == message


# --- max_key_length ----------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [0, -1, True, False, 2.5, "1024", None])
def test_max_key_length_other_than_a_positive_integer_is_refused(value):
    """Booleans are ints to Python but not lengths; a string or float is refused, not compared."""
    with pytest.raises(ConfigurationError, match="max_key_length"):
        StripOptions(max_key_length=value)


def test_a_max_key_length_of_one_is_accepted_and_keeps_one_character_keys():
    options = StripOptions(max_key_length=1)
    assert not options.is_forbidden("k")
    assert options.is_forbidden("kk")


def test_a_key_exactly_max_key_length_long_is_judged_not_forbidden_outright():
    options = StripOptions(max_key_length=len("myapp.route"))
    attributes = {"myapp.route": "/a", "myapp.routes": "/b"}
    assert strip_attributes(attributes, options) == {"myapp.route": "/a"}
    assert options.decide("myapp.route")[0] is False
    assert options.decide("myapp.routes") == (True, 0)


# --- one-shot iterables --------------------------------------------------------------------------------


def _exported_attributes(options: StripOptions, attributes: dict) -> dict:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter), options=options))
    provider.get_tracer("options").start_span("tool", attributes=attributes).end()
    (span,) = exporter.get_finished_spans()
    return dict(span.attributes)


@pytest.mark.parametrize("mode", ["hybrid", "denylist"])
def test_prefixes_and_allow_given_as_generators_apply_to_every_span(mode):
    """Generators are read once; the hybrid mode's allow-list twin gets the same rules (and, the span
    being a GenAI one, keeps no unknown key such as ``keep``)."""
    options = StripOptions(
        prefixes=(p for p in ["corp.pii_"]),
        allow=(k for k in ["gen_ai.tool.description"]),
        mode=mode,
    )
    attributes = {"corp.pii_email": "a@b.c", "gen_ai.tool.description": "looks things up", "keep": 1}
    expected = {"gen_ai.tool.description": "looks things up", **({"keep": 1} if mode == "denylist" else {})}
    for _ in range(2):  # the second span must be judged by the same rules as the first
        assert _exported_attributes(options, attributes) == expected


def test_options_copied_with_dataclasses_replace_keep_rules_given_as_generators():
    options = StripOptions(
        prefixes=(p for p in ["corp.pii_"]),
        patterns=(p for p in [r"\.password$"]),
        allow=(k for k in ["input.value"]),
    )
    copy = dataclasses.replace(options, exception_scope="genai")
    assert copy.exception_scope == "genai"
    for opts in (options, copy):
        assert opts.prefixes == ("corp.pii_",)
        assert opts.patterns == (r"\.password$",)
        assert opts.allow == frozenset({"input.value"})
        assert opts.is_forbidden("corp.pii_email")
        assert opts.is_forbidden("db.password")
        assert not opts.is_forbidden("input.value")
        assert opts.is_forbidden("output.value")


# --- allow-list mode -----------------------------------------------------------------------------------


def test_in_allowlist_mode_a_key_the_allowlist_does_not_know_is_forbidden():
    options = StripOptions(mode="allowlist")
    assert options.is_forbidden("myapp.customer_note")
    assert not options.is_forbidden("gen_ai.request.model")


def test_in_allowlist_mode_a_map_under_an_own_key_keeps_no_unknown_inner_key():
    """The package's own ``agent.*`` keys pass, but what lies under one is still judged by the list."""
    options = StripOptions(mode="allowlist")
    assert strip_attributes({"agent.violations": {"note": "free text"}, "agent.run.id": "r1"}, options) == {
        "agent.run.id": "r1"
    }


def test_below_an_allowed_key_a_prefix_rule_judges_the_inner_path_from_its_start():
    options = StripOptions(mode="allowlist", allow={"app.payload"}, prefixes=("secret",))
    assert options.is_forbidden("app.payload.secret_token")
    assert not options.is_forbidden("app.payload.size")
    attributes = {"app.payload": {"secret_token": "t0k", "size": 3}}
    assert strip_attributes(attributes, options) == {"app.payload": {"size": 3}}


# --- decide: trie steps --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "path", "forbidden"),
    [
        (StripOptions(allow={"input.value"}), "input.value", False),  # allowed back, exact path
        (StripOptions(), "agent.violations", False),  # the package's own key
        (StripOptions(mode="allowlist"), "myapp.customer_note", True),  # unknown to the allow-list
        (StripOptions(prefixes=("corp.pii_",)), "corp.pii_email", True),  # a prefix rule
        (StripOptions(patterns=(r"\.password$",)), "db.password", True),  # a pattern rule
    ],
)
def test_a_decision_made_before_the_name_match_takes_no_trie_steps(options, path, forbidden):
    assert options.decide(path) == (forbidden, 0)
