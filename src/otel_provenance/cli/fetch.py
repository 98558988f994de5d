"""`otel-provenance fetch` — pull a release's spans from SigNoz into an OTLP JSON Lines file.

The API key comes from ``$SIGNOZ_API_KEY`` only (a flag would leak it into shell history and process
lists) and is never printed. The file is written to a temporary name beside ``-o`` and renamed when
the read finished, so a failed fetch never leaves a partial file that a later check could read.
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from ..offline.model import Span
from ..offline.otlp_json_writer import write_jsonl
from ..offline.readers.signoz import API_KEY_ENV, read_signoz
from ._common import EXIT_PASS, IO, UsageError

_DURATION = re.compile(r"^(\d+)([smhd])$")
_UNIT_MS = {"s": 1_000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "fetch",
        help="pull a release's spans from SigNoz into OTLP JSON Lines",
        description=f"Read a release's traces from SigNoz's query API (key from ${API_KEY_ENV}) "
        "and save them as OTLP JSON Lines for offline checks.",
    )
    add_signoz_window_arguments(p)
    p.add_argument("-o", "--output", required=True, help="OTLP JSON Lines file to write ('-' for stdout)")
    p.set_defaults(handler=_handle)


def add_signoz_window_arguments(p: argparse.ArgumentParser, *, standalone: bool = True) -> None:
    """The SigNoz connection and time-window flags (shared with ``gate check --signoz``).

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


def _handle(args: argparse.Namespace, io: IO) -> int:
    start, end = window_ms(args)
    spans = read_signoz(
        args.signoz,
        release=args.release,
        start_ms=start,
        end_ms=end,
        service=args.service,
        timeout_s=args.timeout,
        deadline_s=args.deadline,
    )
    if args.output == "-":
        count = write_jsonl(spans, io.stdout)
    else:
        count = _write_atomically(Path(args.output), spans)
    if count == 0:
        io.warn(f"no spans of release {args.release!r} in SigNoz in that window; the file holds no traces")
    io.stderr.write(
        f"otel-provenance: fetched {count} span(s) of release {args.release!r}"
        f"{'' if args.output == '-' else ' into ' + args.output}\n"
    )
    return EXIT_PASS


def _write_atomically(path: Path, spans: Iterable[Span]) -> int:
    directory = path.parent if str(path.parent) else Path(".")
    if not directory.is_dir():
        raise UsageError(f"-o {path}: directory {directory} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
            count = write_jsonl(spans, out)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return count
