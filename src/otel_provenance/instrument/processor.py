"""``ProvenanceSpanProcessor``: hands the processors it wraps each span without content.

The SDK gives ``on_end`` one read-only span that every processor on the provider shares, and since
1.43 ``_on_ending`` cannot change it either. So this wrapper reads each finished span into plain data
once, runs named transforms over it (:mod:`.span_transforms`: for tool spans made by other GenAI
libraries, :mod:`.thirdparty` provenance first; then the removal of content that :mod:`.redaction`
decides) and hands the wrapped processors a **new** ``ReadableSpan`` built from the result — or, when
no transform changed anything, the SDK's own span, which then holds nothing to remove.

Safe set-up: put every exporting processor *inside* the wrapper. An exporting processor added to
the provider *beside* the wrapper still receives the raw span; the wrapper looks at its provider's
processors whenever that list changes and warns once (:class:`ContentLeakWarning`).

Nothing here raises into the application. If stripping a span fails, the span is dropped — not
exported raw — and one log line names the failure's type (never a value). A wrapped processor that
raises is logged the same way, and the others still get the span (:mod:`.fanout`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from functools import partial
from typing import Any

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor

from .base.internal_errors import reraise_own_bug_under_pytest
from .spans.fanout import OnceLog, checked_fanout
from .spans.leaks import LeakGuard
from .spans.redaction import DEFAULT_OPTIONS, StripOptions, wrapper_options
from .spans.span_transforms import (
    SharedObjectCleaner,
    SpanData,
    SpanTransform,
    add_attributes,
    content_transforms,
    holds_only_its_own,
    transform_span,
)

_logger = logging.getLogger(__name__)


# --- stripping one span ----------------------------------------------------------------------------


def strip_span(
    span: ReadableSpan,
    options: StripOptions = DEFAULT_OPTIONS,
    *,
    extra_attributes: Mapping[str, Any] | None = None,
    shared: SharedObjectCleaner | None = None,
) -> ReadableSpan:
    """``span`` minus every forbidden key, event and detail: a new ``ReadableSpan``, or ``span`` itself
    when there is nothing to remove. ``extra_attributes`` (provenance computed from the raw span) are
    added first."""
    transforms = content_transforms(options, shared or SharedObjectCleaner(options))
    if extra_attributes:
        transforms = (partial(add_attributes, extra_attributes), *transforms)
    return transform_span(span, transforms)


# --- the processor ---------------------------------------------------------------------------------


class ProvenanceSpanProcessor(SpanProcessor):
    """Wraps exporting processors; each receives a rebuilt span with forbidden content removed.

    ``ProvenanceSpanProcessor(BatchSpanProcessor(OTLPSpanExporter()), options=StripOptions(...))``.
    Tool spans from other GenAI instrumentations are classified against the run's ledger before
    their raw arguments are removed (``classify_foreign_tools=False`` turns that off);
    ``foreign_side_effects`` / ``foreign_budgets`` (by tool name) give those tools the budget rules
    of ``@op.tool`` — violations are tagged, never blocked (see :mod:`.thirdparty`).
    ``foreign_argument_names`` (tool name -> parameter names) lets those names be exported; other
    names from a foreign span's argument JSON are exported by position (``arguments.0`` …).
    """

    _otel_provenance_strips_content = True  # leaks.WRAPPER_MARK: what it wraps is safe

    def __init__(
        self,
        *downstream: SpanProcessor,
        options: StripOptions | None = None,
        classify_foreign_tools: bool = True,
        foreign_side_effects: Mapping[str, str] | None = None,
        foreign_budgets: Mapping[str, Any] | None = None,
        foreign_argument_names: Mapping[str, Any] | None = None,
    ) -> None:
        wrapper = "ProvenanceSpanProcessor"
        self._log = OnceLog()
        hooks = ("on_start", "on_end", "shutdown")
        self._fanout = checked_fanout(wrapper, downstream, hooks, "SpanProcessor", self._log)
        self._options = wrapper_options(wrapper, options)
        self._guard = LeakGuard()
        self._classifier = None
        self._shared = SharedObjectCleaner(self._options)
        transforms: tuple[SpanTransform, ...] = content_transforms(self._options, self._shared)
        if classify_foreign_tools:
            from .thirdparty import ForeignToolClassifier

            self._classifier = ForeignToolClassifier(
                side_effects=foreign_side_effects,
                budgets=foreign_budgets,
                argument_names=foreign_argument_names,
            )
            transforms = (self._add_foreign_tool_provenance, *transforms)
        self._transforms = transforms

    @property
    def downstream(self) -> tuple[SpanProcessor, ...]:
        return self._fanout.processors

    @property
    def options(self) -> StripOptions:
        return self._options

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        try:
            self._guard.check(span)
            if self._classifier is not None:
                self._classifier.saw_start(span)
        except Exception as error:
            reraise_own_bug_under_pytest(error)
            self._log("leak check", error)
        self._fanout.each("on_start", span, parent_context=parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        try:
            if (
                holds_only_its_own(span, self._options)
                and self._shared.unchanged(span)
                and (
                    self._classifier is None
                    or not self._classifier.watching
                    or not self._classifier.provenance(span)
                )
            ):
                # a tool span of ours with only what we set: nothing to walk (#45); while frameworks'
                # spans are about, the classifier still notes it, to know a framework's span of the
                # same call as that call
                clean = span
            else:
                clean = transform_span(span, self._transforms)
        except Exception as error:
            reraise_own_bug_under_pytest(error)
            self._log("stripping a span (the span was dropped, not exported)", error)
            return
        self._fanout.each("on_end", clean)

    def _add_foreign_tool_provenance(self, data: SpanData) -> None:
        """The first transform: provenance of another library's tool span, from its raw arguments.
        Best effort — a failure is logged and the span is still stripped; removal is not optional."""
        try:
            extra = self._classifier.provenance(data.span)  # type: ignore[union-attr]
        except Exception as error:
            reraise_own_bug_under_pytest(error)
            self._log("classifying a tool span from another instrumentation", error)
            return
        if extra:
            add_attributes(extra, data)

    def shutdown(self) -> None:
        self._fanout.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Flush the wrapped processors within one deadline, shared (:class:`.fanout.SafeFanout`)."""
        return self._fanout.force_flush(timeout_millis)
