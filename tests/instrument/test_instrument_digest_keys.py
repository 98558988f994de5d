"""Digest keys (#18 point 5): only high-entropy keys, ``keygen`` prints one, the key id is no oracle.

Before: any text of 16+ bytes was a key, and ``key_id`` was an HMAC of a fixed message under it, so
``Summer2026!Summer`` was recovered from an exported span by trying guesses, then a 6-digit PIN from
its digest.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import io

import pytest

import otel_provenance as op
from otel_provenance.cli import run
from otel_provenance.instrument.base.settings import ENV_DIGEST_KEY, configure_settings, reset_settings
from otel_provenance.instrument.evidence.classify import classify_arguments


@pytest.fixture(autouse=True)
def _fresh_settings():
    yield
    reset_settings()


@pytest.mark.parametrize(
    "weak",
    [
        "Summer2026!Summer",  # a person's password: not hex, not base64
        "Summer2026Summer2026Summer2026Summer2026Summer2026",  # valid base64, but repetitive bytes
        "0123456789abcdef0123456789abcdef",  # 16 bytes: too short
        "k" * 64,  # base64 of few distinct bytes
        "00" * 32,  # hex, but all zero
        b"k" * 32,
        b"correct horse battery staple!!!",  # 31 bytes
    ],
)
def test_weak_keys_are_refused_with_a_hint(weak):
    with pytest.raises(op.ConfigurationError, match="keygen") as error:
        configure_settings(digest_key=weak, environ={})
    text = weak if isinstance(weak, str) else weak.decode()
    assert text not in str(error.value)  # the refused key is never echoed


def test_weak_key_from_the_environment_names_the_variable():
    with pytest.raises(op.ConfigurationError, match=ENV_DIGEST_KEY):
        configure_settings(environ={ENV_DIGEST_KEY: "Summer2026!Summer"})


@pytest.mark.parametrize("fmt", ["hex", "base64"])
def test_keygen_prints_a_key_that_is_accepted(fmt):
    out, err = io.StringIO(), io.StringIO()
    assert run(["keygen", "--format", fmt], out, err) == 0
    text = out.getvalue().strip()
    raw = bytes.fromhex(text) if fmt == "hex" else base64.b64decode(text)
    assert len(raw) == 32
    settings = configure_settings(digest_key=text, environ={})
    assert settings.digest_key == raw
    out2 = io.StringIO()
    run(["keygen"], out2, io.StringIO())
    assert out2.getvalue() != out.getvalue()  # fresh randomness each time
    url_safe = base64.urlsafe_b64encode(raw).decode().rstrip("=")
    assert configure_settings(digest_key=url_safe, environ={}).digest_key == raw


def test_key_id_is_not_the_fast_hmac_oracle():
    key = bytes(range(7, 39))
    settings = configure_settings(digest_key=key, environ={})
    old_style = "k-" + hmac.new(key, b"otel-provenance key id", hashlib.sha256).hexdigest()[:12]
    assert settings.key_id != old_style
    expected = hashlib.scrypt(key, salt=b"otel-provenance/key-id/v1", n=1 << 14, r=8, p=1, dklen=16)
    assert settings.key_id == "k-" + expected.hex()[:16]
    # stable across settings objects in one process (computed once, cached)
    assert configure_settings(digest_key=key, environ={}).key_id == settings.key_id
    # a user-set identifier replaces it entirely
    assert configure_settings(digest_key=key, key_id="prod-2026-q3", environ={}).key_id == "prod-2026-q3"


def test_digests_differ_per_key_and_match_within_one():
    one = configure_settings(digest_key=bytes(range(32)), environ={})
    two = configure_settings(digest_key=bytes(range(32, 64)), environ={})
    d = [
        classify_arguments("t", {"pin": "004711"}, None, settings=s).arguments[0].digest
        for s in (one, one, two)
    ]
    assert d[0] == d[1] != d[2]
