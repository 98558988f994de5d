"""A tool's compiled call path (#45): what every call of one :class:`.toolspec.ToolSpec` would
otherwise work out again, worked out once.

- **The static span attributes** every call's span ends with (the integration's own keys, the tool's
  name, ``gen_ai.operation.name``), built once in the order the span carries them.
- **The budget's decision for each pattern of arguments.** The verdict of ``op.Budget`` on a call is a
  function of the tool's options and of what the classification says of the arguments — their names
  and kinds, and the named sets the budget reads (caller-named, destinations, references, short
  values, faults, delegated and asked ones) — never of the values themselves. A tool called again
  with the same pattern (the common case: the same arguments, sourced the same way) gets the same
  :class:`.decision.Decision` and its span attributes, decided once. An application's own ``Budget``
  subclass may decide from anything: it is asked on every call, as before.

Both are immutable once made (the decision and its verdict are named tuples; the attributes are read,
never written, by the call), so one made for an earlier call is shared with later ones. The memo is
bounded per tool: past :data:`MAX_PATTERNS` it starts again, so a tool called with ever-new argument
names (``**kwargs``) holds no more than that.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ... import semconv as sc
from ..evidence.classification import Classification
from .budget import Budget
from .decision import Decision, decide

#: Argument patterns remembered per tool (each a decision and its attributes).
MAX_PATTERNS = 256


class CallPlan:
    """One tool's compiled call path: its static span attributes and its decisions by pattern."""

    __slots__ = ("_budget", "_decisions", "_egress", "_memo", "_side_effect", "tail")

    def __init__(
        self,
        name: str,
        *,
        budget: Budget,
        side_effect: str,
        egress: frozenset[str],
        span_attributes: Mapping[str, Any],
    ) -> None:
        self._budget = budget
        self._side_effect = side_effect
        self._egress = egress
        self._memo = type(budget) is Budget  # the law's own budget: a pure function of the pattern
        self._decisions: dict[tuple, tuple[Decision, Mapping[str, Any]]] = {}
        #: the attributes every call's span ends with, after its decision (its essentials' tail)
        self.tail: Mapping[str, Any] = {
            **span_attributes,
            sc.GEN_AI_TOOL_NAME: name,
            sc.GEN_AI_OPERATION_NAME: sc.EXECUTE_TOOL,
        }

    def decide(self, classification: Classification, enforce: bool) -> tuple[Decision, Mapping[str, Any]]:
        """:func:`.decision.decide` for this tool, and the decision's span attributes (read-only)."""
        if not self._memo:
            return self._decided(classification, enforce)
        c = classification
        key = (
            tuple([(a.name, a.kind) for a in c.arguments]),
            enforce,
            c.caller_named,
            c.destinations,
            c.references,
            c.short,
            c.faults,
            c.delegated,
            c.asked,
        )
        found = self._decisions.get(key)
        if found is None:
            found = self._decided(classification, enforce)
            if len(self._decisions) >= MAX_PATTERNS:
                self._decisions.clear()
            self._decisions[key] = found
        return found

    def _decided(self, classification: Classification, enforce: bool) -> tuple[Decision, Mapping[str, Any]]:
        decision = decide(
            classification,
            budget=self._budget,
            side_effect=self._side_effect,
            enforce=enforce,
            egress=self._egress,
        )
        return decision, decision.attributes()


__all__ = ["MAX_PATTERNS", "CallPlan"]
