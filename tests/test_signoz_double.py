"""The double behaves like SigNoz where the reader depends on it (so a reader bug shows up as a 400)."""

from __future__ import annotations

import copy
import json

import httpx
import pytest

from signoz_double import SigNozDouble, export_spans, round_like_signoz, window_around_now


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


def test_auth(double: SigNozDouble) -> None:
    assert _post(double, _query(), headers={}).status_code == 401
    assert _post(double, _query(), headers={"SIGNOZ-API-KEY": "nope"}).status_code == 401
    assert _post(double, _query(), headers={"Authorization": f"Bearer {double.api_key}"}).status_code == 200
    assert httpx.get(double.url + "/api/v1/fields/keys").status_code == 401


def test_limit_cap_rows_null_and_rounding(double: SigNozDouble) -> None:
    assert _post(double, _query(limit=10_001)).status_code == 400
    assert _rows(_post(double, _query(limit=10_000))) is None  # nothing stored yet: null, not []
    export_spans(
        double,
        {"service.name": "s", "service.version": "v1"},
        lambda t: t.start_span(
            "x", attributes={"f": 1234.56789, "g": 0.000123456, "i": 3, "w": 2.0, "n": float("nan")}
        ).end(),
    )
    select = [{"name": k, "fieldContext": "attribute", "fieldDataType": "number"} for k in "fgiwn"]
    data = _rows(_post(double, _query(select=select)))[0]["data"]
    assert data["f"] == 1234.568 and data["g"] == 0.000123 and data["i"] == 3 and data["n"] == "NaN"
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
    response = _post(double, _query("resource.service.version = 'v2'"))
    assert response.status_code == 400 and "not found" in response.text
    with SigNozDouble(version="v0.134.0") as new:
        response = _post(new, _query("resource.service.version = 'v2'"))
        assert response.status_code == 200 and response.json()["data"]["warning"]


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
    assert _post(double, _query("k = = 'a'")).status_code == 400


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
    assert [round_like_signoz(v) for v in (0.0, 1.0, 1.23449, 0.0012345, -0.98765, 12345.6789)] == [
        0,
        1,
        1.234,
        0.00123,
        -0.988,
        12345.679,
    ]
    assert round_like_signoz(float("inf")) == "+Inf"
