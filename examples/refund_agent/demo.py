"""The reference scenario, end to end, on the embedded file default (no server needed).

In the order it runs (each release's runs start the five services — policy, orders, fraud,
payment, notification — as separate processes on loopback, and stop them after):

1. Run 25 refund requests through release 1.0.0 of the agent: a human approved these runs.
2. ``otel-provenance mine`` turns them into a trajectory contract.
3. Run 5 requests through release 2.0.0: it tells customers the same sentence as 1.0.0, but skips
   the policy and fraud checks and refunds twice after a timeout.
4. Run 5 requests through release 1.1.0 (the 1.0.0 behaviour).
5. Gate release 1.1.0: it passes (exit 0).
6. Gate release 2.0.0: it fails (exit 2), with the traces that prove each finding.

Every process exports through the stripping processor to OTLP JSON Lines files under ``--out``; the
gate reads only those files. The demo exits with release 2.0.0's gate code: 2.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from agent import REPLY, Agent, Endpoints  # noqa: E402
from telemetry import meter_provider, tracer_provider  # noqa: E402

from otel_provenance import configure_logs  # noqa: E402
from otel_provenance.cli import run as cli  # noqa: E402

SERVICES = ("policy", "orders", "fraud", "payment", "notification")
COMPLETED_AT = "2026-01-01T00:00:00Z"  # injected: a verdict never reads the clock


@contextmanager
def services(out: Path):
    """Start the five services; on exit close their stdin so they flush their spans and stop."""
    procs = {
        name: subprocess.Popen(
            [sys.executable, str(HERE / "services.py"), name, "--out", str(out)],
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


def run_release(release: str, runs: int, out: Path, first_order: int) -> list[str]:
    """Run ``runs`` refund requests through ``release``; spans go to files in ``out``, metrics to
    ``out/metrics`` (one file per process; the release is the agent's ``service.version``)."""
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
        agent = Agent(endpoints, release, provider, logs)
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=Path("out/refund-demo"), help="where files go")
    args = parser.parse_args(argv)
    out: Path = args.out
    for old in out.glob("*/**/*.jsonl"):
        old.unlink()

    print("== 25 approved runs of release 1.0.0")
    replies_v1 = run_release("1.0.0", 25, out / "approved", 1)
    contract = out / "contract.yaml"
    print(f"== mine {out / 'approved'} -> {contract}")
    if cli(["mine", "--approved", *span_files(out / "approved"), "-o", str(contract)]) != 0:
        return 1

    print("== 5 runs of release 2.0.0")
    replies_v2 = run_release("2.0.0", 5, out / "release-2.0.0", 100)
    same = set(replies_v1) == set(replies_v2) == {REPLY}
    print(f"   both releases told every customer: {REPLY!r} -> {'same sentence' if same else 'DIFFERENT'}")

    print("== 5 runs of release 1.1.0 (same behaviour as the approved runs)")
    run_release("1.1.0", 5, out / "release-1.1.0", 200)

    v1_code = gate(contract, "1.1.0", out / "release-1.1.0")
    v2_code = gate(contract, "2.0.0", out / "release-2.0.0", "--report-json", str(out / "report-2.0.0.json"))
    if v1_code != 0:
        print("unexpected: the v1-behaviour release did not pass", file=sys.stderr)
        return 1
    return v2_code


if __name__ == "__main__":
    sys.exit(main())
