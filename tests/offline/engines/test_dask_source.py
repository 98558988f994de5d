"""`--dask-scheduler`: gate check, audit, mine and fingerprint on a real Dask cluster match one process.

The cluster is a `LocalCluster` of two worker processes started here. The input is built so that the
grouping is hard: runs span several traces (joined by agent.run.id), spans of each run are shuffled
across lines of three files (one gzip), JSON Lines files are cut into byte ranges, and another
release's runs are mixed in.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

distributed = pytest.importorskip("distributed")
dask = pytest.importorskip("dask")
fsspec = pytest.importorskip("fsspec")

import cloudpickle  # noqa: E402  (installed with distributed)
from benchmarks import tracegen  # noqa: E402

from interop import logs_sdk  # noqa: E402
from offline_helpers import Recorder, plain_trace, team_run, write_jsonl  # noqa: E402
from otel_provenance import semconv  # noqa: E402
from otel_provenance.cli import run  # noqa: E402
from otel_provenance.offline.engines import FileSource  # noqa: E402
from otel_provenance.offline.engines.dask_cluster import PARTITION_SIZE_KEY, DaskSource  # noqa: E402
from range_layouts import LAYOUT, answer, lay_out, lines_by_run, write  # noqa: E402

PARTITION = {"otel-provenance.partition-size": "160KiB"}  # several byte ranges per JSON Lines file


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with dask.config.set(PARTITION):
        code = run(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def cluster():
    # LocalCluster closes a worker's nanny for good when, lost-worker-timeout after a worker left, no worker
    # of that name is registered. The tests below kill a worker on purpose; a second kill landing at that
    # moment would leave one worker for the rest of the module. The nanny restarts killed workers itself.
    with (
        dask.config.set({"distributed.deploy.lost-worker-timeout": "1h"}),
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
        ) as local,
    ):
        yield local


def _records(seed: int, release: str, runs: int, prefix: str) -> list[tracegen.SpanRecord]:
    """Finished spans of ``runs`` runs; some runs span two traces, some carry no agent.run.id."""
    out = []
    for rec in tracegen.interleaved(seed, release, runs=runs):
        attrs = dict(rec.attributes)
        run_id = attrs.get(semconv.RUN_ID)
        if isinstance(run_id, str):
            index = int(run_id.rsplit("-", 1)[1])
            attrs[semconv.RUN_ID] = prefix + run_id
            if index % 7 == 3:  # a run without agent.run.id: named by its trace id
                del attrs[semconv.RUN_ID]
            elif index % 4 == 0 and rec.name.startswith("execute_tool customer.notify"):
                # this span went out in a trace of its own: only agent.run.id joins it to its run
                rec = rec._replace(trace_id=f"{int(rec.trace_id, 16) ^ 0xABCDEF:032x}", parent_id="")
        out.append(rec._replace(attributes=tuple(attrs.items())))
    return out


def _lines(records: list[tracegen.SpanRecord], release: str, rng: random.Random) -> list[str]:
    rng.shuffle(records)
    head = tracegen._line_head(release)
    lines, i = [], 0
    while i < len(records):
        n = rng.randint(1, 6)
        lines.append(head + ",".join(tracegen.span_json(r) for r in records[i : i + n]) + tracegen._LINE_TAIL)
        i += n
    return lines


def write_scattered(directory: Path, seed: int = 14) -> list[Path]:
    rng = random.Random(seed)
    lines = _lines(_records(seed, "v1", 60, ""), "v1", rng) + _lines(
        _records(seed + 1, "v2", 8, "b-"), "v2", rng
    )
    rng.shuffle(lines)
    paths = [directory / "a.jsonl", directory / "b.jsonl", directory / "c.jsonl.gz"]
    parts: list[list[str]] = [[], [], []]
    for line in lines:
        parts[rng.randrange(3)].append(line)
    paths[0].write_text("".join(parts[0]))
    paths[1].write_text("".join(parts[1]))
    paths[2].write_bytes(gzip.compress("".join(parts[2]).encode()))
    return paths


@pytest.fixture(scope="module")
def scattered(tmp_path_factory) -> tuple[list[str], str]:
    directory = tmp_path_factory.mktemp("scattered")
    paths = [str(p) for p in write_scattered(directory)]
    contract = directory / "contract.yaml"
    code, _, err = cli("mine", "--approved", *paths, "--release", "v1", "-o", str(contract))
    assert code == 0, err
    return paths, str(contract)


def _gate(contract: str, paths: list[str], out: Path, *extra: str) -> tuple[int, str, bytes]:
    code, stdout, err = cli(
        "gate", "check", "--contract", contract, "--release", "v1", "--format", "json",
        "--report-json", str(out), *paths, *extra,
    )  # fmt: skip
    assert code in (0, 2, 3), err
    return code, stdout, out.read_bytes()


def test_gate_mine_and_fingerprint_match_one_process_byte_for_byte(cluster, scattered, tmp_path) -> None:
    paths, contract = scattered
    address = ("--dask-scheduler", cluster.scheduler_address)
    assert sum(Path(p).stat().st_size for p in paths[:2]) > 4 * 160 * 1024  # byte ranges, not whole files

    single = _gate(contract, paths, tmp_path / "single.json")
    spread = _gate(contract, paths, tmp_path / "dask.json", *address)
    assert spread == single
    report = single[2].decode()
    assert '"other_releases": 8' in report and '"status": "fail"' in report  # a real, varied verdict

    for extra in (("--format", "text"), ("--format", "json", "--canonical")):
        one = cli("fingerprint", *paths, *extra)
        many = cli("fingerprint", *paths, *extra, *address)
        assert one[0] == 0 and many == one
    assert "run-00000004" in one[1] and len(one[1].split('"run_id"')) > 60  # runs joined across traces

    mined_one, mined_many = tmp_path / "one.yaml", tmp_path / "many.yaml"
    assert cli("mine", "--approved", *paths, "--release", "v1", "-o", str(mined_one))[0] == 0
    assert cli("mine", "--approved", *paths, "--release", "v1", "-o", str(mined_many), *address)[0] == 0
    assert mined_many.read_bytes() == mined_one.read_bytes()


def test_an_incomplete_file_gives_the_same_cut_in_the_report(cluster, scattered, tmp_path) -> None:
    paths, contract = scattered
    cut = tmp_path / "cut.jsonl"
    data = Path(paths[0]).read_bytes()
    cut.write_bytes(data[: len(data) - 200])  # the last line ends mid-record
    inputs = [str(cut), *paths[1:]]
    single = _gate(contract, inputs, tmp_path / "single.json")
    spread = _gate(contract, inputs, tmp_path / "dask.json", "--dask-scheduler", cluster.scheduler_address)
    assert spread == single and single[0] == 2  # incomplete input never passes; this release fails anyway
    lines = data.count(b"\n")
    assert f"cut.jsonl:{lines}: the last line is cut off".encode() in single[2]


def _unregister(client: distributed.Client, name: str) -> None:
    """Drop a worker plugin, and wait for both workers. The scheduler forgets the plugin before it
    tells the workers; one the plugin has just killed may still be restarting and drop that message
    (CommClosedError), and its next process starts without the plugin. Any worker that still holds it
    loses it here, so that no later test's worker dies."""
    with contextlib.suppress(distributed.comm.core.CommClosedError):
        client.unregister_worker_plugin(name)
    client.wait_for_workers(2, timeout=60)
    client.run(lambda dask_worker: dask_worker.plugins.pop(name, None) and None)


class _KillOnce(distributed.WorkerPlugin):
    """Kills its worker process the first time a task of ``stage`` starts (a marker file says once)."""

    def __init__(self, marker: str, stage: str) -> None:
        self.marker, self.stage = marker, stage

    def transition(self, key, start, finish, **kwargs) -> None:
        if finish == "executing" and str(key).startswith(self.stage) and not os.path.exists(self.marker):
            Path(self.marker).write_text("killed")
            os._exit(1)


def test_a_worker_killed_mid_task_does_not_change_the_result(cluster, scattered, tmp_path) -> None:
    paths, contract = scattered
    single = _gate(contract, paths, tmp_path / "single.json")
    marker = tmp_path / "killed"
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    with distributed.Client(cluster.scheduler_address, set_as_default=False) as client:
        client.register_plugin(_KillOnce(str(marker), "otel-provenance-fold-"), name="kill-once")
        try:
            spread = _gate(
                contract, paths, tmp_path / "dask.json", "--dask-scheduler", cluster.scheduler_address
            )
        finally:
            _unregister(client, "kill-once")
    assert marker.read_text() == "killed"  # a worker really died in the middle of a fold task
    assert spread == single


def test_the_commands_read_file_and_memory_urls(cluster, scattered, tmp_path) -> None:
    paths, contract = scattered
    urls = [Path(p).as_uri() for p in paths]
    assert urls[0].startswith("file://")
    single = _gate(contract, paths, tmp_path / "single.json")
    assert _gate(contract, urls, tmp_path / "file.json") == single
    assert (
        _gate(contract, urls, tmp_path / "dask.json", "--dask-scheduler", cluster.scheduler_address) == single
    )

    memory = fsspec.filesystem("memory")
    for p in paths:
        memory.pipe(f"/i14/{Path(p).name}", Path(p).read_bytes())
    glob = ["memory:///i14/*.jsonl*"]
    assert _gate(contract, glob, tmp_path / "memory.json") == single
    fingerprints = cli("fingerprint", *paths)
    assert cli("fingerprint", *glob) == fingerprints
    mined = cli("mine", "--approved", *paths, "--release", "v1")
    assert cli("mine", "--approved", *glob, "--release", "v1") == mined
    # memory:// lives in this process: a cluster whose worker is a thread here can read it (one
    # thread: fsspec's memory files share one read position between concurrent readers)
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0"
    ) as local:
        here = ("--dask-scheduler", local.scheduler_address)
        assert _gate(contract, glob, tmp_path / "memory-dask.json", *here) == single
        assert cli("fingerprint", *glob, *here) == fingerprints
        assert cli("mine", "--approved", *glob, "--release", "v1", *here) == mined
    assert cli("fingerprint", "memory:///i14/none-*.jsonl")[2].endswith("no file matches this pattern\n")


def test_input_errors_exit_1_with_the_place_never_a_verdict(cluster, scattered, tmp_path) -> None:
    paths, contract = scattered
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(Path(paths[0]).read_bytes() + b'{"resourceSpans": 7}\n' + b"\n")
    lines = Path(paths[0]).read_bytes().count(b"\n") + 1
    for extra in ((), ("--dask-scheduler", cluster.scheduler_address)):
        code, out, err = cli("gate", "check", "--contract", contract, "--release", "v1", str(bad), *extra)
        assert code == 1 and out == "" and f"bad.jsonl:{lines}:" in err


def test_the_address_can_come_from_dask_config(cluster, scattered, tmp_path) -> None:
    paths, _ = scattered
    expected = cli("fingerprint", *paths)
    with dask.config.set({"scheduler-address": cluster.scheduler_address}):
        assert cli("fingerprint", *paths, "--dask-scheduler", "config") == expected
    code, _, err = cli("fingerprint", *paths, "--dask-scheduler", "config")
    assert code == 1 and "DASK_SCHEDULER_ADDRESS" in err


def test_without_the_extra_the_flag_exits_1_with_the_install_line(scattered) -> None:
    paths, contract = scattered
    commands = [
        ["fingerprint", *paths],
        ["mine", "--approved", *paths],
        ["gate", "check", "--contract", contract, "--release", "v1", *paths],
    ]
    script = (
        "import sys; sys.modules['dask'] = sys.modules['distributed'] = None  # import dask fails\n"
        "from otel_provenance.cli import run\n"
        f"for argv in {commands!r}:\n"
        "    print('exit', run([*argv, '--dask-scheduler', 'tcp://127.0.0.1:1']))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.stdout.splitlines() == ["exit 1"] * 3, done.stderr
    assert done.stderr.count("Dask is not installed (dask): pip install 'otel-provenance[dask]'") == 3


class _KillAlways(_KillOnce):
    def transition(self, key, start, finish, **kwargs) -> None:
        if finish == "executing" and str(key).startswith(self.stage):
            os._exit(1)


def test_a_task_that_cannot_be_recovered_exits_1_without_a_verdict(cluster, scattered, tmp_path) -> None:
    paths, contract = scattered
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    scheduler = cluster.scheduler
    allowed, scheduler.allowed_failures = scheduler.allowed_failures, 0  # the first lost worker is final
    with distributed.Client(cluster.scheduler_address, set_as_default=False) as client:
        client.register_plugin(_KillAlways("", "otel-provenance-fold-"), name="kill-always")
        try:
            code, out, err = cli(
                "gate", "check", "--contract", contract, "--release", "v1", *paths,
                "--report-json", str(tmp_path / "r.json"), "--dask-scheduler", cluster.scheduler_address,
            )  # fmt: skip
        finally:
            scheduler.allowed_failures = allowed
            _unregister(client, "kill-always")
    assert code == 1 and out == "" and not (tmp_path / "r.json").exists()
    assert "a Dask task failed (KilledWorker" in err and "no result" in err


def test_every_source_is_a_trace_source(cluster, scattered) -> None:
    from otel_provenance.offline.engines.dask_cluster import DaskSource
    from otel_provenance.offline.engines.source import FileSource, SigNozSource, TraceSource

    paths, _ = scattered
    sources = [FileSource(paths), SigNozSource("http://x", "v1", 0, 1), DaskSource(paths, "tcp://x:1")]
    assert all(isinstance(source, TraceSource) for source in sources)
    by_file = sorted(run.run_id for run in sources[0].runs())
    on_cluster = DaskSource(paths, cluster.scheduler_address)
    assert sorted(run.run_id for run in on_cluster.runs()) == by_file
    assert on_cluster.report.spans == sources[0].report.spans > 0 and on_cluster.report.files == 3


def test_a_file_named_with_glob_characters_is_that_file(scattered, tmp_path) -> None:
    paths, _ = scattered
    odd = tmp_path / "release[v1].jsonl"
    odd.write_bytes(Path(paths[0]).read_bytes())
    assert cli("fingerprint", str(odd)) == cli("fingerprint", paths[0])


def test_an_unreachable_scheduler_exits_1_naming_it(scattered) -> None:
    paths, _ = scattered
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        code, out, err = cli("fingerprint", *paths, "--dask-scheduler", "tcp://127.0.0.1:9")
    assert code == 1 and out == "" and "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in err


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_shows_on_a_terminal_and_leaves_stdout_alone(cluster, scattered) -> None:
    paths, _ = scattered
    out, err = io.StringIO(), _Terminal()
    with dask.config.set(PARTITION):
        code = run(["fingerprint", *paths, "--dask-scheduler", cluster.scheduler_address], out, err)
    assert code == 0, err.getvalue()[-600:]
    assert out.getvalue() == cli("fingerprint", *paths)[1]
    shown = err.getvalue()
    for stage in ("planning", "indexing", "evaluating"):
        assert f"\rdask: {stage}: 100%" in shown
    assert shown.endswith("\r\x1b[K")  # the line is cleared when done


def test_a_link_the_byte_scan_misses_is_joined_on_the_cluster_too(cluster, tmp_path) -> None:
    """A run id under an escaped key (``agent.run\\u002eid``), which the index's byte scan cannot see
    (such a line is indexed from its parsed spans): both paths join its trace to that run."""
    records = _records(3, "v1", 9, "")
    moved = {r.trace_id for r in records if r.parent_id == "" and r.name.startswith("execute_tool customer")}
    assert moved  # runs 0, 4 and 8 sent a span out in a trace of its own
    rng = random.Random(3)
    late = _lines([r for r in records if r.trace_id in moved], "v1", rng)
    main = _lines([r for r in records if r.trace_id not in moved], "v1", rng)
    (tmp_path / "late.jsonl").write_text("".join(late).replace('"agent.run.id"', '"agent.run\\u002eid"'))
    (tmp_path / "main.jsonl").write_text("".join(main))
    paths = [str(tmp_path / "late.jsonl"), str(tmp_path / "main.jsonl")]
    one = cli("fingerprint", *paths, "--format", "json")
    assert one[0] == 0 and one[1].count('"run_id"') == 9  # joined: no run of its own for a moved trace
    address = ("--dask-scheduler", cluster.scheduler_address)
    assert cli("fingerprint", *paths, "--format", "json", *address) == one


def _logs_request() -> bytes:
    from opentelemetry.proto.collector.logs.v1 import logs_service_pb2

    request = logs_service_pb2.ExportLogsServiceRequest()
    record = request.resource_logs.add().scope_logs.add().log_records.add()
    record.body.string_value, record.time_unix_nano = "started", 1
    return request.SerializeToString()


def test_other_signals_and_unknown_values_are_counted_as_in_one_process(cluster, scattered, tmp_path) -> None:
    """A Collector file shared by the logs and metrics pipelines, cut into byte ranges: the cluster
    skips and counts the other signals' lines, and the attribute values of an unknown kind it leaves
    out, exactly as one process does; a file of nothing but logs is left out the same way both ways."""
    paths, _ = scattered
    lines = Path(paths[0]).read_bytes().splitlines(keepends=True)
    lines[1] = lines[1].replace(b'"stringValue":', b'"stringValueStrindex":', 1)
    mixed = []
    for i, line in enumerate(lines):
        mixed.append(line)
        if i % 97 == 0:
            mixed.append(b'{"resourceLogs": [{"resource": {}, "scopeLogs": []}]}\n')
    mixed.append(b'{"resourceMetrics": []}\n')
    shared = tmp_path / "shared.jsonl"
    shared.write_bytes(b"".join(mixed))
    assert shared.stat().st_size > 2 * 160 * 1024  # read as byte ranges on the cluster
    inputs = [str(shared), *paths[1:]]
    address = ("--dask-scheduler", cluster.scheduler_address)

    one = cli("fingerprint", *inputs)
    assert cli("fingerprint", *inputs, *address) == one and one[0] == 0
    logs = len(lines[::97])
    assert f"shared.jsonl: skipped {logs} logs lines, 1 metrics line (not traces)" in one[2]
    assert "1 attribute value(s) of an unknown kind" in one[2]

    only_logs = tmp_path / "logs.binpb"
    only_logs.write_bytes(_logs_request())
    one = cli("fingerprint", str(only_logs), *paths)
    assert cli("fingerprint", str(only_logs), *paths, *address) == one
    assert one[0] == 0 and "logs.binpb: a logs file (resourceLogs), not traces (left out)" in one[2]


def test_audit_on_the_cluster_matches_one_process_byte_for_byte(cluster, scattered, tmp_path) -> None:
    paths, _ = scattered
    address = ("--dask-scheduler", cluster.scheduler_address)
    for extra in (
        ("--format", "json"),
        ("--max-assumed", "0"),
        ("--release", "v2", "--max-assumed", "0", "--format", "json"),
    ):
        one = cli("audit", *paths, *extra)
        assert cli("audit", *paths, *extra, *address) == one
    assert one[0] == 2 and len(one[1].split('"run_id"')) > 8  # a real verdict over the 8 v2 runs

    pages = []
    for name, extra in (("one", ()), ("many", address)):
        page = tmp_path / f"{name}.html"
        code, _, err = cli("audit", *paths, "--max-assumed", "0", "--report-html", str(page), *extra)
        assert code == 2, err
        pages.append(page.read_text())
    assert pages[0] == pages[1]
    assert pages[0].count('<section id="run-') == 12  # the 12 failing runs with the smallest ids


@logs_sdk
def test_findings_exported_from_the_cluster_are_those_of_one_process(cluster, scattered, tmp_path) -> None:
    """Where each run lives is read in the same fold as its evaluation, on the cluster too: the
    exported records (findings and run verdicts, with their traces and spans) match one process."""
    paths, contract = scattered
    written = {}
    for name, extra in (("one", ()), ("dask", ("--dask-scheduler", cluster.scheduler_address))):
        target = tmp_path / f"findings-{name}.jsonl"
        code, _, err = cli(
            "gate", "check", "--contract", contract, "--release", "v1", "--findings-file", str(target),
            *paths, *extra,
        )  # fmt: skip
        assert code == 2, err
        records = [
            r
            for line in target.read_text().splitlines()
            for rl in json.loads(line)["resourceLogs"]
            for sl in rl["scopeLogs"]
            for r in sl["logRecords"]
        ]
        for r in records:  # stamped when sent
            del r["timeUnixNano"], r["observedTimeUnixNano"]
        written[name] = records
    assert written["dask"] == written["one"]
    assert len(written["one"]) > 10 and all(r.get("traceId") for r in written["one"])


def test_set_up_traces_are_left_out_and_counted_on_the_cluster_as_in_one_process(
    cluster, scattered, tmp_path
) -> None:
    """#50: traces that are no agent run — an agent being built, an MCP handshake — among the runs,
    in the release judged: neither engine evaluates them as runs, and both say how many were left out."""
    paths, contract = scattered
    setup = []
    for n, name in enumerate(("create_agent", "POST /mcp", "initialize")):
        record = tracegen.SpanRecord(
            f"{0xA5E7 + n:032x}", f"{0xB0 + n:016x}", "", name, 1, 10**18 + n, 10**18 + n + 1000,
            (("http.request.method", "POST"),),
        )  # fmt: skip
        setup.append(tracegen._line_head("v1") + tracegen.span_json(record) + tracegen._LINE_TAIL)
    with_setup = tmp_path / "setup.jsonl"
    with_setup.write_text("".join(setup))
    inputs = [*paths, str(with_setup)]

    one = cli("gate", "check", "--contract", contract, "--release", "v1", "--format", "json", *inputs)
    many = cli(
        "gate", "check", "--contract", contract, "--release", "v1", "--format", "json", *inputs,
        "--dask-scheduler", cluster.scheduler_address,
    )  # fmt: skip
    assert many[:2] == one[:2]
    without = cli("gate", "check", "--contract", contract, "--release", "v1", "--format", "json", *paths)
    assert json.loads(one[1])["runs"] == json.loads(without[1])["runs"]  # no set-up trace is a run
    note = "left out 3 trace(s) that are no agent run"
    assert note in one[2] and note in many[2]


def _one_line(path: Path, *records: tracegen.SpanRecord) -> str:
    path.write_text(
        tracegen._line_head("v1") + ",".join(map(tracegen.span_json, records)) + tracegen._LINE_TAIL
    )
    return str(path)


def test_bad_evidence_found_on_the_cluster_exits_1_naming_it_never_a_verdict(
    cluster, scattered, tmp_path
) -> None:
    """#50: what only a worker can find — a span id twice in one run (while building the runs of a
    partition), a span whose id is no id (while converting its spans) — is exit 1 with the reason, in
    the words of one process."""
    paths, contract = scattered
    call = tracegen.SpanRecord(
        f"{0xDEAD1:032x}", f"{0xBEEF1:016x}", "", "execute_tool x", 1, 10**18, 10**18 + 5,
        (("gen_ai.operation.name", "execute_tool"), ("gen_ai.tool.name", "x")),
    )  # fmt: skip
    twice = _one_line(tmp_path / "twice.jsonl", call, call._replace(name="execute_tool y"))
    no_id = _one_line(tmp_path / "no-id.jsonl", call._replace(trace_id=f"{0xDEAD2:032x}", span_id="zz" * 8))
    gate = ("gate", "check", "--contract", contract, "--release", "v1", *paths)
    address = ("--dask-scheduler", cluster.scheduler_address)
    one = cli(*gate, twice)
    assert cli(*gate, twice, *address) == one  # the file named as one process names it
    assert one[:2] == (1, "")
    assert f"twice.jsonl: run {0xDEAD1:032x}: span id {0xBEEF1:016x} occurs twice" in one[2]
    for extra in ((), address):
        code, out, err = cli(*gate, no_id, *extra)
        assert (
            (code, out) == (1, "") and "no-id.jsonl:1: " in err and "spanId is not a 16-digit hex id" in err
        )


def test_another_release_attribute_is_read_on_the_cluster_as_in_one_process(
    cluster, scattered, tmp_path
) -> None:
    """``--release-attribute``: the runs of the release are those the attribute names, on every engine —
    where the engine picks the release's runs itself (``mine``) and where the gate does."""
    paths, contract = scattered
    by_name = ("--release", tracegen.SERVICE, "--release-attribute", "service.name")
    gate = ("gate", "check", "--contract", contract, "--format", "json", *by_name, *paths)
    one = cli(*gate)
    assert one[0] in (0, 2, 3) and json.loads(one[1])["runs"]["evaluated"] > 60  # both releases' runs
    assert cli(*gate, "--dask-scheduler", cluster.scheduler_address)[:2] == one[:2]
    mined_one, mined_many = tmp_path / "one.yaml", tmp_path / "many.yaml"
    assert cli("mine", *by_name, "-o", str(mined_one), "--approved", *paths)[0] == 0
    address = ("--dask-scheduler", cluster.scheduler_address)
    assert cli("mine", *by_name, "-o", str(mined_many), *address, "--approved", *paths)[0] == 0
    assert mined_many.read_bytes() == mined_one.read_bytes()


def test_runs_that_span_traces_by_span_links_are_joined_on_the_cluster_too(cluster, tmp_path) -> None:
    """A run written as a trace per agent turn, joined by span links (AutoGen's team runtime), over
    several files and byte ranges: the cluster joins the same traces and says so in the same words."""
    rec = Recorder()
    setup = plain_trace(rec, "autogen create RoundRobinGroupChatManager", [])
    for i in range(30):
        team_run(rec, ["lookup_order", "check_fraud", "issue_refund"][: 1 + i % 3], setup=setup)
    spans = rec.spans()
    random.Random(47).shuffle(spans)
    third = len(spans) // 3
    paths = [
        str(write_jsonl(spans[: 2 * third], tmp_path / "a.jsonl")),
        str(write_jsonl(spans[2 * third :], tmp_path / "b.jsonl.gz", batch=3, compress=True)),
    ]
    assert Path(paths[0]).stat().st_size > 160 * 1024  # byte ranges, not a whole file
    one = cli("fingerprint", *paths, "--format", "json")
    assert one[0] == 0 and one[1].count('"run_id"') == 30
    assert "span links joined 120 trace(s) into 30 run(s)" in one[2]
    address = ("--dask-scheduler", cluster.scheduler_address)
    assert cli("fingerprint", *paths, "--format", "json", *address) == one


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> list[list[str]]:
    return lines_by_run(tmp_path_factory.mktemp("exported"))


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(**LAYOUT, partition=st.sampled_from(["1KiB", "4KiB", "16KiB", "1MiB"]))
def test_partitions_on_the_cluster_give_the_answer_of_one_process(
    cluster, tmp_path_factory, exported, seed, runs, files, partition, extras, torn
) -> None:
    """#46, the property of ``--jobs N`` (``test_pool_ranges``) on the cluster: the SDK exporter's
    lines of up to 8 runs laid out anew (interleaved over 1–3 files, a blank line, a trace that is no
    run, logs, a cut-off last line), cut into byte ranges of 1 KiB–1 MiB, so that runs lie in one
    partition or cross several: fingerprints, the gate's JSON report, notes and counts equal one
    process's."""
    paths = write(tmp_path_factory.mktemp("layout"), lay_out(exported, seed, runs, files, extras), torn)
    with dask.config.set({PARTITION_SIZE_KEY: partition}):
        assert answer(DaskSource(paths, cluster.scheduler_address)) == answer(FileSource(paths))
