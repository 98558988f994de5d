"""#49: ``audit`` of clean runs reads in a screen — one line per run without a finding, the arguments
to review grouped — while a run with a finding is still listed call by call, and ``--verbose`` lists
every run that way (25 clean runs printed 378 lines before). The runs are made for real through
``@op.tool`` and the stripping processor."""

from __future__ import annotations

import io
import uuid

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import otel_provenance as op
from otel_provenance.cli import run as cli


def _audit(*argv: str) -> tuple[int, list[str]]:
    out = io.StringIO()
    code = cli(["audit", *argv], out, io.StringIO())
    return code, out.getvalue().splitlines()


@pytest.fixture
def traces(tmp_path):
    path = tmp_path / "runs.jsonl"
    provider = TracerProvider(resource=Resource({"service.name": "shop", "service.version": "1.0.0"}))
    provider.add_span_processor(
        op.ProvenanceSpanProcessor(SimpleSpanProcessor(op.JsonLinesSpanExporter(path)))
    )

    @op.tool(side_effect="read", tracer_provider=provider)
    def lookup(order_id: str) -> dict:
        return {"order_id": order_id, "amount": 1250}

    @op.tool(side_effect="write", invented={"key"}, tracer_provider=provider)
    def refund(order_id: str, amount: int, key: str) -> dict:
        return {"refunded": order_id}

    for n in range(26):
        order_id = f"ORD-{n:05d}"
        with op.run(inputs={"order_id": order_id}, tracer_provider=provider):
            order = lookup(order_id=order_id)
            if n < 25:
                refund(order_id=order_id, amount=order["amount"], key=str(uuid.uuid4()))
            else:  # the last run guesses an order id: blocked, a finding
                with pytest.raises(op.ProvenanceError):
                    refund(order_id="ORD-99999", amount=order["amount"], key=str(uuid.uuid4()))
    provider.shutdown()
    return path


def test_twenty_five_clean_runs_and_one_with_a_finding(traces):
    code, lines = _audit(str(traces))
    assert code == 2  # the blocked call
    clean = [line for line in lines if line.startswith("run ") and ": PASS (" in line]
    assert len(clean) == 25
    assert all(line.endswith(" release 1.0.0: PASS (2 call(s); 1 invented, 3 observed)") for line in clean)
    assert "(25 run(s) without a finding in one line each; --verbose lists their calls)" in lines
    failing = lines.index(next(line for line in lines if line.startswith("run ") and line.endswith(": FAIL")))
    assert lines[failing + 1].startswith("  lookup  span ")  # the run with a finding: call by call
    (review,) = [line for line in lines if line.startswith("review (invented arguments): ")]
    assert review.startswith("review (invented arguments): refund.key in 26 calls (e.g. run ")
    assert len(lines) < 40, len(lines)
    code, verbose = _audit("--verbose", str(traces))
    assert code == 2 and len(verbose) > 25 * 5
    assert sum(1 for line in verbose if line.startswith("  refund  span ")) == 26
    assert verbose[-1] == lines[-1] == "FAIL"


def _stderr(*argv: str) -> tuple[int, list[str]]:
    err = io.StringIO()
    code = cli(list(argv), io.StringIO(), err)
    return code, err.getvalue().splitlines()


def test_what_normal_input_holds_besides_runs_is_a_note_and_a_lost_value_a_warning(traces, tmp_path):
    """A Collector's file holds health checks and logs beside the agent's runs: every command said so
    as a warning (#49). They are notes now; a value the reader could not read stays a warning."""
    plain = '{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"' + "ab" * 16 + '","spanId":"' + "cd" * 8
    beside = tmp_path / "beside.jsonl"
    beside.write_text(plain + '","name":"GET /health"}]}]}]}\n{"resourceLogs":[]}\n')
    for command in (["audit"], ["fingerprint"], ["mine", "-o", str(tmp_path / "c.yaml"), "--approved"]):
        code, err = _stderr(*command, str(traces), str(beside))
        assert code in (0, 2), err
        assert f"otel-provenance: note: {beside}: skipped 1 logs line (not traces)" in err
        left_out = "otel-provenance: note: left out 1 trace(s) that are no agent run"
        assert any(line.startswith(left_out) for line in err), err
        assert not any(line.startswith("otel-provenance: warning:") for line in err), err
    lost = tmp_path / "lost.jsonl"
    unknown = '{"key":"k","value":{"stringValueStrindex":1}}'
    lost.write_text(plain + '","name":"GET /","attributes":[' + unknown + "]}]}]}]}\n")
    _, err = _stderr("audit", str(traces), str(lost))
    assert "otel-provenance: warning: 1 attribute value(s) of an unknown kind" in err[0], err
