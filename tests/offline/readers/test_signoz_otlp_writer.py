"""The OTLP JSON Lines writer used by `fetch`: every line is an ExportTraceServiceRequest protobuf accepts,
and every value comes back as written."""

from __future__ import annotations

import base64
import io
import json
import math
from decimal import Decimal

from google.protobuf import json_format
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from otel_provenance.offline.model import Attributes, Event, Link, Span, SpanKind, Status, StatusCode
from otel_provenance.offline.otlp_json_writer import encode_value, write_jsonl
from otel_provenance.otlp_encoding import message_to_dict

_scalar = st.one_of(
    st.text(max_size=8),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.binary(max_size=8),
)
_value = st.recursive(
    _scalar,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(st.text(min_size=1, max_size=5), inner, max_size=3).map(Attributes),
    ),
    max_leaves=8,
)
_attrs = st.dictionaries(st.text(min_size=1, max_size=10), _value, max_size=5).map(Attributes)
_hex = lambda n: st.binary(min_size=n, max_size=n).filter(any).map(bytes.hex)  # noqa: E731


@st.composite
def _spans(draw) -> list[Span]:
    trace_id = draw(_hex(16))
    out = []
    span_ids = draw(st.lists(_hex(8), min_size=1, max_size=4, unique=True))
    for span_id in span_ids:
        start = draw(st.integers(0, 2**63 - 2))
        out.append(
            Span(
                trace_id=draw(st.sampled_from([trace_id, draw(_hex(16))])),
                span_id=span_id,
                parent_span_id=draw(st.none() | _hex(8)),
                name=draw(st.text(max_size=10)),
                kind=draw(st.sampled_from(SpanKind)),
                start_ns=start,
                end_ns=draw(st.integers(start, 2**63 - 1)),
                status=Status(draw(st.sampled_from(StatusCode)), draw(st.text(max_size=5))),
                attributes=draw(_attrs),
                resource=draw(_attrs),
                events=tuple(
                    Event(n, t, a)
                    for n, t, a in draw(
                        st.lists(
                            st.tuples(st.text(max_size=5), st.integers(0, 2**63 - 1), _attrs), max_size=2
                        )
                    )
                ),
                links=tuple(Link(t, s) for t, s in draw(st.lists(st.tuples(_hex(16), _hex(8)), max_size=2))),
                scope_name=draw(st.sampled_from(["", "a", "b"])),
                scope_version=draw(st.sampled_from(["", "1"])),
            )
        )
    return out


def _plain(value: AnyValue):
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return tuple(_plain(v) for v in value.array_value.values)
    if kind == "kvlist_value":
        return Attributes({kv.key: _plain(kv.value) for kv in value.kvlist_value.values})
    return getattr(value, kind)


def _attributes(kvs) -> Attributes:
    return Attributes({kv.key: _plain(kv.value) for kv in kvs})


def _same(a, b) -> bool:
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, Attributes):
        return isinstance(b, Attributes) and set(a) == set(b) and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _hex_to_b64(obj):
    if isinstance(obj, dict):
        return {
            k: base64.b64encode(bytes.fromhex(v)).decode()
            if k in ("traceId", "spanId", "parentSpanId")
            else _hex_to_b64(v)
            for k, v in obj.items()
        }
    return [_hex_to_b64(v) for v in obj] if isinstance(obj, list) else obj


@settings(suppress_health_check=[HealthCheck.too_slow])  # 2 shared cores: generation speed varies
@given(_spans())
def test_every_line_parses_as_otlp_and_keeps_every_value(spans: list[Span]) -> None:
    out = io.StringIO()
    assert write_jsonl(spans, out) == len(spans)
    lines = out.getvalue().splitlines()
    assert len(lines) == len({s.trace_id for s in spans})
    decoded = {}
    for line in lines:
        request = json_format.Parse(json.dumps(_hex_to_b64(json.loads(line))), ExportTraceServiceRequest())
        for rs in request.resource_spans:
            for ss in rs.scope_spans:
                for span in ss.spans:
                    decoded[(span.trace_id.hex(), span.span_id.hex())] = (span, rs.resource, ss.scope)
    for span in spans:
        got, resource, scope = decoded[(span.trace_id, span.span_id)]
        assert got.name == span.name and got.kind == span.kind
        assert got.parent_span_id.hex() == (span.parent_span_id or "")
        assert (got.start_time_unix_nano, got.end_time_unix_nano) == (span.start_ns, span.end_ns)
        assert (got.status.code, got.status.message) == (span.status.code, span.status.message)
        assert _same(_attributes(got.attributes), span.attributes)
        assert _same(_attributes(resource.attributes), span.resource)
        assert (scope.name, scope.version) == (span.scope_name, span.scope_version)
        assert [(e.name, e.time_unix_nano) for e in got.events] == [(e.name, e.time_ns) for e in span.events]
        for got_event, event in zip(got.events, span.events, strict=True):
            assert _same(_attributes(got_event.attributes), event.attributes)
        assert [(lk.trace_id.hex(), lk.span_id.hex()) for lk in got.links] == [
            (lk.trace_id, lk.span_id) for lk in span.links
        ]


def _json(value) -> dict:
    """``value`` as the one OTLP/JSON encoder writes it (the writer fills a protobuf ``AnyValue``)."""
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue

    out = AnyValue()
    encode_value(value, out)
    return message_to_dict(out)


def test_value_encodings_match_the_official_exporter() -> None:
    assert _json(7) == {"intValue": "7"}  # 64-bit ints as decimal strings
    assert _json(True) == {"boolValue": True}
    assert _json(1.5) == {"doubleValue": 1.5}
    assert _json(float("inf")) == {"doubleValue": "Infinity"}
    assert _json(Decimal("12.50")) == {"doubleValue": 12.5}
    assert _json(Decimal("1200")) == {"intValue": "1200"}
    assert _json(("a", "b")) == {"arrayValue": {"values": [{"stringValue": "a"}, {"stringValue": "b"}]}}
