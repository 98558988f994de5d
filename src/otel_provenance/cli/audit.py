"""`otel-provenance audit` — not built yet; exits 1 so it can never pass by accident."""

from __future__ import annotations

import argparse

from ._common import EXIT_ERROR, IO


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("audit", help="(not built yet)")
    p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace, io: IO) -> int:
    io.error("'audit' is not built yet")
    return EXIT_ERROR
