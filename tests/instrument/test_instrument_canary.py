"""Canary: random secret-looking argument and result values never reach the exported bytes.

Values travel through arguments, results, yielded items, exception messages (body errors and blocked
calls) and nested structures; the check is on the real OTLP JSON and protobuf encodings. A control
proves the canaries are findable in bytes when they are put on a span.
"""

from __future__ import annotations

import asyncio
import logging
import secrets

import pytest

import otel_provenance as op
from canary import assert_absent, canary, exported_bytes
from instrument_helpers import Traced
from otel_provenance import semconv as sc


def test_canaries_absent_from_otlp_json_and_protobuf(caplog):
    caplog.set_level(logging.DEBUG)
    t = Traced()
    values = {
        name: canary() for name in ("input", "result", "nested", "arg", "err", "gen", "blocked", "short")
    }
    values["pin"] = str(secrets.randbelow(900000) + 100000)

    @op.tool(side_effect="read", tracer_provider=t.provider)
    def fetch(account: str) -> dict:
        return {"token": values["result"], "deep": [{"k": {"v": values["nested"]}}]}

    @op.tool(side_effect="write", tracer_provider=t.provider)
    def pay(token: str, memo: str, pin: str) -> None:
        return None

    @op.tool(side_effect="read", tracer_provider=t.provider)
    def explode(secret: str) -> None:
        raise RuntimeError(f"failed for {secret} / {values['err']}")

    @op.tool(side_effect="read", tracer_provider=t.provider)
    def stream(seed: str):
        yield {"item": values["gen"]}
        raise KeyError(values["gen"])

    @op.tool(side_effect="read", tracer_provider=t.provider)
    async def aio(value: str) -> str:
        return value

    with op.run(inputs={"account": values["input"], "pin": values["pin"]}):
        fetch(values["input"])
        pay(token=values["result"], memo=values["nested"], pin=values["pin"])
        with pytest.raises(op.ProvenanceError) as blocked:
            pay(token=values["blocked"], memo=values["arg"], pin=values["pin"])
        with pytest.raises(RuntimeError):
            explode(values["arg"])
        with pytest.raises(KeyError):
            list(stream(values["gen"]))
        asyncio.run(aio(values["short"]))

    spans = t.spans
    assert len(spans) == 6
    blobs = exported_bytes(spans)
    secret_values = list(values.values())
    assert_absent(secret_values, blobs)
    assert_absent(secret_values, [str(blocked.value).encode(), caplog.text.encode()])
    for span in spans:
        assert not any(value in (span.status.description or "") for value in secret_values)
        for event in span.events:
            if event.name == sc.SECURITY_FINDING_EVENT:  # a blocked call's reason: rule and argument names
                assert set(event.attributes) == {
                    sc.SECURITY_RISK_CATEGORY,
                    sc.SECURITY_RISK_SEVERITY,
                    sc.SECURITY_POLICY_ID,
                    sc.SECURITY_RISK_METADATA,
                }
            else:
                assert set(event.attributes) == {"exception.type"}

    # control: the same encoders do carry a value when it is put on a span
    control = Traced()
    with control.provider.get_tracer("control").start_as_current_span("control") as span:
        span.set_attribute("x", values["arg"])
    with pytest.raises(AssertionError):
        assert_absent([values["arg"]], exported_bytes(control.spans))


def test_digest_attributes_are_not_plain_hashes_of_the_value():
    import hashlib

    t = Traced()
    pin = "031337"

    @op.tool(tracer_provider=t.provider)
    def check(pin: str) -> None:
        return None

    check(pin)
    digest = t.span("check").attributes["agent.arg.pin.digest"]
    blob = b"".join(exported_bytes(t.spans))
    for plain in (hashlib.sha256(pin.encode()), hashlib.sha1(pin.encode()), hashlib.md5(pin.encode())):
        assert plain.hexdigest()[:16].encode() not in blob
    assert digest not in hashlib.sha256(pin.encode()).hexdigest()
