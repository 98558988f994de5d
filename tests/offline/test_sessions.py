"""The ``--run-attribute`` check (``offline/sessions.py``, #47): an id that joins traces into runs must
identify runs. Agno stamps one ``session.id`` on every run of a process; read with
``--run-attribute session.id``, every run of the input would be one. The commands say so on stderr.

Traces are recorded with the real SDK as OpenInference writes sessions (``session.id`` on each span),
one agent invocation per trace, and read back by the command line.
"""

from __future__ import annotations

import io
from pathlib import Path

from opentelemetry import trace

from offline_helpers import Recorder, tool_attributes, write_jsonl
from otel_provenance import semconv
from otel_provenance.cli import run as cli_run
from otel_provenance.offline.readers import ReadReport, iter_runs, read_spans
from otel_provenance.offline.runs import group_runs

SESSION = "session.id"
ONE_VALUE = "every trace carries the same value"
OVERLAP = "whose agent work overlaps in time"


def _invocation(rec: Recorder, session: str) -> trace.Span:
    """One agent invocation, a trace of its own, left open (the caller ends it)."""
    agent = rec.tracer.start_span(
        "invoke_agent support",
        attributes={semconv.GEN_AI_OPERATION_NAME: semconv.INVOKE_AGENT, SESSION: session},
        start_time=rec.tick(),
    )
    with rec.span("execute_tool lookup", {**tool_attributes("lookup", {}), SESSION: session}, parent=agent):
        pass
    return agent


def _sequential(rec: Recorder, sessions: list[str]) -> None:
    for session in sessions:
        _invocation(rec, session).end(end_time=rec.tick())


def cli(*argv: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli_run([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


def test_chat_sessions_are_counted_and_nothing_more(tmp_path: Path) -> None:
    rec = Recorder()
    _sequential(rec, ["chat-a", "chat-b", "chat-a", "chat-b", "chat-a"])  # turns of two conversations
    path = write_jsonl(rec.spans(), tmp_path / "t.jsonl")
    code, out, err = cli("fingerprint", path, "--run-attribute", SESSION)
    assert code == 0 and len(out.splitlines()) == 2
    assert f"--run-attribute {SESSION} joined 5 trace(s) that carry it into 2 run(s)" in err
    assert ONE_VALUE not in err and OVERLAP not in err


def test_one_id_on_every_run_of_a_process_is_named(tmp_path: Path) -> None:
    """Agno's way: five separate tasks, one session.id for the process."""
    rec = Recorder()
    _sequential(rec, ["process-1"] * 5)
    path = write_jsonl(rec.spans(), tmp_path / "t.jsonl")
    code, out, err = cli("fingerprint", path, "--run-attribute", SESSION)
    assert code == 0 and len(out.splitlines()) == 1
    assert f"--run-attribute {SESSION}: {ONE_VALUE}, so all 5 are one run" in err
    assert "Agno stamps one session.id on every run of a process" in err
    # read the default way, each task is a run of its own and nothing is said
    code, out, err = cli("fingerprint", path)
    assert code == 0 and len(out.splitlines()) == 5 and "run-attribute" not in err


def test_runs_of_one_session_at_the_same_time_are_named(tmp_path: Path) -> None:
    """A server answering two requests at once under the process's one session id."""
    rec = Recorder()
    first, second = _invocation(rec, "process-1"), _invocation(rec, "process-1")
    first.end(end_time=rec.tick())
    second.end(end_time=rec.tick())
    _sequential(rec, ["chat-a", "chat-a"])
    path = write_jsonl(rec.spans(), tmp_path / "t.jsonl")
    for extra in ([], ["--jobs", "2"]):
        code, _, err = cli("audit", path, "--run-attribute", SESSION, *extra)
        assert code == 3
        assert f"--run-attribute {SESSION}: 1 run(s) hold traces {OVERLAP} (e.g. process-1)" in err, err
        assert ONE_VALUE not in err


def test_every_reader_checks_alike(tmp_path: Path) -> None:
    rec = Recorder()
    first, second = _invocation(rec, "s"), _invocation(rec, "s")
    first.end(end_time=rec.tick())
    second.end(end_time=rec.tick())
    path = write_jsonl(rec.spans(), tmp_path / "t.jsonl")
    streamed, whole = ReadReport(), ReadReport()
    list(iter_runs([path], report=streamed, run_attribute=SESSION))
    group_runs(read_spans([path]), run_attribute=SESSION, report=whole)
    assert streamed.sessions == whole.sessions
    assert streamed.sessions is not None and streamed.sessions.one_value
    assert streamed.sessions.overlapping == ["s"]
