"""What SigNoz's error and warning bodies become in our messages, and when a text echoes the API key."""

from __future__ import annotations

import base64
import json
import logging
from urllib.parse import quote

import pytest

from otel_provenance.offline.readers.signoz_http import echoes_secret, error_text, warning_text
from otel_provenance.offline.readers.signoz_query import FieldKey, SigNozClient
from signoz_double import SigNozDouble, export_spans, window_around_now


def _error(error: object) -> bytes:
    return json.dumps({"status": "error", "error": error}).encode()


def test_error_text_is_the_message_then_every_nonempty_detail() -> None:
    body = _error(
        {
            "type": "invalid-input",
            "message": "Found 2 errors while parsing the search expression.",
            "errors": [
                {"message": "key `a` not found"},
                {},
                {"message": ""},
                "loose",
                {"message": "key `b`"},
            ],
        }
    )
    assert (
        error_text(body) == "Found 2 errors while parsing the search expression.: key `a` not found; key `b`"
    )


def test_error_text_without_details_is_the_message_alone() -> None:
    assert error_text(_error({"message": "unauthenticated"})) == "unauthenticated"
    assert error_text(_error({"message": "forbidden", "errors": {"message": "not a list"}})) == "forbidden"
    assert error_text(_error({"errors": [{"message": "only a detail"}]})) == ": only a detail"


@pytest.mark.parametrize(
    "body",
    [b"<html>502 Bad Gateway</html>", b"[1, 2]", b'"error"', _error("a plain string"), _error(None), b"{}"],
    ids=["not-json", "a-list", "a-string", "error-is-a-string", "error-is-null", "no-error"],
)
def test_error_text_of_a_body_that_is_not_signoz_shaped_is_empty(body: bytes) -> None:
    assert error_text(body) == ""


def test_error_and_warning_texts_are_cut_at_800_characters() -> None:
    long = "x" * 750
    details = [{"message": "y" * 100}]
    assert error_text(_error({"message": long, "errors": details})) == (long + ": " + "y" * 100)[:800]
    assert len(error_text(_error({"message": "z" * 900}))) == 800
    assert warning_text({"message": long, "warnings": details}) == (long + ": " + "y" * 100)[:800]
    assert warning_text("w" * 900) == "w" * 500


def test_error_text_shows_signoz_suggestions() -> None:
    """v0.131+ (pkg/errors/http.go): each detail has its suggestions, and so has the error."""
    body = _error(
        {
            "type": "invalid-input",
            "code": "invalid_input",
            "message": 'unknown field "limt" in query spec',
            "errors": [
                {"message": "Valid fields are: limit, offset", "suggestions": []},
                {"message": "key `a` not found", "suggestions": ["did you mean: `ab`"]},
            ],
            "suggestions": ["did you mean: `limit`", "valid fields are `limit`, `offset`", 7, ""],
        }
    )
    assert error_text(body) == (
        'unknown field "limt" in query spec: Valid fields are: limit, offset; key `a` not found '
        "(did you mean: `ab`) (did you mean: `limit`; valid fields are `limit`, `offset`)"
    )
    empty = _error({"message": "forbidden", "errors": [], "suggestions": []})  # v0.131+: always there
    assert error_text(empty) == "forbidden"


def test_warning_text_is_the_summary_then_each_warning() -> None:
    warning = {
        "message": "Encountered warnings",
        "url": "https://signoz.io/docs/userguide/search-troubleshooting/",
        "warnings": [{"message": "key `agent.nope` not found"}, {"message": "key `other` not found"}],
    }
    assert warning_text(warning) == "Encountered warnings: key `agent.nope` not found; key `other` not found"
    assert warning_text({"message": "Encountered warnings"}) == "Encountered warnings"
    assert warning_text({"warnings": [{"message": "w"}]}) == ": w"
    assert warning_text(["not", "a", "dict"]) == "['not', 'a', 'dict']"


def test_a_signoz_warning_on_a_raw_query_is_logged_with_its_details(caplog: pytest.LogCaptureFixture) -> None:
    """From v0.134 SigNoz answers a filter on an uncatalogued key with rows and a warning, not a 400."""
    with SigNozDouble(version="v0.134.0") as d:
        export_spans(d, {"service.name": "a", "service.version": "v2"}, lambda t: t.start_span("x").end())
        start, end = window_around_now()
        with SigNozClient(d.url, api_key=d.api_key) as client, caplog.at_level(logging.WARNING):
            rows = client.query_raw(
                start_ms=start,
                end_ms=end,
                expression="attribute.agent.nope:string = 'y' OR resource.service.version:string = 'v2'",
                select=[FieldKey("name", "span", "string")],
                order=[FieldKey("timestamp", "span", "number")],
                limit=10,
                offset=0,
            )
    assert [row["name"] for row in rows] == ["x"]
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warned == [
        "SigNoz warned: Encountered warnings: key `agent.nope` not found in metadata; querying the "
        "underlying data directly. If this is unexpected, check the key name for typos."
    ]


def test_a_signoz_warning_that_echoes_the_key_is_withheld(caplog: pytest.LogCaptureFixture) -> None:
    with SigNozDouble(version="v0.134.0", api_key="sk-live-0123456789abcdef") as d:
        export_spans(d, {"service.name": "a", "service.version": "v2"}, lambda t: t.start_span("x").end())
        start, end = window_around_now()
        with SigNozClient(d.url, api_key=d.api_key) as client, caplog.at_level(logging.WARNING):
            client.query_raw(
                start_ms=start,
                end_ms=end,
                expression=f"attribute.{d.api_key}:string EXISTS OR resource.service.version:string = 'v2'",
                select=[FieldKey("name", "span", "string")],
                order=[FieldKey("timestamp", "span", "number")],
                limit=10,
                offset=0,
            )
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warned == ["SigNoz warned: (server message withheld: it echoed the credential)"]


# --- echoes_secret -------------------------------------------------------------------------------------

KEY = "sk?>~live-key"  # its standard base64 has '/', its URL-safe base64 '_', both padded


@pytest.mark.parametrize(
    "text",
    [
        f"bad key {KEY}",
        f"bad key {KEY.upper()}",
        "bad key " + base64.b64encode(KEY.encode()).decode(),
        "bad key " + base64.b64encode(KEY.encode()).decode().rstrip("="),
        "bad key " + base64.urlsafe_b64encode(KEY.encode()).decode().rstrip("="),
        "bad key " + KEY.encode().hex(),
        "bad key " + KEY.encode().hex().upper(),
        "bad key sk_live_key",
        "bad key SKLIVEKEY",
    ],
    ids=[
        "as-is",
        "upper",
        "base64",
        "base64-unpadded",
        "urlsafe-base64",
        "hex",
        "HEX",
        "separators",
        "squashed",
    ],
)
def test_an_echo_of_a_short_key_is_caught(text: str) -> None:
    assert echoes_secret(text, KEY)


def test_a_short_key_counts_as_echoed_only_whole() -> None:
    """Below 16 letters and digits a fragment is no evidence: only the whole (squashed) key counts."""
    key = "abcdefghij-klmno"  # 15 letters
    assert echoes_secret("…abcdefghijklmno…", key)
    assert not echoes_secret("…abcdefghijklmn…", key)  # all but the last
    assert not echoes_secret("…bcdefghijklmno…", key)  # all but the first
    assert not echoes_secret("…abcdefghijkl…", key)  # twelve: a fragment of a long key, not of this one


def test_twelve_characters_of_a_long_key_anywhere_are_an_echo() -> None:
    key = "0123456789abcdef"  # exactly 16
    assert echoes_secret("prefix 0123456789ab suffix", key)  # the first twelve
    assert echoes_secret("prefix 456789abcdef suffix", key)  # the last twelve
    assert not echoes_secret("prefix 0123456789a suffix", key)  # eleven
    assert not echoes_secret("prefix 56789abcdef suffix", key)  # eleven, at the end


def test_a_twice_percent_encoded_echo_is_caught() -> None:
    """Once decoded the separators are still ``%2F``, whose squashed ``2f`` breaks every 12-letter part."""
    key = "abcdefgh/ijklmnop/qrstuvwx"
    once = quote(key, safe="")
    assert echoes_secret(quote(once, safe=""), key)
    assert echoes_secret(once, key)


def test_no_key_or_no_text_is_never_an_echo() -> None:
    assert not echoes_secret("anything", "")
    assert not echoes_secret("", "sk-live-0123456789abcdef")
    assert not echoes_secret("hello world", "--//--")  # a key without letters or digits has no parts
    assert echoes_secret("bad --//-- here", "--//--")  # …but still shows as itself
    assert not echoes_secret(
        "Found 1 errors while parsing the search expression.", "sk-live-0123456789abcdef"
    )


def test_a_key_of_letters_outside_a_to_z_is_still_caught_as_itself_in_any_case() -> None:
    """Such a key has no a–z/0–9 parts to look for; only the whole key, case-folded, shows it."""
    assert echoes_secret("bad key ÄÖ-Ü here", "äö-ü")
    assert echoes_secret("bad key äö-ü here", "ÄÖ-Ü")
    assert not echoes_secret("bad key äö here", "äö-ü")
