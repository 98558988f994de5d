"""The SigNoz client's request pieces: filter clauses, field keys, versions, key catalogue, Retry-After."""

from __future__ import annotations

import logging

import httpx
import pytest

from otel_provenance.errors import QueryError
from otel_provenance.offline.readers.signoz_query import (
    FieldKey,
    SigNozClient,
    _parse_keys,
    _retry_after,
    eq,
    in_,
    parse_version,
)


def test_filter_values_are_quoted_with_quotes_and_backslashes_escaped() -> None:
    assert eq("resource.service.version:string", "v2") == "resource.service.version:string = 'v2'"
    assert eq("k", "it's a \\ path") == "k = 'it\\'s a \\\\ path'"
    assert in_("trace_id", ["a", "b'c"]) == "trace_id IN ('a', 'b\\'c')"
    assert in_("trace_id", ["only"]) == "trace_id IN ('only')"


def test_a_field_key_is_selected_with_its_context_and_type_and_filtered_as_one_token() -> None:
    key = FieldKey("agent.retry.number", "attribute", "number")
    assert key.select() == {
        "name": "agent.retry.number",
        "fieldContext": "attribute",
        "fieldDataType": "number",
        "signal": "traces",
    }
    assert key.filter_key() == "attribute.agent.retry.number:number"
    assert key.filterable()
    assert FieldKey("items[*].x", "attribute", "string").filterable()
    assert not FieldKey("http.2xx", "attribute", "number").filterable()
    assert not FieldKey("a b", "attribute", "string").filterable()


@pytest.mark.parametrize(
    ("text", "version"),
    [
        ("v0.129.0", (0, 129, 0)),
        ("0.134.12", (0, 134, 12)),
        ("v1.2.3-rc.1", (1, 2, 3)),
        ("SigNoz v0.140.1 (ee)", (0, 140, 1)),
        ("unreleased-build", None),
        ("v0.129", None),
        ("", None),
        (None, None),
    ],
)
def test_server_versions_are_read_from_their_first_dotted_triple(text: str | None, version) -> None:
    assert parse_version(text) == version  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("2", 2.0),
        ("0.5", 0.5),
        ("0", 0.0),
        ("-3", 0.0),
        ("Wed, 21 Oct 2015 07:28:00 GMT", None),
        (None, None),
    ],
)
def test_retry_after_is_seconds_never_negative_and_a_date_is_ignored(value: str | None, seconds) -> None:
    headers = httpx.Headers({} if value is None else {"Retry-After": value})
    got = _retry_after(headers)
    assert got == seconds and type(got) is type(seconds)


def _entry(name: object, context: str, data_type: str) -> dict:
    return {"name": name, "signal": "traces", "fieldContext": context, "fieldDataType": data_type}


def test_the_key_catalogue_keeps_attribute_and_resource_keys_typed_and_sorted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    raw = {
        "z": [_entry("z", "tag", "Float64"), _entry("z", "attribute", "int64")],
        "b": [_entry("b", "point", "bool"), _entry("b", "Attribute", "STRING")],
        "service.version": [_entry("service.version", "Resource", "string")],
        "a": [_entry("a", "attribute", "number")],
        "name": [_entry("name", "span", "string"), _entry("name", "attribute", "string")],
        "body": [_entry("body", "log", "string")],
        "odd": [_entry("odd", "attribute", "[]string"), _entry("odd", "attribute", "")],
        "broken": [
            None,
            "text",
            {"fieldContext": "attribute"},
            _entry(7, "attribute", "string"),
            _entry("after_broken", "attribute", "string"),  # the broken entries before it are skipped
        ],
        "empty": None,
    }
    with caplog.at_level(logging.WARNING):
        keys = _parse_keys(raw)
    assert keys == [
        FieldKey("a", "attribute", "number"),
        FieldKey("after_broken", "attribute", "string"),
        FieldKey("b", "attribute", "bool"),
        FieldKey("b", "attribute", "string"),
        FieldKey("name", "attribute", "string"),  # an attribute named like the intrinsic column
        FieldKey("z", "attribute", "number"),
        FieldKey("service.version", "resource", "string"),
    ]
    assert [r.getMessage() for r in caplog.records] == [
        "skipping SigNoz key 'odd' of unsupported type '[]string'",
        "skipping SigNoz key 'odd' of unsupported type ''",
    ]


def test_the_key_catalogue_without_context_or_type_keeps_nothing(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assert _parse_keys({"k": [{"name": "k"}], "s": [{"name": "s", "fieldContext": "attribute"}]}) == []
    assert [r.getMessage() for r in caplog.records] == ["skipping SigNoz key 's' of unsupported type ''"]


@pytest.mark.parametrize(
    ("url", "problem"),
    [("localhost:8080", "SigNoz URL must start with http:// or https://, got 'localhost:8080'")],
)
def test_a_url_without_a_scheme_is_refused(url: str, problem: str) -> None:
    with pytest.raises(QueryError) as info:
        SigNozClient(url, api_key="k")
    assert str(info.value) == problem


@pytest.mark.parametrize(("timeout_s", "deadline_s"), [(0.0, 1.0), (1.0, 0.0), (-1.0, 1.0), (1.0, -0.5)])
def test_a_timeout_or_deadline_that_is_not_positive_is_refused(timeout_s: float, deadline_s: float) -> None:
    with pytest.raises(QueryError) as info:
        SigNozClient("http://127.0.0.1:9", api_key="k", timeout_s=timeout_s, deadline_s=deadline_s)
    assert str(info.value) == (
        f"timeout and deadline must be positive, got {timeout_s:g} s and {deadline_s:g} s"
    )


def test_a_client_shows_its_url_never_its_key_and_accepts_https() -> None:
    with SigNozClient("https://signoz.example/", api_key="sk-live-0123456789abcdef") as client:
        assert repr(client) == "SigNozClient('https://signoz.example')"
        assert client.withhold_echo("all fine") == "all fine"
        assert client.withhold_echo("bad key sk-live-0123456789abcdef") == (
            "(server message withheld: it echoed the credential)"
        )
