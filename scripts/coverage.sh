#!/usr/bin/env bash
# Line and branch coverage of the whole suite, including the processes it starts (gate check --jobs
# shards, CLI subprocesses): [tool.coverage.run] in pyproject.toml. Report in out/coverage/.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/coverage ] || [ ! -x .venv/bin/pytest ]; then
  python3 -m venv .venv
  .venv/bin/python -m pip install -q --disable-pip-version-check -c constraints/newest.txt -e ".[test,interop,quality]"
fi
mkdir -p out/coverage
.venv/bin/coverage erase
.venv/bin/coverage run -m pytest "$@"
.venv/bin/coverage combine -q
.venv/bin/coverage report | tee out/coverage/report.txt | tail -25
.venv/bin/coverage html -q -d out/coverage/html
