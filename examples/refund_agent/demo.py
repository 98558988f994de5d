"""The reference scenario, end to end, on the embedded file default (no server needed).

In the order it runs (each release's runs start the five services — policy, orders, fraud,
payment, notification — as separate processes on loopback, and stop them after):

1. Run 25 refund requests through release 1.0.0 of the agent: a human approved these runs.
2. ``otel-provenance mine`` turns them into a trajectory contract — among its rules, each write
   ordered after the checks every approved run made before it (``payment.refund.after.fraud.check``).
3. Run 5 requests through release 2.0.0: it tells customers the same sentence as 1.0.0, but skips
   the policy and fraud checks and refunds twice after a timeout.
4. Run 5 requests through release 1.1.0 (the 1.0.0 behaviour).
5. Gate release 1.1.0: it passes (exit 0).
6. Gate release 2.0.0: it fails (exit 2). The findings are printed; the traces and spans that prove
   each are in ``gate-2.0.0.txt``, ``report-2.0.0.html`` and ``report-2.0.0.json``. Each finding and
   each run's verdict is also written as a ``gen_ai.evaluation.result`` log record beside its trace:
   to ``findings-2.0.0.jsonl`` (OTLP JSON Lines), and to the OTLP backend (SigNoz in the compose
   stack) when ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set (``gate check --export-findings``).
7. The guard — the same contract loaded into the agent (``op.run(contract=...)``): 25 requests through
   release 1.1.0 have no call blocked; 5 through release 1.2.0 (1.0.0 without the fraud check) and 5
   through release 2.0.0 book no refund (the payment service's own ledger says so): each call the
   contract forbids is refused before it runs, and the agent answers that the refund is held.

Every process exports through the stripping processor to OTLP JSON Lines files under ``--out``; the
gate reads only those files. The demo ends with release 2.0.0's gate code: exit 2, as intended.
"""

from __future__ import annotations

import argparse
import io
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
from otel_provenance.offline import load_contract, read_spans  # noqa: E402

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


def blocked_calls(directory: Path) -> dict[str, tuple[int, list[str]]]:
    """Tool calls the guard refused, from the agent's exported spans: per tool, how many and the
    rules that refused them (``contract:<rule id>:<CODE>`` in ``agent.violations``)."""
    found: dict[str, tuple[int, set[str]]] = {}
    for span in read_spans(span_files(directory)):
        if span.blocked:  # agent.tool.status = blocked
            count, rules = found.get(span.tool_name or span.name, (0, set()))
            reasons = {
                v.split(":")[1] if v.startswith("contract:") else v
                for v in span.attributes.get("agent.violations", ())
            }
            found[span.tool_name or span.name] = (count + 1, rules | reasons)
    return {tool: (count, sorted(rules)) for tool, (count, rules) in sorted(found.items())}


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
    print(f"== the guard: {contract} loaded into the agent (op.run(contract=...))")
    run_release("1.1.0+guard", 25, out / "guard-1.1.0", 300, contract)
    approved_blocked = blocked_calls(out / "guard-1.1.0")
    print(f"   release 1.1.0, the approved behaviour, 25 runs: {len(approved_blocked)} call(s) blocked")
    replies: list[str] = []
    unguarded = sum(refunds_booked(out / "release-2.0.0").values())
    phases = (("1.2.0", 500, "1.0.0 without the fraud check"), ("2.0.0", 400, f"{unguarded} unguarded"))
    for release, first, note in phases:
        phase = out / f"guard-{release}"
        replies += run_release(f"{release}+guard", 5, phase, first, contract)
        booked = sum(refunds_booked(phase).values())
        print(f"   release {release} ({note}), 5 runs: {booked} refund(s) booked")
        for tool, (count, rules) in blocked_calls(phase).items():
            print(f"     blocked before it ran: {tool} ×{count} ({', '.join(rules)})")
    held = set(replies) == {REPLY_HELD}
    print(f"   every one of those requests was answered: {REPLY_HELD!r}")
    booked_after = [refunds_booked(out / f"guard-{r}") for r in ("1.2.0", "2.0.0")]
    return not approved_blocked and held and not any(booked_after)


def gate(contract: Path, release: str, directory: Path, out: Path, *extra: str) -> int:
    """``gate check`` of ``release``: its report in ``out/gate-<release>.txt``; printed without the
    lines of trace and span ids that prove each finding (they are in that file and the HTML report)."""
    print(f"== gate check release {release}")
    argv = ["gate", "check", "--contract", str(contract), "--release", release]
    argv += ["--completed-at", COMPLETED_AT]
    report, notes = io.StringIO(), io.StringIO()
    code = cli([*argv, *extra, *span_files(directory)], report, notes)
    text = out / f"gate-{release}.txt"
    text.write_text(report.getvalue())
    sys.stderr.write(notes.getvalue())
    proofs = [line for line in report.getvalue().splitlines() if line.startswith("  ")]
    print("\n".join(line for line in report.getvalue().splitlines() if not line.startswith("  ")))
    where = f"; the {len(proofs)} lines of trace and span ids proving the findings: {text}" if proofs else ""
    print(f"   exit {code}{where}")
    return code


def findings_args(file: Path) -> list[str]:
    """The findings beside the traces: always in ``file``; over OTLP too when an endpoint is set."""
    exported = ["--export-findings"] if os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") else []
    return [*exported, "--findings-file", str(file)]


def ordering_rules(contract: Path) -> list[str]:
    """The mined rules that order a write after a check (``forbidden_paths``, ``unless_preceded_by``)."""
    return [rule.id for rule in load_contract(contract).rules if rule.type == "forbidden_paths"]


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
    ordered = ordering_rules(contract)
    print(
        f"   {len(ordered)} of them order a write after the checks every approved run made first, "
        f"e.g. {next((r for r in ordered if r.endswith('.after.fraud.check')), '-')}"
    )

    print("== 5 runs of release 2.0.0")
    replies_v2 = run_release("2.0.0", 5, out / "release-2.0.0", 100)
    same = set(replies_v1) == set(replies_v2) == {REPLY}
    print(f"   both releases told every customer: {REPLY!r} -> {'same sentence' if same else 'DIFFERENT'}")

    print("== 5 runs of release 1.1.0 (same behaviour as the approved runs)")
    run_release("1.1.0", 5, out / "release-1.1.0", 200)

    v1_code = gate(contract, "1.1.0", out / "release-1.1.0", out)
    v2_code = gate(
        contract,
        "2.0.0",
        out / "release-2.0.0",
        out,
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
        print("unexpected: the guard blocked an approved call or let a refund through", file=sys.stderr)
        return 1
    where = (
        " and the OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT)"
        if os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        else ""
    )
    print("== where every file went")
    print(
        f"   spans, logs and metrics: {out}/<phase>/ (one JSON Lines file per process); contract: {contract}"
    )
    print(
        f"   release 2.0.0's gate report: {out / 'report-2.0.0.html'} (open it in a browser), "
        f"{out / 'report-2.0.0.json'}, {out / 'gate-2.0.0.txt'}"
    )
    print(f"   its findings as gen_ai.evaluation.result log records: {out / 'findings-2.0.0.jsonl'}{where}")
    print(f"   the payment service's own ledgers: {out}/ledgers/<phase>.txt")
    print(
        f"Done: exit {v2_code} — release 2.0.0 failed the gate, which is what this demo shows "
        "(0 pass, 2 fail, 3 insufficient data, 1 error)."
    )
    return v2_code


if __name__ == "__main__":
    sys.exit(main())
