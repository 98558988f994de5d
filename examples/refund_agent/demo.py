"""The reference scenario, end to end, on the embedded file default (no server needed).

In the order it runs (each release's runs start the five services — policy, orders, fraud,
payment, notification — as separate processes on loopback, and stop them after):

1. Run 25 refund requests through release 1.0.0 of the agent: a human approved these runs.
2. ``otel-provenance mine`` turns them into a trajectory contract; a person reviewing it adds one
   rule of their own: no refund unless a fraud check came before it.
3. Run 5 requests through release 2.0.0: it tells customers the same sentence as 1.0.0, but skips
   the policy and fraud checks and refunds twice after a timeout.
4. Run 5 requests through release 1.1.0 (the 1.0.0 behaviour).
5. Gate release 1.1.0: it passes (exit 0).
6. Gate release 2.0.0: it fails (exit 2), with the traces that prove each finding. Each finding and
   each run's verdict is also written as a ``gen_ai.evaluation.result`` log record beside its trace:
   to ``findings-2.0.0.jsonl`` (OTLP JSON Lines), and to the OTLP backend (SigNoz in the compose
   stack) when ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set (``gate check --export-findings``).
7. The guard — the same contract loaded into the agent (``op.run(contract=...)``): 25 requests through
   release 1.1.0 have no call blocked; 5 requests through release 2.0.0 book no refund without its
   fraud check and none twice (the payment service's own ledger says so), and each customer is told
   the refund is held for review instead of a sentence that is not true.

Every process exports through the stripping processor to OTLP JSON Lines files under ``--out``; the
gate reads only those files. The demo exits with release 2.0.0's gate code: 2.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from agent import REPLY, REPLY_HELD, Agent, Endpoints  # noqa: E402
from telemetry import meter_provider, tracer_provider  # noqa: E402

from otel_provenance import configure_logs  # noqa: E402
from otel_provenance.cli import run as cli  # noqa: E402
from otel_provenance.offline import dump_document, load_contract, read_spans  # noqa: E402

#: The reviewer's own rule, added to the mined contract (docs/contracts.md, ``forbidden_paths``).
REVIEWED_RULE = {
    "id": "refund.after.fraud.check",
    "type": "forbidden_paths",
    "code": "MISSING_PREREQUISITE",
    "description": "Added in review: a refund is paid only after a fraud check in the same run.",
    "to": {"step": "payment.refund"},
    "unless_preceded_by": {"step": "fraud.check"},
}

SERVICES = ("policy", "orders", "fraud", "payment", "notification")
COMPLETED_AT = "2026-01-01T00:00:00Z"  # injected: a verdict never reads the clock


@contextmanager
def services(out: Path):
    """Start the five services; on exit close their stdin so they flush their spans and stop. The
    payment service's ledger goes to :func:`ledger_file`, outside the folder of trace files."""
    procs = {
        name: subprocess.Popen(
            [
                sys.executable,
                str(HERE / "services.py"),
                name,
                "--out",
                str(out),
                "--ledger",
                str(ledger_file(out)),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for name in SERVICES
    }
    try:
        ports = {}
        for name, proc in procs.items():
            line = proc.stdout.readline().split()
            if line[:1] != ["READY"]:
                raise RuntimeError(f"service {name} did not start")
            ports[name] = f"http://127.0.0.1:{line[1]}"
        yield Endpoints(**ports)
    finally:
        for proc in procs.values():
            if proc.stdin:
                proc.stdin.close()
        for proc in procs.values():
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()


def run_release(
    release: str, runs: int, out: Path, first_order: int, contract: Path | None = None
) -> list[str]:
    """Run ``runs`` refund requests through ``release``; spans go to files in ``out``, metrics to
    ``out/metrics`` (one file per process; the release is the agent's ``service.version``). With a
    ``contract`` every run is judged by it before each tool call (the guard)."""
    (out / "logs").mkdir(parents=True, exist_ok=True)
    with services(out) as endpoints:
        provider = tracer_provider("refund-agent", release, out / f"agent-{release}.jsonl", set_global=False)
        logs = configure_logs(
            resource=provider.resource,
            exporter="file",
            file=out / "logs" / f"agent-{release}.jsonl",
            set_global=False,
        )
        meters = meter_provider(provider.resource, out / "metrics" / f"agent-{release}.jsonl")
        agent = Agent(endpoints, release, provider, logs, str(contract) if contract else None)
        try:
            with ThreadPoolExecutor(max_workers=5) as pool:
                orders = [f"ORD-{first_order + i:05d}" for i in range(runs)]
                replies = list(pool.map(agent.handle, orders))
        finally:
            agent.close()
            provider.shutdown()
            logs.shutdown()
            meters.shutdown()  # the last collection is exported here
    return replies


def span_files(directory: Path) -> list[str]:
    return [str(p) for p in sorted(directory.glob("*.jsonl"))]


def add_reviewed_rule(contract: Path) -> None:
    """What the person reviewing the mined contract adds before approving it."""
    document = dict(load_contract(contract).document)
    document["rules"] = [*document["rules"], REVIEWED_RULE]
    contract.write_text(dump_document(document))


def blocked_calls(directory: Path) -> dict[str, int]:
    """Tool calls the guard refused, counted in the agent's exported spans, by the rule that refused."""
    reasons: dict[str, int] = {}
    for span in read_spans(span_files(directory)):
        if span.blocked:  # agent.tool.status = blocked
            for reason in span.attributes.get("agent.violations", ()):
                reasons[reason] = reasons.get(reason, 0) + 1
    return reasons


def ledger_file(directory: Path) -> Path:
    """The payment service's ledger of a phase: ``<out>/ledgers/<phase>.txt``."""
    return directory.parent / "ledgers" / f"{directory.name}.txt"


def refunds_booked(directory: Path) -> dict[str, int]:
    """Refunds per order, from the payment service's own ledger."""
    ledger = ledger_file(directory)
    booked: dict[str, int] = {}
    for line in ledger.read_text().splitlines() if ledger.exists() else ():
        order = line.split()[0]
        booked[order] = booked.get(order, 0) + 1
    return booked


def guard(contract: Path, out: Path) -> bool:
    """Step 7: the same contract at call time. True when it held what the demo promises. The guarded
    deployments are versioned ``<release>+guard`` (the same code, another build), so that a gate of
    ``2.0.0`` reading every run from one backend (SigNoz) judges the unguarded runs only."""
    print(f"== the guard: 25 runs of release 1.1.0 with {contract} loaded")
    run_release("1.1.0+guard", 25, out / "guard-1.1.0", 300, contract)
    approved_blocked = blocked_calls(out / "guard-1.1.0")
    print(f"   calls blocked: {sum(approved_blocked.values())}")
    print(f"== the guard: 5 runs of release 2.0.0 with {contract} loaded")
    orders = [f"ORD-{400 + i:05d}" for i in range(5)]
    replies = run_release("2.0.0+guard", 5, out / "guard-2.0.0", 400, contract)
    booked = refunds_booked(out / "guard-2.0.0")
    unguarded = refunds_booked(out / "release-2.0.0")
    without, with_guard = sum(unguarded.values()), sum(booked.values())
    print(f"   the payment service's ledger, 5 requests: {without} refund(s) unguarded, {with_guard} guarded")
    for reason, count in sorted(blocked_calls(out / "guard-2.0.0").items()):
        print(f"   blocked before it ran: {count} call(s), {reason}")
    print(f"   every customer was told: {' / '.join(sorted(set(replies)))}")
    held = set(replies) == {REPLY_HELD}
    return not approved_blocked and held and all(booked.get(o, 0) <= 1 for o in orders)


def gate(contract: Path, release: str, directory: Path, *extra: str) -> int:
    print(f"== gate check release {release}")
    argv = [
        "gate",
        "check",
        "--contract",
        str(contract),
        "--release",
        release,
        "--completed-at",
        COMPLETED_AT,
    ]
    code = cli([*argv, *extra, *span_files(directory)])
    print(f"   exit {code}")
    return code


def findings_args(file: Path) -> list[str]:
    """The findings beside the traces: always in ``file``; over OTLP too when an endpoint is set."""
    exported = ["--export-findings"] if os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") else []
    return [*exported, "--findings-file", str(file)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=Path("out/refund-demo"), help="where files go")
    args = parser.parse_args(argv)
    out: Path = args.out
    for old in [*out.glob("*/**/*.jsonl"), *out.glob("ledgers/*.txt")]:
        old.unlink()

    print("== 25 approved runs of release 1.0.0")
    replies_v1 = run_release("1.0.0", 25, out / "approved", 1)
    contract = out / "contract.yaml"
    print(f"== mine {out / 'approved'} -> {contract}")
    if cli(["mine", "--approved", *span_files(out / "approved"), "-o", str(contract)]) != 0:
        return 1
    add_reviewed_rule(contract)
    print(f"   reviewed: added {REVIEWED_RULE['id']} ({REVIEWED_RULE['description']})")

    print("== 5 runs of release 2.0.0")
    replies_v2 = run_release("2.0.0", 5, out / "release-2.0.0", 100)
    same = set(replies_v1) == set(replies_v2) == {REPLY}
    print(f"   both releases told every customer: {REPLY!r} -> {'same sentence' if same else 'DIFFERENT'}")

    print("== 5 runs of release 1.1.0 (same behaviour as the approved runs)")
    run_release("1.1.0", 5, out / "release-1.1.0", 200)

    v1_code = gate(contract, "1.1.0", out / "release-1.1.0")
    v2_code = gate(
        contract,
        "2.0.0",
        out / "release-2.0.0",
        "--report-json",
        str(out / "report-2.0.0.json"),
        "--report-html",
        str(out / "report-2.0.0.html"),
        *findings_args(out / "findings-2.0.0.jsonl"),
    )
    if v1_code != 0:
        print("unexpected: the v1-behaviour release did not pass", file=sys.stderr)
        return 1
    if not guard(contract, out):
        print("unexpected: the guard blocked an approved call or let a bad refund through", file=sys.stderr)
        return 1
    print("== where every file went")
    print(f"   spans, logs and metrics: {out}/<phase>/ (approved, release-2.0.0, release-1.1.0, guard-1.1.0,")
    print("   guard-2.0.0), one JSON Lines file per process")
    print(f"   the contract (mined, then reviewed): {contract}")
    print(f"   release 2.0.0's gate report: {out / 'report-2.0.0.html'} (open it in a browser)")
    print(f"   and as JSON: {out / 'report-2.0.0.json'}")
    where = (
        " and the OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT)"
        if os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        else ""
    )
    print(f"   its findings as gen_ai.evaluation.result log records: {out / 'findings-2.0.0.jsonl'}{where}")
    print(f"   the payment service's own ledgers: {out}/ledgers/<phase>.txt")
    return v2_code


if __name__ == "__main__":
    sys.exit(main())
