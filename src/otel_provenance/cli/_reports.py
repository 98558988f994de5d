"""A command's reports: its flags and its output, both read from the one table of formats
(``offline/report/formats.py``), so a format added there is offered by every command it can draw."""

from __future__ import annotations

import argparse

from ..offline.report.formats import ReportContext, formats_for, render
from ._common import IO
from ._writefile import committed_together, write_text


def add_report_arguments(p: argparse.ArgumentParser, subject: str) -> None:
    """``--format`` (what is printed) and one ``--<flag> FILE`` per format that can draw ``subject``."""
    formats = formats_for(subject)
    printable = [f.name for f in formats if f.printable]
    p.add_argument("--format", choices=printable, default="text", help="what is printed (default: text)")
    for fmt in formats:
        if fmt.flag is not None:
            p.add_argument(fmt.flag, metavar="FILE", help=fmt.help)


def wants(args: argparse.Namespace, name: str, subject: str) -> bool:
    """Whether the arguments ask for format ``name`` of ``subject`` in a file."""
    return any(f.name == name and f.flag and _path(args, f.flag) for f in formats_for(subject))


def emit(args: argparse.Namespace, io: IO, subject: str, result: object, context: ReportContext) -> None:
    """Write every report file the arguments ask for — all of them or, interrupted, none — then
    print ``--format``'s report."""
    with committed_together():
        for fmt in formats_for(subject):
            path = _path(args, fmt.flag) if fmt.flag else None
            if path:
                write_text(path, render(subject, fmt.name, result, context))
    for line in render(subject, args.format, result, context).splitlines(keepends=True):
        io.stdout.write(line)  # line by line: a reader that goes away (`… | head`) is seen at once


def _path(args: argparse.Namespace, flag: str) -> str | None:
    return getattr(args, flag.lstrip("-").replace("-", "_"), None)
