"""``DaskSource``: the trace files read, grouped into runs and folded on a Dask cluster.

The same answer as :class:`~.source.FileSource` on the same files, computed where the data is:

1. **plan** (one task per file) — sniff the format; cut large uncompressed JSON Lines files into
   byte ranges (``otel-provenance.partition-size`` in Dask's config, default 64 MiB).
2. **index** (one task per partition) — the ``(trace id, agent.run.id)`` links each partition
   mentions. The client joins them into run keys (``runs.RunKeys``): one entry per trace, small
   next to the spans; with span links, a task per partition gives its links (``linked_runs``).
3. **fold** (one task per partition, #46) — the partition's spans converted; the runs that lie in
   it alone (*owned*) are built, validated and folded there, and only the spans of runs that cross
   a partition's edge come back with the compact partial. The client builds and folds those few
   runs and merges the partials with ``fold.merge``.

These are the steps and the code of ``--jobs N`` (``ranges``): every line is decoded once, in one
task, and no run's spans move between workers but those of crossing runs. Memory per worker is
bounded by its partitions (about the partition size each), not by the input; the client holds one
entry per trace, the partials and the crossing runs' spans. The fold and merge are the
single-process ones, and the folds of ``offline.engines.fold`` give the same bytes whatever the
grouping.

Deadlines: every call to the cluster is bounded by one deadline for the whole work (``deadline_s``,
``--dask-deadline``): the address is checked before anything connects (a malformed one used to leave
Dask's client thread behind, so the command printed its error and never exited); the scheduler is
asked who it is on a connection of our own under ``asyncio.wait_for`` (Dask's own connect timeout
does not cover the handshake: a listener that accepts and never answers held the client forever);
a scheduler without workers is waited on for at most ``CONNECT_S``; and each stage waits for its
futures with the time left (no workers, or frozen ones, leave tasks pending for ever).

Failures: an input error (a bad line, invalid evidence) is returned by the task as an answer and
raised here, so it is never retried; any other task failure is retried (``retries``), a lost worker
makes the scheduler recompute what it held, and what still fails raises :class:`ClusterError`. A
caller never gets a partial result.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import re
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final, TypeVar

from ... import semconv
from ...errors import OtelProvenanceError
from ..linked_runs import TraceLinks
from ..model import Run
from ..readers import ReadReport, locations, partitions
from ..readers.partitions import Failed, Indexed, Partition, index_partition, plan
from ..release import DEFAULT_RELEASE_ATTRIBUTE
from . import ranges
from .fold import COLLECT, RunFold

P = TypeVar("P")

PARTITION_SIZE_KEY: Final = "otel-provenance.partition-size"
DEFAULT_PARTITION_SIZE: Final = 64 * 2**20
RETRIES: Final = 2
DEFAULT_DEADLINE_S: Final = 3600.0
CONNECT_S: Final = 30.0  # at most this of the deadline for reaching the scheduler and finding a worker
_SCHEMES: Final = ("tcp", "tls", "ws", "wss", "ucx")


class ClusterError(OtelProvenanceError):
    """The cluster could not be reached, or a task failed beyond its retries."""


def import_distributed() -> Any:
    """``distributed``, or a ``ConfigurationError``-like message naming the extra to install."""
    try:
        import dask  # noqa: F401
        import distributed
        import fsspec  # noqa: F401
    except ImportError as exc:
        raise ClusterError(
            f"Dask is not installed ({exc.name}): pip install 'otel-provenance[dask]'"
        ) from None
    return distributed


def scheduler_address(given: str | None) -> str:
    """``given``, or Dask's own configured address (``scheduler-address``, ``$DASK_SCHEDULER_ADDRESS``)."""
    if given:
        return given
    import dask

    address = dask.config.get("scheduler-address", None)
    if not address:
        raise ClusterError(
            "no Dask scheduler address: give one, or set DASK_SCHEDULER_ADDRESS (Dask's scheduler-address)"
        )
    return str(address)


def check_address(address: str) -> str:
    """``address`` when it names a scheduler as Dask spells one (``tcp://HOST:PORT``, or ``tls``, ``ws``,
    ``wss``, ``ucx``; ``HOST:PORT`` means tcp), else ``ClusterError`` — before anything connects."""
    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        scheme, location = parse_address(address)
        if scheme == "inproc":  # a cluster in this process (LocalCluster(processes=False)): host/pid/n
            ok = re.fullmatch(r"[^/]+/[0-9]+/[0-9]+", location) is not None
        else:
            host, port = parse_host_port(location)
            ok = scheme in _SCHEMES and bool(host) and isinstance(port, int) and 0 < port < 65536
    except (ValueError, TypeError):
        ok = False
    if not ok:
        raise ClusterError(
            f"not a Dask scheduler address: {address!r} (expected tcp://HOST:PORT, or tls/ws/wss/ucx://HOST:PORT)"
        )
    return address


async def _identity(address: str, timeout: float) -> dict[str, Any]:
    from distributed.comm import connect

    comm = await connect(address, timeout=timeout)
    try:
        await comm.write({"op": "identity", "reply": True})
        reply = await comm.read()
    finally:
        comm.abort()
    if not isinstance(reply, dict) or reply.get("type") != "Scheduler":
        raise OSError("the server there is not a Dask scheduler")
    return reply


def probe_scheduler(address: str, timeout: float) -> int:
    """How many workers the scheduler at ``address`` has; ``ClusterError`` when it does not answer as
    a scheduler within ``timeout`` seconds (connect and handshake both)."""
    try:
        reply = asyncio.run(asyncio.wait_for(_identity(address, timeout), timeout))
    except (OSError, TimeoutError) as exc:
        why = str(exc) or f"no answer within {timeout:g} s"
        raise ClusterError(f"cannot reach the Dask scheduler at {address} ({why})") from None
    workers = reply.get("workers")
    return len(workers) if isinstance(workers, dict) else 0


def _partition_size() -> int:
    import dask
    from dask.utils import parse_bytes

    value = dask.config.get(PARTITION_SIZE_KEY, DEFAULT_PARTITION_SIZE)
    size = parse_bytes(value) if isinstance(value, str) else int(value)
    if size < 1:
        raise ClusterError(f"{PARTITION_SIZE_KEY} must be at least 1 byte, found {value!r}")
    return size


class DaskSource:
    """Trace files (paths, globs, fsspec URLs) read by the workers of the Dask scheduler at ``address``."""

    def __init__(
        self,
        paths: Sequence[str],
        address: str,
        release: str | None = None,
        *,
        progress: Callable[[str, int, int], None] | None = None,
        release_attribute: str = DEFAULT_RELEASE_ATTRIBUTE,
        deadline_s: float = DEFAULT_DEADLINE_S,
    ) -> None:
        if not deadline_s > 0:
            raise ClusterError(
                f"the Dask deadline must be a positive number of seconds, found {deadline_s!r}"
            )
        self.paths = list(paths)
        self.address = check_address(address)
        self.deadline_s = deadline_s
        self._ends_at = 0.0  # set when a fold or a read of runs starts
        self.release = release
        self.release_attribute = release_attribute
        self.report = ReadReport(progress=progress)

    # -- the protocol -----------------------------------------------------------------------------

    def fold(self, fold: RunFold[P]) -> P:
        with self._client() as client:
            return self._fold(client, fold)

    def runs(self) -> Iterator[Run]:
        """Every run, folded on the cluster into lists (``COLLECT``) and merged here."""
        with self._client() as client:
            runs = self._fold(client, COLLECT)
        yield from runs

    # -- the stages -------------------------------------------------------------------------------

    def _left(self, doing: str) -> float:
        """Seconds left of the deadline; ``ClusterError`` naming the stage once none are."""
        left = self._ends_at - time.monotonic()
        if left <= 0:
            raise ClusterError(
                f"the Dask cluster at {self.address} did not finish {doing} within the deadline "
                f"({self.deadline_s:g} s): no workers, frozen workers, or too few for the input; no result"
            )
        return left

    def _client(self) -> Any:
        distributed = import_distributed()
        self._ends_at = time.monotonic() + self.deadline_s
        connect = min(CONNECT_S, self._left("connecting"))
        workers = probe_scheduler(self.address, connect)
        try:
            client = distributed.Client(self.address, timeout=connect, set_as_default=False)
        except (OSError, TimeoutError) as exc:
            raise ClusterError(f"cannot reach the Dask scheduler at {self.address} ({exc})") from None
        _quiet_abandoned_gathers(client)
        if not workers:
            try:
                client.wait_for_workers(1, timeout=min(CONNECT_S, self._left("waiting for a worker")))
            except (OSError, TimeoutError) as exc:
                _close(client)
                raise ClusterError(
                    f"the Dask scheduler at {self.address} has no workers ({type(exc).__name__}); no result"
                ) from None
        return _Closing(client)

    def _submit(self, client: Any, stage: str, function: Callable[..., Any], *args: Any) -> Any:
        """One task, named by its stage (``otel-provenance-<stage>-…``), retried on failure."""
        self._left(f"submitting ({stage})")
        key = f"otel-provenance-{stage}-{uuid.uuid4().hex}"
        return client.submit(function, *args, key=key, retries=RETRIES)

    def _wait(self, futures: list[Any], label: str) -> None:
        """A progress line (``dask: <stage> NN%``) while the stage's tasks finish."""
        if self.report.progress is None or not futures:
            return
        while True:  # polled: the client's own thread updates each future's state
            self._left(label)
            done = sum(1 for f in futures if f.done())
            self.report.progress(f"dask: {label}", done, len(futures))
            if done == len(futures):
                return
            time.sleep(0.1)

    def _gather(self, client: Any, futures: list[Any], label: str | None = None) -> list[Any]:
        """Results in order, the first input error raised; a progress line when ``label`` is given."""
        if label is not None:
            self._wait(futures, label)
        doing = label or "gathering"
        try:
            for future in futures:  # each wait bounded by what is left of the deadline
                future.result(timeout=self._left(doing))
            results = client.gather(futures)
        except OtelProvenanceError:
            raise
        except TimeoutError:
            self._left(doing)  # raises: the deadline has passed
            raise
        except Exception as exc:  # a task that failed beyond its retries, or a lost cluster
            raise ClusterError(f"a Dask task failed ({type(exc).__name__}: {exc}); no result") from None
        failed = next((r for r in results if isinstance(r, Failed)), None)
        if failed is not None:
            raise OtelProvenanceError(failed.message)
        return list(results)

    def _fold(self, client: Any, fold: RunFold[P]) -> P:
        """``fold`` over every run: plan, index, (links), and one fold task per partition (``ranges``)."""
        files = locations.expand(self.paths)
        size = _partition_size()
        plans = self._gather(client, [self._submit(client, "plan", plan, f, size) for f in files], "planning")
        parts: list[Partition] = [p for ps in plans for p in ps]
        indexed: list[Indexed] = self._gather(
            client, [self._submit(client, "index", index_partition, p) for p in parts], "indexing"
        )

        def link_graphs() -> list[TraceLinks]:
            units = [ix.units for ix in indexed]
            pairs = zip(parts, units, strict=True)
            graphs = [self._submit(client, "links", partitions.link_partition, p, n) for p, n in pairs]
            return self._gather(client, graphs, "linking")

        keys = ranges.join_runs(parts, indexed, self.report, semconv.RUN_ID, link_graphs)
        job = ranges.Job(fold, self.release, self.release_attribute)
        # Sent once as a task, not once per partition; a task (unlike scattered data) is recomputed
        # when the worker holding its result dies.
        shared = self._submit(client, "spec", _same, job)

        def fold_round(shares: list[ranges.Assigned]) -> list[ranges.RangePart]:
            pairs = zip(parts, shares, strict=True)
            tasks = [
                self._submit(client, "fold", _gc_raised, ranges.fold_range, p, s, shared) for p, s in pairs
            ]
            return self._gather(client, tasks, "evaluating")

        value = ranges.fold_partitions(parts, indexed, keys, job, self.report, fold_round)
        self.report.files += len(files)
        return value


class _Closing:
    """The client as a context manager whose exit never outlives a frozen cluster: Dask's own close
    waits for the scheduler, so it gets a bounded timeout and its failure is not the command's."""

    def __init__(self, client: Any) -> None:
        self.client = client

    def __enter__(self) -> Any:
        return self.client

    def __exit__(self, *exc: object) -> None:
        _close(self.client)


def _close(client: Any) -> None:
    """A close that fails or times out leaves nothing to answer for: the result is decided already."""
    with contextlib.suppress(Exception):
        client.close(timeout=5)


def _same(value: Any) -> Any:
    return value


def _gc_raised(function: Callable[..., Any], *args: Any) -> Any:
    """``function(*args)`` with the collector's thresholds raised, as the command line raises them
    in its own process (``cli._offline_gc``): a fold task allocates millions of acyclic
    objects, and a worker's default thresholds rescan them over and over."""
    before = gc.get_threshold()
    gc.set_threshold(50_000, 20, 100)
    try:
        return function(*args)
    finally:
        gc.set_threshold(*before)


def _quiet_abandoned_gathers(client: Any) -> None:
    """Ctrl-C during a gather closes the client with the gather's task still pending on the client's
    event loop; Dask then fails that task with ``AllExit`` and asyncio logs "Task exception was never
    retrieved" with a traceback — after the command said ``interrupted``. That one exception is
    expected there and is dropped; any other goes to the loop's default handler."""
    loop = getattr(getattr(client, "loop", None), "asyncio_loop", None)
    if loop is None:
        return

    def handler(loop: Any, context: dict[str, Any]) -> None:
        if type(context.get("exception")).__name__ == "AllExit":
            return
        loop.default_exception_handler(context)

    loop.call_soon_threadsafe(loop.set_exception_handler, handler)
