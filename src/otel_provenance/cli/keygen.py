"""`otel-provenance keygen`: print a new random digest key for ``OTEL_PROVENANCE_DIGEST_KEY``.

Argument digests are keyed so that a short value (a PIN, an account number) cannot be recovered by
hashing guesses; that holds only while the key itself cannot be guessed. A key typed by a person
can be, so the online half accepts only keys of at least 32 random bytes — this command prints one,
drawn from the operating system's CSPRNG (``secrets``). Keep it in a secret store, not in code.
"""

from __future__ import annotations

import argparse
import base64
import secrets

from ._common import EXIT_PASS, IO

KEY_BYTES = 32


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("keygen", help="print a new random digest key (32 bytes, hex)")
    p.add_argument(
        "--format",
        choices=("hex", "base64"),
        default="hex",
        help="how to write the key (default: hex, 64 digits)",
    )
    p.set_defaults(handler=_keygen)


def _keygen(args: argparse.Namespace, io: IO) -> int:
    key = secrets.token_bytes(KEY_BYTES)
    io.out(key.hex() if args.format == "hex" else base64.b64encode(key).decode("ascii"))
    return EXIT_PASS
