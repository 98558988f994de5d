"""The refund agent: six tools over five services, in three behaviours.

v1 (approved): refund.request → policy.retrieve → order.lookup → fraud.check → refund.calculate →
payment.refund → customer.notify, with an idempotency key on the payment.

1.2 (a release that skips one check): v1 without fraud.check — the shortcut the guard with a mined
contract must stop before the refund is paid.

v2 (the regression): a "simplification" drops policy.retrieve and fraud.check (the 30-day window is
hard-coded instead), and a tightened client timeout makes the first payment call time out while the
payment processor still books it; the retry goes out without an idempotency key, so the customer is
refunded twice. Both releases send the customer the same sentence.

Given the approved contract (``contract=``, the file the gate reads), every run is judged before each
tool call (``op.run(contract=...)``, docs/guard.md): a call the contract forbids never reaches its
service, and the agent answers the truth instead (:data:`REPLY_HELD`).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass

import httpx
from opentelemetry import propagate, trace
from opentelemetry._logs import LoggerProvider, LogRecord

import otel_provenance as op

REPLY = "Your refund has been issued and will reach your account within 5 business days."
REPLY_HELD = "We could not issue your refund automatically; a member of our team will review it."

TIMEOUT_S = {"1": 5.0, "2": 0.1}  # v2's "performance tweak"


@dataclass(frozen=True)
class Endpoints:
    policy: str
    orders: str
    fraud: str
    payment: str
    notification: str


class Agent:
    def __init__(
        self,
        endpoints: Endpoints,
        release: str,
        tracer_provider: trace.TracerProvider,
        logger_provider: LoggerProvider | None = None,
        contract: str | None = None,
    ) -> None:
        self.ep = endpoints
        self.contract = contract
        self.logger = logger_provider.get_logger("refund_agent") if logger_provider is not None else None
        self.release = release
        self.major = release.split(".", 1)[0]
        self.checks_fraud = not release.startswith("1.2.")  # 1.2: the release that skips the check
        self.tracer = tracer_provider.get_tracer("refund_agent")
        self.http = httpx.Client()
        provider = tracer_provider

        def post(url: str, body: dict, timeout: float = 5.0) -> dict:
            headers: dict[str, str] = {}
            propagate.inject(headers)  # W3C traceparent: the service continues this trace
            response = self.http.post(url, json=body, headers=headers, timeout=timeout)
            response.raise_for_status()
            return response.json()

        @op.tool(name="policy.retrieve", side_effect="read", data_domain="policy", tracer_provider=provider)
        def retrieve_policy(order_id: str) -> dict:
            return post(self.ep.policy + "/policy", {"order_id": order_id})

        @op.tool(name="order.lookup", side_effect="read", data_domain="orders", tracer_provider=provider)
        def lookup_order(order_id: str) -> dict:
            return post(self.ep.orders + "/order", {"order_id": order_id})

        @op.tool(name="fraud.check", side_effect="read", data_domain="risk", tracer_provider=provider)
        def check_fraud(customer_id: str, order_id: str, amount_cents: int) -> dict:
            body = {"customer_id": customer_id, "order_id": order_id, "amount_cents": amount_cents}
            return post(self.ep.fraud + "/fraud", body)

        @op.tool(
            name="refund.calculate", side_effect="none", data_domain="payments", tracer_provider=provider
        )
        def calculate_refund(amount_cents: int, days_since_delivery: int, max_days: int) -> dict:
            refundable = days_since_delivery <= max_days
            return {"refund_cents": amount_cents if refundable else 0, "eligible": refundable}

        @op.tool(
            name="payment.refund",
            side_effect="write",
            data_domain="payments",
            idempotency_key="idempotency_key",
            invented={"idempotency_key"},
            tracer_provider=provider,
        )
        def refund_payment(order_id: str, amount_cents: int, idempotency_key: str | None = None) -> dict:
            body = {"order_id": order_id, "amount_cents": amount_cents}
            if idempotency_key is not None:
                body["idempotency_key"] = idempotency_key
            return post(self.ep.payment + "/refund", body, timeout=TIMEOUT_S.get(self.major, 5.0))

        @op.tool(
            name="customer.notify",
            side_effect="write",
            data_domain="notifications",
            budget=op.Budget(max_assumed=0, allow={"message"}),
            tracer_provider=provider,
        )
        def notify_customer(customer_id: str, message: str) -> dict:
            return post(self.ep.notification + "/notify", {"customer_id": customer_id, "message": message})

        self.retrieve_policy = retrieve_policy
        self.lookup_order = lookup_order
        self.check_fraud = check_fraud
        self.calculate_refund = calculate_refund
        self.refund_payment = refund_payment
        self.notify_customer = notify_customer

    def handle(self, order_id: str) -> str:
        """One agent run for one refund request; returns the sentence sent to the customer."""
        # The agent opens its own root span first, so the run nests under it (no invoke_agent span).
        with (
            self.tracer.start_as_current_span("refund.request"),
            op.run(inputs={"order_id": order_id}, contract=self.contract),
        ):
            try:
                reply = self._v1(order_id) if self.major == "1" else self._v2(order_id)
            except op.ProvenanceError:  # the guard refused a step: claim nothing that did not happen
                reply = REPLY_HELD
            self._log_reply(reply)
            return reply

    def _log_reply(self, reply: str) -> None:
        """What a GenAI instrumentation with content capture on would log: the model's reply as a
        content event, and a summary record carrying the output messages. The log-record processor
        drops the first whole and removes the content key from the second."""
        if self.logger is None:
            return
        message = {"role": "assistant", "content": reply}
        self.logger.emit(LogRecord(event_name="gen_ai.choice", body={"index": 0, "message": message}))
        self.logger.emit(
            LogRecord(
                body="refund request handled",
                attributes={"gen_ai.output.messages": json.dumps([message]), "agent.release": self.release},
            )
        )

    def _v1(self, order_id: str) -> str:
        policy = self.retrieve_policy(order_id=order_id)
        order = self.lookup_order(order_id=order_id)
        if self.checks_fraud:
            self.check_fraud(
                customer_id=order["customer_id"], order_id=order_id, amount_cents=order["amount_cents"]
            )
        refund = self.calculate_refund(
            amount_cents=order["amount_cents"],
            days_since_delivery=order["days_since_delivery"],
            max_days=policy["max_days"],
        )
        key = f"refund-{uuid.uuid4()}"
        self.refund_payment(order_id=order_id, amount_cents=refund["refund_cents"], idempotency_key=key)
        self.notify_customer(customer_id=order["customer_id"], message=REPLY)
        return REPLY

    def _v2(self, order_id: str) -> str:
        order = self.lookup_order(order_id=order_id)
        try:
            self._v2_refund(order_id, order)
            reply = REPLY
        except op.ProvenanceError:  # the guard stopped a step: say so, do not claim the refund
            reply = REPLY_HELD
        self.notify_customer(customer_id=order["customer_id"], message=reply)  # the guard may hold it too
        return reply

    def _v2_refund(self, order_id: str, order: dict) -> None:
        refund = self.calculate_refund(
            amount_cents=order["amount_cents"],
            days_since_delivery=order["days_since_delivery"],
            max_days=30,  # hard-coded: no policy was looked up
        )
        for _attempt in range(2):
            try:
                self.refund_payment(order_id=order_id, amount_cents=refund["refund_cents"])
                break
            except httpx.TimeoutException:
                continue

    def close(self) -> None:
        self.http.close()
