"""Keys chosen by data — a result keyed by email, ``**kwargs`` names from a caller — are values too.

Found by review: ``agent.arg.<n>.source_field`` carried result keys verbatim, and ``**kwargs`` names
became attribute keys, violation strings and the ProvenanceError message.
"""

from __future__ import annotations

import logging

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import otel_provenance as op
from interop import FileSpanExporter


@pytest.fixture
def exported(tmp_path):
    path = tmp_path / "spans.jsonl"
    provider = TracerProvider()
    provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(FileSpanExporter(path))))
    yield provider, path
    provider.shutdown()


def test_data_keys_of_results_and_kwargs_names_never_leave(exported, caplog):
    provider, path = exported
    email = "alice.secret@corp.example"
    kw_name = "carol.ssn=078-05-1120"

    @op.tool(side_effect="read", tracer_provider=provider)
    def accounts() -> dict:
        return {email: {"account": "ACC-0042-7781"}}

    @op.tool(side_effect="write", tracer_provider=provider)
    def update(account: str, **fields: str) -> dict:
        raise AssertionError("blocked: must not run")

    caplog.set_level(logging.DEBUG)
    with op.run(inputs={}):
        result = accounts()
        with pytest.raises(op.ProvenanceError) as blocked:
            update(account=result[email]["account"], **{kw_name: "x-assumed-value"})
    provider.force_flush()
    data = path.read_text()
    for secret in (email, "alice", kw_name, "078-05-1120"):
        assert secret not in data, secret
        assert secret not in str(blocked.value), secret
        assert secret not in caplog.text, secret
    assert '"agent.arg.account.kind"' in data and '"observed"' in data
    assert "agent.arg.fields.0.kind" in data  # the kwarg is still classified, under a safe name
