"""`otel-provenance fetch` — pull a release's spans into an OTLP JSON Lines file.

The spans come from any trace source (``cli/_sources.py``): SigNoz's query API (``--signoz URL``),
or trace files (paths, globs, fsspec URLs such as ``s3://…``) read here or on a Dask cluster.

The API key comes from ``$SIGNOZ_API_KEY`` only (a flag would leak it into shell history and process
lists) and is never printed. A regular file is written to a temporary name beside ``-o`` and renamed
when the read finished, so a failed fetch never leaves a partial file that a later check could read;
a device or FIFO (``-o /dev/stdout``) is written in place and a symlink's target is written, never
replaced (``cli/_writefile.py``).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterable
from pathlib import Path

from ..offline.model import Span
from ..offline.otlp_json_writer import write_jsonl
from ..offline.readers.signoz import API_KEY_ENV
from ._common import EXIT_PASS, IO, UsageError
from ._sources import add_source_arguments
from ._traces import TraceInput
from ._writefile import open_output


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "fetch",
        help="pull a release's spans from SigNoz (or any trace source) into OTLP JSON Lines",
        description=f"Read a release's traces from SigNoz's query API (key from ${API_KEY_ENV}), or from "
        "trace files anywhere fsspec reads, and save them as OTLP JSON Lines for offline checks.",
    )
    p.add_argument("--release", required=True, help="the release: resource attribute service.version")
    p.add_argument("traces", nargs="*", metavar="TRACES", help="trace files to read instead of --signoz")
    add_source_arguments(p, "signoz", "dask")
    p.add_argument("-o", "--output", required=True, help="OTLP JSON Lines file to write ('-' for stdout)")
    p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace, io: IO) -> int:
    source = TraceInput(io, args, args.traces, args.release)
    spans = (span for run in source.runs() for span in run.spans)
    if args.output == "-":
        count = write_jsonl(spans, io.stdout)
    else:
        count = _write_atomically(Path(args.output), spans)
    if count == 0:
        io.warn(f"no spans of release {args.release!r} in that source; the file holds no traces")
    io.stderr.write(
        f"otel-provenance: fetched {count} span(s) of release {args.release!r}"
        f"{'' if args.output == '-' else ' into ' + args.output}\n"
    )
    source.warn_incomplete()
    return source.cap_for_incomplete(EXIT_PASS)


def _write_atomically(path: Path, spans: Iterable[Span]) -> int:
    directory = Path(os.path.realpath(path)).parent
    if not directory.is_dir():
        raise UsageError(f"-o {path}: directory {directory} does not exist")
    with open_output(str(path)) as out:  # a regular file atomically; a device, FIFO or link kept
        return write_jsonl(spans, out)
