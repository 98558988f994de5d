"""Which release a run belongs to — read from the *agent's* spans, never a downstream service's.

One trace routinely holds several services: W3C trace context carries the agent's run into the
payment service it calls, and that service's own resource says *its* version (``7.3.1``), not the
agent's (``2.0.0``). Reading the release from every span would give such a run two versions and
lose it — exactly the runs that reached the service. So a run's release is read by precedence, from
the first of these groups of spans in which any span carries the release attribute:

1. spans that carry ``agent.run.id`` (the agent's own instrumentation marks them);
2. spans that carry ``gen_ai.operation.name`` (``invoke_agent``, ``execute_tool``, ``chat`` …), but
   not an echo of a tool call (``model.mark_echoes``: an MCP server's own span, say);
3. the run's root spans (no parent).

On each span the attribute is read from the resource first, then from the span's own attributes
(``--release-attribute KEY`` names it; default ``service.version``). When the spans of the deciding
group carry one value, that is the run's release. When they carry several, the agent's own spans
disagree: the run has no single release, and the gate evaluates it as *insufficient* for any release
among the values found — it is never skipped. A run with no value at all has no release.

Imports nothing from the rest of ``offline`` (``model.Run`` uses it), so spans are duck-typed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from .. import semconv

if TYPE_CHECKING:
    from .model import Span

DEFAULT_RELEASE_ATTRIBUTE: Final = semconv.SERVICE_VERSION


@dataclass(frozen=True, slots=True)
class Attribution:
    """A run's release (``None`` when there is no single one) and every value its deciding spans carry."""

    release: str | None
    found: tuple[str, ...]  # distinct values on the deciding group of spans, sorted

    @property
    def disagrees(self) -> bool:
        return len(self.found) > 1

    def concerns(self, release: str) -> bool:
        """True when the run is ``release``'s: its release, or one of the values its spans disagree on.
        A run with no release is no release's: ``--release`` filters never admit it."""
        if not self.found:
            return False
        return self.release == release or release in self.found

    def label(self, key: str = DEFAULT_RELEASE_ATTRIBUTE) -> str:
        """How reports name the run's release: the value, ``(no KEY)`` or ``(disagreeing: a, b)``."""
        if self.release is not None:
            return self.release
        if self.found:
            return f"(disagreeing: {', '.join(self.found)})"
        return f"(no {key})"


NO_RELEASE: Final = Attribution(None, ())


_RUN_ID: Final = semconv.RUN_ID
_OPERATION: Final = semconv.GEN_AI_OPERATION_NAME


def _groups(spans: tuple[Span, ...]) -> Iterable[Iterable[Span]]:
    yield [s for s in spans if _RUN_ID in s.attributes]
    yield (s for s in spans if _OPERATION in s.attributes and not s.echo)
    yield (s for s in spans if s.parent_span_id is None)


def attribute_release(spans: tuple[Span, ...], key: str = DEFAULT_RELEASE_ATTRIBUTE) -> Attribution:
    """The release of a run made of ``spans``, by the precedence in the module docstring."""
    for group in _groups(spans):
        values: set[str] = set()
        resource, said = None, None  # the spans of a resource share its object: read once in a row
        for span in group:  # a span's release: its resource's ``key``, else its own; non-empty strings
            if span.resource is not resource:
                resource = span.resource
                said = resource.get(key)
                said = said if isinstance(said, str) and said else None
                if said is not None:
                    values.add(said)  # once for the spans of this resource in a row
            if said is None:
                value = span.attributes.get(key)
                if isinstance(value, str) and value:
                    values.add(value)
        if values:
            found = tuple(sorted(values))
            return Attribution(found[0] if len(found) == 1 else None, found)
    return NO_RELEASE
