"""``otlp_json.raw_links``: the (trace id, agent.run.id) pairs a JSON line mentions, found by scanning
its bytes instead of parsing it — the index that groups spans into runs before any line is converted
(and, on a Dask cluster, the only thing a worker sends back for a partition). A run id belongs to the
nearest ``traceId`` before it; ids that cannot be read give no pair and never stop the scan."""

from __future__ import annotations

import json

from otel_provenance.offline.readers.otlp_json import raw_links

T1 = "5b8efff798038103d269b633813fc60c"
T2 = "0af7651916cd43dd8448eb211c80319c"


def _attr(key: str, value: str, value_first: bool = False) -> dict:
    if value_first:
        return {"value": {"stringValue": value}, "key": key}
    return {"key": key, "value": {"stringValue": value}}


def _span(trace_id: str, *attributes: dict) -> dict:
    return {"traceId": trace_id, "spanId": "eee19b7ec3c1b174", "name": "s", "attributes": list(attributes)}


def _line(*spans: dict, resource: tuple[dict, ...] = ()) -> bytes:
    scope_spans = [{"spans": list(spans)}]
    request = {"resourceSpans": [{"resource": {"attributes": list(resource)}, "scopeSpans": scope_spans}]}
    return json.dumps(request).encode()


def test_a_run_id_is_paired_with_its_spans_trace_in_either_member_order() -> None:
    line = _line(
        _span(T1, _attr("tool", "x"), _attr("agent.run.id", "r1")),
        _span(T2, _attr("agent.run.id", "r2", value_first=True)),
    )
    assert raw_links(line) == {(T1, None), (T2, None), (T1, "r1"), (T2, "r2")}


def test_a_run_id_before_any_trace_id_is_not_paired_and_the_scan_goes_on() -> None:
    """A run id in the resource comes before every span's traceId: no span to pair it with (the
    parsed spans decide). The span's own run id after it is still found."""
    line = _line(_span(T1, _attr("agent.run.id", "r1")), resource=(_attr("agent.run.id", "r0"),))
    assert raw_links(line) == {(T1, None), (T1, "r1")}


def test_trace_ids_that_are_not_ids_give_no_pair() -> None:
    for bad in ("zz", "caf\u00e9" * 8, ""):
        line = _line(_span(bad, _attr("agent.run.id", "r1")))
        assert raw_links(line) == set(), bad
    line = _line(_span("not-hex", _attr("agent.run.id", "r1")), _span(T2, _attr("agent.run.id", "r2")))
    assert raw_links(line) == {(T2, None), (T2, "r2")}


def test_a_non_ascii_byte_in_a_trace_id_gives_no_pair_and_no_error() -> None:
    line = _line(_span(T1, _attr("agent.run.id", "r1"))).replace(T1.encode(), b"\xff" * 32)
    assert raw_links(line) == set()
    line = _line(_span(T1)).replace(T1.encode(), "\u00e9".encode() * 16)  # no run id: the short path
    assert raw_links(line) == set()


def test_escaped_run_ids_are_read_as_json_reads_them() -> None:
    line = _line(
        _span(T1, _attr("agent.run.id", 'run "7" caf\u00e9')),
        _span(T2, _attr("agent.run.id", "r\\2", value_first=True)),
    )
    assert b"\\" in line  # json.dumps escaped the quotes, the backslash and the accent
    assert raw_links(line) == {(T1, None), (T2, None), (T1, 'run "7" caf\u00e9'), (T2, "r\\2")}


def test_a_run_id_that_cannot_be_decoded_is_left_out_and_the_rest_is_kept() -> None:
    good = _attr("agent.run.id", "r2")
    line = _line(_span(T1, _attr("agent.run.id", "PLACEHOLDER")), _span(T2, good))
    for raw in (rb"r\q", b"r\xff"):  # an invalid escape; a byte that is not UTF-8
        assert raw_links(line.replace(b"PLACEHOLDER", raw)) == {(T1, None), (T2, None), (T2, "r2")}
