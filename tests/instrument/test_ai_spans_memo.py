"""What made a span, asked of every span the wrapper hands on, is remembered per scope name and per key
(#45: an HTTP span's keys are judged once, not on every span) — and the memory never changes an
answer: the same question asked again, in any order and mixed with AI keys, gets what the plain
test of the table gives. A span of an AI library after an application's spans of the same keys is
still judged by the allow-list (through the real processor and SDK)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_provenance as op
from otel_provenance.dialects import BARE_KEYS, KEY_PREFIXES, SCOPE_NAMES, SCOPE_WORDS
from otel_provenance.instrument.spans.ai_spans import ai_keys, ai_scope


def _table_says_ai_key(attributes: dict) -> bool:
    return any(k.startswith(KEY_PREFIXES) or k in BARE_KEYS for k in attributes if isinstance(k, str))


def _table_says_ai_scope(name: str | None) -> bool:
    return bool(name) and (name.lower() in SCOPE_NAMES or any(w in name.lower() for w in SCOPE_WORDS))


_plain_keys = st.sampled_from(["http.request.method", "url.full", "server.port", "db.system", "app.step"])
_ai_keys = st.one_of(
    st.sampled_from(sorted(BARE_KEYS)), st.sampled_from(KEY_PREFIXES).map(lambda p: p + "request.model")
)
_any_key = st.one_of(_plain_keys, _ai_keys, st.text(max_size=12), st.text(min_size=300, max_size=310))
_scopes = st.one_of(
    st.none(),
    st.sampled_from(["opentelemetry.instrumentation.httpx", "app", "OpenInference.LangChain", "PYDANTIC-AI"]),
    st.sampled_from(SCOPE_WORDS).map(lambda w: f"vendor.{w.upper()}.sdk"),
    st.text(max_size=20),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.dictionaries(_any_key, st.just(1), max_size=6), min_size=1, max_size=8))
def test_the_key_memory_never_changes_an_answer(spans: list[dict]) -> None:
    for attributes in spans + spans[::-1]:  # each asked twice: once judged, once remembered
        assert ai_keys(attributes) == _table_says_ai_key(attributes)


@settings(max_examples=300, deadline=None)
@given(st.lists(_scopes, min_size=1, max_size=8))
def test_the_scope_memory_never_changes_an_answer(names: list[str | None]) -> None:
    for name in names + names[::-1]:
        assert ai_scope(name) == _table_says_ai_scope(name)


def test_an_ai_span_after_application_spans_of_the_same_keys_is_still_judged_by_the_allow_list() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter)))
    app = provider.get_tracer("app")
    for _ in range(3):  # the application's keys, judged and remembered as no AI library's
        with app.start_as_current_span("work", attributes={"app.note": "kept", "input.value": "the app's"}):
            pass
    with app.start_as_current_span(
        "work",
        attributes={"app.note": "canary-7d1f", "input.value": "canary-7d1f", "gen_ai.system": "openai"},
    ):
        pass  # the same keys beside one an AI library writes: the allow-list judges the span
    *apps, ai = exporter.get_finished_spans()
    assert all(span.attributes["app.note"] == "kept" for span in apps)
    assert "canary-7d1f" not in repr(dict(ai.attributes))
