"""The refund agent every producer in this folder drives, framework by framework.

Four tools, plain functions with no ``@op.tool``: the traces are what the framework's own
instrumentation writes. The stub model of each framework makes the tool calls a *variant* scripts:

- ``approved``: look the order up, check it for fraud, refund it once, tell the customer;
- ``like``: the same behaviour (a release that changed nothing that matters);
- ``regressed``: the fraud check skipped and the refund paid twice (a retry after a timeout);
- ``duplicate``: the check made, the refund paid twice.

Every variant ends with the same sentence to the customer: output checks cannot tell them apart.
Order ids differ per run, so no two runs carry the same argument values.
"""

from __future__ import annotations

from typing import Final

ANSWER: Final = "Your refund is on its way."
TOOL_NAMES: Final = ("lookup_order", "check_fraud", "issue_refund", "notify_customer")
WRITE_TOOL: Final = "issue_refund"
CHECK_TOOL: Final = "check_fraud"


def lookup_order(order_id: str) -> dict:
    """Look an order up by its id."""
    return {"order_id": order_id, "amount": "42.50", "customer": f"cust-{order_id[-4:]}"}


def check_fraud(order_id: str) -> dict:
    """Check an order for fraud before money moves."""
    return {"order_id": order_id, "risk": "low"}


def issue_refund(order_id: str, amount: str) -> dict:
    """Refund an order's amount to the customer."""
    return {"refund_id": f"rf-{order_id[-4:]}", "status": "paid"}


def notify_customer(order_id: str, message: str) -> dict:
    """Send the customer a message about their order."""
    return {"sent": True}


TOOLS: Final = (lookup_order, check_fraud, issue_refund, notify_customer)

VARIANTS: Final = {
    "approved": ("lookup_order", "check_fraud", "issue_refund", "notify_customer"),
    "like": ("lookup_order", "check_fraud", "issue_refund", "notify_customer"),
    "regressed": ("lookup_order", "issue_refund", "issue_refund", "notify_customer"),
    "duplicate": ("lookup_order", "check_fraud", "issue_refund", "issue_refund", "notify_customer"),
}

Call = tuple[str, dict[str, str]]


def script(variant: str, run: int) -> list[Call]:
    """The tool calls (name, arguments) the stub model makes in run number ``run`` of ``variant``."""
    order = f"ord-{variant[:3]}-{run:04d}"
    arguments = {
        "lookup_order": {"order_id": order},
        "check_fraud": {"order_id": order},
        "issue_refund": {"order_id": order, "amount": "42.50"},
        "notify_customer": {"order_id": order, "message": ANSWER},
    }
    return [(name, dict(arguments[name])) for name in VARIANTS[variant]]


def scripts(variant: str, runs: int) -> list[list[Call]]:
    return [script(variant, i) for i in range(runs)]
