"""``otel_provenance.offline``: the offline half's public face, for CI jobs and scripts.

Everything a script needs to read traces, group them into runs, fingerprint and mine them, check a
release against a contract and render the reports is importable from here; every other module of
``offline`` is the house's inside and may change. The names load lazily, so importing one layer
(``offline.readers``, say) never drags in the rest::

    from otel_provenance.offline import FileSource, check_release, decide, gate_fold, load_contract, render

The house, bottom up (docs/DESIGN.md): model ← readers ← runs, graph, fingerprint ← contracts ←
evaluate, mine, audit, diff ← aggregate, gate ← report ← engines; ``cli`` on top.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

from ._lazy import lazy_names

_PUBLIC: dict[str, str] = {
    # the span model
    "ABSENT": "model",
    "Attributes": "model",
    "Run": "model",
    "Span": "model",
    "Outcome": "outcome",
    # reading traces, and what a read found
    "DECODERS": "readers",
    "Decoder": "readers",
    "ReadLimits": "readers",
    "ReadReport": "readers",
    "iter_runs": "readers",
    "read_spans": "readers",
    "sniff_format": "readers",
    "read_signoz": "readers.signoz",
    # runs, their graph and fingerprint
    "group_runs": "runs",
    "CausalGraph": "graph",
    "canonical_form": "fingerprint",
    "edge_counts": "fingerprint",
    "fingerprint": "fingerprint",
    "step_counts": "fingerprint",
    "optimal_assignment": "matching",
    # contracts
    "Contract": "contracts",
    "REGISTRY": "contracts",
    "Rule": "contracts",
    "contract_schema": "contracts",
    "dump_document": "contracts",
    "load_contract": "contracts",
    "parse_contract": "contracts",
    # judging runs
    "evaluate": "evaluate",
    "evaluate_safely": "evaluate",
    "mine_contract": "mine",
    "route_families": "mine",
    "approve_family": "routes",
    "contract_families": "routes",
    "Budgets": "audit",
    "ToolBudget": "audit",
    "audit_run": "audit",
    "audit_runs": "audit",
    "diff_runs": "diff",
    # a release's decision
    "Aggregate": "aggregate",
    "Shard": "gate",
    "check_release": "gate",
    "decide": "gate",
    # reports
    "FORMATS": "report",
    "DiffReport": "report",
    "ReportContext": "report",
    "ReportFormat": "report",
    "render": "report",
    "render_html": "report",
    "render_json": "report",
    "render_junit": "report",
    "render_markdown": "report",
    "render_sarif": "report",
    "render_text": "report",
    # engines: where runs are read and folded
    "COLLECT": "engines",
    "FileSource": "engines",
    "PoolSource": "engines.pool",
    "RunFold": "engines",
    "SigNozSource": "engines",
    "TraceSource": "engines",
    "audit_fold": "engines",
    "fingerprint_fold": "engines",
    "gate_fold": "engines",
    "DaskSource": "engines.dask_cluster",
}


__getattr__ = lazy_names(__name__, _PUBLIC, globals())


def __dir__() -> list[str]:
    return sorted(__all__)


#: Public functions named like the module that holds them. Importing such a module binds its name on
#: this package to the module (the import system does that), so once anything has imported
#: ``offline.fingerprint``, ``from otel_provenance.offline import fingerprint`` would give the module.
_SHADOWED = frozenset(name for name, module in _PUBLIC.items() if name == module)


class _PublicFace(types.ModuleType):
    """This package, with the shadowed names always read from the table (the function, never the module)."""

    def __getattribute__(self, name: str) -> Any:
        if name in _SHADOWED:
            return getattr(importlib.import_module(f"{__name__}.{name}"), name)
        return super().__getattribute__(name)


sys.modules[__name__].__class__ = _PublicFace


__all__ = sorted(_PUBLIC)  # built from the table: one place names the public face
