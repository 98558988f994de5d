"""#49: what a new user's script prints when its spans go nowhere or leak — each said once.

Each case is a fresh interpreter running the user's own script, the way it is met: a provider built
with ``op.ProvenanceSpanProcessor`` but not made global, and ``@op.tool`` without ``tracer_provider=``,
exported nothing and said nothing (a 0-byte span file); now it warns once, naming the tool and the
fix. The content-leak warning printed twice on a plain script's stderr (a log record Python printed
itself, and the warning); now once.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SETUP = """
import opentelemetry.trace as trace
import otel_provenance as op
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

provider = TracerProvider()
provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(op.JsonLinesSpanExporter(FILE))))
"""

CALLS = """
with op.run(inputs={{"order_id": "ORD-1"}}{run_provider}):
    lookup(order_id="ORD-1")
    lookup(order_id="ORD-1")
provider.shutdown()
"""

HEAD = "otel-provenance: @op.tool lookup records to "


def _script(tmp_path: Path, body: str) -> tuple[str, Path]:
    spans = tmp_path / "spans.jsonl"
    code = f"FILE = {str(spans)!r}\n" + SETUP + textwrap.dedent(body)
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    return proc.stderr, spans


def _tool(provider_arg: str = "") -> str:
    return f"""
@op.tool(side_effect="read"{provider_arg})
def lookup(order_id: str) -> dict:
    return {{"order_id": order_id}}
"""


def test_a_tool_without_tracer_provider_beside_a_provider_that_is_not_global_warns_once(tmp_path):
    stderr, spans = _script(tmp_path, _tool() + CALLS.format(run_provider=""))
    assert spans.read_bytes() == b""  # what the user met: nothing exported
    assert stderr.count("NoExportWarning") == 1 and stderr.count(HEAD) == 1, stderr
    line = next(line for line in stderr.splitlines() if HEAD in line)
    assert "the global tracer provider (tracer_provider= was left out)" in line
    assert "trace.set_tracer_provider was never called" in line
    assert "pass tracer_provider=<that provider> to @op.tool and op.run" in line
    assert line.startswith("<string>:")  # attributed to the user's own line, not the package's


@pytest.mark.parametrize(
    ("tool", "extra"),
    [
        (_tool(", tracer_provider=provider"), ", tracer_provider=provider"),  # passed explicitly
        ("trace.set_tracer_provider(provider)\n" + _tool(), ""),  # or made global
    ],
)
def test_a_tool_recording_where_the_wrapper_is_warns_nothing_and_exports(tmp_path, tool, extra):
    stderr, spans = _script(tmp_path, tool + CALLS.format(run_provider=extra))
    assert "NoExportWarning" not in stderr and HEAD not in stderr, stderr
    assert spans.read_text().count('"execute_tool lookup"') == 2


def test_a_global_provider_with_no_processor_is_warned_about_too(tmp_path):
    body = "trace.set_tracer_provider(TracerProvider())  # e.g. set by a framework\n" + _tool()
    stderr, spans = _script(tmp_path, body + CALLS.format(run_provider=""))
    assert spans.read_bytes() == b""
    assert (
        stderr.count(
            HEAD + "the global tracer provider (tracer_provider= was left out), which has no span processor"
        )
        == 1
    )


def test_a_no_op_provider_passed_explicitly_is_named_as_such(tmp_path):
    """Not "none is set": the user passed one, and it is the one that records nothing."""
    body = _tool(", tracer_provider=trace.NoOpTracerProvider()")
    stderr, _ = _script(tmp_path, body + CALLS.format(run_provider=""))
    assert (
        stderr.count(
            HEAD + "the tracer provider passed as tracer_provider=, a NoOpTracerProvider that records nothing"
        )
        == 1
    )
    assert "set_tracer_provider was never called" not in stderr, stderr


def test_the_content_leak_warning_prints_once_on_a_plain_script(tmp_path):
    body = (
        "import io\nfrom opentelemetry.sdk.trace.export import ConsoleSpanExporter\n"
        "provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=io.StringIO())))\n"
        + _tool(", tracer_provider=provider")
        + CALLS.format(run_provider=", tracer_provider=provider")
    )
    stderr, _ = _script(tmp_path, body)
    assert stderr.count("are registered beside ProvenanceSpanProcessor") == 1, stderr
    assert stderr.count("ContentLeakWarning") == 1
