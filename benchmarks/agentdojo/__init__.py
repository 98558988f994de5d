"""AgentDojo's ground truth replayed through the call-time guard (issue #44): no model, no network.

* :mod:`.integration` — the per-tool ``@op.tool`` declarations, one mapping per configuration;
* :mod:`.suites` — AgentDojo v1.2.2's suites, its attacks (``important_instructions`` by default),
  environments;
* :mod:`.synthesized` — our ground truth for the injection tasks AgentDojo ships without one
  (workspace 6–13), counted apart;
* :mod:`.toolset` — each AgentDojo tool as a function of the model's arguments only;
* :mod:`.replay` — benign runs and attacked runs, call by call, judged by AgentDojo's own checks;
* :mod:`.tally` — the published summary (no values) and the local diagnostics file (values);
* :mod:`.venv` — ``.venv-agentdojo``, the benchmark's own venv (AgentDojo's dependencies stay out of
  the package's).

``python -m benchmarks.agentdojo`` runs it (in ``.venv-agentdojo``, made on first use);
``python -m benchmarks --cases 10`` runs it as a benchmark case. Importing this package imports
nothing of AgentDojo: only :mod:`.suites`, :mod:`.synthesized`, :mod:`.toolset` and :mod:`.replay`
need it.
"""
