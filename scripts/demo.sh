#!/usr/bin/env bash
# Install the package (with the command line's extra, at the newest tested versions) into .venv and
# run the reference demo on the embedded file default.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -c constraints/newest.txt -e ".[cli,otlp]"
exec .venv/bin/python examples/refund_agent/demo.py "$@"
