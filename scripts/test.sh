#!/usr/bin/env bash
# Install the package with its test extras into .venv, lint, and run the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[test]"
.venv/bin/ruff check src tests examples benchmarks
.venv/bin/python -m pytest "$@"
