"""Write one release's traces with one producer: ``python tests/agent_traces/run.py PRODUCER VARIANT
RELEASE RUNS OUT``.

A producer is a module of this folder with ``produce(out, release, scripts)``: it runs one agent run
per script with its framework's own OpenTelemetry support and a stub model, and its spans reach
``out`` through the official OTLP JSON file exporter (``opentelemetry-exporter-otlp-json-file``),
never through this package. Each producer runs in its own process: instrumentors patch frameworks
globally, and some cannot be undone.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import refund


def main(argv: list[str]) -> None:
    producer, variant, release, runs, out = argv
    module = importlib.import_module(producer)
    module.produce(Path(out), release, refund.scripts(variant, int(runs)))


if __name__ == "__main__":
    main(sys.argv[1:])
