"""What every layer of the online half shares: its settings (digest key, enforcement, short-value
floor, ledger bound, approver), the internal-error policy (loud under pytest, quiet in applications),
and the names that moved between supported OpenTelemetry SDK releases."""
