"""Canary hunt: try to get a value of a tool argument, tool result, prompt or model output into the
exported bytes through the public API, the way an application would.

Every test plants fresh canaries (``CANARY-<hex>``, or ``CANARY_<hex>`` where a value has to look like
an identifier) as argument values, result values, exception messages, approver answers, request text,
structured arguments (dicts, lists, dataclasses, pydantic models) and in spans other libraries make
under the same provider, exports with the real OpenTelemetry SDK through ``ProvenanceSpanProcessor``
into three real exporters at once — the package's OTLP JSON Lines file, the official in-memory
exporter (re-encoded as OTLP/JSON and OTLP protobuf) and the official OTLP/HTTP exporter posting to a
loopback ``http.server`` — and searches every byte for every canary (plain, UTF-16 and base64). Each
test also checks that the package's own decision (``gen_ai.security.*``, the finding event) or the
planted control value is still there, so an exporter that exported nothing cannot pass.

Tests named ``test_leak_*`` document a leak found by this hunt (2026-12-07) that is not fixed yet:
each is ``xfail(strict=True)``, so the day the leak is closed the test passes, the suite fails, and
the mark must come off. Leaks this hunt found and the same change fixed are ``test_was_leak_*``.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import http.server
import json
import logging
import secrets
import string
import threading
from pathlib import Path
from typing import Any, ClassVar

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans as encode_proto
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

import otel_provenance as op
from interop import otlp_json_spans
from otel_provenance import semconv as sc

MODES = ("hybrid", "denylist", "allowlist")


def known_leak(reason: str) -> pytest.MarkDecorator:
    """A leak found and not fixed yet (see the module docstring): strict, so a fix must take it off."""
    return pytest.mark.xfail(strict=True, reason=f"known leak: {reason}")


def new_canary() -> str:
    return f"CANARY-{secrets.token_hex(8)}"


def ident_canary() -> str:
    """A canary shaped like an identifier (``[A-Za-z_][A-Za-z0-9_]*``): a user name, an account handle."""
    return f"CANARY_{secrets.token_hex(8)}"


# --- a loopback OTLP/HTTP receiver -------------------------------------------------------------------


class _Receiver(http.server.BaseHTTPRequestHandler):
    bodies: ClassVar[list[bytes]] = []

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        type(self).bodies.append(self.rfile.read(length))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def receiver():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1/traces"
    finally:
        server.shutdown()
        server.server_close()


# --- one provider, three real exporters behind the wrapper ----------------------------------------


class Sink:
    """A TracerProvider whose only processor is ``ProvenanceSpanProcessor`` around three exporters."""

    def __init__(self, tmp_path: Path, endpoint: str | None, mode: str = "hybrid", **options: Any) -> None:
        self.file = tmp_path / f"spans-{secrets.token_hex(4)}.jsonl"
        self.memory = InMemorySpanExporter()
        processors = [
            SimpleSpanProcessor(op.JsonLinesSpanExporter(self.file)),
            SimpleSpanProcessor(self.memory),
        ]
        self.endpoint = endpoint
        if endpoint is not None:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            _Receiver.bodies = []
            processors.append(SimpleSpanProcessor(OTLPSpanExporter(endpoint=endpoint, timeout=5)))
        strip = op.StripOptions(mode=mode, **options)
        self.provider = TracerProvider()
        self.provider.add_span_processor(op.ProvenanceSpanProcessor(*processors, options=strip))
        self.tracer = self.provider.get_tracer("my.app")

    @property
    def spans(self):
        return self.memory.get_finished_spans()

    def blobs(self) -> list[bytes]:
        self.provider.force_flush()
        spans = self.spans
        assert spans, "nothing was exported"
        out = [self.file.read_bytes(), otlp_json_spans(spans), encode_proto(spans).SerializeToString()]
        if self.endpoint is not None:
            assert _Receiver.bodies, "the OTLP/HTTP exporter posted nothing"
            out.extend(_Receiver.bodies)
        return out

    def shutdown(self) -> None:
        self.provider.shutdown()


@pytest.fixture
def sink(tmp_path, receiver):
    made: list[Sink] = []

    def make(mode: str = "hybrid", **options: Any) -> Sink:
        s = Sink(tmp_path, receiver, mode, **options)
        made.append(s)
        return s

    yield make
    for s in made:
        s.shutdown()


def needles(value: str) -> set[bytes]:
    raw = value.encode()
    return {raw, value.encode("utf-16-le"), base64.b64encode(raw)}


def found(values, blobs) -> list[str]:
    return sorted({v for v in values for blob in blobs for n in needles(v) if n in blob})


def assert_absent(values, blobs) -> None:
    leaked = found(values, blobs)
    assert not leaked, f"canaries leaked into exported bytes: {leaked}"


def assert_present(values, blobs) -> None:
    """The control: what must be exported is (so the search is over real exported bytes)."""
    for value in values:
        assert any(n in blob for blob in blobs for n in needles(value)), f"{value!r} was not exported"


def attrs_of(s: Sink, name: str) -> dict[str, Any]:
    matching = [span for span in s.spans if span.name == name]
    assert matching, f"no span {name!r}; have {[span.name for span in s.spans]}"
    return dict(matching[-1].attributes)


@dataclasses.dataclass
class Order:
    customer: str
    lines: list
    note: str


# --- paths that hold ------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_every_call_shape_holds(sink, mode):
    """Arguments, results, yielded items, nested structures, async, generators, raised messages that
    quote the argument, a blocked write, a retry and a policy block: no canary leaves, the decision does."""
    s = sink(mode)
    c = {
        k: new_canary()
        for k in ("in", "res", "deep", "dc", "gen", "agen", "err", "aerr", "blk", "pol", "retry")
    }
    control = f"control-{secrets.token_hex(6)}"

    @op.tool(side_effect="read", tracer_provider=s.provider)
    def lookup(customer: str) -> dict:
        return {"token": c["res"], "deep": [{"k": {"v": c["deep"]}}], "items": [c["res"], 1, True]}

    @op.tool(side_effect="read", tracer_provider=s.provider)
    def stream(seed: str):
        yield {"item": c["gen"]}
        yield [seed, c["gen"]]

    @op.tool(side_effect="read", tracer_provider=s.provider)
    async def aread(order: Order) -> Order:
        return dataclasses.replace(order, note=c["dc"])

    @op.tool(side_effect="read", tracer_provider=s.provider)
    async def astream(value: str):
        yield {"v": value, "w": c["agen"]}

    @op.tool(side_effect="read", tracer_provider=s.provider)
    def explode(secret: str, payload: dict) -> None:
        raise ValueError(f"bad input {secret!r} in {payload!r} ({c['err']})")

    @op.tool(side_effect="read", tracer_provider=s.provider)
    async def aexplode(secret: str) -> None:
        raise KeyError(f"{secret}/{c['aerr']}")

    @op.tool(side_effect="write", tracer_provider=s.provider)
    def pay(token: str, comment: str) -> dict:
        return {"paid": token, "comment": comment}

    @op.tool(
        side_effect="write",
        tracer_provider=s.provider,
        policy=op.Policy(arguments={"amount": {"maximum": 10}, "iban": {"patterns": ["^DE"]}}),
    )
    def transfer(amount: int, iban: str) -> None:
        return None

    async def run_async():
        await aread(Order(customer=c["in"], lines=[{"sku": c["res"], "qty": 2}], note=c["deep"]))
        async for _ in astream(c["in"]):
            pass
        with pytest.raises(KeyError):
            await aexplode(c["aerr"])

    with op.run(
        inputs={"customer": c["in"], "amount": 10**9, "iban": c["pol"]},
        agent_name="hunter",
        tracer_provider=s.provider,
    ):
        lookup(c["in"])
        lookup(c["in"])  # a retry of the same call
        list(stream(c["in"]))
        asyncio.run(run_async())
        with pytest.raises(ValueError):
            explode(c["err"], {"nested": [c["in"], {"x": c["err"]}]})
        pay(token=c["res"], comment=control)
        with pytest.raises(op.ProvenanceError) as blocked:
            pay(token=c["blk"], comment=c["blk"])
        with pytest.raises(op.ProvenanceError) as refused:
            transfer(amount=10**9, iban=c["pol"])
    assert not found(list(c.values()), [str(blocked.value).encode(), str(refused.value).encode()])
    blobs = s.blobs()
    assert_absent(list(c.values()), blobs)
    assert_present([sc.SECURITY_FINDING_EVENT, sc.SECURITY_DECISION_TYPE, "max_assumed", "policy:"], blobs)
    assert attrs_of(s, "execute_tool lookup")[sc.RETRY_NUMBER] == 1


@pytest.mark.parametrize("mode", MODES)
def test_pydantic_arguments_and_results_hold(sink, mode):
    pydantic = pytest.importorskip("pydantic")

    class Line(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(extra="allow")
        sku: str
        qty: int

    s = sink(mode)
    c = [new_canary() for _ in range(4)]

    @op.tool(side_effect="read", tracer_provider=s.provider)
    def price(line: Line) -> Line:
        return Line(sku=c[2], qty=1, secret=c[3])

    @op.tool(side_effect="write", tracer_provider=s.provider)
    def book(line: Line) -> None:
        return None

    with op.run(inputs={"sku": c[0]}, tracer_provider=s.provider):
        got = price(Line(sku=c[0], qty=3, extra_field=c[1]))
        book(got)  # every leaf observed
        with pytest.raises(op.ProvenanceError):
            book(Line(sku=c[1], qty=9))
    blobs = s.blobs()
    assert_absent(c, blobs)
    assert_present([sc.SECURITY_FINDING_EVENT], blobs)


@pytest.mark.parametrize("mode", MODES)
def test_request_inputs_and_run_body_errors_hold(sink, mode):
    """``op.run(request=..., inputs=...)`` text and an exception escaping the run with a canary message."""
    s = sink(mode)
    c = [new_canary() for _ in range(4)]

    @op.tool(side_effect="write", tracer_provider=s.provider)
    def send(to: str, body: str) -> None:
        return None

    with (
        pytest.raises(RuntimeError),
        op.run(
            request=f"Please send {c[0]} the note {c[1]}",
            inputs={"extra": {"k": c[2]}},
            tracer_provider=s.provider,
        ),
    ):
        send(to=c[0], body=c[1])
        raise RuntimeError(f"agent crashed on {c[0]} {c[3]}")
    blobs = s.blobs()
    assert_absent(c, blobs)
    run_span = attrs_of(s, "invoke_agent")
    assert run_span[sc.ERROR_TYPE] == "RuntimeError"
    assert attrs_of(s, "execute_tool send")["agent.arg.to.source_field"] == "request"


@pytest.mark.parametrize("mode", MODES)
def test_approval_denials_hold(sink, mode):
    """An approver that answers with a canary string, raises a canary message, or times out."""
    s = sink(mode)
    c = [new_canary() for _ in range(4)]

    def answers_text(request):
        return f"no: {request.arguments['amount']} {c[1]}"

    def raises(request):
        raise PermissionError(f"denied {request.arguments['iban']} {c[2]}")

    @op.tool(side_effect="write", needs_approval=True, tracer_provider=s.provider)
    def refund(amount: str, iban: str) -> None:
        return None

    inputs = {"amount": c[0], "iban": c[3]}
    with (
        op.run(inputs=inputs, approver=answers_text, tracer_provider=s.provider),
        pytest.raises(op.ProvenanceError) as first,
    ):
        refund(amount=c[0], iban=c[3])
    with (
        op.run(inputs=inputs, approver=raises, tracer_provider=s.provider),
        pytest.raises(op.ProvenanceError) as second,
    ):
        refund(amount=c[0], iban=c[3])
    assert not found(c, [str(first.value).encode(), str(second.value).encode()])
    blobs = s.blobs()
    assert_absent(c, blobs)
    assert_present([sc.GUARD_APPROVAL, sc.APPROVAL_DENIED, sc.APPROVAL_ERROR], blobs)


@pytest.mark.parametrize("mode", MODES)
def test_other_libraries_spans_under_the_same_provider_hold(sink, mode):
    """A plain SDK span under the same provider: GenAI / OpenInference content keys, an exception event
    with a canary message, an escaping exception's status description, content in a custom event."""
    s = sink(mode)
    c = {k: new_canary() for k in ("args", "res", "iv", "ov", "msg", "exc", "status", "ev", "link", "prompt")}
    with op.run(agent_name="hunter", tracer_provider=s.provider):
        with s.tracer.start_as_current_span("chat", attributes={"gen_ai.operation.name": "chat"}) as span:
            span.set_attribute(
                "gen_ai.input.messages", json.dumps([{"role": "user", "content": c["prompt"]}])
            )
            span.set_attribute("gen_ai.output.messages", c["msg"])
        with s.tracer.start_as_current_span("tool-ish") as span:
            span.set_attribute("gen_ai.tool.call.arguments", json.dumps({"q": c["args"]}))
            span.set_attribute("gen_ai.tool.call.result", c["res"])
        with s.tracer.start_as_current_span("openinference-ish") as span:
            span.set_attribute("input.value", c["iv"])
            span.set_attribute("output.value", json.dumps({"answer": c["ov"]}))
            span.add_event("gen_ai.user.message", {"content": c["ev"]})
        with pytest.raises(ValueError), s.tracer.start_as_current_span("http GET") as span:
            span.set_attribute("http.route", "/orders/{id}")
            span.record_exception(RuntimeError(f"upstream said {c['exc']}"))
            raise ValueError(f"could not fetch {c['status']}")
        with s.tracer.start_as_current_span("retry") as span:
            span.add_event("tool.failed", {"exception.message": c["exc"], "exception.stacktrace": c["exc"]})
            span.set_status(Status(StatusCode.ERROR, f"gave up on {c['status']}"))
    blobs = s.blobs()
    assert_absent(list(c.values()), blobs)
    assert_present(["/orders/{id}" if mode != "allowlist" else "http GET", "ValueError"], blobs)


def test_metrics_attributes_hold(sink, tmp_path):
    """The package's metrics (into the JSON Lines metric exporter): no canary in metric attributes."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

    path = tmp_path / "metrics.jsonl"
    reader = PeriodicExportingMetricReader(op.JsonLinesMetricExporter(path), export_interval_millis=3_600_000)
    meters = MeterProvider(metric_readers=[reader])
    op.use_meter_provider(meters)
    try:
        s = sink()
        c = [new_canary() for _ in range(3)]

        @op.tool(side_effect="write", tracer_provider=s.provider, needs_approval=lambda a: True)
        def act(x: str) -> None:
            raise RuntimeError(c[1])

        @op.tool(side_effect="read", tracer_provider=s.provider)
        def read(x: str) -> None:
            raise RuntimeError(f"{x} {c[2]}")

        with op.run(inputs={"x": c[0]}, approver=lambda r: c[1], tracer_provider=s.provider):
            with pytest.raises(op.ProvenanceError):
                act(c[0])
            with pytest.raises(RuntimeError):
                read(c[0])
        meters.force_flush()
        blobs = [path.read_bytes(), *s.blobs()]
    finally:
        op.use_meter_provider(None)
        meters.shutdown()
    assert_absent(c, blobs)
    assert_present(["agent.tool.calls", "agent.guard.approvals"], blobs)


# --- leaks ----------------------------------------------------------------------------------------


# LEAK: a ``**kwargs`` key that is data but looks like an identifier (a user name, an account handle:
# ``update_roles(**{"jsmith_ssn_078051120": "admin"})``) is exported as the argument's name in every
# ``agent.arg.<key>.*`` attribute, in ``agent.violations``, in the finding event's
# ``gen_ai.security.risk.metadata`` and in the ProvenanceError message, in every strip mode
# (``agent.*`` keys are never stripped). Only non-identifier keys are replaced by ``<name>.<i>``.
@known_leak("an identifier-like **kwargs key is exported as an argument name (fieldpaths.safe_names)")
@pytest.mark.parametrize("mode", MODES)
def test_leak_kwargs_key_that_is_data(sink, mode):
    s = sink(mode)
    key = ident_canary()

    @op.tool(side_effect="write", tracer_provider=s.provider)
    def update_roles(**roles: str) -> None:
        return None

    with op.run(tracer_provider=s.provider), pytest.raises(op.ProvenanceError):
        update_roles(**{key: "admin"})
    blobs = s.blobs()
    assert_present([sc.SECURITY_FINDING_EVENT], blobs)
    assert_absent([key], blobs)


# LEAK: a tool result keyed by data that looks like an identifier (``{"users": {"jsmith": {...}}}``)
# exports that key as ``agent.arg.<name>.source_field`` of every later argument observed under it,
# in every strip mode. ``safe_segment`` replaces only non-identifier keys (e-mails, file names) by ``*``.
@known_leak("an identifier-like result key is exported in source_field (fieldpaths.safe_segment)")
@pytest.mark.parametrize("mode", MODES)
def test_leak_result_key_that_is_data(sink, mode):
    s = sink(mode)
    user = ident_canary()
    email = f"{secrets.token_hex(6)}@example.com"

    @op.tool(side_effect="read", tracer_provider=s.provider)
    def list_users() -> dict:
        return {"users": {user: {"email": email}}}

    @op.tool(side_effect="write", tracer_provider=s.provider)
    def send_invite(to: str) -> None:
        return None

    with op.run(tracer_provider=s.provider):
        list_users()
        send_invite(to=email)
    blobs = s.blobs()
    assert attrs_of(s, "execute_tool send_invite")["agent.arg.to.kind"] == sc.KIND_OBSERVED
    assert_absent([user, email], blobs)


# --- MCP ------------------------------------------------------------------------------------------


def _with_billing_server(tmp_path: Path, provider: TracerProvider, agent) -> Any:
    """``agent(session)`` against docs/mcp.md's billing server — the MCP SDK's own server over stdio,
    its real listing and results — as ``test_mcp_session.py`` runs it (imported here, not at the top:
    without the MCP SDK only these cases skip)."""
    from test_mcp_session import run

    return run(tmp_path / "received.jsonl", agent, tracer_provider=provider)


def _is_error(result: Any) -> bool:
    from test_mcp_session import is_error

    return is_error(result)


@pytest.mark.parametrize("mode", MODES)
def test_mcp_values_hold(sink, tmp_path, mode):
    pytest.importorskip("mcp")
    s = sink(mode)
    reason, invented, nested = new_canary(), new_canary(), new_canary()

    async def agent(session):
        listed = await session.call_tool("list_invoices", {"customer": "acme"})
        assert not _is_error(listed)
        ok = await session.call_tool(
            "refund_invoice", {"invoice_id": "INV-4521", "reason": reason}
        )  # observed
        assert not _is_error(ok)
        blocked = await session.call_tool(
            "refund_invoice", {"invoice_id": invented, "reason": reason, "nested": {"x": [nested]}}
        )
        assert _is_error(blocked)

    with op.run(inputs={"customer": "acme"}, tracer_provider=s.provider):
        _with_billing_server(tmp_path, s.provider, agent)
    from test_mcp_session import received

    assert invented not in json.dumps(received(tmp_path / "received.jsonl"))  # never reached the server
    blobs = s.blobs()
    assert_absent([reason, invented, nested, "INV-4521", "INV-4522"], blobs)
    assert_present([sc.SECURITY_FINDING_EVENT, "execute_tool refund_invoice"], blobs)


# WAS A LEAK (closed): an MCP argument name is the model's choice; an identifier-like one that is data
# (``{"jsmith_078051120": "admin"}``) was exported as ``agent.arg.<name>.*`` (and in the violations and
# the finding event), in every strip mode, although the tool's ``inputSchema`` (known from
# ``list_tools``) does not declare it. Now, as for foreign tool spans (docs/stripping.md, "Argument
# names are exported only when the tool's schema names them"), such a name goes by position.
@pytest.mark.parametrize("mode", MODES)
def test_was_leak_mcp_argument_name_that_is_data(sink, tmp_path, mode):
    pytest.importorskip("mcp")
    s = sink(mode)
    key = ident_canary()

    async def agent(session):
        await session.call_tool("tag_invoice", {"invoice_id": "INV-4521", "label": "x", key: "admin"})

    with op.run(tracer_provider=s.provider):
        _with_billing_server(tmp_path, s.provider, agent)
    blobs = s.blobs()
    assert_present(
        [sc.SECURITY_FINDING_EVENT, "agent.arg.invoice_id.kind", "agent.arg.arguments.2.kind"], blobs
    )
    assert_absent([key], blobs)


# WAS A LEAK (fixed with this hunt), before the fix:
# an MCP tool name is the model's output too; a name the server never listed (what an injected
# model would use to smuggle data out: ``call_tool("<secret>", {})``) becomes the span name
# ``execute_tool <name>`` and ``gen_ai.tool.name``, in every strip mode (span names are never stripped),
# although the session knows from ``list_tools`` that no such tool exists.
@pytest.mark.parametrize("mode", MODES)
def test_was_leak_mcp_unlisted_tool_name(sink, tmp_path, mode):
    pytest.importorskip("mcp")
    s = sink(mode)
    secret = new_canary()

    async def agent(session):
        await session.call_tool("list_invoices", {"customer": "acme"})
        return await session.call_tool(secret, {})

    with op.run(tracer_provider=s.provider):
        assert _is_error(_with_billing_server(tmp_path, s.provider, agent))
    blobs = s.blobs()
    assert_present(["execute_tool list_invoices", "execute_tool _unlisted"], blobs)
    assert_absent([secret], blobs)


# --- errors other libraries write -----------------------------------------------------------------


# WAS A LEAK (closed): ``error.type`` holding ``str(error)`` is removed only when the message is not
# shaped like a type name; a one-token message — a file path, an account number, which is exactly what
# a lookup error quotes — passed the *type name* rule (then letters, digits, ``_ . $ : < > [ ] / -``) and
# was exported, in every strip mode; the status description was then cut *to* that value too. The rule
# now takes neither a ``/`` nor a run of six digits.
def _path_message() -> str:
    return f"/srv/reports/{new_canary()}.pdf"


def _account_message() -> str:
    return f"acct_{secrets.randbelow(10**10):010d}"


def _word_message() -> str:
    """A one-token message of letters only (a user name): no rule on the token's shape can tell it
    from a short code."""
    return "".join(secrets.choice(string.ascii_lowercase) for _ in range(16))


def _one_token_error(s, message: str) -> list[bytes]:
    @op.tool(side_effect="read", tracer_provider=s.provider)
    def read_report(path: str) -> str:
        with s.tracer.start_as_current_span("storage.get") as span:  # a client library's span
            try:
                raise LookupError(message)
            except LookupError as error:
                span.set_attribute("error.type", str(error))  # the #50 pattern: str(error) as error.type
                span.set_status(Status(StatusCode.ERROR, str(error)))
        return "ok"

    with op.run(inputs={"path": message}, tracer_provider=s.provider):
        read_report(message)
    return s.blobs()


@pytest.mark.parametrize(
    "message",
    [
        pytest.param(_path_message, id="path"),
        pytest.param(_account_message, id="account"),
        pytest.param(
            _word_message,
            id="one-word",
            marks=known_leak(
                "a one-word error.type message of letters passes allowlist._TYPE_NAME as a code"
            ),
        ),
    ],
)
@pytest.mark.parametrize("mode", MODES)
def test_error_type_holding_a_one_token_message(sink, mode, message):
    """Paths and account numbers: was a leak (closed). A one-word message of letters: a known leak."""
    s = sink(mode)
    value = message()
    blobs = _one_token_error(s, value)
    assert_present(["storage.get"], blobs)
    assert_absent([value], blobs)


@pytest.mark.parametrize("mode", MODES)
def test_error_type_holding_a_sentence_holds(sink, mode):
    """The #50 case with a message of several words: removed, and the status description with it."""
    s = sink(mode)
    c = new_canary()
    with s.tracer.start_as_current_span("storage.get") as span:
        span.set_attribute("error.type", f"no such report {c}")
        span.set_status(Status(StatusCode.ERROR, f"no such report {c}"))
    blobs = s.blobs()
    assert_present(["storage.get"], blobs)
    assert_absent([c], blobs)


# WAS A LEAK (fixed with this hunt), before the fix:
# ``exception.message`` / ``exception.stacktrace`` are removed from every *event* and from log
# records, but not from span *attributes*: a library that records the exception on the span itself
# (the shape log records use) exports the message — which quotes the tool's argument — in the default
# hybrid mode and in deny-list mode, on any span no AI instrumentation made.
@pytest.mark.parametrize("mode", MODES)
def test_was_leak_exception_message_as_a_span_attribute(sink, mode):
    s = sink(mode)
    c = new_canary()

    @op.tool(side_effect="read", tracer_provider=s.provider)
    def fetch(order_id: str) -> None:
        with s.tracer.start_as_current_span("db.query") as span:
            error = KeyError(order_id)
            span.set_attributes(
                {
                    "exception.type": type(error).__name__,
                    "exception.message": f"order {order_id} not found",
                    "exception.stacktrace": f"Traceback ...\nKeyError: {order_id!r}",
                }
            )
            span.set_status(Status(StatusCode.ERROR))

    with op.run(inputs={"order_id": c}, tracer_provider=s.provider):
        fetch(c)
    blobs = s.blobs()
    assert_present(["db.query", "KeyError"], blobs)
    assert_absent([c], blobs)


# --- logs -----------------------------------------------------------------------------------------


def _log_sink(tmp_path: Path, mode: str):
    from interop import require_logs_sdk

    require_logs_sdk()
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor

    from otel_provenance.instrument.spans.export import JsonLinesLogExporter

    path = tmp_path / f"logs-{secrets.token_hex(4)}.jsonl"
    memory = InMemoryLogRecordExporter()
    provider = LoggerProvider()
    provider.add_log_record_processor(
        op.ProvenanceLogRecordProcessor(
            SimpleLogRecordProcessor(JsonLinesLogExporter(path)),
            SimpleLogRecordProcessor(memory),
            options=op.StripOptions(mode=mode),
        )
    )

    def blobs() -> list[bytes]:
        from interop import otlp_json_logs

        provider.force_flush()
        logs = memory.get_finished_logs()
        assert logs, "no log record was exported"
        return [path.read_bytes(), otlp_json_logs(logs)]

    return provider, blobs


@pytest.mark.filterwarnings("ignore:`LoggingHandler` in `opentelemetry-sdk` is deprecated:DeprecationWarning")
@pytest.mark.parametrize("mode", MODES)
def test_log_records_hold(tmp_path, sink, mode):
    """stdlib logging through the SDK's LoggingHandler: ``logger.exception`` inside a tool (message and
    stack trace quote the argument), GenAI content keys in ``extra``, a GenAI content event."""
    from opentelemetry.sdk._logs import LoggingHandler

    provider, blobs = _log_sink(tmp_path, mode)
    handler = LoggingHandler(logger_provider=provider)
    logger = logging.getLogger(f"hunt.{secrets.token_hex(4)}")
    logger.addHandler(handler)
    logger.propagate = False
    c = [new_canary() for _ in range(4)]

    spans = sink(mode)

    @op.tool(side_effect="read", tracer_provider=spans.provider)
    def fetch(order_id: str) -> None:
        try:
            raise KeyError(f"order {order_id} not found")
        except KeyError:
            logger.exception("fetch failed")

    try:
        with op.run(inputs={"order_id": c[0]}, tracer_provider=spans.provider):
            fetch(c[0])
        logger.warning("model call", extra={"gen_ai.input.messages": c[1], "input.value": c[2]})
        provider.get_logger("genai").emit(event_name="gen_ai.user.message", body={"content": c[3]})
    finally:
        logger.removeHandler(handler)
    exported = [*blobs(), *spans.blobs()]
    assert_absent(c, exported)
    assert_present(["KeyError", *(["fetch failed"] if mode != "allowlist" else [])], exported)


# WAS A LEAK (fixed with this hunt), before the fix:
# on log records ``error.type`` is not held to the *type name* rule that spans get (#50): a
# library that logs ``error.type=str(error)`` exports the message, which quotes the argument, in the
# default hybrid mode and in deny-list mode (the allow-list's value rule removes a sentence).
@pytest.mark.parametrize("mode", MODES)
def test_was_leak_log_record_error_type_holding_a_message(tmp_path, mode):
    provider, blobs = _log_sink(tmp_path, mode)
    c = new_canary()
    provider.get_logger("storage.client").emit(
        body="request failed", attributes={"error.type": f"no such report {c}", "http.route": "/r/{id}"}
    )
    exported = blobs()
    assert_present(["/r/{id}" if mode != "allowlist" else "storage.client"], exported)
    assert_absent([c], exported)


# --- the tool span itself, touched by the body ------------------------------------------------------


# WAS A LEAK (fixed with this hunt), before the fix:
# a tool span of ours that holds only "its own" keys skips every strip transform
# (``span_transforms.holds_only_its_own``, the #45 fast path in ``ProvenanceSpanProcessor.on_end``):
# ``error.type`` (one of ``OWN_KEYS``) and *any* key starting with ``agent.`` count as its own whatever
# their value. A body (or a library it calls) that writes ``str(error)`` to ``error.type``, or a value
# under an ``agent.*`` key of its own, on the current span — the tool's own span — exports it verbatim in
# every strip mode, although on any other span ``error.type`` is held to the *type name* rule (#50) and
# the allow-list (the hybrid default for AI spans, and ``allowlist``) removes an unknown ``agent.*`` key.
@pytest.mark.parametrize(
    ("mode", "key"),
    # (the deny-list keeps an unlisted key such as ``agent.input`` on every span: documented, not tried)
    [(m, "error.type") for m in MODES] + [("hybrid", "agent.input"), ("allowlist", "agent.input")],
)
def test_was_leak_body_value_on_the_tool_span_itself(sink, mode, key):
    from opentelemetry import trace

    s = sink(mode)
    c = new_canary()

    @op.tool(side_effect="read", tracer_provider=s.provider)
    def fetch(order_id: str) -> None:
        try:
            raise KeyError(order_id)
        except KeyError:
            trace.get_current_span().set_attribute(key, f"lookup failed for {order_id}")

    with op.run(inputs={"order_id": c}, tracer_provider=s.provider):
        fetch(c)
    blobs = s.blobs()
    assert_present(["execute_tool fetch"], blobs)
    assert_absent([c], blobs)


@pytest.mark.parametrize("mode", MODES)
def test_body_recording_on_the_tool_span_holds(sink, mode):
    """The body records an exception on the current (tool) span, sets an error status quoting the
    argument, adds an event with exception details and a GenAI content key."""
    from opentelemetry import trace

    s = sink(mode)
    c = [new_canary() for _ in range(4)]

    @op.tool(side_effect="read", tracer_provider=s.provider)
    def fetch(order_id: str) -> None:
        span = trace.get_current_span()
        span.record_exception(KeyError(f"no order {order_id}"))
        span.add_event("retry", {"exception.message": c[1], "attempt": 2})
        span.set_attribute("gen_ai.tool.call.result", c[2])
        span.set_status(Status(StatusCode.ERROR, f"failed {order_id} {c[3]}"))

    with op.run(inputs={"order_id": c[0]}, tracer_provider=s.provider):
        fetch(c[0])
    blobs = s.blobs()
    assert_present(["execute_tool fetch", "KeyError"], blobs)
    assert_absent(c, blobs)


# --- other libraries' tool spans, classified by the processor ------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_foreign_tool_spans_hold(sink, mode):
    """A GenAI-conventions tool span written by another library (``opentelemetry-util-genai``'s shape)
    with content capture on: its arguments (names chosen by the model, values), its result, and an
    OpenInference one: classified, then stripped; argument names not in a schema go by position."""
    s = sink(mode)
    key = ident_canary()
    c = [new_canary() for _ in range(5)]
    with op.run(inputs={"q": c[0]}, tracer_provider=s.provider):
        with s.tracer.start_as_current_span(
            "execute_tool search",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "search",
                "gen_ai.tool.call.arguments": json.dumps({"q": c[0], key: c[1]}),
                "gen_ai.tool.call.result": json.dumps({"hits": [{"title": c[2]}]}),
            },
        ):
            pass
        with s.tracer.start_as_current_span(
            "fetch",
            attributes={
                "openinference.span.kind": "TOOL",
                "tool.name": "fetch",
                "tool.parameters": json.dumps({"type": "object", "properties": {"url": {"type": "string"}}}),
                "input.value": json.dumps({"url": c[3]}),
                "output.value": c[4],
            },
        ):
            pass
    blobs = s.blobs()
    assert_present(["agent.arg.arguments.0.kind", "agent.arg.arguments.1.kind", "agent.arg.url.kind"], blobs)
    assert_absent([key, *c], blobs)


@pytest.mark.parametrize("mode", MODES)
def test_links_and_nested_maps_hold(sink, mode):
    """Content keys on a link's attributes and nested inside a map-valued attribute (log-style bodies)."""
    from opentelemetry.trace import Link

    s = sink(mode)
    c = [new_canary() for _ in range(3)]
    with s.tracer.start_as_current_span("parent") as parent:
        context = parent.get_span_context()
    with s.tracer.start_as_current_span(
        "child", links=[Link(context, {"input.value": c[0], "gen_ai.prompt": c[1]})]
    ) as span:
        span.set_attribute("http.route", "/x")
        span.add_event("gen_ai.choice", {"message": c[2]})
    blobs = s.blobs()
    assert_present(["child"], blobs)
    assert_absent(c, blobs)


@pytest.mark.parametrize("mode", MODES)
def test_configure_default_file_export_holds(tmp_path, mode):
    """``op.configure`` itself (file exporter, its BatchSpanProcessor, not global) in each strip mode."""
    path = tmp_path / "configured.jsonl"
    provider = op.configure(exporter="file", file=str(path), strip=mode, set_global=False, metrics=False)
    c = [new_canary() for _ in range(3)]

    @op.tool(side_effect="write", tracer_provider=provider)
    def pay(iban: str, comment: str) -> None:
        raise RuntimeError(f"declined {iban}")

    try:
        with op.run(inputs={"iban": c[0]}, tracer_provider=provider):
            with pytest.raises(RuntimeError):
                pay(iban=c[0], comment=c[1])
            with pytest.raises(op.ProvenanceError):
                pay(iban=c[2], comment="x")
        provider.force_flush()
        blob = path.read_bytes()
    finally:
        provider.shutdown()
    assert_present(["execute_tool pay", sc.SECURITY_FINDING_EVENT], [blob])
    assert_absent(c, [blob])


# WAS A LEAK (fixed with this hunt), before the fix:
# a tool function without an introspectable signature (a builtin or C-extension callable given a
# name: ``op.tool(name="grant")(dict)``) is bound by ``ArgumentBinder.bind``'s fallback
# ``{f"args.{i}": v ...} | dict(kwargs)``, which keeps the caller's ``**kwargs`` keys verbatim —
# without ``safe_names``, so even a key that is plainly data (an e-mail address, text with spaces)
# becomes ``agent.arg.<key>.*``, ``agent.violations`` and the finding event's metadata.
@pytest.mark.parametrize("mode", MODES)
def test_was_leak_kwargs_key_of_a_tool_without_a_signature(sink, mode):
    s = sink(mode)
    key = f"eve+{new_canary()}@evil.example"
    grant = op.tool(name="grant", side_effect="write", tracer_provider=s.provider)(dict)
    with op.run(tracer_provider=s.provider), pytest.raises(op.ProvenanceError):
        grant(**{key: "admin"})
    blobs = s.blobs()
    assert_present([sc.SECURITY_FINDING_EVENT], blobs)
    assert_absent([key], blobs)


@pytest.mark.parametrize("mode", MODES)
def test_kwargs_key_that_is_not_an_identifier_holds(sink, mode):
    """The case ``safe_names`` does cover: a ``**kwargs`` key that is an e-mail goes by position."""
    s = sink(mode)
    key = f"eve+{new_canary()}@evil.example"

    @op.tool(side_effect="write", tracer_provider=s.provider)
    def grant(**roles: str) -> None:
        return None

    with op.run(tracer_provider=s.provider), pytest.raises(op.ProvenanceError) as blocked:
        grant(**{key: "admin"})
    assert key not in str(blocked.value)
    blobs = s.blobs()
    assert_present(["agent.arg.roles.0.kind", sc.SECURITY_FINDING_EVENT], blobs)
    assert_absent([key], blobs)


@pytest.mark.parametrize("mode", MODES)
def test_schema_policies_untrusted_sources_and_egress_hold(sink, mode):
    """A JSON Schema policy failing on data-keyed objects (the reason names the schema's keyword path,
    not the instance's), an outsider's text that plants a destination (``trust="untrusted"``), and an
    egress argument."""
    s = sink(mode)
    key = (
        f"{new_canary()}@example.com"  # a data key that does not look like an identifier (see the leak below)
    )
    c = [new_canary() for _ in range(4)]
    url = f"https://{c[2].lower()}.example/x"

    @op.tool(
        side_effect="write",
        tracer_provider=s.provider,
        policy=op.Policy(
            schema={
                "type": "object",
                "properties": {"roles": {"type": "object", "additionalProperties": {"enum": ["reader"]}}},
            }
        ),
    )
    def set_roles(roles: dict) -> None:
        return None

    @op.tool(side_effect="read", trust="untrusted", tracer_provider=s.provider)
    def read_mail() -> dict:
        return {"body": f"Please verify at {url} {c[1]}"}

    @op.tool(side_effect="read", egress={"url"}, tracer_provider=s.provider)
    def fetch(url: str) -> str:
        return c[3]

    with op.run(inputs={"roles": {key: c[0]}}, tracer_provider=s.provider):
        with pytest.raises(op.ProvenanceError) as by_schema:
            set_roles(roles={key: c[0]})
        read_mail()
        with pytest.raises(op.ProvenanceError) as by_egress:
            fetch(url=url)
    assert "policy:schema:/properties/roles/additionalProperties/enum" in by_schema.value.violations
    assert not found([key, *c, url], [str(by_schema.value).encode(), str(by_egress.value).encode()])
    blobs = s.blobs()
    assert_present(["policy:schema", "max_untrusted"], blobs)
    assert_absent([key, *c, url], blobs)


# LEAK (same cause as ``test_leak_result_key_that_is_data``, through the run's declared inputs): a
# structured argument observed in ``op.run(inputs=...)`` records its first leaf's path as
# ``agent.arg.<name>.source_field``; an identifier-like key inside it that is data (a user name keyed
# to a role) is exported there — in the default configuration.
@known_leak("an identifier-like key of a run input is exported in source_field")
def test_leak_input_key_that_is_data_in_a_structured_argument(sink):
    s = sink()
    user = ident_canary()

    @op.tool(side_effect="write", tracer_provider=s.provider)
    def set_roles(roles: dict) -> None:
        return None

    with op.run(inputs={"roles": {user: "reader"}}, tracer_provider=s.provider):
        set_roles(roles={user: "reader"})
    blobs = s.blobs()
    assert attrs_of(s, "execute_tool set_roles")["agent.arg.roles.kind"] == sc.KIND_OBSERVED
    assert_absent([user], blobs)


# Was a leak (closed): the allow-list kept ``gen_ai.security.decision.reason`` (any printable line up to
# 4,096 characters) and ``gen_ai.security.risk.metadata`` on *any* producer's span, because this package
# writes its own decision there. A guardrail library under the same provider that explains its
# decision by quoting what it matched exported that text in the default mode and in allow-list mode.
# Both keys are now kept only on spans this package made or adopted. (The deny-list keeps unlisted
# keys on every span: documented, not counted.)
@pytest.mark.parametrize("mode", ["hybrid", "allowlist"])
def test_another_guardrails_reason_quoting_content_goes(sink, mode):
    s = sink(mode)
    c = [new_canary() for _ in range(2)]
    with s.tracer.start_as_current_span(
        "apply_guardrail pii",
        attributes={
            "gen_ai.operation.name": "apply_guardrail",
            "gen_ai.security.decision.type": "deny",
            "gen_ai.security.decision.reason": f"the prompt asks to send {c[0]} to an outside address",
        },
    ) as span:
        span.add_event(
            "gen_ai.security.finding",
            {
                "gen_ai.security.risk.category": "sensitive_information_disclosure",
                "gen_ai.security.risk.metadata": [f"matched={c[1]}"],
            },
        )
    blobs = s.blobs()
    assert_present(["apply_guardrail pii", "sensitive_information_disclosure"], blobs)
    assert_absent(c, blobs)
