"""One tool call, in order: the run scope it belongs to, the tool's spec, its arguments bound, the
decision (budget, policies, the contract at call time, a person's approval) and the lifecycle that
drives it from bind to the ended span — for every entry point alike."""
