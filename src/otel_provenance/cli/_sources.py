"""Which trace source a command reads, chosen from its arguments here and nowhere else.

Each backend adds its own flags and builds a ``TraceSource`` (``offline/engines/source.py``):

- ``--signoz URL`` (+ the time window) — SigNoz's query API (``gate check``, ``fetch``).
- ``--dask-scheduler ADDRESS`` — the files read on a Dask cluster (``gate check``, ``audit``,
  ``mine``, ``fingerprint``); ``config`` takes the address from Dask's configuration
  (``scheduler-address``, i.e. ``$DASK_SCHEDULER_ADDRESS``).
- ``--jobs N`` (N > 1) — the files read in N processes of this machine (``gate check``, ``audit``,
  ``fingerprint``).
- otherwise the files (paths, globs, folders or fsspec URLs) read in this process.

A new backend is one more entry in ``_BACKENDS`` (its flags, when it is chosen, how it opens).
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Final

from .. import environment, semconv
from ..offline.engines import FileSource, SigNozSource, TraceSource
from ..offline.readers import ReadLimits
from ..offline.release import DEFAULT_RELEASE_ATTRIBUTE
from ._common import UsageError

Progress = Callable[[str, int, int], None] | None

_DURATION: Final = re.compile(r"^(\d+)([smhd])$")
_UNIT_MS: Final = {"s": 1_000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
_CONFIG_ADDRESS: Final = "config"


class _SigNoz:
    name = "--signoz"

    @staticmethod
    def add_arguments(p: argparse.ArgumentParser, *, standalone: bool) -> None:
        add_signoz_window_arguments(p, standalone=standalone)

    @staticmethod
    def chosen(args: argparse.Namespace) -> bool:
        return getattr(args, "signoz", None) is not None

    @staticmethod
    def open(
        args: argparse.Namespace,
        paths: Sequence[str],
        release: str | None,
        keep: Callable[[str], bool] | None,
        progress: Progress,
    ) -> TraceSource:
        if paths:
            raise UsageError("give trace files or --signoz, not both")
        if release_attribute(args) != DEFAULT_RELEASE_ATTRIBUTE:
            raise UsageError(
                "--signoz selects a release's traces by service.version; --release-attribute works on "
                "trace files"
            )
        start, end = window_ms(args)
        return SigNozSource(
            args.signoz,
            args.release,
            start,
            end,
            run_attribute=run_attribute(args),
            service=args.service,
            timeout_s=args.timeout,
            deadline_s=args.deadline,
        )


class _Dask:
    name = "--dask-scheduler"

    @staticmethod
    def add_arguments(p: argparse.ArgumentParser, *, standalone: bool) -> None:
        p.add_argument(
            "--dask-scheduler",
            metavar="ADDRESS",
            help="read and evaluate on this Dask cluster, e.g. tcp://10.0.0.5:8786 ('config': Dask's "
            "configured scheduler-address, $DASK_SCHEDULER_ADDRESS); needs otel-provenance[dask]",
        )
        p.add_argument(
            "--dask-deadline",
            type=float,
            default=3600.0,
            metavar="SECONDS",
            help="total time for the work on the Dask cluster (connect, every stage); exit 1 after it "
            "(default 3600)",
        )

    @staticmethod
    def chosen(args: argparse.Namespace) -> bool:
        return getattr(args, "dask_scheduler", None) is not None

    @staticmethod
    def open(
        args: argparse.Namespace,
        paths: Sequence[str],
        release: str | None,
        keep: Callable[[str], bool] | None,
        progress: Progress,
    ) -> TraceSource:
        from ..offline.engines.dask_cluster import DaskSource, import_distributed, scheduler_address

        if keep is not None:
            raise UsageError("--dask-scheduler splits the work itself; it cannot be combined with --shard")
        if run_attribute(args) != semconv.RUN_ID:
            raise UsageError(
                "--run-attribute is not supported with --dask-scheduler yet (runs join by agent.run.id)"
            )
        if not paths:
            raise UsageError("give trace files (paths, globs or URLs) for --dask-scheduler to read")
        import_distributed()  # without the extra: exit 1 with the install line, before anything else
        given = args.dask_scheduler
        address = scheduler_address(None if given == _CONFIG_ADDRESS else given)
        return DaskSource(
            paths,
            address,
            release,
            progress=progress,
            release_attribute=release_attribute(args),
            deadline_s=args.dask_deadline,
        )


class _Pool:
    name = "--jobs"

    @staticmethod
    def add_arguments(p: argparse.ArgumentParser, *, standalone: bool) -> None:
        p.add_argument(
            "--jobs",
            type=int,
            default=1,
            metavar="N",
            help="read and evaluate the trace files in N processes (merged in memory: the result of one)",
        )

    @staticmethod
    def chosen(args: argparse.Namespace) -> bool:
        return getattr(args, "jobs", 1) != 1

    @staticmethod
    def open(
        args: argparse.Namespace,
        paths: Sequence[str],
        release: str | None,
        keep: Callable[[str], bool] | None,
        progress: Progress,
    ) -> TraceSource:
        if args.jobs < 1:
            raise UsageError("--jobs must be at least 1")
        if keep is not None:
            raise UsageError("--jobs splits the work itself; it cannot be combined with --shard")
        if not paths:
            raise UsageError("give trace files for --jobs to read")
        # Loaded for --jobs only: start-up is paid by every gate.
        from ..offline.engines.pool import PoolSource

        return PoolSource(
            paths,
            args.jobs,
            release,
            progress=progress,
            release_attribute=release_attribute(args),
            run_attribute=run_attribute(args),
            limits=read_limits(),
        )


class _Files:
    name = "files"

    @staticmethod
    def add_arguments(p: argparse.ArgumentParser, *, standalone: bool) -> None:
        pass  # each command names its own file arguments (TRACES, --approved …)

    @staticmethod
    def chosen(args: argparse.Namespace) -> bool:
        return True

    @staticmethod
    def open(
        args: argparse.Namespace,
        paths: Sequence[str],
        release: str | None,
        keep: Callable[[str], bool] | None,
        progress: Progress,
    ) -> TraceSource:
        if not paths:
            raise UsageError("give trace files to read")
        return FileSource(
            paths,
            release,
            keep=keep,
            progress=progress,
            release_attribute=release_attribute(args),
            run_attribute=run_attribute(args),
            limits=read_limits(),
        )


_BACKENDS: Final = {"signoz": _SigNoz, "dask": _Dask, "pool": _Pool}  # none chosen: the files, here


def add_source_arguments(p: argparse.ArgumentParser, *backends: str, standalone: bool = False) -> None:
    """Add the flags of ``backends`` (names in ``_BACKENDS``) to a command's parser."""
    for name in backends:
        _BACKENDS[name].add_arguments(p, standalone=standalone)


def chosen_backend(args: argparse.Namespace) -> str:
    """``signoz``, ``dask``, ``pool`` or ``files``; at most one backend's flag may be given."""
    chosen = [name for name, backend in _BACKENDS.items() if backend.chosen(args)]
    if len(chosen) > 1:
        raise UsageError(f"choose one of {' and '.join(_BACKENDS[n].name for n in chosen)}")
    return chosen[0] if chosen else "files"


def open_source(
    args: argparse.Namespace,
    paths: Sequence[str],
    release: str | None = None,
    *,
    keep: Callable[[str], bool] | None = None,
    progress: Progress = None,
) -> TraceSource:
    """The source the arguments choose, reading ``paths`` unless a backend reads elsewhere."""
    backend = _BACKENDS.get(chosen_backend(args), _Files)
    return backend.open(args, list(paths), release, keep, progress)


def read_limits(environ: Mapping[str, str] | None = None) -> ReadLimits:
    """Decompression limits, from ``OTEL_PROVENANCE_READ_MAX_BYTES`` / ``_MAX_RATIO`` when set."""
    values: dict[str, Any] = {
        "max_bytes": environment.integer(environment.OTEL_PROVENANCE_READ_MAX_BYTES, environ),
        "max_ratio": environment.number(environment.OTEL_PROVENANCE_READ_MAX_RATIO, environ),
    }
    try:
        return ReadLimits(**{name: value for name, value in values.items() if value is not None})
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def run_attribute(args: argparse.Namespace) -> str:
    """The attribute that joins traces into runs (``--run-attribute``; ``agent.run.id`` by default)."""
    return getattr(args, "run_attribute", None) or semconv.RUN_ID


def release_attribute(args: argparse.Namespace) -> str:
    """The key that names a run's release (``--release-attribute``; ``service.version`` by default)."""
    return getattr(args, "release_attribute", None) or DEFAULT_RELEASE_ATTRIBUTE


# -- SigNoz's connection and time window --------------------------------------------------------------


def add_signoz_window_arguments(p: argparse.ArgumentParser, *, standalone: bool = True) -> None:
    """The SigNoz connection and time-window flags (``fetch``, ``gate check --signoz``).

    ``standalone=False`` leaves ``--signoz`` optional and ``--release`` to the caller's parser.
    """
    p.add_argument(
        "--signoz",
        required=standalone,
        metavar="URL",
        help="SigNoz base URL, e.g. http://localhost:8080 (API key from $SIGNOZ_API_KEY)",
    )
    if standalone:
        p.add_argument("--release", required=True, help="the release: resource attribute service.version")
    p.add_argument("--service", help="only traces with spans of this service.name")
    p.add_argument(
        "--since", default=None, metavar="DURATION", help="window ending now, e.g. 30m, 24h, 7d (default 24h)"
    )
    p.add_argument("--start", default=None, help="window start: epoch milliseconds or ISO 8601")
    p.add_argument(
        "--end", default=None, help="window end (exclusive): epoch milliseconds or ISO 8601; default now"
    )
    p.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS", help="per-request timeout")
    p.add_argument(
        "--deadline",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="total time for the whole read, retries included",
    )


def window_ms(args: argparse.Namespace, now_ms: int | None = None) -> tuple[int, int]:
    """``[start, end)`` in epoch ms from ``--since`` / ``--start`` / ``--end``."""
    now = now_ms if now_ms is not None else int(time.time() * 1000)
    if args.since is not None and args.start is not None:
        raise UsageError("give --since or --start, not both")
    end = _instant(args.end, "--end") if args.end is not None else now + 1
    if args.start is not None:
        start = _instant(args.start, "--start")
    else:
        since = args.since or "24h"
        match = _DURATION.match(since)
        if not match:
            raise UsageError(f"--since {since!r}: expected a number and a unit s/m/h/d, e.g. 24h")
        start = end - int(match[1]) * _UNIT_MS[match[2]]
    if start >= end:
        raise UsageError(f"empty time window: start {start} is not before end {end} (epoch ms)")
    return start, end


def _instant(text: str, flag: str) -> int:
    if text.isdigit():
        return int(text)
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(
            f"{flag} {text!r}: expected epoch milliseconds or ISO 8601 (2026-01-31T12:00:00Z)"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)
