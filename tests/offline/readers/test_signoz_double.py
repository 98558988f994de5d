"""The double behaves like SigNoz where the reader depends on it (so a reader bug shows up as a 400)."""

from __future__ import annotations

import copy
import json

import httpx
import pytest

from signoz_double import (
    SERVICE_ACCOUNT,
    SigNozDouble,
    export_spans,
    round_like_signoz,
    suggestions_for,
    window_around_now,
)


def _query(expression: str = "", *, limit: int = 100, offset: int = 0, select=None, order=None) -> dict:
    start, end = window_around_now()
    spec = {
        "name": "A",
        "signal": "traces",
        "disabled": False,
        "filter": {"expression": expression},
        "selectFields": select
        if select is not None
        else [{"name": "name", "fieldContext": "span", "fieldDataType": "string", "signal": "traces"}],
        "order": order
        if order is not None
        else [
            {
                "key": {"name": "timestamp", "fieldContext": "span", "fieldDataType": "number"},
                "direction": "asc",
            }
        ],
        "limit": limit,
        "offset": offset,
    }
    return {
        "schemaVersion": "v1",
        "start": start,
        "end": end,
        "requestType": "raw",
        "noCache": True,
        "variables": {},
        "formatOptions": {"formatTableResultForUI": False, "fillGaps": False},
        "compositeQuery": {"queries": [{"type": "builder_query", "spec": spec}]},
    }


def _post(double: SigNozDouble, body: dict, headers: dict | None = None) -> httpx.Response:
    headers = headers if headers is not None else {"SIGNOZ-API-KEY": double.api_key}
    return httpx.post(double.url + "/api/v5/query_range", json=body, headers=headers, timeout=10)


def _rows(response: httpx.Response):
    assert response.status_code == 200, response.text
    return response.json()["data"]["data"]["results"][0]["rows"]


@pytest.fixture
def double():
    with SigNozDouble(version="v0.129.0") as d:
        yield d


def test_health_and_version(double: SigNozDouble) -> None:
    assert httpx.get(double.url + "/api/v1/health").json() == {"status": "ok"}
    assert httpx.get(double.url + "/api/v1/version").json()["version"] == "v0.129.0"


@pytest.mark.parametrize(
    "path",
    [
        ("extra",),
        ("compositeQuery", "orderBy"),
        ("compositeQuery", "queries", 0, "isColumn"),
        ("compositeQuery", "queries", 0, "spec", "orderBy"),
        ("compositeQuery", "queries", 0, "spec", "filter", "op"),
        ("compositeQuery", "queries", 0, "spec", "selectFields", 0, "type"),
        ("compositeQuery", "queries", 0, "spec", "order", 0, "columnName"),
        ("formatOptions", "x"),
    ],
)
def test_unknown_field_anywhere_is_400(double: SigNozDouble, path: tuple) -> None:
    body = copy.deepcopy(_query())
    node = body
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = True
    response = _post(double, body)
    assert response.status_code == 400 and path[-1] in response.json()["error"]["message"]


def test_select_field_without_context_or_type_is_rejected(double: SigNozDouble) -> None:
    response = _post(double, _query(select=[{"name": "agent.retry.number"}]))
    assert response.status_code == 400 and "fieldContext and fieldDataType" in response.text


def test_auth_takes_the_api_key_header_only(double: SigNozDouble) -> None:
    """pkg/identn: an API key is read from SIGNOZ-API-KEY; Authorization goes to the session-token
    resolver (tried first), where an API key is no token — even beside a valid SIGNOZ-API-KEY."""
    unauthenticated = {
        "status": "error",
        "error": {"type": "unauthenticated", "code": "unauthenticated", "message": "unauthenticated"},
    }
    assert _post(double, _query(), headers={}).json() == unauthenticated
    assert _post(double, _query(), headers={"SIGNOZ-API-KEY": "nope"}).status_code == 401
    assert _post(double, _query(), headers={"Authorization": f"Bearer {double.api_key}"}).status_code == 401
    both = {"SIGNOZ-API-KEY": double.api_key, "Authorization": f"Bearer {double.api_key}"}
    assert _post(double, _query(), headers=both).status_code == 401
    assert _post(double, _query(), headers={"SIGNOZ-API-KEY": double.api_key}).status_code == 200
    assert httpx.get(double.url + "/api/v1/fields/keys").status_code == 401


def test_limit_cap_rows_null_and_rounding(double: SigNozDouble) -> None:
    refused = _post(double, _query(limit=10_001))
    assert refused.status_code == 400 and refused.json()["error"] == {
        "type": "invalid-input",
        "code": "invalid_input",
        "message": "limit exceeds maximum allowed value of 10000",
        "errors": [{"message": "Provided limit: 10001"}],
    }
    assert _rows(_post(double, _query(limit=10_000))) is None  # nothing stored yet: null, not []
    export_spans(
        double,
        {"service.name": "s", "service.version": "v1"},
        lambda t: t.start_span(
            "x", attributes={"f": 1234.56789, "g": 0.000123456, "i": 3, "w": 2.0, "h": 1.2345, "q": 0.1235}
        ).end(),
    )
    select = [{"name": k, "fieldContext": "attribute", "fieldDataType": "number"} for k in "fgiwhq"]
    data = _rows(_post(double, _query(select=select)))[0]["data"]
    assert data["f"] == 1234.568 and data["g"] == 0.000123 and data["i"] == 3
    assert (data["h"], data["q"]) == (1.235, 0.124)  # Go's math.Round: half away from zero
    assert isinstance(data["w"], int)  # whole numbers come back as JSON integers
    assert set(data) >= {"trace_id", "span_id", "timestamp"}


@pytest.mark.parametrize(
    ("version", "absent"), [("v0.129.0", ("", 0, False)), ("v0.134.0", (None, None, None))]
)
def test_absent_key_answer_depends_on_version(version: str, absent: tuple) -> None:
    with SigNozDouble(version=version) as d:
        export_spans(
            d,
            {"service.name": "s", "service.version": "v1", "deployment": "x"},
            lambda t: (
                t.start_span("has", attributes={"s": "v", "n": 1, "b": True}).end(),
                t.start_span("lacks").end(),
            ),
        )
        select = [
            {"name": n, "fieldContext": "attribute", "fieldDataType": ty}
            for n, ty in (("s", "string"), ("n", "number"), ("b", "bool"))
        ]
        rows = {
            r["data"]["name"]: r["data"]
            for r in _rows(
                _post(
                    d,
                    _query(
                        select=[{"name": "name", "fieldContext": "span", "fieldDataType": "string"}, *select]
                    ),
                )
            )
        }
        assert (rows["lacks"]["s"], rows["lacks"]["n"], rows["lacks"]["b"]) == absent
        assert (rows["has"]["s"], rows["has"]["n"], rows["has"]["b"]) == ("v", 1, True)
        exists = _rows(_post(d, _query("attribute.b:bool EXISTS")))
        assert [r["data"]["name"] for r in exists] == ["has"]


def test_filter_on_uncatalogued_key(double: SigNozDouble) -> None:
    """v0.129: one summary message, the key in ``errors`` (where_clause_visitor.go); v0.134+: a warning on
    the 200 (key_resolution.go NewKeyNotFoundWarning), and the data is still filtered by the key."""
    response = _post(double, _query("resource.service.version = 'v2'"))
    assert response.status_code == 400 and response.json() == {
        "status": "error",
        "error": {
            "type": "invalid-input",
            "code": "invalid_input",
            "message": "Found 1 errors while parsing the search expression.",
            "url": "https://signoz.io/docs/userguide/search-troubleshooting/#key-fieldname-not-found",
            "errors": [{"message": "key `service.version` not found"}],
        },
    }
    for version in ("v0.134.0", "v0.138.0"):
        with SigNozDouble(version=version) as new:
            export_spans(new, {"service.name": "s"}, lambda t: t.start_span("no release").end())
            response = _post(new, _query("resource.service.version = 'v2'"))
            assert response.status_code == 200 and response.json()["data"]["warning"] == {
                "message": "Encountered warnings",
                "url": "https://signoz.io/docs/userguide/search-troubleshooting/"
                "#q-im-getting-key-fieldname-not-found--why-cant-it-find-my-field",
                "warnings": [
                    {
                        "message": "key `service.version` not found in metadata; querying the underlying "
                        "data directly. If this is unexpected, check the key name for typos."
                    }
                ],
            }
            assert _rows(response) is None  # filtered by a key no span has: nothing matches


@pytest.mark.parametrize("version", ["v0.129.0", "v0.130.0", "v0.131.0", "v0.138.0"])
def test_the_error_envelope_by_version(version: str) -> None:
    """pkg/errors/http.go: before v0.131 empty ``errors``/``suggestions`` are left out; from v0.131 both
    are always there, each ``errors`` entry with its own ``suggestions``."""
    with SigNozDouble(version=version) as d:
        body = _query()
        body["compositeQuery"]["queries"][0]["spec"]["limt"] = 5
        error = _post(d, body).json()["error"]
        syntax = _post(d, _query("name = = 'x'")).json()["error"]
    assert error["message"] == 'unknown field "limt" in query spec'
    assert error["suggestions"][0] == "did you mean: `limit`"
    assert error["suggestions"][1].startswith("valid fields are `aggregations`, `cursor`")
    if version >= "v0.131.0":
        assert error["errors"] == [{"message": error["errors"][0]["message"], "suggestions": []}]
        assert set(syntax) == {"type", "code", "message", "url", "errors", "suggestions"}
        assert syntax["suggestions"] == []
    else:
        assert error["errors"] == [{"message": error["errors"][0]["message"]}]
        assert "suggestions" not in syntax


def test_suggestions_follow_signoz_levenshtein_rule() -> None:
    """pkg/errors/suggestions.go: a correction only at 75 % likeness or more, then the valid list."""
    assert suggestions_for("limt", "fields", ["limit", "offset"]) == [
        "did you mean: `limit`",
        "valid fields are `limit`, `offset`",
    ]
    assert suggestions_for("zzz", "fields", ["limit"]) == ["valid fields are `limit`"]
    many = [f"f{i:02d}" for i in range(25)]
    assert suggestions_for("q", "keys", many)[-1].endswith("`f19` (+5 more)")


def test_fine_grained_authorization_answers_403_from_v0_134() -> None:
    """authz.go CheckResources: the key's service account lacks traces:read."""
    with SigNozDouble(version="v0.138.0") as d:
        d.readable = {"logs"}
        response = _post(d, _query())
        assert response.status_code == 403 and response.json()["error"] == {
            "type": "forbidden",
            "code": "authz_forbidden",
            "message": f"{SERVICE_ACCOUNT} is not authorized to perform traces:read",
            "errors": [],
            "suggestions": [],
        }
    with SigNozDouble(version="v0.133.0") as old:  # before CheckResources: the role gate only
        old.readable = {"logs"}
        assert _post(old, _query()).status_code == 200


def test_filter_subset(double: SigNozDouble) -> None:
    export_spans(
        double,
        {"service.name": "s", "service.version": "v1"},
        lambda t: [t.start_span(n, attributes={"k": n, "q": "it's"}).end() for n in ("a", "b", "c")],
    )
    names = lambda expr: sorted(r["data"]["name"] for r in _rows(_post(double, _query(expr))) or [])  # noqa: E731
    assert names("k IN ('a', 'c')") == ["a", "c"]
    assert names("attribute.k:string != 'a' AND resource.service.name = 's'") == ["b", "c"]
    assert names("k NOT IN ('a') AND NOT k = 'b'") == ["c"]
    assert names("(k = 'a' OR k = 'b') AND q = 'it\\'s'") == ["a", "b"]
    assert names("k NOT EXISTS") == []
    refused = _post(double, _query("k = = 'a'"))
    assert refused.status_code == 400
    error = refused.json()["error"]
    assert error["message"] == "Found 1 syntax errors while parsing the search expression."
    assert error["errors"][0] == {} and "line 1:4" in error["errors"][1]["message"]


@pytest.mark.parametrize("key", ["attribute.http.2xx:number", "attribute.a b:string", "attribute.é:string"])
def test_a_key_the_grammar_cannot_lex_is_a_syntax_error(double: SigNozDouble, key: str) -> None:
    """grammar/FilterQuery.g4: a KEY segment starts with a letter (or $_@{#); ``.2`` may follow only as
    digits, so ``http.2xx`` lexes as FREETEXT; a space ends the key. Keys cannot be quoted."""
    response = _post(double, _query(f"{key} EXISTS"))
    assert response.status_code == 400
    assert "syntax errors" in response.json()["error"]["message"]


def test_millisecond_cursor_skips_spans_sharing_the_last_millisecond_offset_does_not(
    double: SigNozDouble,
) -> None:
    base = (window_around_now()[1] - 120_000) * 1_000_000
    export_spans(
        double,
        {"service.name": "s", "service.version": "v1"},
        lambda t: [t.start_span(f"s{i}", start_time=base + i).end(end_time=base + 10) for i in range(6)],
    )
    first = _post(double, _query(limit=4)).json()["data"]["data"]["results"][0]
    assert len(first["rows"]) == 4 and first["nextCursor"]
    body = _query(limit=4)
    body["compositeQuery"]["queries"][0]["spec"]["cursor"] = first["nextCursor"]
    assert _rows(_post(double, body)) is None  # s4 and s5 share the millisecond: the cursor loses them
    assert len(_rows(_post(double, _query(limit=4, offset=4)))) == 2


def test_otlp_json_ingest_and_field_keys(double: SigNozDouble) -> None:
    payload = {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [
                        {"key": "service.name", "value": {"stringValue": "j"}},
                        {"key": "n", "value": {"intValue": "5"}},
                    ]
                },
                "scopeSpans": [
                    {
                        "scope": {"name": "x"},
                        "spans": [
                            {
                                "traceId": "5b8efff798038103d269b633813fc60c",
                                "spanId": "eee19b7ec3c1b174",
                                "name": "json span",
                                "kind": 2,
                                "startTimeUnixNano": str(window_around_now()[1] * 1_000_000 - 10**9),
                                "endTimeUnixNano": str(window_around_now()[1] * 1_000_000 - 10**8),
                                "attributes": [
                                    {
                                        "key": "m",
                                        "value": {
                                            "kvlistValue": {
                                                "values": [{"key": "a", "value": {"boolValue": True}}]
                                            }
                                        },
                                    },
                                    {
                                        "key": "arr",
                                        "value": {"arrayValue": {"values": [{"stringValue": "x"}]}},
                                    },
                                ],
                            }
                        ],
                    }
                ],
            }
        ]
    }
    response = httpx.post(
        double.otlp_url, content=json.dumps(payload), headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 200
    stored = double.spans[0]
    assert stored.trace_id == "5b8efff798038103d269b633813fc60c" and stored.kind == 2
    assert (
        stored.bools == {"m.a": True} and stored.strings == {"arr": '["x"]'} and stored.resource["n"] == "5"
    )
    keys = httpx.get(
        double.url + "/api/v1/fields/keys",
        params={"signal": "traces"},
        headers={"SIGNOZ-API-KEY": double.api_key},
    ).json()["data"]
    assert keys["keys"]["m.a"] == [
        {"name": "m.a", "signal": "traces", "fieldContext": "attribute", "fieldDataType": "bool"}
    ]
    assert keys["keys"]["n"][0]["fieldContext"] == "resource" and keys["complete"] is True
    assert (
        httpx.post(
            double.otlp_url, content=b"{not json", headers={"Content-Type": "application/json"}
        ).status_code
        == 400
    )


def test_rounding_rule() -> None:
    """resp.go roundToNonZeroDecimals: math.Round (half away from zero) of v·10^k, not decimal rounding."""
    values = (0.0, 1.0, 1.23449, 0.0012345, -0.98765, 12345.6789, 1.2345, 0.1235, -1.2345, 2.5e-7)
    assert [round_like_signoz(v) for v in values] == [
        0,
        1,
        1.234,
        0.00123,
        -0.988,
        12345.679,
        1.235,
        0.124,
        -1.235,
        2.5e-7,
    ]
    assert [round_like_signoz(float(v)) for v in ("inf", "-inf", "nan")] == ["Inf", "-Inf", "NaN"]


def test_non_finite_numbers_are_dropped_at_ingest(double: SigNozDouble) -> None:
    """The collector's attributesData.add skips a NaN/±Inf double (also inside a map); a resource
    double is stored as pdata's AsString, which for NaN is Go's JSON error text."""
    export_spans(
        double,
        {"service.name": "s", "service.version": "v1", "r.nan": float("nan"), "r.half": 0.5},
        lambda t: t.start_span("x", attributes={"n": float("nan"), "i": float("inf"), "ok": 1.5}).end(),
    )
    stored = double.spans[0]
    assert stored.numbers == {"ok": 1.5}
    assert ("n", "attribute", "number") not in double.catalogue
    assert stored.resource["r.nan"] == "json: unsupported value: NaN" and stored.resource["r.half"] == "0.5"


def test_arrays_inside_map_attributes_are_flattened_to_indexed_keys(double: SigNozDouble) -> None:
    """utils/flatten FlattenJSON: map → dotted keys, an array inside a map → key.0, key.1, …; a top-level
    array stays JSON text; NaN inside a map is dropped too."""
    span = {
        "traceId": "5b8efff798038103d269b633813fc60c",
        "spanId": "eee19b7ec3c1b174",
        "name": "maps",
        "startTimeUnixNano": str(window_around_now()[1] * 1_000_000 - 10**9),
        "endTimeUnixNano": str(window_around_now()[1] * 1_000_000 - 10**8),
        "attributes": [
            {
                "key": "m",
                "value": {
                    "kvlistValue": {
                        "values": [
                            {
                                "key": "arr",
                                "value": {
                                    "arrayValue": {
                                        "values": [
                                            {"stringValue": "a"},
                                            {"intValue": "7"},
                                            {
                                                "kvlistValue": {
                                                    "values": [{"key": "z", "value": {"boolValue": True}}]
                                                }
                                            },
                                        ]
                                    }
                                },
                            },
                            {"key": "bad", "value": {"doubleValue": "NaN"}},
                        ]
                    }
                },
            },
            {"key": "top", "value": {"arrayValue": {"values": [{"doubleValue": 1.0}, {"stringValue": "b"}]}}},
        ],
    }
    payload = {"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": [span]}]}]}
    response = httpx.post(
        double.otlp_url, content=json.dumps(payload), headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 200
    stored = double.spans[-1]
    assert stored.strings == {"m.arr.0": "a", "top": '[1,"b"]'}
    assert stored.numbers == {"m.arr.1": 7.0} and stored.bools == {"m.arr.2.z": True}


def test_order_entry_without_direction_is_a_400(double: SigNozDouble) -> None:
    """validation.go validateOrderBy: the empty OrderDirection is neither asc nor desc."""
    key = {"name": "timestamp", "fieldContext": "span", "fieldDataType": "number"}
    response = _post(double, _query(order=[{"key": key}]))
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["message"] == "invalid direction for order by clause #1 in query 'A': "
    assert error["errors"] == [{"message": "Valid directions are: asc, desc"}]


def test_materialized_in_a_key_is_an_unknown_field(double: SigNozDouble) -> None:
    """TelemetryFieldKey.Materialized is ``json:"-"``: not part of the API, refused by strict decoding."""
    select = [{"name": "name", "fieldContext": "span", "fieldDataType": "string", "materialized": True}]
    response = _post(double, _query(select=select))
    assert response.status_code == 400 and "materialized" in response.json()["error"]["message"]


def test_default_limit_is_10000_when_ordered_by_timestamp_else_100(double: SigNozDouble) -> None:
    """builder_query.go: the window-list path (first order key timestamp) defaults to 10000 rows; the
    statement builder's LIMIT is 100 otherwise."""
    export_spans(double, {"service.name": "s"}, lambda t: [t.start_span(f"s{i}").end() for i in range(150)])
    ordered, plain = _query(), _query(order=[])
    for body in (ordered, plain):
        del body["compositeQuery"]["queries"][0]["spec"]["limit"]
    assert len(_rows(_post(double, ordered))) == 150
    assert len(_rows(_post(double, plain))) == 100


def test_field_keys_ignore_the_time_window_for_traces(double: SigNozDouble) -> None:
    """metadata.go getTracesKeys: the unix_milli conditions are commented out, so a key seen only long
    before the window is still listed."""
    old = (window_around_now()[0] - 30 * 86_400_000) * 1_000_000
    export_spans(
        double,
        {"service.name": "s"},
        lambda t: t.start_span("old", start_time=old, attributes={"ancient": 1}).end(end_time=old + 10),
    )
    start, end = window_around_now()
    keys = httpx.get(
        double.url + "/api/v1/fields/keys",
        params={"signal": "traces", "startUnixMilli": start, "endUnixMilli": end},
        headers={"SIGNOZ-API-KEY": double.api_key},
    ).json()["data"]
    assert "ancient" in keys["keys"] and keys["complete"] is True
    assert _rows(_post(double, _query())) is None  # the span itself is outside the window
