"""Settings precedence (argument > environment > default), key handling, and bad values named."""

from __future__ import annotations

import pytest

import otel_provenance as op
from otel_provenance.instrument.base.settings import (
    ENV_DIGEST_KEY,
    ENV_DIGEST_KEY_ID,
    ENV_ENFORCE,
    ENV_LEDGER_MAX_ENTRIES,
    ENV_MIN_VALUE_LENGTH,
    configure_settings,
    get_settings,
    reset_settings,
)

KEY = bytes(range(100, 132)).hex()  # 64 hex digits = 32 bytes, all distinct


def test_defaults_use_an_ephemeral_random_key():
    a = configure_settings(environ={})
    b = configure_settings(environ={})
    reset_settings()
    assert a.key_id.startswith("ephemeral-") and a.ephemeral_key
    assert a.digest_key != b.digest_key and len(a.digest_key) == 32
    assert a.enforce is True and a.min_value_length == 4 and a.ledger_max_entries == 50_000
    assert KEY not in repr(a) and repr(a.digest_key) not in repr(a)


def test_environment_then_argument_precedence():
    env = {ENV_DIGEST_KEY: KEY, ENV_ENFORCE: "false", ENV_MIN_VALUE_LENGTH: "6", ENV_LEDGER_MAX_ENTRIES: "99"}
    from_env = configure_settings(environ=env)
    assert from_env.digest_key == bytes.fromhex(KEY)
    assert from_env.key_id.startswith("k-") and not from_env.ephemeral_key
    assert (from_env.enforce, from_env.min_value_length, from_env.ledger_max_entries) == (False, 6, 99)
    overridden = configure_settings(
        environ=env,
        enforce=True,
        min_value_length=3,
        ledger_max_entries=7,
        digest_key=bytes(range(200, 232)),
        key_id="prod-2026",
    )
    assert (overridden.enforce, overridden.min_value_length, overridden.ledger_max_entries) == (True, 3, 7)
    assert overridden.key_id == "prod-2026" and overridden.digest_key == bytes(range(200, 232))
    assert configure_settings(environ={**env, ENV_DIGEST_KEY_ID: "ops-key"}).key_id == "ops-key"
    assert get_settings().key_id == "ops-key"
    reset_settings()


@pytest.mark.parametrize(
    ("env", "where"),
    [
        ({ENV_DIGEST_KEY: "short"}, ENV_DIGEST_KEY),
        ({ENV_ENFORCE: "maybe"}, ENV_ENFORCE),
        ({ENV_MIN_VALUE_LENGTH: "four"}, ENV_MIN_VALUE_LENGTH),
        ({ENV_MIN_VALUE_LENGTH: "-1"}, ENV_MIN_VALUE_LENGTH),
        ({ENV_LEDGER_MAX_ENTRIES: "0"}, ENV_LEDGER_MAX_ENTRIES),
    ],
)
def test_bad_environment_values_are_named(env, where):
    with pytest.raises(op.ConfigurationError, match=where) as error:
        configure_settings(environ=env)
    assert "short" not in str(error.value) or where != ENV_DIGEST_KEY


def test_same_key_gives_same_digests_across_processes_worth_of_settings():
    from otel_provenance.instrument.evidence.classify import classify_arguments

    one = configure_settings(digest_key=KEY, environ={})
    two = configure_settings(digest_key=KEY, environ={})
    reset_settings()
    d1 = classify_arguments("t", {"x": "value"}, None, settings=one).arguments[0].digest
    d2 = classify_arguments("t", {"x": "value"}, None, settings=two).arguments[0].digest
    assert d1 == d2 and one.key_id == two.key_id
