"""Engines: where the runs are read and folded — this process, a pool of processes, a Dask cluster.

Every engine is a :class:`~.source.TraceSource`: ``runs()`` yields whole runs, ``fold(f)`` runs a
:class:`~.fold.RunFold` (map-reduce of pure functions) over them and gives the same value whichever
engine ran it, and ``report`` says what was read and left out. The commands see only that protocol;
``cli/_sources.py`` picks the engine from the arguments.

- :class:`~.source.FileSource` — trace files, in this process;
- :class:`~.source.SigNozSource` — one release's traces from SigNoz's query API;
- :class:`~.pool.PoolSource` — trace files, in N processes of this machine (``--jobs N``);
- :class:`~.dask_cluster.DaskSource` — trace files, on a Dask cluster (``--dask-scheduler``).

This is the layer above the reports: a fold may keep what a report draws (``report.witnesses``).
"""

from __future__ import annotations

from .._lazy import lazy_names
from .fold import COLLECT, RunFold, audit_fold, fingerprint_fold, gate_fold
from .source import FileSource, SigNozSource, TraceSource, agent_runs

__all__ = [
    "COLLECT",
    "FileSource",
    "PoolSource",
    "RunFold",
    "SigNozSource",
    "TraceSource",
    "agent_runs",
    "audit_fold",
    "fingerprint_fold",
    "gate_fold",
]


#: ``PoolSource`` is imported when asked for: only ``--jobs N`` uses it, and its partitions and process
#: machinery would otherwise be a part of every command's start-up (issue #46).
__getattr__ = lazy_names(__name__, {"PoolSource": "pool"}, globals())
