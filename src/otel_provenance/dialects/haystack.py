"""Haystack's tracer: each component's and the pipeline's inputs and outputs."""

from __future__ import annotations

from .dialect import Dialect

DIALECT = Dialect(
    name="haystack",
    content_keys=frozenset(
        {
            "haystack.component.input",
            "haystack.component.output",
            "haystack.pipeline.input_data",
            "haystack.pipeline.output_data",
        }
    ),
    scope_words=("haystack",),
    key_prefixes=("haystack.",),
)
