"""A path rule at call time reads which calls had ended when each began, and which calls came before.

The guard keeps each path judgement for runs alike in what the rules read, shared by every run of a
contract configured once (``op.configure(contract=...)``). Two runs that differ only in the order of
their calls — a check that began after the lookup had ended, or while it was still running; a check
or a lookup before the refund — are not alike: each is judged on its own order, as the offline gate
judges its trace. Through ``@op.tool`` and ``op.run`` on the real SDK, with calls held open on other
threads to make them overlap.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import otel_provenance as op
from instrument_helpers import Traced
from offline_helpers import write_proto
from otel_provenance.instrument.base import settings as settings_module
from otel_provenance.offline.contracts.dsl import parse_contract
from otel_provenance.offline.evaluate import evaluate
from otel_provenance.offline.outcome import Outcome
from otel_provenance.offline.readers import iter_runs

CONTRACT = """\
name: refunds
version: 1
rules:
  - id: checked-after-lookup
    type: forbidden_paths
    from: {step: order.lookup}
    to: {step: payment.refund}
    unless_preceded_by: {step: fraud.check}
"""
FRAUD_FIRST = """\
name: refunds
version: 1
rules:
  - id: fraud-first
    type: forbidden_paths
    to: {step: payment.refund}
    unless_preceded_by: {step: fraud.check}
"""
ORDER = "ord-50611"


class Shop:
    """The order service, an audit log, the fraud check and the refund; a call named in ``held``
    stays running (on its own thread) until the test releases it."""

    def __init__(self, traced: Traced) -> None:
        self.refunded: list[str] = []
        self.held: dict[str, tuple[threading.Event, threading.Event]] = {}  # step -> (started, release)
        provider = traced.provider

        def pause(step: str) -> None:
            if step in self.held:
                started, release = self.held.pop(step)
                started.set()
                assert release.wait(10)

        @op.tool(name="order.lookup", side_effect="read", tracer_provider=provider)
        def lookup(order_id: str) -> dict:
            pause("order.lookup")
            return {"order_id": order_id}

        @op.tool(name="audit.note", side_effect="read", tracer_provider=provider)
        def note(order_id: str) -> str:
            pause("audit.note")
            return "noted"

        @op.tool(name="fraud.check", side_effect="read", tracer_provider=provider)
        def check(order_id: str) -> dict:
            return {"order_id": order_id, "risk": "low"}

        @op.tool(name="payment.refund", side_effect="write", tracer_provider=provider)
        def refund(order_id: str) -> str:
            self.refunded.append(order_id)
            return "refunded"

        self.tools = {"order.lookup": lookup, "audit.note": note, "fraud.check": check}
        self.refund = refund

    def call(self, step: str) -> None:
        self.tools[step](order_id=ORDER)

    def hold(self, step: str) -> Held:
        """Start ``step`` on another thread, in this run, and return once it is running."""
        started, release = self.held[step] = threading.Event(), threading.Event()
        thread = threading.Thread(target=contextvars.copy_context().run, args=(self.call, step))
        thread.start()
        assert started.wait(10)
        return Held(release, thread)

    def try_refund(self) -> tuple[str, ...] | None:
        """The violations that blocked the refund, or None when it ran."""
        try:
            self.refund(order_id=ORDER)
        except op.ProvenanceError as error:
            return error.violations
        return None


class Held:
    def __init__(self, release: threading.Event, thread: threading.Thread) -> None:
        self.release, self.thread = release, thread

    def end(self) -> None:
        self.release.set()
        self.thread.join(10)


@pytest.fixture
def configured(tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """A contract configured once for every run: one guard, its judgements shared by the runs."""

    def configure(text: str) -> Path:
        path = tmp_path / f"contract-{len(text)}.yaml"
        path.write_text(text)
        op.configure(exporter="none", contract=path, set_global=False)
        return path

    try:
        yield configure
    finally:
        settings_module.reset_settings()


def _offline_failures(traced: Traced, contract: Path, tmp_path: Path) -> list[list[str]]:
    """Per run of the exported trace(s), the rules the offline gate fails."""
    runs = iter_runs([write_proto(traced.spans, tmp_path / "trace.pb")])
    parsed = parse_contract(contract.read_text())
    return [[r.rule_id for r in evaluate(run, parsed).rules if r.status is Outcome.FAIL] for run in runs]


def test_a_check_that_began_before_the_lookup_ended_does_not_clear_the_refund(configured, tmp_path):
    """The same calls, ended in the same way: in the first run the check began after the lookup had
    ended, in the second while it was still running. Only the first clears the refund."""
    contract = configured(CONTRACT)
    traced = Traced()
    shop = Shop(traced)
    blocked = []
    for lookup_ends_first in (True, False):
        with op.run(inputs={"order_id": ORDER}, tracer_provider=traced.provider):
            lookup = shop.hold("order.lookup")
            note = shop.hold("audit.note")
            (lookup if lookup_ends_first else note).end()  # one of the two ends before the check
            shop.call("fraud.check")
            (note if lookup_ends_first else lookup).end()  # the other while the check has ended
            blocked.append(shop.try_refund())
    assert blocked == [None, ("contract:checked-after-lookup:FORBIDDEN_PATH",)]
    assert shop.refunded == [ORDER]
    assert _offline_failures(traced, contract, tmp_path) == [[], []]  # the blocked refund never ran


def test_a_check_and_a_lookup_before_a_refund_are_judged_apart_in_runs_sharing_a_contract(configured):
    configured(FRAUD_FIRST)
    traced = Traced()
    shop = Shop(traced)
    blocked = []
    for before in ("fraud.check", "order.lookup", "fraud.check"):
        with op.run(inputs={"order_id": ORDER}, tracer_provider=traced.provider):
            shop.call(before)
            blocked.append(shop.try_refund())
    assert blocked == [None, ("contract:fraud-first:FORBIDDEN_PATH",), None]
    assert shop.refunded == [ORDER, ORDER]


def test_a_check_made_after_the_lookup_clears_the_refund(tmp_path):
    """In order, one call after the other: the lookup, the check, the refund."""
    path = tmp_path / "refunds.yaml"
    path.write_text(CONTRACT)
    traced = Traced()
    shop = Shop(traced)
    with op.run(inputs={"order_id": ORDER}, contract=path, tracer_provider=traced.provider):
        shop.call("order.lookup")
        shop.call("fraud.check")
        assert shop.try_refund() is None
        shop.call("order.lookup")  # a lookup after the check: the next refund needs a check again
        assert shop.try_refund() == ("contract:checked-after-lookup:FORBIDDEN_PATH",)
    assert shop.refunded == [ORDER]
