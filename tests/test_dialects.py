"""One producer, one module and one row (#45): the dialect table both halves read.

The first tests hold the table together (every module a row, every derived set the rows' union). The
last one adds a producer the way docs/dialects.md says — a copy of the package, one new module under
``dialects/`` and its row in ``DIALECTS``, nothing else — and shows, in a fresh interpreter, the
offline half reading its spans as tool calls and the online half classifying their arguments and
removing their content, where the unchanged copy does neither.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import otel_provenance
from otel_provenance import dialects
from otel_provenance.dialects import Dialect
from otel_provenance.instrument.spans import ai_spans, denylist

PACKAGE = Path(otel_provenance.__file__).parent
HELPERS = {"dialect", "calls"}  # the row's type and the shared readers: not producers


def test_every_producer_module_is_one_row_and_every_row_a_module() -> None:
    modules = {m.name for m in pkgutil.iter_modules(dialects.__path__)} - HELPERS
    rows = {}
    for name in sorted(modules):
        module = importlib.import_module(f"otel_provenance.dialects.{name}")
        assert isinstance(module.DIALECT, Dialect), name
        rows[name] = module.DIALECT
    assert set(dialects.DIALECTS) == set(rows.values())
    assert len(dialects.DIALECTS) == len(rows)
    assert len({d.name for d in dialects.DIALECTS}) == len(dialects.DIALECTS)


def test_what_both_halves_read_is_derived_from_the_rows_only() -> None:
    rows = dialects.DIALECTS
    assert frozenset().union(*(d.content_keys for d in rows)) == denylist.DEFAULT_FORBIDDEN_KEYS
    assert frozenset().union(*(d.content_events for d in rows)) == denylist.DEFAULT_CONTENT_EVENTS
    assert set(ai_spans.AI_SCOPE_WORDS) == {w for d in rows for w in d.scope_words}
    assert frozenset().union(*(d.scope_names for d in rows)) == ai_spans.AI_SCOPE_NAMES
    assert set(ai_spans.AI_KEY_PREFIXES) == {p for d in rows for p in d.key_prefixes}
    assert frozenset().union(*(d.bare_keys for d in rows)) == ai_spans.AI_KEYS
    # a row that records tool calls marks the spans that hold them
    for d in rows:
        if d.calls is not None:
            assert d.tool_marks, d.name


@pytest.mark.parametrize(
    ("attributes", "tool", "agent", "name"),
    [
        ({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "a"}, True, False, "a"),
        ({"openinference.span.kind": "TOOL", "tool.name": "b"}, True, False, "b"),
        ({"traceloop.span.kind": "tool", "traceloop.entity.name": "c"}, True, False, "c"),
        ({"logfire.msg_template": "Function: {name}", "name": "d"}, True, False, "d"),
        ({"logfire.msg_template": "Agent run: {name!r}", "name": "e"}, False, True, None),
        ({"name": "f"}, False, False, None),  # a bare ``name`` names nothing outside logfire's tool span
        ({"gen_ai.operation.name": "chat", "openinference.span.kind": "TOOL"}, False, False, None),
        ({"agent.run.id": "r", "gen_ai.operation.name": "chat"}, False, True, None),  # op.run's mark first
        ({"openinference.span.kind": "AGENT"}, False, True, None),
    ],
)
def test_the_rows_decide_in_table_order(attributes: dict, tool: bool, agent: bool, name: str | None) -> None:
    assert dialects.is_tool_span(attributes) is tool
    assert dialects.is_agent_span(attributes) is agent
    assert dialects.tool_name(attributes) == name


_MARK_KEYS = sorted(
    {k for d in dialects.DIALECTS for k, _ in (*d.tool_marks, *d.agent_marks)}
    | {d.kind_key for d in dialects.DIALECTS if d.kind_key is not None}
)
_MARK_VALUES = sorted({v for d in dialects.DIALECTS for _, v in (*d.tool_marks, *d.agent_marks) if v})


def _first_said(attributes: dict, says: str) -> bool:
    """The table read row by row, every row asked: what the module docstring promises."""
    for d in dialects.DIALECTS:
        said = getattr(d, says)(attributes)
        if said is not None:
            return said
    return False


@given(st.dictionaries(st.sampled_from(_MARK_KEYS), st.sampled_from([*_MARK_VALUES, "other", 7])))
def test_asking_only_the_rows_that_can_speak_decides_as_the_whole_table(attributes: dict) -> None:
    assert dialects.is_tool_span(attributes) is _first_said(attributes, "says_tool")
    assert dialects.is_agent_span(attributes) is _first_said(attributes, "says_agent")
    # the tool answer is a function of TOOL_SPAN_KEYS' values alone (the offline model keeps it by them)
    deciding = {k: v for k, v in attributes.items() if k in dialects.TOOL_SPAN_KEYS}
    assert dialects.is_tool_span(deciding) is dialects.is_tool_span(attributes)
    # ... and, on a span carrying DECIDING_TOOL_KEY, of that key's value alone
    key = dialects.DECIDING_TOOL_KEY
    if key in attributes:
        assert dialects.is_tool_span({key: attributes[key]}) is dialects.is_tool_span(attributes)


def test_a_producers_own_kind_key_puts_its_record_first() -> None:
    plain = [name for name, _ in dialects.call_records({})]
    assert plain[0] == "genai"
    marked = [name for name, _ in dialects.call_records({"openinference.span.kind": "TOOL"})]
    assert marked[0] == "openinference" and sorted(marked) == sorted(plain)


# --- adding a producer ------------------------------------------------------------------------------

ACME = textwrap.dedent(
    '''
    """Acme Agents: ``acme.kind`` = tool / agent, the tool in ``acme.tool``, the call in ``acme.input``
    and ``acme.output`` (JSON), its prompts in ``acme.prompt``."""

    from .dialect import Dialect, ToolCallRecord

    DIALECT = Dialect(
        name="acme",
        kind_key="acme.kind",
        tool_marks=(("acme.kind", "tool"),),
        agent_marks=(("acme.kind", "agent"),),
        tool_name_keys=("acme.tool",),
        calls=ToolCallRecord("acme.input", "acme.output"),
        content_keys=frozenset({"acme.input", "acme.output", "acme.prompt"}),
        scope_words=("acme_agents",),
        key_prefixes=("acme.",),
    )
    '''
)

PROBE = textwrap.dedent(
    """
    import json, sys
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    import otel_provenance as op
    from otel_provenance.offline.readers import iter_runs

    CANARY = "acme-canary-7f3a"
    out, trace_file = sys.argv[1], sys.argv[2]

    def write(provider):
        tracer = provider.get_tracer("acme_agents.instrumentation")
        with tracer.start_as_current_span("invoke acme", attributes={"acme.kind": "agent"}):
            with tracer.start_as_current_span("lookup", attributes={
                "acme.kind": "tool", "acme.tool": "lookup",
                "acme.input": json.dumps({"order_id": CANARY}), "acme.output": json.dumps({"ok": CANARY}),
                "acme.prompt": CANARY, "app.region": "eu",
            }):
                pass

    # the offline half: the producer's own spans, as the plain SDK wrote them to an OTLP JSON file
    raw = TracerProvider()
    raw.add_span_processor(SimpleSpanProcessor(op.JsonLinesSpanExporter(trace_file)))
    write(raw)
    raw.shutdown()
    runs = list(iter_runs([trace_file]))
    tools = [s.tool_name for r in runs for s in r.spans if s.is_tool]

    # the online half: the same spans through the processor, default stripping
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(memory)))
    write(provider)
    provider.shutdown()
    exported = {s.name: dict(s.attributes) for s in memory.get_finished_spans()}
    json.dumps(exported)
    with open(out, "w") as fh:
        json.dump({"runs": len(runs), "tools": tools, "exported": exported}, fh)
    """
)


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "site"
    shutil.copytree(PACKAGE, root / "otel_provenance", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _add_acme(root: Path) -> None:
    """The two edits docs/dialects.md names: the module, and its row (imported beside the others)."""
    (root / "otel_provenance" / "dialects" / "acme.py").write_text(ACME, encoding="utf-8")
    table = root / "otel_provenance" / "dialects" / "__init__.py"
    text = table.read_text(encoding="utf-8")
    assert text.count("from . import (\n") == 1 and text.count("    sdks.DIALECT,\n") == 1
    text = text.replace("from . import (\n", "from . import (\n    acme,\n")
    text = text.replace("    sdks.DIALECT,\n", "    sdks.DIALECT,\n    acme.DIALECT,\n")
    table.write_text(text, encoding="utf-8")


def _probe(root: Path, tmp_path: Path) -> dict:
    out, trace_file = tmp_path / "probe.json", tmp_path / "trace.jsonl"
    trace_file.unlink(missing_ok=True)
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(out), str(trace_file)],
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text(encoding="utf-8"))


def test_a_new_producer_is_one_module_and_one_row(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    before = _probe(root, tmp_path)
    # unknown to the table: no tool call offline, nothing classified online, its keys judged as the
    # application's (the deny-list knows none of them)
    assert before["tools"] == []
    assert not any(k.startswith("agent.arg.") for k in before["exported"]["lookup"])
    assert "acme.input" in before["exported"]["lookup"]

    _add_acme(root)
    after = _probe(root, tmp_path)
    assert after["runs"] == 1 and after["tools"] == ["lookup"]  # the offline half reads its tool call
    lookup = after["exported"]["lookup"]
    # the online half classified the call (its one argument, named by position: no schema declares it)
    assert lookup.get("agent.arg.arguments.0.kind") == "assumed"
    for key in ("acme.input", "acme.output", "acme.prompt"):
        assert key not in lookup  # its content is removed ...
    assert "acme-canary-7f3a" not in json.dumps(after["exported"])  # ... and no value of it leaves
    # its span is an AI library's now (scope word, key prefix): judged by the allow-list, which keeps its
    # kind and the tool's name (every row's kind key and tool-name keys) and drops the application's key
    assert (lookup.get("acme.kind"), lookup.get("acme.tool"), lookup.get("app.region")) == (
        "tool",
        "lookup",
        None,
    )
