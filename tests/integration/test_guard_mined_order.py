"""#49, on a two-route agent as a user meets it: approved runs of a refund route and an exchange
route go through ``mine`` and ``routes approve`` on the command line, and the contract it wrote, loaded
with ``op.run(contract=...)``, refuses the write whose policy, fraud or stock check was skipped —
before the tool's body runs — while both approved routes run without a call blocked.

The agent is real ``@op.tool`` functions on the real SDK, exporting OTLP JSON Lines through the
stripping processor; each write's body appends to a ledger, which is how "before the body runs" is
checked."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import otel_provenance as op
from otel_provenance.cli import run as cli


class ShopAgent:
    """Refunds (policy → fraud → refund → notify) and exchanges (policy → stock → ship → notify);
    ``skip`` leaves checks out, as a release that "simplifies" would."""

    def __init__(self, provider: TracerProvider, contract: str | None = None, skip: frozenset = frozenset()):
        self.contract, self.skip = contract, skip
        self.ledger: list[str] = []  # what the write bodies did

        def tool(**kw):
            return op.tool(tracer_provider=provider, **kw)

        @tool(name="policy.check", side_effect="read")
        def policy_check(order_id: str) -> dict:
            return {"allowed": True}

        @tool(name="fraud.check", side_effect="read")
        def fraud_check(order_id: str) -> dict:
            return {"risk": "low"}

        @tool(name="stock.check", side_effect="read")
        def stock_check(order_id: str) -> dict:
            return {"in_stock": True}

        @tool(name="payment.refund", side_effect="write")
        def refund(order_id: str) -> dict:
            self.ledger.append(f"refund {order_id}")
            return {"refunded": order_id}

        @tool(name="shipment.create", side_effect="write")
        def ship(order_id: str) -> dict:
            self.ledger.append(f"ship {order_id}")
            return {"shipped": order_id}

        @tool(name="customer.notify", side_effect="write")
        def notify(order_id: str) -> dict:
            self.ledger.append(f"notify {order_id}")
            return {"sent": order_id}

        self.tools = {
            "policy.check": policy_check,
            "fraud.check": fraud_check,
            "stock.check": stock_check,
        }
        self.refund, self.ship, self.notify = refund, ship, notify
        self.provider = provider

    def _checks(self, order_id: str, *names: str) -> None:
        for name in names:
            if name not in self.skip:
                self.tools[name](order_id=order_id)

    def handle(self, route: str, order_id: str) -> None:
        with op.run(inputs={"order_id": order_id}, contract=self.contract, tracer_provider=self.provider):
            if route == "refund":
                self._checks(order_id, "policy.check", "fraud.check")
                self.refund(order_id=order_id)
            else:
                self._checks(order_id, "policy.check", "stock.check")
                self.ship(order_id=order_id)
            self.notify(order_id=order_id)


def _provider(path: Path, release: str) -> TracerProvider:
    provider = TracerProvider(resource=Resource({"service.name": "shop-agent", "service.version": release}))
    provider.add_span_processor(
        op.ProvenanceSpanProcessor(SimpleSpanProcessor(op.JsonLinesSpanExporter(path)))
    )
    return provider


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return cli(list(argv), out, err), out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def contract(tmp_path_factory) -> Path:
    """15 approved refunds and 10 approved exchanges, mined; the exchange family approved too."""
    folder = tmp_path_factory.mktemp("two-routes")
    approved = folder / "approved.jsonl"
    provider = _provider(approved, "1.0.0")
    agent = ShopAgent(provider)
    for n in range(25):
        agent.handle("refund" if n < 15 else "exchange", f"ORD-{n:05d}")
    provider.shutdown()
    path = folder / "contract.yaml"
    code, out, err = _cli("mine", "--approved", str(approved), "-o", str(path), "--name", "shop")
    assert code == 0, err
    pending = [
        line.split()[0] for line in out.splitlines() if line.startswith("route-") and " pending " in line
    ]
    assert len(pending) == 1, out  # the exchanges: a family of their own, left for a person
    assert "writes: customer.notify after fraud.check, policy.check; payment.refund after" in out
    code, out, err = _cli("routes", "approve", "--contract", str(path), pending[0])
    assert code == 0, err
    # the exchanges notify without a fraud check: that rule goes; their shipment gets its own rules
    assert f"customer.notify.after.fraud.check: removed ({pending[0]} is approved" in out
    assert "shipment.create.after.stock.check: added" in out
    assert "shipment.create.after.policy.check: added" in out
    return path


def _run(contract: Path, tmp_path: Path, route: str, skip: frozenset = frozenset()) -> tuple[ShopAgent, str]:
    provider = _provider(tmp_path / f"{route}-{'-'.join(sorted(skip)) or 'all'}.jsonl", "2.0.0")
    agent = ShopAgent(provider, str(contract), skip)
    try:
        agent.handle(route, "ORD-90001")
        outcome = "ran"
    except op.ProvenanceError as refused:
        outcome = str(refused)
    provider.shutdown()
    return agent, outcome


@pytest.mark.parametrize(
    ("route", "skipped", "write", "rule"),
    [
        ("refund", "policy.check", "payment.refund", "payment.refund.after.policy.check"),
        ("refund", "fraud.check", "payment.refund", "payment.refund.after.fraud.check"),
        ("exchange", "stock.check", "shipment.create", "shipment.create.after.stock.check"),
        ("exchange", "policy.check", "shipment.create", "shipment.create.after.policy.check"),
    ],
)
def test_the_write_whose_check_was_skipped_is_refused_before_its_body_runs(
    contract, tmp_path, route, skipped, write, rule
):
    agent, outcome = _run(contract, tmp_path, route, frozenset({skipped}))
    assert outcome.startswith(f"{write}: blocked"), outcome
    assert f"contract:{rule}:MISSING_PREREQUISITE" in outcome
    assert agent.ledger == []  # neither the write's body nor anything after it ran


@pytest.mark.parametrize("route", ["refund", "exchange"])
def test_both_approved_routes_run_under_the_same_contract(contract, tmp_path, route):
    agent, outcome = _run(contract, tmp_path, route)
    assert outcome == "ran"
    write = "refund" if route == "refund" else "ship"
    assert agent.ledger == [f"{write} ORD-90001", "notify ORD-90001"]


def test_a_route_with_every_check_passes_the_gate_and_one_that_skips_fails_it(contract, tmp_path):
    """The same contract offline: the guarded runs' traces, gated like any release."""
    for route in ("refund", "exchange"):
        _run(contract, tmp_path, route)
    files = sorted(str(p) for p in tmp_path.glob("*-all.jsonl"))
    argv = ["gate", "check", "--contract", str(contract), "--release", "2.0.0"]
    argv += ["--completed-at", "2026-01-01T00:00:00Z"]
    code, out, err = _cli(*argv, *files)
    assert code == 0, out + err


def test_without_the_mined_ordering_rules_the_skipped_check_pays(contract, tmp_path):
    """The control, as the issue met it: the same contract without its ordering rules lets the refund
    whose policy check was skipped run (a missing step is only judged when the run ends)."""
    from otel_provenance.offline import dump_document, load_contract

    document = dict(load_contract(contract).document)
    document["rules"] = [r for r in document["rules"] if r["type"] != "forbidden_paths"]
    older = tmp_path / "without-order.yaml"
    older.write_text(dump_document(document))
    agent, outcome = _run(older, tmp_path, "refund", frozenset({"policy.check"}))
    assert outcome == "ran" and agent.ledger == ["refund ORD-90001", "notify ORD-90001"]
