"""Canary values and the exported bytes they must never appear in (OTLP/JSON and OTLP protobuf)."""

from __future__ import annotations

import base64
import secrets

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans as encode_proto

from interop import otlp_json_spans


def canary() -> str:
    return "sk-" + secrets.token_hex(12)


def exported_bytes(spans) -> list[bytes]:
    as_json = otlp_json_spans(spans)
    as_proto = encode_proto(spans).SerializeToString()
    return [as_json, as_proto]


def assert_absent(values: list[str], blobs: list[bytes]) -> None:
    for value in values:
        needles = {value.encode(), value.encode("utf-16-le"), base64.b64encode(value.encode())}
        for blob in blobs:
            for needle in needles:
                assert needle not in blob, "a canary value leaked into exported bytes"
