"""Which spans and log records an AI instrumentation made: the ones the default stripping mode judges
by the allow-list.

Why this exists: a deny-list trails every library that invents a new key for a prompt
(``model_request_parameters``, ``langfuse.observation.input``, ``gen_ai.event.content`` …). The
default mode (``"hybrid"``, :mod:`.redaction`) therefore keeps only known content-free keys on
anything an AI library made, and uses the deny-list only on the other spans, where the keys are the
application's own (``http.route``, ``order.count``) and are kept.

A span counts as made by an AI instrumentation when any one of these holds:

* its instrumentation scope name contains a word of :data:`AI_SCOPE_WORDS` (``pydantic-ai``,
  ``openinference.instrumentation.langchain``, ``logfire.openai``, ``haystack``, ``langfuse`` …) or is
  one of :data:`AI_SCOPE_NAMES` (the Vercel AI SDK's ``ai``);
* one of its attribute keys starts with a prefix of :data:`AI_KEY_PREFIXES` (``gen_ai.``, ``llm.``,
  ``openinference.``, ``traceloop.``, ``langfuse.``, ``haystack.``, ``mlflow.``, the Vercel AI SDK's
  ``ai.`` …) or is one of :data:`AI_KEYS` (keys some libraries write without a namespace: Pydantic AI's,
  Logfire's ``events``);
* one of its events is named ``gen_ai.*``.

The test is deliberately wide: a user span wrongly taken for an AI span loses its own custom keys
(over-removal is visible and fixable with ``StripOptions(allow=...)``), while an AI span wrongly
taken for a user span is judged by the deny-list and may leak a key no list names yet. The markers
are cheap to check (one pass over the keys with ``str.startswith`` on a tuple).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any, Final

from ... import dialects

#: Lower-case fragments of instrumentation scope names used by AI libraries and their
#: instrumentations, from every producer's row (:data:`otel_provenance.dialects.SCOPE_WORDS`).
AI_SCOPE_WORDS: Final = dialects.SCOPE_WORDS

#: Whole instrumentation scope names of AI libraries too short to look for inside another name (the
#: Vercel AI SDK's tracer is named ``ai``, #50; :data:`otel_provenance.dialects.SCOPE_NAMES`).
AI_SCOPE_NAMES: Final = dialects.SCOPE_NAMES

#: Attribute-key prefixes only AI instrumentations write (:data:`otel_provenance.dialects.KEY_PREFIXES`).
AI_KEY_PREFIXES: Final = dialects.KEY_PREFIXES

#: Keys written without a namespace by some AI libraries (Pydantic AI's, whose spans also carry its
#: scope name; Logfire's ``events``, on a span of scope ``logfire``, #50). OpenInference's
#: ``input.value`` is not a marker: its spans carry ``openinference.span.kind`` and its scope name, and
#: the name is generic enough for an application's own span (where the deny-list removes it).
AI_KEYS: Final = dialects.BARE_KEYS

AI_EVENT_PREFIX: Final = "gen_ai."


def ai_scope(name: str | None) -> bool:
    """Whether an instrumentation scope of this name belongs to an AI library."""
    if not name:
        return False
    return _ai_scope_name(name if type(name) is str else str(name))


@lru_cache(maxsize=1024)
def _ai_scope_name(name: str) -> bool:
    """:func:`ai_scope`, once per scope name: a process has a few scopes and every span asks (#45)."""
    lowered = name.lower()
    return lowered in AI_SCOPE_NAMES or any(word in lowered for word in AI_SCOPE_WORDS)


def ai_keys(attributes: Mapping[str, Any] | None) -> bool:
    """Whether any attribute key is one only an AI instrumentation writes."""
    if not attributes:
        return False
    if _NOT_AI_KEYS.issuperset(attributes):  # every key already judged: the usual span, in C (#45)
        return False
    prefixes, keys = AI_KEY_PREFIXES, AI_KEYS
    for key in attributes:
        if isinstance(key, str):
            if key.startswith(prefixes) or key in keys:
                return True
            if type(key) is str and len(key) <= _NOTED_KEY_LENGTH and len(_NOT_AI_KEYS) < _NOTED_KEYS:
                _NOT_AI_KEYS.add(key)
    return False


#: Keys judged not an AI instrumentation's (a pure test of the key: never wrong once noted), bounded
#: in number and length — an HTTP or database span repeats its keys span after span.
_NOT_AI_KEYS: set[str] = set()
_NOTED_KEYS: Final = 4096
_NOTED_KEY_LENGTH: Final = 256


def made_by_ai(
    attributes: Mapping[str, Any] | None, scope_name: str | None = None, event_names: Iterable[str] = ()
) -> bool:
    """Whether a span (or log record) was made by an AI instrumentation (see the module docstring)."""
    return (
        ai_scope(scope_name)
        or ai_keys(attributes)
        or any(isinstance(name, str) and name.startswith(AI_EVENT_PREFIX) for name in event_names)
    )


__all__ = [
    "AI_KEYS",
    "AI_KEY_PREFIXES",
    "AI_SCOPE_NAMES",
    "AI_SCOPE_WORDS",
    "ai_keys",
    "ai_scope",
    "made_by_ai",
]
